/* Error of a figure estimated by counting timer samples (netcpu's sampled
 * socket time: n samples x the timer period). A sample lands in a state
 * with probability equal to the share of CPU time in it, independently of
 * the others when the timer is not locked to the workload, so n is taken
 * as Poisson: the score interval below (the values of the mean whose
 * z-test accepts n), which stays sane at n = 0 (upper bound z^2) unlike
 * n +- z sqrt(n). Used by npanalyze (analyze/ana_families.c) and by the
 * netcpu tests, so that a test checks the interval the analysis reports. */
#ifndef NP_SAMPLECI_H
#define NP_SAMPLECI_H

#include <stdint.h>

#define NP_CI_Z95 1.959964   /* two-sided 95 % */

/* Interval [*lo, *hi] of the Poisson mean behind a count n at z. */
void np_poisson_ci(uint64_t n, double z, double *lo, double *hi);

#endif
