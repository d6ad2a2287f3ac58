/* The join (analyze/ana_pjoin.c) and its visit order (ana_path.c) on
 * models built by hand.
 *
 * Retransmission groups: a TCP key (seq, ack | 1) passed by pure ACKs and data packets in
 * turn, its ack's low bit changing, a UDP packet with the same seq and ack,
 * and enough packets of one event each that the slot table grows during
 * the join (on 1 thread and in every partition of 2 and 3). A data packet
 * joins the group of the first data packet of its key (ana_path.c's rule);
 * the expected groups are written out below, not computed by the join's
 * method. */
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "ana_path.h"
#include "tap.h"

#define FILL 30000              /* one-event packets: several times the table's first size */

struct spec { uint32_t seq, ack, xid, len, flow; };

/* The keys' packets, in the order they are first seen; each sent twice
 * (the second copy 9 000 events later) so that its packet is found again
 * in the table, not only in the recent cache. */
static const struct spec kin[] = {
	{ 7, 100, 1, 0, 0 },        /* 0: pure ACK: no group */
	{ 7, 101, 2, 500, 0 },      /* 1: first data packet of (7, 101): the original */
	{ 7, 100, 3, 500, 0 },      /* 2: resent: group of 1 */
	{ 7, 100, 4, 0, 0 },        /* 3: pure ACK */
	{ 7, 101, 5, 500, 0 },      /* 4: resent again: group of 1 */
	{ 7, 100, 6, 500, 1 },      /* 5: UDP, same seq and ack: alone */
	{ 9, 0, 1, 0, 0 },          /* 6: another key: pure ACKs, ... */
	{ 9, 1, 2, 0, 0 },          /* 7 */
	{ 9, 0, 3, 100, 0 },        /* 8: ... then its first data packet: alone */
};
#define NKIN (sizeof(kin) / sizeof(kin[0]))
static const int want_group[NKIN] = { 0, 1, 1, 3, 1, 5, 6, 7, 8 };   /* in kin's numbering */
static const bool want_ngroup[NKIN] = { 0, 1, 1, 0, 1, 0, 0, 0, 0 };

static void push(struct ana_model *m, uint64_t *ts, uint32_t seq, uint32_t ack, uint32_t xid,
		 uint32_t len, uint32_t flow)
{
	struct ana_pev *e = ANA_PUSH(m->pev);
	if (e)
		*e = (struct ana_pev){ .ts = (*ts += 1000), .seq = seq, .ack = ack, .xid = xid,
				       .len = len, .flow = flow, .host = 0,
				       .hook = PK_HOOK_DEV_XMIT };
}

/* The key's packets spread among the fillers, every one seen twice. */
static void build(struct ana_model *m)
{
	struct ana_host *h = ANA_PUSH(m->hosts);
	struct ana_flow *f0 = ANA_PUSH(m->flows), *f1 = ANA_PUSH(m->flows);
	CHECK(h && f0 && f1, "model memory");
	if (!h || !f0 || !f1)
		return;
	memset(h, 0, sizeof(*h));
	f0 = &m->flows.v[0];
	memset(f0, 0, 2 * sizeof(*f0));
	m->flows.v[0].proto = 6;
	m->flows.v[1].proto = 17;
	uint64_t ts = 0;
	for (size_t i = 0; i < FILL; i++) {
		push(m, &ts, 1000000 + 1460 * (uint32_t)i, 5, (uint32_t)i, 1460, 0);
		size_t x = i / 1000;
		if (i % 1000 == 500 && x < 2 * NKIN) {
			const struct spec *s = &kin[x % NKIN];
			push(m, &ts, s->seq, s->ack, s->xid, s->len, s->flow);
		}
	}
}

static void check(const struct ana_model *m, const struct ana_paths *p, unsigned t)
{
	uint32_t k[NKIN];
	size_t bad = 0, fill = 0;
	for (size_t i = 0, x = 0; i < m->pev.n; i++) {
		const struct ana_pev *e = &m->pev.v[i];
		uint32_t q = p->evpkt[i];
		if (e->ack == 5) {
			fill++;
			bad += q == UINT32_MAX || p->pkts[q].group != q || p->pkts[q].ngroup;
			continue;
		}
		if (x < NKIN)
			k[x] = q;
		else
			bad += q != k[x % NKIN];        /* the second copy: the same packet */
		x++;
	}
	CHECK(fill == FILL && bad == 0, "%u threads: %zu of %zu fillers or copies wrong", t, bad, fill);
	CHECK(p->npkts == FILL + NKIN, "%u threads: %zu packets", t, p->npkts);
	for (size_t x = 0; x < NKIN; x++) {
		const struct ana_pkt *q = &p->pkts[k[x]];
		CHECK(q->group == k[want_group[x]] && q->ngroup == want_ngroup[x],
		      "%u threads: packet %zu of the key: group %u (want %u), ngroup %d", t, x,
		      q->group, k[want_group[x]], q->ngroup);
		CHECK(q->nev == 2, "%u threads: packet %zu of the key has its 2 events: %u", t, x,
		      q->nev);
	}
}

