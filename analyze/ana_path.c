/* Packet paths: joining hook events into packets across hooks and hosts.
 *
 * Key of a packet: (seq, ack, TSval) for TCP, the best-effort uid for UDP;
 * no address or port, so DNAT between hosts does not matter. Retransmissions
 * carry a new TSval and become separate packets of one retransmission group.
 * GSO/GRO: an event covering more bytes than the packet's smallest event
 * (a super-packet) is also attached to the packets that start inside its
 * byte range (walk seq + len of each piece). sock_send events carry only a
 * byte range: they are attached through (host, flow, seq) to the packets
 * built from that range on the same host. Hash joins only, no per-event
 * allocation; events are grouped per packet by a counting sort. */
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ana.h"
#include "ana_par.h"
#include "ana_path.h"
#include "ana_cmsg.h"

#define ANA_RANGE_FLAG 0x04

static inline uint64_t ana_h64(uint64_t x)
{
	x ^= x >> 31; x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27; x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return x;
}

/* ---- open addressing table of u32 packet indices ---- */

/* Large random-access tables: ask for transparent huge pages, the join is
 * bound by TLB and cache misses. */
static void *ana_big_calloc(size_t n, size_t size)
{
	size_t bytes = n * size;
	if (bytes < (4u << 20))
		return calloc(n, size);
	size_t al = 2u << 20, rounded = (bytes + al - 1) & ~(al - 1);
	void *p = aligned_alloc(al, rounded);
	if (!p)
		return NULL;
	madvise(p, rounded, MADV_HUGEPAGE);
	memset(p, 0, bytes);
	return p;
}

static int ana_ptab_init(struct ana_ptab *t, size_t expect)
{
	size_t cap = 1024;
	while (cap < expect * 2)
		cap <<= 1;
	t->slot = ana_big_calloc(cap, sizeof(uint32_t));
	t->cap = cap;
	t->n = 0;
	return t->slot ? 0 : -1;
}

static inline uint64_t ana_pkt_hash(uint32_t seq, uint32_t ack, uint32_t xid, uint8_t udp)
{
	return ana_h64(((uint64_t)seq << 32 | ack) ^ ((uint64_t)xid << 17) ^ ((uint64_t)udp << 63));
}

static uint32_t ana_pkt_find(struct ana_paths *p, uint64_t hv, uint32_t seq, uint32_t ack,
			     uint32_t xid, uint8_t udp, bool create);

/* Finds the packet with this key or creates it; UINT32_MAX on no memory.
 * A small direct-mapped cache of recent packets sits in front of the big
 * table: the hooks of one packet on one host come close together in time. */
static uint32_t ana_pkt_get(struct ana_paths *p, uint32_t seq, uint32_t ack, uint32_t xid,
			    uint8_t udp, bool create)
{
	uint64_t hv = ana_pkt_hash(seq, ack, xid, udp);
	__typeof__(p->cache[0]) *c = &p->cache[((hv >> 40) ^ udp) & (ANA_PKT_CACHE - 1)];
	if (c->idx1 && c->seq == seq && c->ack == ack && c->xid == xid && c->udp == udp)
		return c->idx1 - 1;
	uint32_t r = ana_pkt_find(p, hv, seq, ack, xid, udp, create);
	if (r != UINT32_MAX) {
		c->seq = seq; c->ack = ack; c->xid = xid; c->udp = udp;
		c->idx1 = r + 1;
	}
	return r;
}

static uint32_t ana_pkt_find(struct ana_paths *p, uint64_t hv, uint32_t seq, uint32_t ack,
			     uint32_t xid, uint8_t udp, bool create)
{
	struct ana_ptab *t = &p->tab;
	if (create && (t->n + 1) * 2 > t->cap) {
		struct ana_ptab nt;
		if (ana_ptab_init(&nt, t->cap))
			return UINT32_MAX;
		for (size_t i = 0; i < t->cap; i++) {
			uint32_t v = t->slot[i];
			if (!v)
				continue;
			const struct ana_pkt *k = &p->pkts[v - 1];
			size_t j = ana_pkt_hash(k->seq, k->ack, k->xid, k->udp) & (nt.cap - 1);
			while (nt.slot[j])
				j = (j + 1) & (nt.cap - 1);
			nt.slot[j] = v;
		}
		nt.n = t->n;
		free(t->slot);
		*t = nt;
	}
	size_t j = hv & (t->cap - 1);
	for (;;) {
		uint32_t v = t->slot[j];
		if (!v)
			break;
		const struct ana_pkt *k = &p->pkts[v - 1];
		if (k->seq == seq && k->ack == ack && k->xid == xid && k->udp == udp)
			return v - 1;
		j = (j + 1) & (t->cap - 1);
	}
	if (!create)
		return UINT32_MAX;
	if (ana_vec_grow((void **)&p->pkts, &p->pkcap, p->npkts + 1, sizeof(struct ana_pkt)))
		return UINT32_MAX;
	struct ana_pkt *k = &p->pkts[p->npkts];
	memset(k, 0, sizeof(*k));
	k->seq = seq; k->ack = ack; k->xid = xid; k->udp = udp;
	k->minlen = UINT32_MAX;
	k->range_ev = UINT32_MAX;
	t->slot[j] = (uint32_t)++p->npkts;
	t->n++;
	return (uint32_t)(p->npkts - 1);
}

