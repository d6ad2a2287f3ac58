/* The packet join (analyze/ana_pjoin.c, ana_path.c) on genfix recordings
 * with known truth: every data packet becomes one packet with its 7 hook
 * events plus its sock_send range, every lost packet that genfix resent
 * forms a retransmission group of two, GSO super-packets are attached to
 * their pieces; and --threads 1, 2, 3 (and 9: more partitions than the
 * ranges' word-wise pass takes) give the same packets and the same events
 * in packet order, byte for byte (several threads may leave an unused
 * entry after a packet with payload that took no sock_send range, so the
 * packets' heads may differ: test_ana_pjoin_synth's slots). Enough events
 * (> 65 536) that the parallel passes run. */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ana.h"
#include "ana_path.h"
#include "tap.h"

#define DIRN 512

struct joined { struct ana_options o; struct ana_model m; struct ana_paths *p; };

static void join(struct joined *j, const char *dir, unsigned threads)
{
	char a[DIRN + 32], b[DIRN + 32];
	memset(j, 0, sizeof(*j));
	j->o.quiet = true;
	j->o.threads = threads;
	snprintf(a, sizeof(a), "%s/hosta.npr", dir);
	snprintf(b, sizeof(b), "%s/hostb.npr", dir);
	ana_model_init(&j->m, &j->o);
	CHECK(ana_load_file(&j->m, a, NULL) == 0, "load %s, threads %u", a, threads);
	CHECK(ana_load_file(&j->m, b, NULL) == 0, "load %s, threads %u", b, threads);
	j->p = ana_path_match(&j->m);
	CHECK(j->p != NULL, "match, threads %u", threads);
}

static void drop(struct joined *j)
{
	ana_path_free(j->p);
	ana_model_free(&j->m);
}

/* All but the head (where its events are in pe). */
static bool same_pkt(const struct ana_pkt *x, const struct ana_pkt *y)
{
	return x->seq == y->seq && x->ack == y->ack && x->xid == y->xid && x->minlen == y->minlen &&
	       x->nev == y->nev && x->group == y->group &&
	       x->range_ev == y->range_ev && x->udp == y->udp && x->ngroup == y->ngroup;
}

/* y (threads ty) against x (1 thread): the same packets, each with the
 * same events in the same order; unused is the entries y's pe has more. */
static void same_paths(const struct joined *x, const struct joined *y, unsigned ty, size_t unused)
{
	if (!x->p || !y->p)
		return;
	CHECK(x->p->npkts == y->p->npkts, "threads %u: %zu packets, 1 thread %zu", ty, y->p->npkts,
	      x->p->npkts);
	CHECK(x->p->norder + unused == y->p->norder, "threads %u: %zu entries, 1 thread %zu + %zu",
	      ty, y->p->norder, x->p->norder, unused);
	size_t bad = 0, evbad = 0;
	for (size_t k = 0; k < x->p->npkts && k < y->p->npkts; k++) {
		const struct ana_pkt *a = &x->p->pkts[k], *b = &y->p->pkts[k];
		bad += !same_pkt(a, b);
		evbad += a->nev != b->nev || (size_t)b->head + b->nev > y->p->norder ||
			 memcmp(x->p->pe + a->head, y->p->pe + b->head, a->nev * sizeof(*x->p->pe));
	}
	CHECK(bad == 0, "threads %u: %zu packets differ from 1 thread's", ty, bad);
	CHECK(evbad == 0, "threads %u: %zu packets' events in packet order differ from 1 thread's",
	      ty, evbad);
}

/* Data packets (some payload), how many are retransmissions of an earlier
 * one, how many carry a sock_send range. */
struct counts { size_t data, resent, grouped, ranged, acks; };

static struct counts count(const struct ana_paths *p)
{
	struct counts c = { 0 };
	for (size_t k = 0; k < p->npkts; k++) {
		const struct ana_pkt *q = &p->pkts[k];
		if (q->minlen == UINT32_MAX) {
			c.acks++;
			continue;
		}
		c.data++;
		c.resent += q->group != k;
		c.grouped += q->ngroup;
		c.ranged += q->range_ev != UINT32_MAX;
	}
	return c;
}

/* d joined with threads 1, 2 and 3 into j[0..2]. */
static void join3(struct joined *j, const char *d)
{
	for (unsigned t = 0; t < 3; t++)
		join(&j[t], d, t + 1);
}

