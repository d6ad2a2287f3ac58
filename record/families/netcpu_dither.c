/* Dithered sampling rate of the socket-time sampler: netcpu_dither.h. */
#include "netcpu_dither.h"

#define NC_NS_PER_S 1000000000.0

void nc_dither_init(struct nc_dither *d, unsigned hz, uint64_t seed)
{
	*d = (struct nc_dither){ .hz = hz, .rng = seed ? seed : 0x9e3779b97f4a7c15ull };
}

bool nc_dither_due(const struct nc_dither *d, uint64_t now)
{
	return d->hz && (!d->last_ns ||
			 (double)(now - d->last_ns) >= NC_DITHER_PERIODS * NC_NS_PER_S / d->hz);
}

/* uniform in [0, 1) */
static double nc_dither_unit(struct nc_dither *d)
{
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return (double)((d->rng * 0x2545f4914f6cdd1dull) >> 11) / (double)(1ull << 53);
}

uint64_t nc_dither_draw(struct nc_dither *d)
{
	double rate = d->hz * (1.0 - NC_DITHER_W + 2.0 * NC_DITHER_W * nc_dither_unit(d));
	return (uint64_t)(NC_NS_PER_S / rate + 0.5);
}

void nc_dither_restarted(struct nc_dither *d, uint64_t now)
{
	d->last_ns = now;
	d->restarts++;
}

/* Over a span with R restarts a CPU's timer gives span x hz - R / 2
 * samples on average: each restart falls at a point of the old period
 * that is independent of the timer's phase, and drops the part of the
 * period already run, half a sample on average whatever the rate. */
uint64_t nc_dither_period_ns(struct nc_dither *d, uint64_t span_ns)
{
	if (!d->hz)
		return 0;
	if (!d->restarts)
		return (uint64_t)(NC_NS_PER_S / d->hz + 0.5);
	double mean = NC_NS_PER_S / d->hz, expect = (double)span_ns / mean, lost = d->restarts / 2.0;
	d->restarts = 0;
	/* a span too short for the correction to mean anything: at most x2 */
	if (lost > expect / 2)
		return (uint64_t)(2 * mean + 0.5);
	return (uint64_t)(mean * expect / (expect - lost) + 0.5);
}
