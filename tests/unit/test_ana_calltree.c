/* Slow-RPC call trees (analyze/ana_calltree.c) on in-memory models with
 * known answers: a front server transaction that waited for a backend
 * call splits into the backend's application time, the network between
 * them and the front's own time, across a 5 ms clock offset; a call that
 * waited for a retransmission names the network; a call to an unrecorded
 * host is "unrecorded_peer"; a transaction without calls gives no rows. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "tap.h"

#define MS 1000000ull
#define T0 (1000 * MS)
#define OFF (5 * MS)            /* back's clock runs 5 ms ahead of front's */

static void host(struct ana_model *m, const char *name, double b)
{
	struct ana_host *h = ANA_PUSH(m->hosts);
	if (!h)
		return;
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->clk_a = 1.0;
	h->clk_b = b;
	h->clk_quality = b == 0 ? ANA_CLK_REF : ANA_CLK_ACCURATE;
}

static void row(struct ana_model *m, int h, bool server, uint64_t conn, unsigned lp, unsigned rp)
{
	struct ana_txn *x = ANA_PUSH(m->txns);
	if (!x)
		return;
	memset(x, 0, sizeof(*x));
	x->host = (uint16_t)h;
	x->server = server;
	x->conn_id = conn;
	x->local_port = (uint16_t)lp;
	x->peer_port = (uint16_t)rp;
}

static size_t ev(struct ana_model *m, int h, bool server, uint64_t conn, uint64_t start, uint64_t dur,
		 uint32_t pid, uint32_t tid)
{
	struct ana_txev *x = ANA_PUSH(m->txevs);
	if (!x)
		return SIZE_MAX;
	memset(x, 0, sizeof(*x));
	x->host = (uint16_t)h;
	x->server = server;
	x->conn = conn;
	x->start = start;
	x->dur = dur;
	x->end = start + dur;
	x->pid = pid;
	x->tid = tid;
	return m->txevs.n - 1;
}

static void model(struct ana_model *m)
{
	memset(m, 0, sizeof(*m));
	host(m, "front", 0);
	host(m, "back", -(double)OFF);
	row(m, 0, true, 1, 8080, 50000);        /* front serves the client */
	row(m, 0, false, 2, 40000, 9002);       /* front calls back */
	row(m, 1, true, 3, 9002, 40000);        /* back answers front */
	row(m, 0, false, 4, 40001, 7777);       /* front calls a host with no recorder */
}

static void model_free(struct ana_model *m)
{
	free(m->hosts.v); free(m->txns.v); free(m->txevs.v);
}

static double comp(const struct np_table *t, const char *name, int *best)
{
	for (size_t r = 0; r < t->nrows; r++) {
		const struct np_cell *c = np_table_cell_c(t, r, 3);
		if (c->kind == NP_CELL_STR && !strcmp(c->s, name)) {
			*best = (int)np_cell_f64(np_table_cell_c(t, r, 7));
			return np_cell_f64(np_table_cell_c(t, r, 4));
		}
	}
	*best = -1;
	return -1;
}

static struct np_table *table(void)
{
	struct np_table *t = np_table_new("bottlenecks", "test", 4);
	const char *cols[] = { "source", "from", "to", "component", "d_i", "d_rtt", "x_i", "bottleneck", "what" };
	const char *types[] = { "str", "time_ns", "time_ns", "str", "ns", "ns", "ratio", "bool", "str" };
	for (int i = 0; i < 9; i++)
		np_table_col(t, cols[i], types[i], "");
	return t;
}

static bool run(struct ana_model *m, size_t x, struct np_table **t)
{
	struct ana_out o;
	struct ana_bwres w = { .ev = x };
	ana_out_init(&o);
	*t = table();
	bool r = ana_calltree_emit(m, *t, &o, &w);
	ana_out_free(&o);
	return r;
}

static void test_backend_app(void)
{
	struct ana_model m;
	model(&m);
	/* front: 54 ms; its thread calls back at +1 ms for 52 ms; back's server
	 * transaction starts 0.6 ms into the call (its clock +5 ms) and takes 50 ms */
	size_t x = ev(&m, 0, true, 1, T0, 54 * MS, 100, 101);
	ev(&m, 0, false, 2, T0 + 1 * MS, 52 * MS, 100, 101);
	ev(&m, 1, true, 3, T0 + OFF + 1 * MS + 600000, 50 * MS, 200, 201);
	ev(&m, 0, false, 2, T0 + 60 * MS, 1 * MS, 100, 101);   /* after it: not a child */
	ev(&m, 1, true, 3, T0 + OFF + 60 * MS + 300000, 500000, 200, 201);
	struct np_table *t;
	CHECK(run(&m, x, &t), "call tree found");
	int b1, b2, b3;
	CHECK_NEAR(comp(t, "app:back", &b1), 50.0 * MS, 1);
	CHECK_NEAR(comp(t, "network", &b2), 2.0 * MS, 1);
	CHECK_NEAR(comp(t, "app:front", &b3), 2.0 * MS, 1);
	CHECK(b1 == 1 && b2 == 0 && b3 == 0, "bottleneck is back's application (%d %d %d)", b1, b2, b3);
	CHECK(t->nrows == 3, "three components (%zu)", t->nrows);
	np_table_free(t);
	model_free(&m);
}

static void test_retransmission(void)
{
	struct ana_model m;
	model(&m);
	/* the call waited 200 ms for an RTO; back answered in 0.4 ms */
	size_t x = ev(&m, 0, true, 1, T0, 203 * MS, 100, 101);
	ev(&m, 0, false, 2, T0 + 1 * MS, 201 * MS, 100, 101);
	ev(&m, 1, true, 3, T0 + OFF + 201 * MS, 400000, 200, 201);
	struct np_table *t;
	CHECK(run(&m, x, &t), "call tree found");
	int b;
	CHECK_NEAR(comp(t, "network", &b), 201.0 * MS - 400000, 1);
	CHECK(b == 1, "bottleneck is the network");
	np_table_free(t);
	model_free(&m);
}

static void test_unrecorded_and_leaf(void)
{
	struct ana_model m;
	model(&m);
	size_t x = ev(&m, 0, true, 1, T0, 30 * MS, 100, 101);
	ev(&m, 0, false, 4, T0 + 2 * MS, 25 * MS, 100, 101);
	size_t leaf = ev(&m, 1, true, 3, T0 + 100 * MS, 50 * MS, 200, 201);
	struct np_table *t;
	CHECK(run(&m, x, &t), "call tree found");
	int b;
	CHECK_NEAR(comp(t, "unrecorded_peer", &b), 25.0 * MS, 1);
	CHECK(b == 1, "bottleneck is the unrecorded peer");
	np_table_free(t);
	CHECK(!run(&m, leaf, &t) && t->nrows == 0, "a transaction without calls gives no rows");
	np_table_free(t);
	model_free(&m);
}

int main(void)
{
	test_backend_app();
	test_retransmission();
	test_unrecorded_and_leaf();
	return tap_done();
}
