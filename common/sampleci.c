/* Poisson score interval: common/sampleci.h. */
#include <math.h>
#include "sampleci.h"

void np_poisson_ci(uint64_t n, double z, double *lo, double *hi)
{
	double c = (double)n + z * z / 2.0, h = z * sqrt((double)n + z * z / 4.0);
	*lo = c - h > 0 ? c - h : 0;
	*hi = c + h;
}
