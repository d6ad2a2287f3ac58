/* Clock alignment of many hosts linked only through others (issue 23 item 4):
 * 24 hosts with known offsets (up to +-0.5 s) and drifts (up to +-50 ppm),
 * clock-sync exchanges only along the links given, one-way delays of a known
 * minimum plus jitter. Ground truth: every host's true clock. Checked: each
 * host is aligned, its mapped time is within its stated error bound of the
 * reference's true time over the whole run, and the path taken is the one
 * with the smallest error bound (a chain of good links beats a direct bad
 * link; a good shortcut beats a long chain). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "tap.h"

#define CM_HOSTS 24
#define CM_T0    1000000000000.0     /* true time of the run's start, ns */
#define CM_SPAN  100e9               /* 100 s */

struct cm_clock { double off, drift; };

static double cm_local(const struct cm_clock *c, double T)
{
	return T + c->off + c->drift * 1e-6 * (T - CM_T0);
}

static uint64_t cm_rand(uint64_t *s)
{
	*s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
	return *s;
}

static void cm_hosts(struct ana_model *m, struct cm_clock *ck, uint64_t *seed)
{
	for (int i = 0; i < CM_HOSTS; i++) {
		ck[i].off = i ? (double)(cm_rand(seed) % 1000000000) - 5e8 : 0;
		ck[i].drift = i ? (double)(cm_rand(seed) % 100001) / 1000.0 - 50.0 : 0;
		struct ana_host *h = ANA_PUSH(m->hosts);
		if (!h)
			return;
		memset(h, 0, sizeof(*h));
		snprintf(h->name, sizeof(h->name), "h%02d", i);
		h->t_min = h->t0 = (uint64_t)llround(cm_local(&ck[i], CM_T0));
		h->t_max = (uint64_t)llround(cm_local(&ck[i], CM_T0 + CM_SPAN));
		h->clk_a = 1.0;
		h->clk_b = (double)h->t0;
		h->clk_quality = ANA_CLK_UNALIGNED;
		h->clk_via = -1;
	}
}

/* n exchanges between a and b spread over the run, one-way delays
 * dmin + up to jit (ns), server turnaround 50 us. */
static void cm_link(struct ana_model *m, const struct cm_clock *ck, int a, int b, double dmin,
		    double jit, int n, uint64_t *seed)
{
	for (int k = 0; k < n; k++) {
		double T = CM_T0 + 1e9 + (CM_SPAN - 2e9) * k / (n - 1);
		double d1 = dmin + jit * (double)(cm_rand(seed) % 1000) / 1000;
		double d2 = dmin + jit * (double)(cm_rand(seed) % 1000) / 1000;
		struct ana_sync *s = ANA_PUSH(m->syncs);
		if (!s)
			return;
		*s = (struct ana_sync){ .client = (uint16_t)a, .server = (uint16_t)b };
		s->t1 = (uint64_t)llround(cm_local(&ck[a], T));
		s->t2 = (uint64_t)llround(cm_local(&ck[b], T + d1));
		s->t3 = (uint64_t)llround(cm_local(&ck[b], T + d1 + 50e3));
		s->t4 = (uint64_t)llround(cm_local(&ck[a], T + d1 + 50e3 + d2));
	}
}

/* Worst |mapped - true reference time| of host h over the run, ns. */
static double cm_worst(const struct ana_model *m, const struct cm_clock *ck, int h)
{
	const struct ana_host *x = &m->hosts.v[h];
	double worst = 0;
	for (int k = 0; k <= 100; k++) {
		double T = CM_T0 + CM_SPAN * k / 100;
		double mapped = x->clk_a * (cm_local(&ck[h], T) - (double)x->t0) + x->clk_b;
		double e = fabs(mapped - cm_local(&ck[0], T));
		if (e > worst)
			worst = e;
	}
	return worst;
}

static void cm_run(struct ana_model *m)
{
	struct ana_out o;
	ana_out_init(&o);
	struct ana_clockpts *cp = ana_clock_pts_new(m);
	ana_clock_run(m, cp, &o);
	ana_clock_pts_free(cp);
	ana_out_free(&o);
}

