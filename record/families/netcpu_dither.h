/* Dithered sampling rate of the socket-time sampler (docs/NETCPU.md
 * "Dithered period"): a cpu-clock timer with a fixed period lets an
 * unpreempted sender fall into step with it (injection locking, j25f), and
 * the fixed grid then finds send more or less often than its share. Every
 * NC_DITHER_PERIODS mean periods each CPU's timer is restarted at a random
 * rate; the samples are still counted, and one sample stands for
 * nc_dither_period_ns() of the interval. No BPF, no I/O: the arithmetic
 * only (record/families/netcpu.c does the ioctl). */
#ifndef NP_NETCPU_DITHER_H
#define NP_NETCPU_DITHER_H

#include <stdbool.h>
#include <stdint.h>

/* Restart after at least this many mean periods: each restart loses half a
 * sample on average (corrected in nc_dither_period_ns), and the lock needs
 * some periods to form again (the rtest's chrt runs: ~200 periods between
 * restarts read at the count's spread). */
#define NC_DITHER_PERIODS 128
/* Rate drawn uniformly in [1 - W, 1 + W] x the rate asked for: the mean
 * rate is the one asked for, so the count of a state stays unbiased with
 * the mean period (a uniform period instead would over-count, by the mean
 * of 1/period). */
#define NC_DITHER_W 0.5

struct nc_dither {
	unsigned hz;            /* mean rate asked for, 0 = no dithering */
	uint64_t rng;           /* xorshift64* state, never 0 */
	uint64_t last_ns;       /* mono ns of the last restart, 0 = none yet */
	unsigned restarts;      /* restarts since the last nc_dither_period_ns */
};

void nc_dither_init(struct nc_dither *d, unsigned hz, uint64_t seed);
/* Whether the timers are due for a restart at mono time now. */
bool nc_dither_due(const struct nc_dither *d, uint64_t now);
/* A new random period (ns) for one CPU's timer. */
uint64_t nc_dither_draw(struct nc_dither *d);
/* The timers were restarted at now (all CPUs at once). */
void nc_dither_restarted(struct nc_dither *d, uint64_t now);
/* What one sample stands for over an interval of span_ns (ns), and starts
 * the next interval's restart count: the mean period, raised by the half
 * sample each restart loses on average (the timer's partial period before
 * a restart is dropped: perf_swevent_start_hrtimer starts the new period
 * whole). */
uint64_t nc_dither_period_ns(struct nc_dither *d, uint64_t span_ns);

#endif
