/* Active packet IDs (--active-ids): loads bpf/activeid.bpf.c, attaches it to
 * the cgroup root, and feeds its events into the packet-path family's ring
 * buffer manager. */
#ifndef NP_REC_ACTIVEID_H
#define NP_REC_ACTIVEID_H

#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include "family.h"

struct aid_state;

/* rb: the manager the activeid ring is added to, cb called per event with
 * a struct aid_event. 0 or -errno (err filled). */
int  aid_open(struct rec_ctx *ctx, struct ring_buffer **rb, ring_buffer_sample_fn cb, void *cbctx,
	      struct aid_state **out, char *err, size_t errlen);
/* Totals since open, indexed by enum aid_counter. */
void aid_counters(struct aid_state *a, uint64_t *out);
void aid_close(struct aid_state *a);

#endif