static void ana_attach(struct ana_paths *p, uint32_t pkt, uint32_t ev)
{
	if (ana_vec_grow((void **)&p->extra, &p->excap, p->nextra + 1, sizeof(*p->extra)))
		return;
	p->extra[p->nextra].pkt = pkt;
	p->extra[p->nextra].ev = ev;
	p->nextra++;
}


/* Super-packet events also belong to the packets starting inside them. */
static void ana_walk_super(struct ana_paths *p, const struct ana_pev *ev, size_t nev)
{
	for (size_t i = 0; i < nev; i++) {
		const struct ana_pev *e = &ev[i];
		uint32_t k = p->evpkt[i];
		if (k == UINT32_MAX || e->len == 0)
			continue;
		uint32_t step = p->pkts[k].minlen;
		if (step == UINT32_MAX || step == 0 || e->len <= step)
			continue;
		uint32_t end = e->seq + e->len, s = e->seq + step;
		for (int guard = 0; (int32_t)(end - s) > 0 && guard < 4096; guard++) {
			uint32_t q = ana_pkt_get(p, s, e->ack, e->xid, 0, false);
			if (q == UINT32_MAX || p->pkts[q].minlen == UINT32_MAX || !p->pkts[q].minlen)
				break;
			ana_attach(p, q, (uint32_t)i);
			/* the send() that made the super-packet made this piece too */
			uint32_t rv = p->pkts[k].range_ev;
			if (rv != UINT32_MAX && p->pkts[q].range_ev == UINT32_MAX &&
			    (int32_t)(s - ev[rv].seq) >= 0 && (int32_t)(ev[rv].seq + ev[rv].len - s) > 0) {
				p->pkts[q].range_ev = rv;
				ana_attach(p, q, rv);
			}
			s += p->pkts[q].minlen;
		}
	}
}

/* sock_send byte ranges carry no header: while joining in time order they
 * wait per flow until the egress packets built from them pass a hook on
 * the same host (same flow index = same host), and are attached there. */
void ana_range_open(struct ana_paths *p, const struct ana_pev *e, size_t i)
{
	struct ana_pending *pd = p->pending[e->flow];
	int slot = 0;
	for (int j = 0; j < ANA_PENDING; j++) {
		if (pd[j].end == pd[j].seq) {    /* free */
			slot = j;
			break;
		}
		if ((int32_t)(pd[j].seq - pd[slot].seq) < 0)
			slot = j;                  /* else replace the oldest range */
	}
	pd[slot] = (struct ana_pending){ e->seq, e->seq + (e->len ? e->len : 1), (uint32_t)i };
}

void ana_range_take(struct ana_paths *p, const struct ana_pev *e, uint32_t k, uint32_t *range_ev)
{
	if (*range_ev != UINT32_MAX)
		return;
	struct ana_pending *pd = p->pending[e->flow];
	for (int j = 0; j < ANA_PENDING; j++) {
		if (pd[j].end == pd[j].seq || (int32_t)(e->seq - pd[j].seq) < 0 ||
		    (int32_t)(pd[j].end - e->seq) <= 0)
			continue;
		*range_ev = pd[j].ev;
		ana_attach(p, k, pd[j].ev);
		if ((int32_t)(pd[j].end - (e->seq + e->len)) <= 0)
			pd[j].end = pd[j].seq;       /* fully sent: close */
		return;
	}
}

/* sock_send ranges in visit order: opened by the range events, taken by
 * the first egress event of a packet built from them (as a single join in
 * that order would). */
static void ana_ranges(const struct ana_model *m, struct ana_paths *p, const uint32_t *vis, size_t n)
{
	const struct ana_pev *ev = m->pev.v;
	for (size_t j = 0; p->pending && j < n; j++) {
		uint32_t i = vis[j];
		const struct ana_pev *e = &ev[i];
		if ((e->flags & ANA_RANGE_FLAG) || e->hook == PK_HOOK_SOCK_SEND)
			ana_range_open(p, e, i);
		else if (p->evpkt[i] != UINT32_MAX && e->len && ana_is_egress(e->hook))
			ana_range_take(p, e, p->evpkt[i], &p->pkts[p->evpkt[i]].range_ev);
	}
}

