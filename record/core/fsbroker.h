/* The files nprec creates after it dropped its privileges (rotation, the
 * file reopened on SIGHUP, flight-recorder dumps) are created by a small
 * helper process forked before the drop: it keeps only CAP_DAC_OVERRIDE and
 * CAP_FOWNER, is chrooted into the output directory, takes plain file names
 * (no '/') in the directories it was given and hands the opened fd back over a socket (docs/NPREC.md,
 * "Privileges"). Before fsb_start, and when it was never started, the calls
 * below act directly. */
#ifndef NP_REC_FSBROKER_H
#define NP_REC_FSBROKER_H

#include <stddef.h>
#include <sys/stat.h>

#define FSB_MAX_DIRS 4

/* Forks the helper for the directories of paths (NULL entries skipped):
 * the output's first (its root), e.g. --profile-baseline's next. 0 or
 * -errno (err filled). */
int fsb_start(const char *const *paths, unsigned npaths, char *err, size_t errlen);
/* Creates/truncates path for writing, mode 0600: an fd or -errno. */
int fsb_open(const char *path);
int fsb_unlink(const char *path);
int fsb_stat(const char *path, struct stat *st);
/* The directory part of a path ("." when there is none). */
void fsb_dir_of(const char *path, char *dir, size_t size);
/* The helper's pid, 0 when none runs (for tests and the notice). */
int fsb_pid(void);

#endif
