/* The HEADER record of a recording (and the PROBES record when the probe
 * list changes later). Body schema: docs/records/recorder-core.md. */
#ifndef NP_REC_RECHEADER_H
#define NP_REC_RECHEADER_H

#include "family.h"
#include "hostinfo.h"

#define RC_HEADER_VERSION 1

/* Appends one NP_REC_HEADER record to rb. */
void rc_header_build(struct np_recbuf *rb, struct rec_ctx *ctx,
		     const struct np_hostinfo *host, const struct np_clockref *clk);
/* Appends one NP_REC_PROBES record (the whole list) and clears probes_changed. */
void rc_probes_record(struct np_recbuf *rb, struct rec_ctx *ctx, uint64_t t_ns);
/* Frees the probe list. */
void rc_probes_free(struct rec_ctx *ctx);
const char *rc_probe_state_name(enum rec_probe_state st);

#endif