/* The packet table for the lookups of the super-packet walk (when an event
 * covers more than its packet's smallest piece: p->super). */
static int ana_ptab_fill(struct ana_paths *p)
{
	if (ana_ptab_init(&p->tab, p->npkts))
		return -1;
	for (size_t k = 0; k < p->npkts; k++) {
		const struct ana_pkt *q = &p->pkts[k];
		size_t j = ana_pkt_hash(q->seq, q->ack, q->xid, q->udp) & (p->tab.cap - 1);
		while (p->tab.slot[j])
			j = (j + 1) & (p->tab.cap - 1);
		p->tab.slot[j] = (uint32_t)k + 1;
	}
	p->tab.n = p->npkts;
	return 0;
}

/* Where the events of slice t of nt start a run (a host change): the
 * first ANA_VRUNS of them, the only ones that matter. */
struct ana_vcut {
	const struct ana_pev *ev;
	size_t n, nb[ANA_PAR_MAXT], b[ANA_PAR_MAXT][ANA_VRUNS];
	unsigned nt;
};

static void ana_vcut_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	struct ana_vcut *c = ctx;
	size_t lo = c->n * t / c->nt, hi = c->n * (t + 1) / c->nt, nb = 0;
	for (size_t j = lo; j < hi && nb < ANA_VRUNS; j++)
		if (!j || c->ev[j].host != c->ev[j - 1].host)
			c->b[t][nb++] = j;
	c->nb[t] = nb;
}

/* The hosts' event runs, in order; a run past the 64th extends the last.
 * The events' slices are read on threads (each reads its share of the
 * 32-byte events once). */
void ana_vruns_find(const struct ana_model *m, struct ana_vruns *v, unsigned threads)
{
	struct ana_vcut c = { .ev = m->pev.v, .n = m->pev.n,
			      .nt = threads < 1 ? 1 : threads > ANA_PAR_MAXT ? ANA_PAR_MAXT : threads };
	if (c.n < (1u << 16))
		c.nt = 1;
	ana_par_tasks(c.nt, ana_vcut_task, &c);
	v->n = 0;
	for (unsigned t = 0; t < c.nt; t++)
		for (size_t x = 0; x < c.nb[t] && v->n < ANA_VRUNS; x++) {
			size_t i = c.b[t][x];
			if (v->n)
				v->end[v->n - 1] = i;
			v->at[v->n] = i;
			v->base[v->n] = m->hosts.v[c.ev[i].host].t_min;
			v->n++;
		}
	if (v->n)
		v->end[v->n - 1] = c.n;
}

/* The order events are joined in: the hosts' event runs merged by time
 * since each host's start, so both hosts' hooks of a packet come close
 * together and hit the recent-packet cache (a locality heuristic only: any
 * order gives the same packets, and this one is fixed). */
#define ANA_VFETCH 64           /* events (2 KB) ahead of a run's next step */

/* Two runs (two hosts, each one's events in one piece: the usual input):
 * ana_vstep's steps, one per pass of the outer loop, with the runs' places
 * in registers (ana_vstep scans the runs twice a step, and a step is two
 * events on average: ~64 instructions an event, callgrind). Run 0 takes
 * ties (ana_vstep's first earliest run), a stretch stops at 256 events.
 * False when an event is not of its run's host (the runs were a guess:
 * ana_vruns_guess). */
static bool ana_visit_two(const struct ana_pev *ev, const struct ana_vruns *v, uint32_t *vis)
{
	size_t a = v->at[0], ea = v->end[0], b = v->at[1], eb = v->end[1], nv = 0;
	uint64_t ba = v->base[0], bb = v->base[1];
	uint16_t ha = ev[a].host, hb = ev[b].host;
	unsigned bad = ha == hb;
	while (a < ea && b < eb) {
		uint64_t ka = ev[a].ts - ba, kb = ev[b].ts - bb;
		__builtin_prefetch(&ev[a + ANA_VFETCH < ea ? a + ANA_VFETCH : a]);
		__builtin_prefetch(&ev[b + ANA_VFETCH < eb ? b + ANA_VFETCH : b]);
		if (ka <= kb) {
			size_t i = a;
			bad |= ev[a].host != ha;
			vis[nv++] = (uint32_t)a++;
			while (a < ea && a - i < 256 && ev[a].ts - ba <= kb) {
				bad |= ev[a].host != ha;
				vis[nv++] = (uint32_t)a++;
			}
		} else {
			size_t i = b;
			bad |= ev[b].host != hb;
			vis[nv++] = (uint32_t)b++;
			while (b < eb && b - i < 256 && ev[b].ts - bb <= ka) {
				bad |= ev[b].host != hb;
				vis[nv++] = (uint32_t)b++;
			}
		}
	}
	for (; a < ea; a++) {
		bad |= ev[a].host != ha;
		vis[nv++] = (uint32_t)a;
	}
	for (; b < eb; b++) {
		bad |= ev[b].host != hb;
		vis[nv++] = (uint32_t)b;
	}
	return !bad;
}

