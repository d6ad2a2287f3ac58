#include <errno.h>
#include "powerattr.h"

double np_powerattr_weighted_cycles(uint64_t cycles_alone, uint64_t cycles_overlap, double ht_r)
{
	return (double)cycles_alone + ht_r / 2.0 * (double)cycles_overlap;
}

int np_powerattr_attribute(const double *wcycles, size_t nthreads, size_t nsockets,
			   const double *energy, double *out, double *unattributed)
{
	if ((nthreads && (!wcycles || !out)) || (nsockets && !energy))
		return -EINVAL;
	for (size_t i = 0; i < nthreads * nsockets; i++)
		if (wcycles[i] < 0)
			return -EINVAL;
	for (size_t s = 0; s < nsockets; s++)
		if (energy[s] < 0)
			return -EINVAL;
	double lost = 0;
	for (size_t i = 0; i < nthreads; i++)
		out[i] = 0;
	for (size_t s = 0; s < nsockets; s++) {
		double total = 0;
		for (size_t i = 0; i < nthreads; i++)
			total += wcycles[i * nsockets + s];
		if (total <= 0) {
			lost += energy[s];
			continue;
		}
		for (size_t i = 0; i < nthreads; i++)
			out[i] += energy[s] * (wcycles[i * nsockets + s] / total);
	}
	if (unattributed)
		*unattributed = lost;
	return 0;
}

double np_powerattr_net_share(double energy, uint64_t net_ns, uint64_t interval_ns, unsigned ncpu)
{
	if (interval_ns == 0 || ncpu == 0 || energy <= 0)
		return 0;
	double frac = (double)net_ns / ((double)interval_ns * ncpu);
	return frac >= 1.0 ? energy : energy * frac;
}

uint64_t np_powerattr_counter_delta(uint64_t prev, uint64_t cur, uint64_t max_range)
{
	if (cur >= prev)
		return cur - prev;
	if (max_range == 0 || prev > max_range)
		return 0;     /* reset, not a wrap: unknown, count nothing */
	return max_range - prev + cur;
}
