/* The flight recorder's memory: built chunks, one per interval, oldest
 * dropped first, bounded by a time window or a byte budget. */
#ifndef NP_REC_FLIGHTRING_H
#define NP_REC_FLIGHTRING_H

#include <stddef.h>
#include <stdint.h>
#include "container.h"

struct flightring_slot {
	struct np_chunk c;
	uint64_t t_start, t_end;    /* the interval the chunk covers (mono ns) */
};

struct flightring {
	struct flightring_slot *slot;
	size_t cap, head, n;        /* circular: oldest at head */
	uint64_t bytes;             /* sum of the chunks' lengths */
	uint64_t dropped_mem;       /* chunks dropped by max_mem, window not covered */
	/* bounds: window_ns (time) or window_bytes (size); a time window is
	 * kept one interval longer, so a dump requested in the middle of an
	 * interval and written at its end still reaches window_ns back */
	uint64_t window_ns, window_bytes, interval_ns, max_mem;
};

void flightring_init(struct flightring *r, uint64_t window_ns, uint64_t window_bytes,
		     uint64_t interval_ns, uint64_t max_mem);
/* Takes c (the ring owns it afterwards, also on error) and trims.
 * 0, or -ENOMEM (c freed). */
int  flightring_push(struct flightring *r, struct np_chunk *c, uint64_t t_start, uint64_t t_end);
const struct flightring_slot *flightring_at(const struct flightring *r, size_t i);
/* Index of the first chunk a dump for a trigger at t needs: the last one
 * starting at or before t - window_ns (0 with a byte window). */
size_t flightring_first_for(const struct flightring *r, uint64_t t);
void flightring_free(struct flightring *r);

#endif