/* The runs guessed without reading every event (ana_vruns_find's scan is
 * a pass over all of them, ~40 ms at 10 M): when the first and last events
 * are of two hosts, the first host's events taken to be one piece and the
 * other's the rest, the place between found by bisection. ana_visit_two
 * checks the guess as it walks. */
bool ana_vruns_guess(const struct ana_model *m, struct ana_vruns *v)
{
	const struct ana_pev *ev = m->pev.v;
	size_t n = m->pev.n, l = 0, r = n - 1;
	if (n < 2 || ev[0].host == ev[n - 1].host)
		return false;
	while (r - l > 1) {
		size_t mid = l + (r - l) / 2;
		if (ev[mid].host == ev[0].host)
			l = mid;
		else
			r = mid;
	}
	*v = (struct ana_vruns){ .n = 2, .at = { 0, r }, .end = { r, n },
				 .base = { m->hosts.v[ev[0].host].t_min, m->hosts.v[ev[r].host].t_min } };
	return true;
}

void ana_visit_fill(const struct ana_model *m, uint32_t *vis)
{
	struct ana_vruns v;
	size_t nv = 0, lo, hi;
	if (ana_vruns_guess(m, &v) && ana_visit_two(m->pev.v, &v, vis))
		return;
	ana_vruns_find(m, &v, 1);
	if (v.n == 2 && ana_visit_two(m->pev.v, &v, vis))
		return;
	while ((hi = ana_vstep(m->pev.v, &v, &lo))) {
		/* the steps read each run's times in stretches of a few events,
		 * switching runs: too short for the hardware to stream ahead */
		if (hi + ANA_VFETCH < m->pev.n)
			__builtin_prefetch(&m->pev.v[hi + ANA_VFETCH]);
		for (size_t i = lo; i < hi; i++)
			vis[nv++] = (uint32_t)i;
	}
}

struct ana_gather { struct ana_pe *out; const struct ana_pe *in; const uint32_t *order; };

static void ana_gather_range(void *ctx, size_t lo, size_t hi)
{
	const struct ana_gather *g = ctx;
	for (size_t j = lo; j < hi; j++)
		g->out[j] = g->in[g->order[j]];
}

static inline struct ana_pe ana_pe_of(const struct ana_model *m, struct ana_pev e)
{
	uint8_t nopay = !e.len && m->flows.v[e.flow].proto != 17 ? ANA_PE_NOPAY : 0;
	return (struct ana_pe){ .ts = e.ts, .flow = e.flow, .host = e.host, .hook = e.hook,
				.flags = (uint8_t)(e.flags | nopay) };
}

/* Rewrites m->pev in place as 16-byte ana_pe (event i's record lands in
 * bytes the loop has read already: 16 * i + 16 <= 32 * i for i >= 1, and
 * event 0 is read before it is written) and gives the tail back. */
static struct ana_pe *ana_pe_compact(struct ana_model *m)
{
	size_t n = m->pev.n;
	struct ana_pev *ev = m->pev.v;
	struct ana_pe *out = (struct ana_pe *)(void *)ev;
	for (size_t i = 0; i < n; i++)
		out[i] = ana_pe_of(m, ev[i]);
	void *shrunk = realloc(ev, (n ? n : 1) * sizeof(struct ana_pe));
	if (shrunk)
		m->pev.v = shrunk;
	m->pev.cap = 0;             /* no longer an array of ana_pev */
	return (struct ana_pe *)m->pev.v;
}

/* When every membership is an event's own (total <= n, no super-packet
 * pieces), the events are put in packet order within their own block: they
 * shrink into its upper half here, backwards (event i's record lands at
 * 16 n + 16 i, past every event not read yet: 16 n + 16 (i + 1) >= 32 i +
 * 32), and ana_pe_gather gathers them into its lower half and cuts the
 * block to size: no fresh pages to fault in, and no second array beside
 * it. */
static struct ana_pe *ana_pe_upper_range(struct ana_model *m, size_t lo, size_t hi)
{
	size_t n = m->pev.n;
	struct ana_pev *ev = m->pev.v;
	struct ana_pe *upper = (struct ana_pe *)(void *)ev + n;
	for (size_t i = hi; i-- > lo;)
		upper[i] = ana_pe_of(m, ev[i]);
	return upper;
}