/* The visit order where a stretch stops at 256 events: host 1's run is
 * earlier by one event and then ties host 0's next time for 299 events;
 * ana_vstep takes 256 of them, then host 0's (the tie goes to run 0), then
 * the rest. */
static void test_visit_cap(void)
{
	struct ana_options o = { .quiet = true };
	struct ana_model m;
	ana_model_init(&m, &o);
	struct ana_host *h = ANA_PUSH(m.hosts);
	if (h)
		memset(h, 0, sizeof(*h));
	h = ANA_PUSH(m.hosts);
	if (h)
		memset(h, 0, sizeof(*h));
	static const struct { uint16_t host; uint64_t ts; size_t n; } runs[] = {
		{ 0, 5000, 10 }, { 0, 9000, 5 }, { 1, 4999, 1 }, { 1, 5000, 299 },
	};
	for (size_t r = 0; r < 4; r++)
		for (size_t i = 0; i < runs[r].n; i++) {
			struct ana_pev *e = ANA_PUSH(m.pev);
			if (e)
				*e = (struct ana_pev){ .ts = runs[r].ts, .host = runs[r].host };
		}
	CHECK(m.hosts.n == 2 && m.pev.n == 315, "visit model");
	uint32_t vis[315], want[315];
	size_t w = 0;
	for (uint32_t i = 15; i < 15 + 256; i++)        /* host 1: 4999, then 255 ties */
		want[w++] = i;
	for (uint32_t i = 0; i < 10; i++)               /* host 0 at 5000 (the tie) */
		want[w++] = i;
	for (uint32_t i = 15 + 256; i < 315; i++)       /* host 1's rest, before 9000 */
		want[w++] = i;
	for (uint32_t i = 10; i < 15; i++)
		want[w++] = i;
	if (m.pev.n == 315) {
		ana_visit_fill(&m, vis);
		CHECK(!memcmp(vis, want, sizeof(vis)), "visit order: a stretch stops at 256 events");
	}
	ana_model_free(&m);
}

/* Hosts' events in four pieces (A B A B: the first and last of two hosts,
 * so the two-run guess is made and must be found wrong): the visit order
 * is still ana_vstep's over the four runs, from ana_visit_fill and from
 * the join's walks in pieces on 2 and 3 threads. */
#define PIECE 20000             /* events a piece: enough for the join's walks in pieces */

static void test_visit_pieces(void)
{
	struct ana_options o = { .quiet = true };
	struct ana_model m;
	ana_model_init(&m, &o);
	for (int h = 0; h < 2; h++) {
		struct ana_host *x = ANA_PUSH(m.hosts);
		if (x)
			memset(x, 0, sizeof(*x));
	}
	struct ana_flow *f = ANA_PUSH(m.flows);
	if (f)
		memset(f, 0, sizeof(*f));
	for (uint32_t i = 0; i < 4 * PIECE; i++) {
		struct ana_pev *e = ANA_PUSH(m.pev);
		if (e)      /* piece i / PIECE of host (i / PIECE) % 2, times interleaved */
			*e = (struct ana_pev){ .ts = 1000 + (i % PIECE) * 10 + (i / PIECE) * 3,
					       .seq = i % (PIECE / 2), .hook = PK_HOOK_DEV_XMIT,
					       .host = (uint16_t)(i / PIECE % 2) };
	}
	size_t n = m.pev.n, lo, hi, nv = 0, off = 0;
	uint32_t *vis = malloc(n * sizeof(*vis)), *ref = malloc(n * sizeof(*ref));
	struct ana_vruns v;
	if (n == 4 * PIECE && m.hosts.n == 2 && m.flows.n == 1 && vis && ref) {
		ana_visit_fill(&m, ref);
		ana_vruns_find(&m, &v, 1);
		CHECK(v.n == 4, "four runs: %zu", v.n);
		while ((hi = ana_vstep(m.pev.v, &v, &lo)))
			for (size_t i = lo; i < hi; i++, nv++)
				off += nv >= n || ref[nv] != i;
		CHECK(nv == n && off == 0, "A B A B: ana_vstep's order (%zu of %zu off)", off, nv);
		for (unsigned t = 2; t <= 3; t++) {
			struct ana_paths *p = calloc(1, sizeof(*p));
			CHECK(p && ana_pjoin(&m, p, vis, n, t) == 0, "A B A B: join on %u threads", t);
			CHECK(!memcmp(vis, ref, n * sizeof(*vis)),
			      "A B A B: the join's visit order on %u threads is ana_vstep's", t);
			CHECK(p && p->npkts == PIECE / 2, "A B A B: %zu packets on %u threads",
			      p ? p->npkts : 0, t);
			ana_path_free(p);
		}
	} else
		CHECK(0, "pieces model");
	free(vis);
	free(ref);
	ana_model_free(&m);
}

