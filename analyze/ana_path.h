/* Internal to the packet-path modules (ana_path.c matching, ana_decomp.c
 * decomposition / jitter / loss). */
#ifndef NP_ANA_PATH_H
#define NP_ANA_PATH_H

#include "ana.h"

#define ANA_PATH_MAXEV 64       /* events considered per packet */
#define ANA_PKT_CACHE  8192     /* recent-packet cache entries (power of 2) */

struct ana_pkt {
	uint32_t seq, ack, xid;
	uint32_t minlen;            /* smallest payload among its events */
	uint32_t head, nev;         /* its events: order[head .. head+nev) */
	uint32_t group;             /* retransmission group (first packet's index) */
	uint32_t range_ev;          /* sock_send event attached, UINT32_MAX none */
	uint8_t  udp, ngroup;       /* ngroup: the group has more than one packet */
};

#define ANA_PENDING 4           /* open sock_send ranges remembered per flow */
struct ana_pending { uint32_t seq, end, ev; };

struct ana_ptab { uint32_t *slot; size_t cap; size_t n; };

/* What the later passes need of an event, copied in packet order after the
 * join (16 bytes; the 32-byte events are freed then). */
struct ana_pe {
	uint64_t ts;
	uint32_t flow;
	uint16_t host;
	uint8_t  hook, flags;       /* ana_pev.flags | ANA_PE_NOPAY */
};

/* A TCP event without payload. A pure ACK sent just before a data segment
 * (same seq, ack and TSval) joins that segment's packet: its events are not
 * copies of the data. */
#define ANA_PE_NOPAY 0x40

struct ana_paths {
	struct ana_pkt *pkts;
	size_t npkts, pkcap;
	struct ana_ptab tab;
	uint32_t *evpkt;            /* event -> packet (UINT32_MAX none) */
	struct { uint32_t pkt, ev; } *extra;   /* super-packet / range memberships */
	size_t nextra, excap;
	struct ana_pending (*pending)[ANA_PENDING];   /* per flow, during the join */
	uint32_t *order;            /* event indices grouped by packet (during the join) */
	struct ana_pe *pe;          /* events grouped by packet: pkts[k].head .. + nev */
	size_t norder;              /* entries of order, then of pe (the gather's length; ana_pjoin's
				     * may hold unused entries between packets) */
	/* the event block's pages past pe (kept by an in-place gather): the
	 * decomposition's results array takes them (no fresh pages to fault
	 * in), or hands them back; part of pe's block, freed with it */
	void *spare;
	size_t spare_len;
	bool super;                 /* a packet has events of two payload lengths (ana_pjoin) */
	bool ranges_done;           /* ana_pjoin took the sock_send ranges too */
	struct ana_pe *pe_pre;      /* ana_pjoin ran ana_pe_shrink_first beside its merge (its
				     * result; NULL: not) */
	bool pe_low_done;           /* and, in place, the second step (ana_pe_shrink_low of
				     * the whole lower half): pe_pre is every event's */
	size_t njoined;             /* events joined by key (evpkt set) */
	struct { uint32_t seq, ack, xid, idx1, udp; } cache[ANA_PKT_CACHE];  /* idx1 = packet + 1 */
};

/* The visit order's merge (ana_path.c): the hosts' event runs (at most 64:
 * the 64th takes every later event) and how far each is taken. */
#define ANA_VRUNS 64
struct ana_vruns {
	size_t n;
	size_t at[ANA_VRUNS], end[ANA_VRUNS];
	uint64_t base[ANA_VRUNS];   /* the run's host's t_min */
};
void ana_vruns_find(const struct ana_model *m, struct ana_vruns *v, unsigned threads);
/* Two runs guessed without reading every event (the first and last events'
 * hosts, the place between bisected): false when no guess is made; a walk
 * over them must check each event's host (true: ana_vruns_find's runs). */
bool ana_vruns_guess(const struct ana_model *m, struct ana_vruns *v);
/* Every event's visit position into vis (m->pev.n entries). */
void ana_visit_fill(const struct ana_model *m, uint32_t *vis);

/* One step of the visit order from state v: the next stretch, events
 * [*lo, return value) of one run, taken (v advanced); 0 when every run is
 * done. A step depends on v only, so two walks that start a step in the
 * same state go on alike. */