static struct ana_pe *ana_pe_upper(struct ana_model *m)
{
	return ana_pe_upper_range(m, 0, m->pev.n);
}

/* The events as ana_pe in packet order (order[0 .. total)) into p->pe, from
 * in: the upper half of their block (ana_pe_upper, in_place) or their
 * compacted copy (ana_pe_compact); the 32-byte events are gone after. */
/* The in-place gather keeps its block's pages past pe as p->spare (at
 * least ANA_PATH_SPARE_MIN bytes) for the decomposition's results array
 * instead of unmapping them: on the 10 M case 166 MB of pages the results
 * array (258 MB) would fault in fresh. ana_decomp.c's ana_res_alloc
 * takes p->spare when it is large enough, else gives its pages back. */
#ifndef ANA_PATH_SPARE
#define ANA_PATH_SPARE 1
#endif
#define ANA_PATH_SPARE_MIN (64u << 20)

static int ana_pe_gather(struct ana_model *m, struct ana_paths *p, const uint32_t *order,
			 size_t total, unsigned threads, const struct ana_pe *in, bool in_place)
{
	struct ana_gather g = { .order = order, .in = in };
	if (in_place) {
		struct ana_pev *ev = m->pev.v;
		g.out = (struct ana_pe *)(void *)ev;
		ana_par_for(total, threads, ana_gather_range, &g);
		uintptr_t pg = 4096, lo = ((uintptr_t)(g.out + total) + pg - 1) & ~(pg - 1);
		uintptr_t hi = (uintptr_t)(ev + m->pev.cap) & ~(pg - 1);
		p->pe = g.out;
		if (ANA_PATH_SPARE && hi > lo && hi - lo >= ANA_PATH_SPARE_MIN) {
			p->spare = (void *)lo;      /* kept for the results array */
			p->spare_len = hi - lo;
		} else {
			/* the upper half's pages handed back on the threads: the
			 * shrink below unmaps them on this thread alone otherwise
			 * (~25 ms of freeing pages at 10 M events, the other core
			 * idle) */
			if (threads > 1)
				ana_par_zap(g.out + total, (2 * m->pev.n - total) * sizeof(struct ana_pe),
					    threads);
			void *shrunk = realloc(ev, (total ? total : 1) * sizeof(struct ana_pe));
			p->pe = shrunk ? shrunk : (void *)ev;
		}
	} else {
		g.out = p->pe = malloc((total ? total : 1) * sizeof(*p->pe));
		if (!p->pe)
			return -1;
		ana_par_for(total, threads, ana_gather_range, &g);
		free(m->pev.v);
	}
	m->pev.v = NULL;                /* the raw events are not needed any more */
	m->pev.n = m->pev.cap = 0;
	return 0;
}

/* Counting sort of the (packet, event) memberships: the join counted each
 * packet's own events; the extra ones (sock_send ranges, super-packet
 * pieces) follow them. Into buf when it holds them (size cap), else a new
 * array; NULL on no memory. */
static uint32_t *ana_group_order(struct ana_paths *p, size_t n, uint32_t *buf, size_t cap)
{
	for (size_t j = 0; j < p->nextra; j++)
		p->pkts[p->extra[j].pkt].nev++;
	size_t acc = 0;
	for (size_t k = 0; k < p->npkts; k++) {
		p->pkts[k].head = (uint32_t)acc;
		acc += p->pkts[k].nev;
		p->pkts[k].nev = 0;
	}
	uint32_t *order = acc <= cap ? buf : malloc(acc * sizeof(uint32_t));
	if (!order)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = p->evpkt[i];
		if (k != UINT32_MAX)
			order[p->pkts[k].head + p->pkts[k].nev++] = (uint32_t)i;
	}
	for (size_t j = 0; j < p->nextra; j++) {
		struct ana_pkt *q = &p->pkts[p->extra[j].pkt];
		order[q->head + q->nev++] = p->extra[j].ev;
	}
	p->norder = acc;
	return order;
}

/* The packet order and the events' shrinking (into the upper half of their
 * block, or compacted) read and write disjoint data: side by side on two
 * threads. */
struct ana_sort {
	struct ana_model *m;
	struct ana_paths *p;
	uint32_t *vis;
	size_t n;
	bool in_place;              /* ana_pe_upper, else ana_pe_compact */
	uint32_t *order;
	struct ana_pe *pe;          /* the shrunk events */
};