/* A storm of one packet's copies on host 0 (nstorm events of one key, with
 * a sock_send range before each tenth) among packets of one event each,
 * some of them and the storm's key seen again on host 1: the packets and
 * the events in packet order from ana_path_match on 2 and 3 threads are
 * 1 thread's. Past 65 535 of the storm's events on host 0, the 2-thread
 * join's per-packet count of host 0's events would wrap (it then takes the
 * event-to-packet array instead). */
static struct ana_paths *storm_match(uint32_t nstorm, unsigned threads, struct ana_model *m,
				     struct ana_options *o)
{
	*o = (struct ana_options){ .quiet = true, .threads = threads };
	ana_model_init(m, o);
	for (int h = 0; h < 2; h++) {
		struct ana_host *x = ANA_PUSH(m->hosts);
		if (x)
			memset(x, 0, sizeof(*x));
	}
	for (int f = 0; f < 2; f++) {
		struct ana_flow *x = ANA_PUSH(m->flows);
		if (x) {
			memset(x, 0, sizeof(*x));
			x->proto = 6;
			x->host = (uint16_t)f;
		}
	}
	for (uint32_t i = 0; i < 2 * nstorm; i++) {
		struct ana_pev *e = ANA_PUSH(m->pev);
		bool storm = i % 2 == 0;
		if (!e)
			break;
		*e = (struct ana_pev){ .ts = 1000 * (uint64_t)i, .seq = storm ? 1 : 100000 + i,
				       .ack = 5, .xid = 1, .len = 100, .hook = PK_HOOK_DEV_XMIT };
		if (i % 20 == 1 && (e = ANA_PUSH(m->pev)))
			*e = (struct ana_pev){ .ts = 1000 * (uint64_t)i + 1, .seq = 100000 + i + 2,
					       .len = 100, .hook = PK_HOOK_SOCK_SEND,
					       .flags = 0x04 };
	}
	for (uint32_t i = 0; i < 40000; i++) {
		struct ana_pev *e = ANA_PUSH(m->pev);
		if (e)
			*e = (struct ana_pev){ .ts = 1000 * (uint64_t)(i * 3) + 500,
					       .seq = i % 100 == 0 ? 1 : 100000 + i * 3, .ack = 5,
					       .xid = 1, .len = 100, .flow = 1, .host = 1,
					       .hook = PK_HOOK_TCP_RCV };
	}
	return ana_path_match(m);
}

static void test_storm(uint32_t nstorm)
{
	struct ana_options o[3];
	struct ana_model m[3];
	struct ana_paths *p[3];
	for (unsigned t = 0; t < 3; t++)
		p[t] = storm_match(nstorm, t + 1, &m[t], &o[t]);
	CHECK(p[0] && p[1] && p[2], "storm of %u: matched", nstorm);
	/* more packets with payload than range events: several threads close
	 * up the slots of those without a range (pj_order_len), as many
	 * entries as on 1 thread */
	for (unsigned t = 1; t < 3 && p[0] && p[t]; t++) {
		bool same = p[t]->npkts == p[0]->npkts && p[t]->norder == p[0]->norder;
		for (size_t k = 0; same && k < p[0]->npkts; k++) {
			const struct ana_pkt *a = &p[0]->pkts[k], *b = &p[t]->pkts[k];
			same = a->seq == b->seq && a->nev == b->nev && a->group == b->group &&
			       a->range_ev == b->range_ev && (size_t)b->head + b->nev <= p[t]->norder &&
			       !memcmp(p[0]->pe + a->head, p[t]->pe + b->head, a->nev * sizeof(*p[0]->pe));
		}
		CHECK(same, "storm of %u: %u threads: the packets and their events in order as on 1",
		      nstorm, t + 1);
	}
	size_t big = 0, ranged = 0;
	for (size_t k = 0; p[0] && k < p[0]->npkts; k++) {
		if (p[0]->pkts[k].nev > big)
			big = p[0]->pkts[k].nev;
		ranged += p[0]->pkts[k].range_ev != UINT32_MAX;
	}
	CHECK(big == nstorm + 400, "storm of %u: its packet has every copy: %zu", nstorm, big);
	CHECK(ranged > 0, "storm of %u: ranges taken: %zu", nstorm, ranged);
	for (unsigned t = 0; t < 3; t++) {
		ana_path_free(p[t]);
		ana_model_free(&m[t]);
	}
}

