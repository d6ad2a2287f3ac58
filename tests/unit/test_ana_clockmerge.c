/* Clock points taken on threads (ana_clock_pts_like, ana_clock_pts_merge):
 * packets split into consecutive ranges, each range's one-way delays added
 * to a set of its own, the sets merged in range order, must give the clock
 * fit that adding every point to one set in packet order gives, bit for
 * bit: ana_clock_add keeps per time bin the first of equally close points,
 * so the merge may replace a point only by a strictly closer one. Two
 * hosts with a known offset (+3 ms) and no drift, delays of 50 to 80 us in
 * 10 us steps, messages in shuffled time order: every time bin holds equally
 * close points from several ranges. Ground truth: the fitted clock maps host
 * b's time within its stated error bound of the true reference time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "anatable.h"
#include "ana.h"
#include "tap.h"

#define CG_T0    1000000000000.0     /* true time of the run's start, ns */
#define CG_SPAN  2e9                 /* 2 s */
#define CG_OFF   3e6
#define CG_DRIFT 0.0
#define CG_MSGS  20000

struct cg_msg { int s, r; uint64_t ts, tr; };

static double cg_local(int h, double T)
{
	return h ? T + CG_OFF + CG_DRIFT * 1e-6 * (T - CG_T0) : T;
}

static uint64_t cg_rand(uint64_t *s)
{
	*s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
	return *s;
}

/* Messages both ways over the run, shuffled. */
static void cg_msgs(struct cg_msg *v)
{
	uint64_t seed = 0x2545f4914f6cdd1dull;
	for (int k = 0; k < CG_MSGS; k++) {
		double T = CG_T0 + 1e6 + (CG_SPAN - 2e6) * k / CG_MSGS;
		double d = 50e3 + 10e3 * (double)(cg_rand(&seed) % 4);
		int s = (int)(cg_rand(&seed) & 1);
		v[k] = (struct cg_msg){ s, !s, (uint64_t)llround(cg_local(s, T)),
					(uint64_t)llround(cg_local(!s, T + d)) };
	}
	for (int k = CG_MSGS - 1; k > 0; k--) {
		int j = (int)(cg_rand(&seed) % (uint64_t)(k + 1));
		struct cg_msg x = v[k];
		v[k] = v[j];
		v[j] = x;
	}
}

static void cg_model(struct ana_model *m)
{
	ana_model_init(m, NULL);
	for (int i = 0; i < 2; i++) {
		struct ana_host *h = ANA_PUSH(m->hosts);
		if (!h)
			return;
		memset(h, 0, sizeof(*h));
		snprintf(h->name, sizeof(h->name), "h%d", i);
		h->t_min = h->t0 = (uint64_t)llround(cg_local(i, CG_T0));
		h->t_max = (uint64_t)llround(cg_local(i, CG_T0 + CG_SPAN));
		h->clk_a = 1.0;
		h->clk_b = (double)h->t0;
		h->clk_quality = ANA_CLK_UNALIGNED;
		h->clk_via = -1;
	}
}

/* The fit of the messages added in nparts consecutive ranges (1: one set),
 * its tables into o. */
static void cg_fit(struct ana_model *m, const struct cg_msg *v, int nparts, struct ana_out *o)
{
	struct ana_clockpts *cp = ana_clock_pts_new(m), *part[4] = { cp };
	for (int t = 1; t < nparts; t++)
		part[t] = ana_clock_pts_like(cp);
	for (int t = 0; t < nparts; t++)
		for (int k = CG_MSGS * t / nparts; k < CG_MSGS * (t + 1) / nparts; k++)
			ana_clock_add(part[t], v[k].s, v[k].ts, v[k].r, v[k].tr);
	for (int t = 1; t < nparts; t++)
		ana_clock_pts_merge(cp, part[t]);
	ana_out_init(o);
	ana_clock_run(m, cp, o);
	ana_clock_pts_free(cp);
}

/* Largest distance of host b's mapped clock from the true reference time. */
static double cg_worst(const struct ana_model *m)
{
	double worst = 0;
	for (int k = 0; k <= 100; k++) {
		double T = CG_T0 + CG_SPAN * k / 100;
		double e = fabs((double)ana_to_ref(m, 1, (uint64_t)llround(cg_local(1, T))) - T);
		if (e > worst)
			worst = e;
	}
	return worst;
}

/* The tables packed, byte for byte the same. */
static bool cg_same_tables(const struct ana_out *a, const struct ana_out *b)
{
	if (a->tables.n != b->tables.n || !a->tables.n)
		return false;
	bool same = true;
	for (size_t i = 0; i < a->tables.n && same; i++) {
		struct np_recbuf x, y;
		np_recbuf_init(&x);
		np_recbuf_init(&y);
		np_table_pack(&x, a->tables.v[i]);
		np_table_pack(&y, b->tables.v[i]);
		same = x.sbuf.size == y.sbuf.size && !memcmp(x.sbuf.data, y.sbuf.data, x.sbuf.size);
		np_recbuf_free(&x);
		np_recbuf_free(&y);
	}
	return same;
}

int main(void)
{
	struct cg_msg *v = malloc(CG_MSGS * sizeof(*v));
	if (!v)
		return 1;
	cg_msgs(v);
	struct ana_model one;
	struct ana_out o1;
	cg_model(&one);
	cg_fit(&one, v, 1, &o1);
	const struct ana_host *h1 = &one.hosts.v[1];
	CHECK(h1->clk_quality == ANA_CLK_ACCURATE, "one set: host b aligned accurately (%d)",
	      h1->clk_quality);
	double w = cg_worst(&one);
	CHECK(w <= h1->clk_err_ns + 1, "one set: true error %.0f ns within the bound %.0f ns", w,
	      h1->clk_err_ns);
	for (int n = 2; n <= 4; n++) {
		struct ana_model sp;
		struct ana_out o;
		cg_model(&sp);
		cg_fit(&sp, v, n, &o);
		const struct ana_host *h = &sp.hosts.v[1];
		CHECK(h->clk_quality == h1->clk_quality && h->clk_a == h1->clk_a &&
		      h->clk_b == h1->clk_b && h->clk_err_ns == h1->clk_err_ns,
		      "%d ranges merged: the same fit bit for bit (a %.12f b %.3f err %.3f)", n,
		      h->clk_a, h->clk_b, h->clk_err_ns);
		CHECK(cg_same_tables(&o, &o1), "%d ranges merged: clock tables byte for byte "
		      "(drift bounds, message counts)", n);
		ana_out_free(&o);
		ana_model_free(&sp);
	}
	ana_out_free(&o1);
	ana_model_free(&one);
	free(v);
	return tap_done();
}
