/* npanalyze's live progress line on stderr while the recordings are read:
 * file, MB read of the total, events, events/s, ETA. Redrawn at most five
 * times a second with '\r'; only when stderr is a terminal and not -q. */
#ifndef NP_ANA_PROGRESS_H
#define NP_ANA_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct ana_progress {
	bool on;
	int file, nfiles;
	const char *name;
	uint64_t total_bytes;       /* sum of the input sizes */
	uint64_t done_bytes;        /* of the files finished */
	double t0, last;            /* monotonic seconds: start, last redraw */
	bool drawn;
};

void ana_progress_init(struct ana_progress *p, bool on, char *const *paths, int n);
void ana_progress_file(struct ana_progress *p, int idx, const char *path);
/* file_bytes: offset reached in the current file; events: read so far. */
void ana_progress_tick(struct ana_progress *p, uint64_t file_bytes, uint64_t events);
void ana_progress_file_done(struct ana_progress *p, uint64_t file_bytes);
/* Erases the line (before the next message on stderr). */
void ana_progress_clear(struct ana_progress *p);

#endif