/* Packets of one egress and one receive event each, a sock_send range
 * before each; every tenth range names other bytes, so its packet takes
 * none. As many range events as packets with payload: on 2 and 3 threads
 * the order keeps an unused entry after each packet without a range (they
 * fit in the events' count), every packet's events as on 1 thread. */
#define SLOTS_N 12000u

static struct ana_paths *slots_match(unsigned threads, struct ana_model *m, struct ana_options *o)
{
	*o = (struct ana_options){ .quiet = true, .threads = threads };
	ana_model_init(m, o);
	for (int h = 0; h < 2; h++) {
		struct ana_host *x = ANA_PUSH(m->hosts);
		struct ana_flow *f = ANA_PUSH(m->flows);
		if (x)
			memset(x, 0, sizeof(*x));
		if (f) {
			memset(f, 0, sizeof(*f));
			f->proto = 6;
			f->host = (uint16_t)h;
		}
	}
	for (int h = 0; h < 2; h++)
		for (uint32_t i = 0; i < SLOTS_N; i++) {
			uint32_t seq = 1000 + 100 * i;
			struct ana_pev *e;
			if (!h && (e = ANA_PUSH(m->pev)))
				*e = (struct ana_pev){ .ts = 1000 * (uint64_t)i,
						       .seq = i % 10 == 5 ? seq + 50000000 : seq, .len = 100,
						       .hook = PK_HOOK_SOCK_SEND, .flags = 0x04 };
			if ((e = ANA_PUSH(m->pev)))
				*e = (struct ana_pev){ .ts = 1000 * (uint64_t)i + 1 + 499 * (uint64_t)h,
						       .seq = seq, .ack = 5, .xid = i + 1, .len = 100,
						       .flow = (uint32_t)h, .host = (uint16_t)h,
						       .hook = h ? PK_HOOK_TCP_RCV : PK_HOOK_DEV_XMIT };
		}
	return ana_path_match(m);
}

static void test_slots(void)
{
	struct ana_options o[3];
	struct ana_model m[3];
	struct ana_paths *p[3];
	for (unsigned t = 0; t < 3; t++)
		p[t] = slots_match(t + 1, &m[t], &o[t]);
	CHECK(p[0] && p[1] && p[2], "slots: matched");
	size_t unused = 0;
	for (size_t k = 0; p[0] && k < p[0]->npkts; k++)
		unused += p[0]->pkts[k].range_ev == UINT32_MAX;
	CHECK(p[0] && p[0]->npkts == SLOTS_N && unused >= SLOTS_N / 10,
	      "slots: %u packets, a tenth or more without a range: %zu", SLOTS_N, unused);
	for (unsigned t = 1; t < 3 && p[0] && p[t]; t++) {
		bool same = p[t]->npkts == p[0]->npkts && p[t]->norder == p[0]->norder + unused;
		for (size_t k = 0; same && k < p[0]->npkts; k++) {
			const struct ana_pkt *a = &p[0]->pkts[k], *b = &p[t]->pkts[k];
			same = a->nev == b->nev && a->range_ev == b->range_ev &&
			       (size_t)b->head + b->nev <= p[t]->norder &&
			       !memcmp(p[0]->pe + a->head, p[t]->pe + b->head, a->nev * sizeof(*p[0]->pe));
		}
		CHECK(same, "slots: %u threads: %zu unused entries, each packet's events as on 1",
		      t + 1, unused);
	}
	for (unsigned t = 0; t < 3; t++) {
		ana_path_free(p[t]);
		ana_model_free(&m[t]);
	}
}

int main(void)
{
	test_visit_cap();
	test_visit_pieces();
	test_storm(30000);
	test_storm(70000);
	test_slots();
	struct ana_options o = { .quiet = true };
	struct ana_model m;
	ana_model_init(&m, &o);
	build(&m);
	size_t n = m.pev.n;
	uint32_t *vis = malloc((n ? n : 1) * sizeof(*vis));
	CHECK(vis != NULL, "memory");
	for (unsigned t = 1; vis && t <= 3; t++) {
		struct ana_paths *p = calloc(1, sizeof(*p));
		CHECK(p && ana_pjoin(&m, p, vis, n, t) == 0, "join on %u threads", t);
		if (p && p->evpkt)
			check(&m, p, t);
		ana_path_free(p);
	}
	free(vis);
	ana_model_free(&m);
	return tap_done();
}