bool ana_pe_in_place(const struct ana_model *m, size_t total, unsigned threads)
{
	/* in place on one thread, or in one analysis of the whole input: a
	 * window of the streamed analysis (ana_stream.c) on 2 threads peaked at
	 * 150-170 MB instead of 124 MB in about half the runs (10 M genfix
	 * case, not understood); the in-memory run saves faulting a fresh
	 * array of ana_pe (~30 ms of CPU at 10 M events) */
	bool streamed = m->own_set || m->sacc;
	return (threads <= 1 || !streamed) && m->pev.n && total <= m->pev.n;
}

struct ana_pe *ana_pe_shrink_first(struct ana_model *m, bool in_place)
{
	return in_place ? ana_pe_upper_range(m, m->pev.n / 2, m->pev.n) : ana_pe_compact(m);
}

void ana_pe_shrink_low(struct ana_model *m, size_t lo, size_t hi)
{
	(void)ana_pe_upper_range(m, lo, hi);
}

/* After ana_pjoin's shrink of the upper half (p->pe_pre) when it did not
 * shrink the lower half too: a quarter each of the lower half on two
 * threads (the records land on events read already). */
static void ana_sort_low_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	struct ana_sort *s = ctx;
	size_t h = s->n / 2;
	ana_pe_upper_range(s->m, t ? h / 2 : 0, t ? h : h / 2);
}

static void ana_sort_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	struct ana_sort *s = ctx;
	if (t == 0)                 /* the visit order is done with: its array takes the packet order */
		s->order = ana_group_order(s->p, s->n, s->vis, s->n);
	else
		s->pe = s->in_place ? ana_pe_upper(s->m) : ana_pe_compact(s->m);
}

struct ana_paths *ana_path_match(struct ana_model *m)
{
	struct ana_paths *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	size_t n = m->pev.n;
	const struct ana_pev *ev = m->pev.v;
	unsigned threads = m->opt && m->opt->threads > 1 ? m->opt->threads : 1;
	p->pending = calloc(m->flows.n ? m->flows.n : 1, sizeof(*p->pending));
	uint32_t *vis = n < UINT32_MAX ? malloc((n ? n : 1) * sizeof(uint32_t)) : NULL;
	int rc = vis ? ana_pjoin(m, p, vis, n, threads) : -1;
	if (rc) {
		free(vis);
		ana_path_free(p);
		return NULL;
	}
	if (!p->ranges_done)
		ana_ranges(m, p, vis, n);
	free(p->pending);
	p->pending = NULL;
	if (p->super) {
		if (ana_ptab_fill(p)) {
			free(vis);
			ana_path_free(p);
			return NULL;
		}
		ana_walk_super(p, ev, n);
	}
	/* the gather's length: ana_pjoin's order (p->pe_pre) has it */
	size_t total = p->pe_pre ? p->norder : p->njoined + p->nextra;
	struct ana_sort so = { .m = m, .p = p, .vis = vis, .n = n,
			       .in_place = ana_pe_in_place(m, total, threads) };
	bool two = threads > 1 && n >= (1u << 16), low_done = p->pe_low_done;
	p->pe_low_done = false;
	if (p->pe_pre) {                /* ana_pjoin ordered and shrank beside its merge */
		so.order = p->order;
		so.pe = p->pe_pre;
		p->pe_pre = NULL;
		if (so.in_place && !low_done) {
			if (two)
				ana_par_tasks(2, ana_sort_low_task, &so);
			else {
				ana_sort_low_task(&so, 0, 1);
				ana_sort_low_task(&so, 1, 2);
			}
		}
	} else if (two)
		ana_par_tasks(2, ana_sort_task, &so);
	else {
		ana_sort_task(&so, 0, 1);
		ana_sort_task(&so, 1, 2);
	}
	p->order = so.order;
	if (p->order != vis)
		free(vis);
	free(p->extra); p->extra = NULL; p->nextra = p->excap = 0;
	free(p->tab.slot); p->tab.slot = NULL;
	if (threads > 1 && p->evpkt)    /* malloc_trim below would unmap it alone */
		ana_par_zap(p->evpkt, n * sizeof(*p->evpkt), threads);
	free(p->evpkt); p->evpkt = NULL;
	if (!p->order || ana_pe_gather(m, p, p->order, p->norder, threads, so.pe, so.in_place)) {
		ana_path_free(p);
		return NULL;
	}
	free(p->order); p->order = NULL;
	/* hand the join's freed tables back (the heap keeps them otherwise, and
	 * the decomposition's peak would sit on top of them). Keeping them in
	 * a whole-input analysis saved 19 k of 211 k faults on the 10 M case
	 * for a peak 21 MB higher (575 -> 596 MB); with the results array in
	 * the event array's freed tail (p->spare) the trim costs ~20 k faults
	 * (169 k against 149 k) and no peak, so it stays (j30a's note) */
	malloc_trim(0);
	return p;
}

