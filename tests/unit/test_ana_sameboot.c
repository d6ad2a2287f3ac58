/* Hosts recorded on one boot share CLOCK_MONOTONIC (analyze/ana_clock.c
 * ana_clock_same_boot): two network namespaces of one machine recorded
 * without a clock-sync exchange are aligned exactly, less their
 * --test-clock-shift, and a host on the boot of one aligned through an
 * exchange is aligned through that host's mapping. Ground truth: every
 * host's true clock (boot A: the reference's; boot B: 0.2 s ahead, 10 ppm
 * fast). A host on a third boot with nothing linking it stays unaligned. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "tap.h"

#define SB_T0   1000000000000.0      /* true time of the run's start, ns */
#define SB_SPAN 60e9
#define SB_SHIFT 3000000             /* h1's --test-clock-shift */

/* local time of boot b at true time T */
static double sb_boot(int b, double T)
{
	return b == 0 ? T : T + 2e8 + 10e-6 * (T - SB_T0);
}

static void sb_host(struct ana_model *m, const char *name, const char *boot, int b, int64_t shift)
{
	struct ana_host *h = ANA_PUSH(m->hosts);
	if (!h)
		return;
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	snprintf(h->boot_id, sizeof(h->boot_id), "%s", boot);
	h->has_header = true;
	h->clock_shift_ns = shift;
	/* each recorder started at its own time */
	double start = SB_T0 + 1e9 * (double)m->hosts.n;
	h->t_min = h->t0 = (uint64_t)llround(sb_boot(b, start)) + (uint64_t)shift;
	h->t_max = (uint64_t)llround(sb_boot(b, SB_T0 + SB_SPAN)) + (uint64_t)shift;
	h->clk_a = 1.0;
	h->clk_b = (double)h->t0;
	h->clk_quality = ANA_CLK_UNALIGNED;
	h->clk_via = -1;
}

/* 100 exchanges h0 (boot A) -> h2 (boot B), 20-50 us each way */
static void sb_link(struct ana_model *m)
{
	for (int k = 0; k < 100; k++) {
		double T = SB_T0 + 5e9 + 50e9 * k / 99, d1 = 20e3 + 300.0 * (k % 100), d2 = 20e3 + 290.0 * (k % 97);
		struct ana_sync *s = ANA_PUSH(m->syncs);
		if (!s)
			return;
		*s = (struct ana_sync){ .client = 0, .server = 2 };
		s->t1 = (uint64_t)llround(sb_boot(0, T));
		s->t2 = (uint64_t)llround(sb_boot(1, T + d1));
		s->t3 = (uint64_t)llround(sb_boot(1, T + d1 + 50e3));
		s->t4 = (uint64_t)llround(sb_boot(0, T + d1 + 50e3 + d2));
	}
}

/* worst |mapped - true| over the run for host i on boot b with shift */
static double sb_worst(const struct ana_model *m, int i, int b, int64_t shift)
{
	double worst = 0;
	for (int k = 0; k <= 60; k++) {
		double T = SB_T0 + SB_SPAN * k / 60;
		double local = sb_boot(b, T) + (double)shift;
		double e = fabs((double)ana_to_ref(m, i, (uint64_t)llround(local)) - T);
		if (e > worst)
			worst = e;
	}
	return worst;
}

static bool has_note(const struct ana_model *m, const char *s)
{
	for (size_t i = 0; i < m->warnings.n; i++)
		if (strstr(m->warnings.v[i], s))
			return true;
	return false;
}

int main(void)
{
	struct ana_model m;
	ana_model_init(&m, NULL);
	sb_host(&m, "h0", "boot-A", 0, 0);
	sb_host(&m, "h1", "boot-A", 0, SB_SHIFT);
	sb_host(&m, "h2", "boot-B", 1, 0);
	sb_host(&m, "h3", "boot-B", 1, 0);
	sb_host(&m, "h4", "boot-C", 1, 0);
	sb_link(&m);
	struct ana_out o;
	ana_out_init(&o);
	struct ana_clockpts *cp = ana_clock_pts_new(&m);
	ana_clock_run(&m, cp, &o);
	const struct ana_host *h = m.hosts.v;
	CHECK(h[1].clk_quality == ANA_CLK_ACCURATE && h[1].clk_same_boot && h[1].clk_via == -1,
	      "h1 (the reference's boot) aligned by it (quality %d, via %d)", h[1].clk_quality, h[1].clk_via);
	double w1 = sb_worst(&m, 1, 0, SB_SHIFT);
	CHECK(w1 <= 1, "h1 maps exactly, its clock shift taken out (worst %.1f ns)", w1);
	CHECK(h[2].clk_quality == ANA_CLK_ACCURATE && !h[2].clk_same_boot, "h2 aligned by its exchanges (%d)",
	      h[2].clk_quality);
	double w2 = sb_worst(&m, 2, 1, 0), w3 = sb_worst(&m, 3, 1, 0);
	CHECK(h[3].clk_quality == ANA_CLK_ACCURATE && h[3].clk_same_boot && h[3].clk_via == 2,
	      "h3 aligned through h2, its boot's (quality %d, via %d)", h[3].clk_quality, h[3].clk_via);
	CHECK(fabs(w3 - w2) <= 1 && w3 <= h[3].clk_err_ns + 1 && h[3].clk_err_ns == h[2].clk_err_ns,
	      "h3 maps as h2 does, within h2's bound (worst %.0f vs %.0f ns, bound %.0f)", w3, w2, h[3].clk_err_ns);
	CHECK(h[4].clk_quality == ANA_CLK_UNALIGNED, "h4 (another boot, no exchange) unaligned (%d)",
	      h[4].clk_quality);
	CHECK(has_note(&m, "host h1 aligned to h0 by their shared boot") &&
	      has_note(&m, "host h3 aligned to h2 by their shared boot") && has_note(&m, "host h4 shares no"),
	      "notes say which were aligned by a boot, and h4 unaligned");
	ana_clock_pts_free(cp);
	ana_out_free(&o);
	ana_model_free(&m);
	return tap_done();
}
