/* The socket sampler's dithered rate (record/families/netcpu_dither.c)
 * against a simulated CPU whose state is known at every instant: a
 * periodic workload in a state S for a known share of each cycle, sampled
 * by a timer whose expiries, restarts and drops are those of a cpu-clock
 * hrtimer (perf_swevent_hrtimer forwards by the period in force;
 * PERF_EVENT_IOC_PERIOD restarts it with the new period whole). Ground
 * truth: S's time, share x span. Tolerances are derived from the sample
 * count (4 x sqrt(n) samples: a Poisson count's 99.99 %). */
#include <math.h>
#include <stdio.h>
#include <linux/types.h>
#include "netcpu.h"
#include "netcpu_dither.h"
#include "sampleci.h"
#include "tap.h"

#define SIM_HZ 4999
#define SIM_SPAN 1000000000ull      /* one interval, ns */

struct sim {
	double cycle, share;            /* workload: S during [0, share x cycle) of each cycle */
	double restart_every;           /* ns between restarts (drain ticks), 0 = none */
	bool dither;                    /* draw a new period at a restart */
	double phase;                   /* first expiry */
	/* out */
	double est, uncorrected, truth;
	uint64_t n;                     /* samples in S */
};

static bool sim_in_s(const struct sim *m, double t)
{
	return fmod(t, m->cycle) < m->share * m->cycle;
}

/* Runs intervals of SIM_SPAN up to span ns. */
static void sim_run(struct sim *m, double span)
{
	struct nc_dither d;
	struct nc_dweight w;
	uint64_t cnt[NC_DW_CLASSES] = { 0 }, out[NC_DW_CLASSES];
	double p = 1e9 / SIM_HZ, e = m->phase, next_r = m->restart_every, next_take = SIM_SPAN, t0 = 0;
	nc_dither_init(&d, SIM_HZ, 42);
	nc_dweight_reset(&w, cnt, (uint64_t)p);
	m->est = m->uncorrected = 0;
	m->n = 0;
	while (t0 < span) {
		if (e <= next_take && (!m->restart_every || e <= next_r)) {
			if (sim_in_s(m, e)) {
				cnt[NC_SOCK_SEND]++;
				m->n++;
			}
			e += p;
		} else if (m->restart_every && next_r <= next_take) {
			uint64_t np = m->dither ? nc_dither_draw(&d) : (uint64_t)p;
			nc_dweight_add(&w, cnt);
			nc_dweight_restart(&w, np);
			p = (double)np;
			e = next_r + p;
			next_r += m->restart_every;
		} else {
			nc_dweight_add(&w, cnt);
			m->uncorrected += w.ns[NC_SOCK_SEND];
			nc_dweight_take(&w, SIM_SPAN, out);
			m->est += (double)out[NC_SOCK_SEND];
			t0 = next_take;
			next_take += SIM_SPAN;
		}
	}
	m->truth = m->share * span;
}

static double sim_tol(const struct sim *m)
{
	return 4.0 * sqrt((double)m->n) * 1e9 / SIM_HZ;
}

static void draws(void)
{
	struct nc_dither d;
	double rate = 0, lo = 1e30, hi = 0;
	int n = 100000;
	nc_dither_init(&d, SIM_HZ, 7);
	for (int i = 0; i < n; i++) {
		double p = (double)nc_dither_draw(&d);
		rate += 1e9 / p;
		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
	}
	rate /= n;
	/* uniform rate in [1 - W, 1 + W] x hz: sd of the mean W / sqrt(3 n) x hz */
	CHECK(fabs(rate - SIM_HZ) <= 4 * NC_DITHER_W / sqrt(3.0 * n) * SIM_HZ, "mean rate %.2f, asked %d", rate,
	      SIM_HZ);
	CHECK(lo >= 1e9 / (SIM_HZ * (1 + NC_DITHER_W)) - 1 && hi <= 1e9 / (SIM_HZ * (1 - NC_DITHER_W)) + 1,
	      "periods %.0f-%.0f ns", lo, hi);
	CHECK(!nc_dither_due(&(struct nc_dither){ 0 }, 1), "no rate, never due");
	nc_dither_init(&d, SIM_HZ, 7);
	CHECK(nc_dither_due(&d, 1), "due before the first restart");
	d.last_ns = 1000;
	CHECK(!nc_dither_due(&d, 1000 + (NC_DITHER_PERIODS - 1) * 1000000000ull / SIM_HZ), "not due early");
	CHECK(nc_dither_due(&d, 1000 + (NC_DITHER_PERIODS + 1) * 1000000000ull / SIM_HZ), "due after the periods");
}


/* The remote split's count (nc_split_count) against simulated truth: per
 * interval the own timer finds the call in Poisson(mu) samples, the other
 * CPU's in Poisson(mu_r), of which Binomial(., f) outside softirqs; the
 * estimate is call x the remote share (the own split without a remote
 * sample), as nc_combine. The 95 % score interval of the summed counts
 * (npanalyze's, over the summed estimate) must cover the truth, mu x f x
 * intervals, in ~95 % of recordings; the call x share count (the records
 * before it) covers far less when the remote samples are few. */
static uint64_t rng = 88172645463325252ull;