void ana_path_free(struct ana_paths *p)
{
	if (!p)
		return;
	free(p->tab.slot); free(p->pkts); free(p->evpkt); free(p->extra); free(p->order);
	free(p->pending); free(p->pe);
	free(p);
}

/* ---- per packet path order ---- */

/* Role of a host in one packet's path: 0 sender (egress first), 1 forwarder
 * (ingress then egress), 2 receiver (ingress only). */
static int ana_role(const struct ana_pe *ev, const uint32_t *idx, size_t a, size_t b)
{
	bool ing = false, eg_after = false;
	for (size_t i = a; i < b; i++) {
		int h = ev[idx[i]].hook;
		if (h <= PK_HOOK_DEV_XMIT) {
			if (!ing)
				return 0;
			eg_after = true;
		} else
			ing = true;
	}
	return eg_after ? 1 : 2;
}

/* Sorts the packet's events into path order: per host by (ts, hook), hosts
 * by role then by first time on the reference timeline (when aligned). */
/* The events of packet q to order: all of them, or when there are more
 * than cap (a storm of identical RSTs, ~170 copies of one key at 5 hooks),
 * the first of each host in equal shares, so every host keeps its role:
 * the first cap in join order were all the client's and made it the
 * sender of the server's RSTs. */
static size_t ana_path_pick(const struct ana_pe *ev, const struct ana_pkt *q, uint32_t *out,
			    size_t cap)
{
	size_t n = 0;
	if (q->nev <= cap) {
		for (uint32_t i = 0; i < q->nev; i++)
			out[n++] = q->head + i;
		return n;
	}
	uint16_t hosts[16];
	size_t used[16] = { 0 }, nh = 0;
	for (uint32_t i = 0; i < q->nev; i++) {
		size_t h;
		for (h = 0; h < nh && hosts[h] != ev[q->head + i].host; h++)
			;
		if (h == nh && nh < 16)
			hosts[nh++] = ev[q->head + i].host;
	}
	size_t share = cap / (nh ? nh : 1);
	for (uint32_t i = 0; i < q->nev && n < cap; i++) {
		size_t h;
		for (h = 0; h < nh && hosts[h] != ev[q->head + i].host; h++)
			;
		if (h < nh && used[h] < share) {
			used[h]++;
			out[n++] = q->head + i;
		}
	}
	return n;
}

size_t ana_path_order(const struct ana_model *m, const struct ana_paths *p, size_t k,
		      uint32_t *out, size_t cap)
{
	const struct ana_pkt *q = &p->pkts[k];
	const struct ana_pe *ev = p->pe;
	size_t n = ana_path_pick(ev, q, out, cap);
	for (size_t i = 1; i < n; i++) {            /* by host, ts, hook */
		uint32_t x = out[i];
		size_t j = i;
		while (j > 0) {
			const struct ana_pe *a = &ev[out[j - 1]], *b = &ev[x];
			bool gt = a->host != b->host ? a->host > b->host
				  : a->ts != b->ts ? a->ts > b->ts : a->hook > b->hook;
			if (!gt)
				break;
			out[j] = out[j - 1];
			j--;
		}
		out[j] = x;
	}
	/* host groups */
	struct { size_t a, b; int role; int64_t t; } g[16];
	size_t ng = 0;
	for (size_t i = 0; i < n && ng < 16;) {
		size_t j = i;
		while (j < n && ev[out[j]].host == ev[out[i]].host)
			j++;
		int h = ev[out[i]].host;
		g[ng].a = i; g[ng].b = j;
		g[ng].role = ana_role(ev, out, i, j);
		g[ng].t = ana_host_aligned(m, h) ? ana_to_ref(m, h, ev[out[i]].ts) : 0;
		ng++;
		i = j;
	}
	if (ng <= 1)
		return n;
	for (size_t i = 1; i < ng; i++) {
		__typeof__(g[0]) x = g[i];
		size_t j = i;
		while (j > 0 && (g[j - 1].role > x.role ||
				 (g[j - 1].role == x.role && g[j - 1].t > x.t))) {
			g[j] = g[j - 1];
			j--;
		}
		g[j] = x;
	}
	uint32_t tmp[ANA_PATH_MAXEV];
	size_t o = 0;
	for (size_t i = 0; i < ng; i++)
		for (size_t j = g[i].a; j < g[i].b; j++)
			tmp[o++] = out[j];
	memcpy(out, tmp, o * sizeof(uint32_t));
	return o;
}

/* One message per host boundary of each multi-host packet: the upstream
 * host's last event to the downstream host's first. Hosts are ordered by
 * role (sender, forwarder, receiver) without sorting the whole path. */