/* j[1] and j[2] against j[0] (unused: the entries they have more), then
 * all dropped. */
static void compare_drop(struct joined *j, size_t unused)
{
	for (unsigned t = 1; t < 3; t++)
		same_paths(&j[0], &j[t], t + 1, unused);
	for (unsigned t = 0; t < 3; t++)
		drop(&j[t]);
}

static int gen(const char *genfix, const char *dir, const char *sub, const char *args, char *out)
{
	char cmd[4 * DIRN];
	snprintf(out, DIRN, "%s/%s", dir, sub);
	snprintf(cmd, sizeof(cmd), "%s -o %s %s --no-truth", genfix, out, args);
	return system(cmd);
}

/* 10 000 packets on 2 flows, every 50th lost at one hop and resent 200 ms
 * later with a new TSval: 200 groups of two. The resent packets take no
 * sock_send range (the first send's took it whole): 10 200 packets with
 * payload against 10 000 range events, so several threads close up the
 * slots left for their ranges (as many entries as on 1 thread). On 9
 * threads too (the ranges' byte-wise pass, the merge's and scatter's
 * loops over the partitions). */
static void test_retx(const char *genfix, const char *dir)
{
	char d[DIRN];
	CHECK(gen(genfix, dir, "retx", "--packets 10000 --flows 2 --loss 50 --retx --seed 11", d) == 0,
	      "genfix retx");
	struct joined j[3];
	join3(j, d);
	if (j[0].p) {
		struct counts c = count(j[0].p);
		CHECK(c.data == 10200, "10 000 data packets + 200 resent: %zu", c.data);
		CHECK(c.resent == 200, "200 retransmissions in a group: %zu", c.resent);
		CHECK(c.grouped == 400, "200 groups of two: %zu packets flagged", c.grouped);
		CHECK(c.ranged == 10000, "each first send attached to its sock_send: %zu", c.ranged);
		CHECK(!j[0].p->super, "no super-packet");
		struct joined j9;
		join(&j9, d, 9);
		same_paths(&j[0], &j9, 9, 0);
		drop(&j9);
	}
	compare_drop(j, 0);
}

/* 16 000 segments sent as 4 000 GSO super-packets of 4: the receiver sees
 * 16 000 packets; the sender's super-packet events (and its send range)
 * are attached to the 3 later pieces of each too. */
static void test_gso(const char *genfix, const char *dir)
{
	char d[DIRN];
	CHECK(gen(genfix, dir, "gso", "--packets 16000 --flows 2 --gso 4 --seed 5", d) == 0,
	      "genfix gso");
	struct joined j[3];
	join3(j, d);
	if (j[0].p) {
		struct counts c = count(j[0].p);
		CHECK(c.data == 16000, "16 000 data packets: %zu", c.data);
		CHECK(c.resent == 0, "no retransmission: %zu", c.resent);
		CHECK(c.ranged == 16000, "every piece attached to the send: %zu", c.ranged);
		CHECK(j[0].p->super, "super-packets seen");
	}
	compare_drop(j, 0);         /* super-packets: no range slots */
}

/* The visit order and the packet of every event from ana_pjoin on 2-4
 * threads (made in pieces that must meet) against the single walk
 * (ana_visit_fill) and the 1-thread join: on the recording as it is, with
 * every timestamp cut to 20 us (ties between and within hosts), and with a
 * stretch of one host's events in reverse time order (the pieces' guess by
 * time is wrong there). */
