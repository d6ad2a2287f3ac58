/* np_poisson_ci (common/sampleci.c): the interval npanalyze reports for
 * sampled socket time. Truth from outside the formula: published exact
 * (Garwood) 95 % limits that the score interval must come close to, and
 * the coverage of Poisson counts drawn with a fixed seed, which must be
 * near the nominal 95 % (and 99.9 % at z 3.29, what the netcpu tests use). */
#include <stdint.h>
#include <stdlib.h>
#include "sampleci.h"
#include "tap.h"
#include "xorshift.h"

static double uniform(void)      /* xorshift64, (0, 1) */
{
	return ((double)(xs_next() >> 11) + 0.5) / 9007199254740992.0;
}

/* a Poisson count of mean mu: arrivals of a unit-rate process in [0, mu) */
static uint64_t poisson(double mu)
{
	uint64_t n = 0;
	for (double t = -log(uniform()); t < mu; t -= log(uniform()))
		n++;
	return n;
}

static double coverage(double mu, double z, int draws)
{
	int in = 0;
	for (int i = 0; i < draws; i++) {
		double lo, hi;
		np_poisson_ci(poisson(mu), z, &lo, &hi);
		in += lo <= mu && mu <= hi;
	}
	return (double)in / draws;
}

int main(void)
{
	double lo, hi;
	/* no sample: the upper limit is z^2, the lower 0 */
	np_poisson_ci(0, NP_CI_Z95, &lo, &hi);
	CHECK_NEAR(lo, 0, 1e-12);
	CHECK_NEAR(hi, NP_CI_Z95 * NP_CI_Z95, 1e-9);
	/* Garwood exact 95 % limits: n=10 [4.795, 18.390], n=100 [81.364, 121.627] */
	np_poisson_ci(10, NP_CI_Z95, &lo, &hi);
	CHECK(lo > 4.795 && lo < 4.795 * 1.15, "n=10 lo %.3f", lo);
	CHECK_NEAR(hi, 18.390, 0.1);
	np_poisson_ci(100, NP_CI_Z95, &lo, &hi);
	CHECK_NEAR(lo, 81.364, 1.0);
	CHECK_NEAR(hi, 121.627, 0.1);
	/* relative half-width shrinks as 1/sqrt(n): 1000 samples ~ +-6.2 % */
	np_poisson_ci(1000, NP_CI_Z95, &lo, &hi);
	CHECK_NEAR((hi - lo) / 2 / 1000, NP_CI_Z95 / sqrt(1000.0), 0.001);
	/* coverage of the true mean (20000 draws: standard error 0.15 points) */
	const double mus[] = { 3, 20, 150, 1000 };
	for (size_t i = 0; i < sizeof(mus) / sizeof(mus[0]); i++) {
		double c = coverage(mus[i], NP_CI_Z95, 20000);
		CHECK(c > 0.925 && c < 0.975, "mu %.0f: 95 %% interval covers %.4f", mus[i], c);
		/* the tests' z 3.29 at their counts (hundreds; at mu 3 the
		 * discrete count covers 99.5 %) */
		if (mus[i] < 20)
			continue;
		c = coverage(mus[i], 3.29, 20000);
		CHECK(c > 0.997, "mu %.0f: 99.9 %% interval covers %.4f", mus[i], c);
	}
	return tap_done();
}
