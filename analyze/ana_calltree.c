/* Where the time of a slow server transaction went, over the calls its
 * thread made while serving it (deep-mon's per-request linking, §3.1.2).
 *
 * The packet paths of a slow-RPC window only see per-packet delays (µs):
 * a server that reads a request, waits 50 ms for a backend and answers
 * shows no slow packet at all. The transaction events do see it: the
 * window's server transaction on host H contains the client transactions
 * that the same thread (else process) made inside it; each of those is
 * matched to the server transaction that answered it on its host (by the
 * connection's ports and the aligned start time). The time then splits
 * into the application on H (what no call covers), the application on
 * each called host (its server transaction), the network and stacks
 * between them (client time minus server time of each call), and calls to
 * hosts without a recording. d_i is the component's time in this
 * transaction and d_rtt the transaction's duration, so the X_i add up to 1
 * (nested calls are not followed: a called host's own calls are inside its
 * app time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"

#define ANA_CT_MAXC 16          /* components: hosts + network + unrecorded */

struct ana_ct { char name[160]; double ns; };

static double *ana_ct_add(struct ana_ct *c, int *n, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(c[i].name, name))
			return &c[i].ns;
	if (*n >= ANA_CT_MAXC)
		return NULL;
	snprintf(c[*n].name, sizeof(c[*n].name), "%s", name);
	c[*n].ns = 0;
	return &c[(*n)++].ns;
}

static int64_t ana_ct_ref(const struct ana_model *m, int host, uint64_t t)
{
	return ana_host_aligned(m, host) ? ana_to_ref(m, host, t) : (int64_t)t;
}

/* The connection row of (host, conn id, role), NULL when unknown. */
static const struct ana_txn *ana_ct_row(const struct ana_model *m, int host, uint64_t conn, bool server)
{
	for (size_t k = 0; k < m->txns.n; k++) {
		const struct ana_txn *r = &m->txns.v[k];
		if (r->host == host && r->conn_id == conn && r->server == server)
			return r;
	}
	return NULL;
}

/* The server transaction that answered client call c, NULL if no recording
 * has it: a server connection whose ports mirror the client's, on another
 * recorded host (or the same one), with the closest aligned start that
 * fits inside the call. */
static const struct ana_txev *ana_ct_answer(const struct ana_model *m, const struct ana_txev *c)
{
	const struct ana_txn *cr = ana_ct_row(m, c->host, c->conn, false);
	if (!cr || !cr->local_port || !cr->peer_port)
		return NULL;
	int64_t cs = ana_ct_ref(m, c->host, c->start), best_d = INT64_MAX;
	const struct ana_txev *best = NULL;
	for (size_t i = 0; i < m->txevs.n; i++) {
		const struct ana_txev *s = &m->txevs.v[i];
		if (!s->server || s->dur > c->dur + c->dur / 20 + 100000)
			continue;
		int64_t d = ana_ct_ref(m, s->host, s->start) - cs;
		if (d < -200000 || (d > 0 && (uint64_t)d > c->dur))
			continue;             /* not inside the call (200 us of clock slack) */
		if (d < 0)
			d = -d;
		if (d >= best_d)
			continue;
		const struct ana_txn *sr = ana_ct_row(m, s->host, s->conn, true);
		if (!sr || sr->local_port != cr->peer_port || sr->peer_port != cr->local_port)
			continue;
		best = s;
		best_d = d;
	}
	return best;
}

static bool ana_ct_child(const struct ana_txev *x, const struct ana_txev *e, bool by_tid)
{
	if (e->server || e->host != x->host || e->pid != x->pid || (by_tid && e->tid != x->tid))
		return false;
	return e->start >= x->start && e->start + e->dur <= x->start + x->dur + 1000000;
}

/* Splits transaction x into components; returns how many (0: no calls). */
static int ana_ct_split(const struct ana_model *m, const struct ana_txev *x, struct ana_ct *c)
{
	bool by_tid = false;
	for (size_t i = 0; i < m->txevs.n && !by_tid; i++)
		by_tid = x->tid && ana_ct_child(x, &m->txevs.v[i], true);
	int n = 0;
	double covered = 0, *p;
	uint64_t reach = x->start;   /* calls are walked in start order: the union */
	for (size_t i = 0; i < m->txevs.n; i++) {
		const struct ana_txev *e = &m->txevs.v[i];
		if (!ana_ct_child(x, e, by_tid))
			continue;
		uint64_t e1 = e->start + e->dur, s0 = e->start > reach ? e->start : reach;
		if (e1 > s0)
			covered += (double)(e1 - s0);
		if (e1 > reach)
			reach = e1;
		const struct ana_txev *s = ana_ct_answer(m, e);
		char name[160];
		if (s) {
			snprintf(name, sizeof(name), "app:%s", m->hosts.v[s->host].name);
			if ((p = ana_ct_add(c, &n, name)))
				*p += (double)s->dur;
			if ((p = ana_ct_add(c, &n, "network")))
				*p += e->dur > s->dur ? (double)(e->dur - s->dur) : 0;
		} else if ((p = ana_ct_add(c, &n, "unrecorded_peer"))) {
			*p += (double)e->dur;
		}
	}
	if (!n)
		return 0;
	char own[160];
	snprintf(own, sizeof(own), "app:%s", m->hosts.v[x->host].name);
	if ((p = ana_ct_add(c, &n, own)))
		*p += (double)x->dur > covered ? (double)x->dur - covered : 0;
	return n;
}

bool ana_calltree_emit(const struct ana_model *m, struct np_table *t, struct ana_out *o,
		       const struct ana_bwres *w)
{
	if (w->ev >= m->txevs.n)
		return false;
	const struct ana_txev *x = &m->txevs.v[w->ev];
	struct ana_ct c[ANA_CT_MAXC];
	int n = ana_ct_split(m, x, c);
	if (!n || !x->dur)
		return false;
	int best = 0;
	for (int k = 1; k < n; k++)
		if (c[k].ns > c[best].ns)
			best = k;
	double d = (double)x->dur;
	for (int k = 0; k < n; k++) {
		size_t r = np_table_row(t);
		np_table_set_str(t, r, ANA_BN_SOURCE, "slow_rpc_tree");
		np_table_set_i64(t, r, ANA_BN_FROM, w->a);
		np_table_set_i64(t, r, ANA_BN_TO, w->b);
		np_table_set_str(t, r, ANA_BN_COMPONENT, c[k].name);
		np_table_set_f64(t, r, ANA_BN_D_I, c[k].ns);
		np_table_set_f64(t, r, ANA_BN_D_RTT, d);
		np_table_set_f64(t, r, ANA_BN_X_I, c[k].ns / d);
		np_table_set_u64(t, r, ANA_BN_BOTTLENECK, k == best);
		np_table_set_str(t, r, ANA_BN_WHAT, w->what);
	}
	if (c[best].ns / d > 0.5)
		ana_out_candidate(o, c[best].ns / d, 1, "bottlenecks", c[best].name, "x", c[best].ns / d,
				  "a slow RPC (%s) spent %.0f %% of its time in %s",
				  w->what, 100.0 * c[best].ns / d, c[best].name);
	return true;
}