static double unit(void)
{
	rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static uint64_t poisson(double mu)
{
	double l = exp(-mu), p = 1;
	uint64_t k = 0;
	while ((p *= unit()) > l)
		k++;
	return k;
}

static uint64_t binomial(uint64_t n, double f)
{
	uint64_t k = 0;
	for (uint64_t i = 0; i < n; i++)
		k += unit() < f;
	return k;
}

/* Share of nrec recordings of 20 intervals whose interval covers the truth. */
static double split_coverage(double mu, double mu_r, double f, bool naive)
{
	int nrec = 2000, hit = 0;
	for (int r = 0; r < nrec; r++) {
		double est = 0, cnt = 0, lo, hi;
		for (int i = 0; i < 20; i++) {
			uint64_t c = poisson(mu), nr = poisson(mu_r), rs = binomial(nr, f);
			double fs = nr ? (double)rs / (double)nr : c ? (double)binomial(c, f) / (double)c : 0;
			est += (double)c * fs;
			cnt += naive ? (double)c * fs : nc_split_count(c, nr, fs);
		}
		uint64_t n = (uint64_t)(cnt + 0.5);
		np_poisson_ci(n, NP_CI_Z95, &lo, &hi);
		double per = n ? est / (double)n : 1, truth = mu * f * 20;
		hit += n && lo * per <= truth && truth <= hi * per;
	}
	return (double)hit / nrec;
}

static void split_counts(void)
{
	CHECK(nc_split_count(100, 0, 0.4) == 40.0, "no remote sample: the own split's count");
	CHECK(fabs(nc_split_count(100, 100, 0.4) - 40.0) < 1.0, "as many remote samples: ~call x share (%.2f)",
	      nc_split_count(100, 100, 0.4));
	CHECK(nc_split_count(100, 10, 0.4) < 10, "few remote samples: about theirs (%.2f)",
	      nc_split_count(100, 10, 0.4));
	CHECK(nc_split_count(100, 1, 1.0) == 100.0, "one remote sample outside softirqs: the call's count");
	CHECK(nc_split_count(100, 5, 0.0) == 0.0 && nc_split_count(100, 5, 1.0) == 100.0, "shares 0 and 1");
	/* 97 Hz, a receiver busy half the time: ~48 samples a second each way;
	 * a receiver in softirqs 80 % of its calls; a quiet one */
	double cv = split_coverage(48, 48, 0.5, false), cq = split_coverage(48, 12, 0.2, false);
	double cl = split_coverage(5, 5, 0.5, false), nq = split_coverage(48, 12, 0.2, true);
	/* 2000 recordings: the coverage's sd ~0.005 */
	CHECK(cv >= 0.93 && cv <= 0.975, "as many remote samples: coverage %.3f", cv);
	CHECK(cq >= 0.92 && cq <= 0.975, "4x fewer remote samples, share 0.2: coverage %.3f", cq);
	CHECK(cl >= 0.91 && cl <= 0.975, "5 samples an interval: coverage %.3f", cl);
	CHECK(nq < 0.8, "4x fewer, counted call x share: coverage %.3f (the check can fail)", nq);
	fprintf(stderr, "  remote split's 95 %% interval covers: %.3f; %.3f with 4x fewer remote samples (%.3f as "
		"call x share); %.3f at 5 samples an interval\n", cv, cq, nq, cl);
}

int main(void)
{
	draws();
	split_counts();

	/* a workload whose cycle is the timer's period: the fixed grid finds
	 * S at every sample (the bias a lock produces, without the feedback) */
	struct sim m = { .cycle = 1e9 / SIM_HZ, .share = 0.4, .phase = 10000, .restart_every = 0 };
	sim_run(&m, 20e9);
	CHECK(fabs(m.est - m.truth) > 10 * sim_tol(&m), "fixed grid on the cycle: %.3f x truth", m.est / m.truth);
	fprintf(stderr, "  fixed period, cycle = period: %.3f x truth (%llu samples)\n", m.est / m.truth,
		(unsigned long long)m.n);

	/* the same workload, restarts every NC_DITHER_PERIODS periods at a
	 * dithered rate (nprec's drain tick is 20 ms; 25.6 ms here) */
	m = (struct sim){ .cycle = 1e9 / SIM_HZ, .share = 0.4, .phase = 10000,
			  .restart_every = NC_DITHER_PERIODS * 1e9 / SIM_HZ, .dither = true };
	sim_run(&m, 20e9);
	CHECK(fabs(m.est - m.truth) <= sim_tol(&m), "dithered: %.4f x truth, tolerance %.4f", m.est / m.truth,
	      sim_tol(&m) / m.truth);
	fprintf(stderr, "  dithered every %d periods: %.4f x truth (%llu samples, tolerance %.4f)\n",
		NC_DITHER_PERIODS, m.est / m.truth, (unsigned long long)m.n, sim_tol(&m) / m.truth);

	/* restarts every 8 periods: each drops half a period on average, 6 %
	 * of the time; the interval's correction gives it back */
	m = (struct sim){ .cycle = 45000, .share = 0.4, .phase = 10000, .restart_every = 8 * 1e9 / SIM_HZ + 3333,
			  .dither = true };
	sim_run(&m, 20e9);
	CHECK(fabs(m.est - m.truth) <= sim_tol(&m), "frequent restarts: %.4f x truth, tolerance %.4f",
	      m.est / m.truth, sim_tol(&m) / m.truth);
	CHECK(fabs(m.uncorrected - m.truth) > sim_tol(&m), "uncorrected %.4f x truth: the correction untested",
	      m.uncorrected / m.truth);
	fprintf(stderr, "  restarts every 8 periods: %.4f x truth corrected, %.4f uncorrected\n", m.est / m.truth,
		m.uncorrected / m.truth);
	return tap_done();
}