static void visit_check(struct ana_model *m, const char *what)
{
	size_t n = m->pev.n;
	uint32_t *ref = malloc(n * sizeof(*ref)), *vis = malloc(n * sizeof(*vis)), *pk1 = NULL;
	CHECK(ref && vis, "%s: memory", what);
	if (!ref || !vis)
		goto out;
	ana_visit_fill(m, ref);
	/* ana_visit_fill's two-run loop against ana_vstep's steps */
	struct ana_vruns v;
	size_t lo, hi, nv = 0, off = 0;
	ana_vruns_find(m, &v, 1);
	while ((hi = ana_vstep(m->pev.v, &v, &lo)))
		for (size_t i = lo; i < hi; i++, nv++)
			off += nv >= n || ref[nv] != i;
	CHECK(nv == n && off == 0, "%s: the visit order is ana_vstep's: %zu of %zu off", what, off, n);
	for (unsigned t = 1; t <= 4; t++) {
		struct ana_paths *p = calloc(1, sizeof(*p));
		memset(vis, 0xff, n * sizeof(*vis));
		CHECK(p && ana_pjoin(m, p, vis, n, t) == 0, "%s: join on %u threads", what, t);
		if (!p || !p->evpkt) {
			ana_path_free(p);
			continue;
		}
		CHECK(!memcmp(vis, ref, n * sizeof(*vis)), "%s: %u threads: the single walk's visit order",
		      what, t);
		if (t == 1) {
			pk1 = p->evpkt;
			p->evpkt = NULL;
		} else
			CHECK(pk1 && !memcmp(p->evpkt, pk1, n * sizeof(*pk1)),
			      "%s: %u threads: every event's packet as on 1 thread", what, t);
		ana_path_free(p);
	}
out:
	free(ref);
	free(vis);
	free(pk1);
}

/* The first host's events with the timestamps of each pair swapped: each
 * piece's start, guessed by time, is then off the single walk's path by an
 * event or so, and the walk before it meets it a few positions past its
 * start having taken other events there: those positions are the walk
 * before's (its side buffer copied over them), not the piece's own. */
static void test_visit_swapped(const char *a, const char *b)
{
	struct ana_options o = { .quiet = true };
	struct ana_model m;
	ana_model_init(&m, &o);
	CHECK(ana_load_file(&m, a, NULL) == 0 && ana_load_file(&m, b, NULL) == 0, "load %s", a);
	size_t hi = 0;
	while (hi < m.pev.n && m.pev.v[hi].host == m.pev.v[0].host)
		hi++;
	for (size_t i = 0; i + 1 < hi; i += 2) {
		uint64_t x = m.pev.v[i].ts;
		m.pev.v[i].ts = m.pev.v[i + 1].ts;
		m.pev.v[i + 1].ts = x;
	}
	visit_check(&m, "pairs swapped");
	ana_model_free(&m);
}

static void test_visit(const char *genfix, const char *dir)
{
	char d[DIRN], a[DIRN + 32], b[DIRN + 32];
	CHECK(gen(genfix, dir, "visit", "--packets 20000 --flows 4 --loss 100 --retx --seed 3", d) == 0,
	      "genfix visit");
	struct ana_options o = { .quiet = true };
	struct ana_model m;
	snprintf(a, sizeof(a), "%s/hosta.npr", d);
	snprintf(b, sizeof(b), "%s/hostb.npr", d);
	ana_model_init(&m, &o);
	CHECK(ana_load_file(&m, a, NULL) == 0 && ana_load_file(&m, b, NULL) == 0, "load %s", d);
	CHECK(m.pev.n > 150000, "enough events for pieces on 4 threads: %zu", m.pev.n);
	visit_check(&m, "as recorded");
	for (size_t i = 0; i < m.pev.n; i++)
		m.pev.v[i].ts -= m.pev.v[i].ts % 20000;
	visit_check(&m, "ties");
	/* the first host's events from a quarter to a half, backwards in time */
	size_t lo = 0, hi = 0;
	while (hi < m.pev.n && m.pev.v[hi].host == m.pev.v[0].host)
		hi++;
	lo = hi / 4;
	hi /= 2;
	for (size_t i = lo, j = hi - 1; i < j; i++, j--) {
		uint64_t x = m.pev.v[i].ts;
		m.pev.v[i].ts = m.pev.v[j].ts;
		m.pev.v[j].ts = x;
	}
	visit_check(&m, "out of order");
	ana_model_free(&m);
	test_visit_swapped(a, b);
}

int main(int argc, char **argv)
{
	(void)argc;
	char self[DIRN], genfix[DIRN + 32], dir[] = "/tmp/np-test-pjoin.XXXXXX", cmd[DIRN + 16];
	snprintf(self, sizeof(self), "%.400s", argv[0]);
	snprintf(genfix, sizeof(genfix), "%.400s/../tools/genfix", dirname(self));
	if (access(genfix, X_OK) || !mkdtemp(dir)) {
		CHECK(0, "genfix not found at %s (make tools)", genfix);
		return tap_done();
	}
	test_retx(genfix, dir);
	test_gso(genfix, dir);
	test_visit(genfix, dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "%s", cmd);
	return tap_done();
}