/* Streamed (ana_stream.c): a packet's clock points are taken in the one
 * window its earliest event lies in, on the reference clock as the HEADERs'
 * wall clocks map it (the fit is not known yet); an interior packet has the
 * same events in every window that reads it, so exactly one owns it. */
static bool ana_path_owned(const struct ana_model *m, const struct ana_pe *ev, uint32_t n)
{
	int64_t t = INT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		int64_t x = (int64_t)ev[i].ts - m->hosts.v[ev[i].host].seek_d;
		if (x < t)
			t = x;
	}
	return t >= m->own_lo && t < m->own_hi;
}

static void ana_cpts_range(const struct ana_model *m, const struct ana_paths *p,
			   struct ana_clockpts *cp, size_t lo, size_t hi)
{
	const struct ana_pe *ev = p->pe;
	struct ana_cmsg msg[256];
	size_t nm = 0;
	for (size_t k = lo; k < hi; k++) {
		const struct ana_pkt *q = &p->pkts[k];
		if (q->nev < 2 || (m->own_set && !ana_path_owned(m, ev + q->head, q->nev)))
			continue;
		struct { uint16_t host; uint64_t first, last; uint8_t first_hook; bool eg_late;
			 uint32_t hooks; } h[4];
		int nh = 0;
		bool multi = false, resent = false;
		for (uint32_t i = 0; i < q->nev && !resent; i++) {
			const struct ana_pe *e = &ev[q->head + i];
			if (e->flags & ANA_RANGE_FLAG)
				continue;
			int j;
			for (j = 0; j < nh && h[j].host != e->host; j++)
				;
			if (j == nh) {
				if (nh == 4)
					continue;
				h[nh].host = e->host;
				h[nh].first = h[nh].last = e->ts;
				h[nh].first_hook = e->hook;
				h[nh].eg_late = false;
				h[nh].hooks = 1u << e->hook;
				multi = nh++ > 0;
				continue;
			}
			/* the same key passed a hook twice (re-sent within one TSval
			 * tick): which copy arrived is unknown, no clock evidence */
			if (h[j].hooks & (1u << e->hook))
				resent = true;
			h[j].hooks |= 1u << e->hook;
			if (e->ts < h[j].first) {
				h[j].first = e->ts;
				h[j].first_hook = e->hook;
			}
			if (e->ts > h[j].last)
				h[j].last = e->ts;
			if (e->hook <= PK_HOOK_DEV_XMIT)
				h[j].eg_late = true;
		}
		if (!multi || resent)
			continue;
		int role[4], ord[4];
		for (int j = 0; j < nh; j++) {
			role[j] = h[j].first_hook <= PK_HOOK_DEV_XMIT ? 0 : h[j].eg_late ? 1 : 2;
			ord[j] = j;
		}
		for (int a = 1; a < nh; a++)
			for (int b = a; b > 0 && role[ord[b - 1]] > role[ord[b]]; b--) {
				int t = ord[b]; ord[b] = ord[b - 1]; ord[b - 1] = t;
			}
		if (nm + 3 > sizeof(msg) / sizeof(msg[0])) {
			ana_clock_add_n(cp, msg, nm);
			nm = 0;
		}
		for (int j = 1; j < nh; j++)
			msg[nm++] = (struct ana_cmsg){ .s = h[ord[j - 1]].host, .ts = h[ord[j - 1]].last,
						       .r = h[ord[j]].host, .tr = h[ord[j]].first };
	}
	ana_clock_add_n(cp, msg, nm);
}

/* Threads: packet ranges into sets of their own, merged in range order. */
struct ana_cpts { const struct ana_model *m; const struct ana_paths *p; unsigned nt;
		  struct ana_clockpts *cp[ANA_PAR_MAXT]; };

static void ana_cpts_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	const struct ana_cpts *c = ctx;
	size_t n = c->p->npkts;
	ana_cpts_range(c->m, c->p, c->cp[t], n * t / c->nt, n * (t + 1) / c->nt);
}

void ana_path_clock_points(const struct ana_model *m, const struct ana_paths *p,
			   struct ana_clockpts *cp)
{
	struct ana_cpts c = { .m = m, .p = p, .nt = 1, .cp = { cp } };
	unsigned want = m->opt && m->opt->threads > 1 ? m->opt->threads : 1;
	if (want > ANA_PAR_MAXT)
		want = ANA_PAR_MAXT;
	while (cp && p->npkts >= 65536 && c.nt < want && (c.cp[c.nt] = ana_clock_pts_like(cp)))
		c.nt++;
	ana_par_tasks(c.nt, ana_cpts_task, &c);
	for (unsigned t = 1; t < c.nt; t++)
		ana_clock_pts_merge(cp, c.cp[t]);
}
