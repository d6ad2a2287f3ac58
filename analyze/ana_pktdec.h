/* PKT_EVENTS column decoding on worker threads (npanalyze --threads).
 * The reader hands each raw PKT_EVENTS body to ana_pktdec_submit; workers
 * decode its columns, and the calling thread appends the events to the model
 * strictly in submission order (flow indices are created then), so the model
 * and every output are the same for any number of threads. */
#ifndef NP_ANA_PKTDEC_H
#define NP_ANA_PKTDEC_H

#include "ana.h"
#include "container.h"

struct ana_pktdec;
struct ana_read;

/* threads <= 1: no workers, each record is decoded and appended at once. */
struct ana_pktdec *ana_pktdec_new(struct ana_model *m, unsigned threads);
/* Without decoding workers (threads <= 1), in memory without --mem: the
 * pages just past the event array's end are made present by a's idle
 * read-ahead workers (ana_read_populate) before this thread appends there.
 * NULL a: no longer (before ana_read_free). */
void ana_pktdec_ahead_by(struct ana_pktdec *d, struct ana_read *a);
/* 0, or -ENOMEM (the record is then decoded in the calling thread). */
int ana_pktdec_submit(struct ana_pktdec *d, int host, const struct np_record *rec);
/* Appends every submitted record; the model is complete afterwards. */
void ana_pktdec_drain(struct ana_pktdec *d);
void ana_pktdec_free(struct ana_pktdec *d);

#endif
