/* Where finished chunks go: a plain file, a size-bounded file, a rotated set
 * of files, or the flight-recorder ring that is dumped on a trigger. Every
 * file produced starts with the same header record. Owned by the incident
 * features (issue 5); nprec.c only calls this API. */
#ifndef NP_REC_OUTPUT_H
#define NP_REC_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include "container.h"

struct rec_output;

/* header: the HEADER record buffer, re-written at the start of every file. */
int  rec_output_open(struct rec_output **o, const struct rec_config *cfg,
		     const struct np_recbuf *header, char *err, size_t errlen);
/* Takes one interval's records (one or more chunks are produced) and resets rb.
 * Returns 0, 1 when --max-size was reached (stop cleanly), or -errno when
 * recording must stop (disk full: the file stays valid; err says what was kept). */
int  rec_output_interval(struct rec_output *o, struct np_recbuf *rb, uint64_t t_mono,
			 char *err, size_t errlen);
/* Flight recorder: write the ring out as a recording now. why = trigger text. */
int  rec_output_dump(struct rec_output *o, const char *why, uint64_t t_mono,
		     char *err, size_t errlen);
/* (As built: the dump is written by the next rec_output_interval, so it
 * includes the interval in progress, or by rec_output_close; without
 * --flight-recorder a TRIGGER record marks the moment in the current file.
 * docs/records/incident.md.) */
/* SIGHUP: close and reopen the output path. */
int  rec_output_reopen(struct rec_output *o, char *err, size_t errlen);
uint64_t rec_output_bytes(const struct rec_output *o);   /* all bytes written */
/* Messages for the user that did not stop recording (dump written, dump
 * failed, file reopened): 1 and buf filled (lines joined by '\n') when one is
 * pending, else 0. Call after every rec_output_* call and print to stderr. */
int  rec_output_notice(struct rec_output *o, char *buf, size_t len);
/* Writes the final chunk (rb: END record) and closes. (As built: on success
 * err holds the pending notices, e.g. the flight recorder's last dump, or
 * is empty.) */
int  rec_output_close(struct rec_output *o, struct np_recbuf *final_rb, char *err, size_t errlen);

#endif