/* Every host aligned and within its bound; returns how many were. */
static int cm_check_bounds(const struct ana_model *m, const struct cm_clock *ck, double *maxerr)
{
	int ok = 0;
	*maxerr = 0;
	for (int i = 1; i < CM_HOSTS; i++) {
		const struct ana_host *h = &m->hosts.v[i];
		double w = cm_worst(m, ck, i);
		if (h->clk_quality == ANA_CLK_ACCURATE && isfinite(h->clk_err_ns) && w <= h->clk_err_ns + 1)
			ok++;
		else
			fprintf(stderr, "# " "h%02d: quality %d, error bound %.0f ns, true error %.0f ns", i,
			     h->clk_quality, h->clk_err_ns, w), fputc('\n', stderr);
		if (h->clk_err_ns > *maxerr)
			*maxerr = h->clk_err_ns;
	}
	return ok;
}

/* The hosts and the good chain h00 - h01 - ... - h23 of both tests. */
static void cm_chain(struct ana_model *m, struct cm_clock *ck, uint64_t *seed)
{
	ana_model_init(m, NULL);
	cm_hosts(m, ck, seed);
	for (int i = 0; i + 1 < CM_HOSTS; i++)
		cm_link(m, ck, i, i + 1, 20e3, 30e3, 200, seed);
}

/* The chain alone: each host through its predecessor. */
static void test_chain(void)
{
	struct ana_model m;
	struct cm_clock ck[CM_HOSTS];
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	cm_chain(&m, ck, &seed);
	cm_run(&m);
	double maxerr;
	CHECK(cm_check_bounds(&m, ck, &maxerr) == CM_HOSTS - 1,
	   "chain of %d hosts: every host aligned, true error within its bound", CM_HOSTS);
	fprintf(stderr, "# chain: bound h01 %.1f us (true %.1f), h%02d %.1f us (true %.1f)\n",
		m.hosts.v[1].clk_err_ns / 1e3, cm_worst(&m, ck, 1) / 1e3, CM_HOSTS - 1,
		m.hosts.v[CM_HOSTS - 1].clk_err_ns / 1e3, cm_worst(&m, ck, CM_HOSTS - 1) / 1e3);
	int via = 0;
	for (int i = 2; i < CM_HOSTS; i++)
		via += m.hosts.v[i].clk_via == i - 1;
	CHECK(via == CM_HOSTS - 2 && m.hosts.v[1].clk_via == -1, "chain: each host aligned through its predecessor");
	CHECK(m.hosts.v[CM_HOSTS - 1].clk_err_ns > m.hosts.v[1].clk_err_ns,
	   "chain: the bound grows along the chain (h01 %.0f ns, h%02d %.0f ns)", m.hosts.v[1].clk_err_ns,
	   CM_HOSTS - 1, m.hosts.v[CM_HOSTS - 1].clk_err_ns);
	ana_model_free(&m);
}

/* A mesh: the same good chain, a good shortcut h00 - h12, and a direct but
 * bad link (10 ms minimum one-way delay, 20 ms jitter) from h00 to every
 * host. Best bound: along good links, the fewest of them. */
static void test_mesh(void)
{
	struct ana_model m;
	struct cm_clock ck[CM_HOSTS];
	uint64_t seed = 0x2545f4914f6cdd1dull;
	cm_chain(&m, ck, &seed);
	cm_link(&m, ck, 0, 12, 20e3, 30e3, 200, &seed);
	for (int i = 2; i < CM_HOSTS; i++)
		if (i != 12)
			cm_link(&m, ck, 0, i, 10e6, 20e6, 200, &seed);
	cm_run(&m);
	double maxerr;
	CHECK(cm_check_bounds(&m, ck, &maxerr) == CM_HOSTS - 1,
	   "mesh of %d hosts: every host aligned, true error within its bound", CM_HOSTS);
	fprintf(stderr, "# mesh: largest bound %.1f us\n", maxerr / 1e3);
	CHECK(maxerr < 5e6, "mesh: no host through a bad direct link (largest bound %.0f ns)", maxerr);
	CHECK(m.hosts.v[12].clk_via == -1 && m.hosts.v[13].clk_via == 12 && m.hosts.v[17].clk_via == 16 &&
	   m.hosts.v[11].clk_via == 12 && m.hosts.v[3].clk_via == 2,
	   "mesh: fewest good hops (h12 direct, h13 via h12, h17 via h16, h11 via h12, h03 via h02)");
	ana_model_free(&m);
}

int main(void)
{
	test_chain();
	test_mesh();
	return tap_done();
}
