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

void nc_dweight_reset(struct nc_dweight *w, const uint64_t cnt[NC_DW_CLASSES], uint64_t period)
{
	*w = (struct nc_dweight){ .period = period };
	for (int c = 0; c < NC_DW_CLASSES; c++)
		w->base[c] = cnt[c];
}

void nc_dweight_add(struct nc_dweight *w, const uint64_t cnt[NC_DW_CLASSES])
{
	for (int c = 0; c < NC_DW_CLASSES; c++) {
		w->ns[c] += (double)(cnt[c] - w->base[c]) * (double)w->period;
		w->base[c] = cnt[c];
	}
}

void nc_dweight_restart(struct nc_dweight *w, uint64_t period)
{
	w->lost += (double)w->period / 2;
	w->period = period;
}

void nc_dweight_take(struct nc_dweight *w, uint64_t span_ns, uint64_t out[NC_DW_CLASSES])
{
	/* an interval too short for the correction to mean anything: at most x2 */
	double span = (double)span_ns, cover = span - w->lost < span / 2 ? span / 2 : span - w->lost;
	double scale = w->lost > 0 && span > 0 ? span / cover : 1.0;
	for (int c = 0; c < NC_DW_CLASSES; c++) {
		out[c] = (uint64_t)(w->ns[c] * scale + 0.5);
		w->ns[c] = 0;
	}
	w->lost = 0;
}

double nc_split_count(uint64_t call, uint64_t nr, double f)
{
	double c = (double)call, r = (double)nr;
	/* no remote sample: the own split; a share of 0 or 1 (all that one
	 * remote sample can give): no binomial spread to add */
	if (!nr || f <= 0.0 || f >= 1.0)
		return c * f;
	return c * f * (r - 1.0) / (f * (r - 1.0) + (1.0 - f) * (c + 1.0));
}