static inline size_t ana_vstep(const struct ana_pev *ev, struct ana_vruns *v, size_t *lo)
{
	size_t best = SIZE_MAX;
	uint64_t bt = UINT64_MAX;
	for (size_t r = 0; r < v->n; r++)
		if (v->at[r] < v->end[r] && ev[v->at[r]].ts - v->base[r] < bt) {
			bt = ev[v->at[r]].ts - v->base[r];
			best = r;
		}
	if (best == SIZE_MAX)
		return 0;
	/* take a stretch of this run while it stays the earliest */
	size_t i = v->at[best];
	uint64_t limit = UINT64_MAX;
	for (size_t r = 0; r < v->n; r++)
		if (r != best && v->at[r] < v->end[r] && ev[v->at[r]].ts - v->base[r] < limit)
			limit = ev[v->at[r]].ts - v->base[r];
	size_t stop = i + 1, end = v->end[best];
	uint64_t base = v->base[best];
	while (stop < end && stop - i < 256 && ev[stop].ts - base <= limit)
		stop++;
	v->at[best] = stop;
	*lo = i;
	return stop;
}

/* ana_vstep for two runs (v->n == 2): the same step, without the loops
 * over the runs (the pieces of ana_pjoin.c walk by steps: ~45
 * instructions an event in ana_vstep, callgrind). */
static inline size_t ana_vstep2(const struct ana_pev *ev, struct ana_vruns *v, size_t *lo)
{
	size_t a = v->at[0], b = v->at[1];
	bool ha = a < v->end[0], hb = b < v->end[1];
	uint64_t ka = ha ? ev[a].ts - v->base[0] : UINT64_MAX;
	uint64_t kb = hb ? ev[b].ts - v->base[1] : UINT64_MAX;
	/* ana_vstep's choice: the first run whose key is below UINT64_MAX and
	 * every earlier one's; the limit, the other run's key (UINT64_MAX when
	 * it is done) */
	size_t best = ka < UINT64_MAX && ka <= kb ? 0 : kb < UINT64_MAX ? 1 : SIZE_MAX;
	if (best == SIZE_MAX)
		return 0;
	size_t i = best ? b : a, stop = i + 1, end = v->end[best];
	uint64_t limit = best ? ka : kb, base = v->base[best];
	while (stop < end && stop - i < 256 && ev[stop].ts - base <= limit)
		stop++;
	v->at[best] = stop;
	*lo = i;
	return stop;
}

/* The steps of ana_path_match after the join that ana_pjoin runs beside
 * its merge when it fills p->order (ana_path.c). Whether the events
 * shrink in place (else compacted), from the gather's length total (the
 * order's entries): */
bool ana_pe_in_place(const struct ana_model *m, size_t total, unsigned threads);
/* The shrink's first step once nothing reads the 32-byte events any more:
 * the upper half of their block (the lower half follows on two threads)
 * or, not in place, all of them compacted. Returns the ana_pe. */
struct ana_pe *ana_pe_shrink_first(struct ana_model *m, bool in_place);
/* The in-place shrink's second step, once the first is over: events
 * [lo, hi) of the lower half (hi <= m->pev.n / 2); disjoint pieces in any
 * order and on any threads. */
void ana_pe_shrink_low(struct ana_model *m, size_t lo, size_t hi);

/* The key join (ana_pjoin.c): fills vis with the visit order (every event
 * of m once: ana_visit_fill's) and joins the events in that order: fills
 * p->pkts (keys, minlen, retransmission group, events joined in nev),
 * p->npkts, p->super and allocates p->evpkt (every event's packet,
 * UINT32_MAX none), on threads threads; the same result for any count. On
 * one thread, with p->pending, also the sock_send ranges (p->ranges_done).
 * On several, with p->pending, the ranges too, and when it can, p->order
 * (norder entries: ana_group_order's, heads and counts set, and, while
 * no longer than the events, an unused entry after each packet with
 * payload that took no range) instead of
 * evpkt, then beside the merge the events' shrink (p->pe_pre: m->pev is
 * not read after; in place, both steps when its threads run at once:
 * p->pe_low_done).
 * 0 or -1 (no memory). */
int ana_pjoin(struct ana_model *m, struct ana_paths *p, uint32_t *vis, size_t nvis,
	      unsigned threads);

static inline bool ana_is_egress(int hook)
{
	return hook >= PK_HOOK_DEV_QUEUE && hook <= PK_HOOK_DEV_XMIT;
}

/* sock_send ranges (ana_path.c), taken in visit order: event i (a range)
 * opens one for its flow; e, an egress event with payload of packet k,
 * attaches k to the open range of its flow holding its first byte unless
 * the packet has one (*range_ev, set then). */
void ana_range_open(struct ana_paths *p, const struct ana_pev *e, size_t i);
void ana_range_take(struct ana_paths *p, const struct ana_pev *e, uint32_t k, uint32_t *range_ev);

/* Writes the packet's event indices (into p->pe) in path order into out;
 * returns n. */
size_t ana_path_order(const struct ana_model *m, const struct ana_paths *p, size_t k,
		      uint32_t *out, size_t cap);

#endif
