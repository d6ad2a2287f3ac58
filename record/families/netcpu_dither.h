/* Dithered sampling rate of the socket-time sampler (docs/NETCPU.md
 * "Dithered rate"): a cpu-clock timer with a fixed period lets an
 * unpreempted sender fall into step with it (injection locking, j25f), and
 * the fixed grid then finds send more or less often than its share. Every
 * NC_DITHER_PERIODS mean periods each CPU's timer is restarted at a random
 * rate, and each sample is weighed by the period it closed. No BPF, no
 * I/O: the arithmetic only (record/families/netcpu.c reads the counters
 * and does the ioctl). */
#ifndef NP_NETCPU_DITHER_H
#define NP_NETCPU_DITHER_H

#include <stdbool.h>
#include <stdint.h>

/* Restart after at least this many mean periods: each restart drops half a
 * period on average (nc_dweight_take corrects it), and a lock needs some
 * periods to form again (rtest_netcpu under chrt: restarts every ~200
 * periods read at the count's own spread). */
#define NC_DITHER_PERIODS 128
/* Rate drawn uniformly in [1 - W, 1 + W] x the rate asked for: the mean
 * rate (the timer interrupts' cost) is the one asked for. A restart's
 * random phase breaks a lock already at W = 0.1 (rtest_netcpu under chrt,
 * docs/NETCPU.md j26d); the spread of the weights widens the weighed sum's
 * error beyond the count's by (1 + cv^2)^(1/2), ~1 % at 0.25 (5 % at 0.5). */
#define NC_DITHER_W 0.25

struct nc_dither {
	unsigned hz;            /* mean rate asked for, 0 = not dithering */
	uint64_t rng;           /* xorshift64* state, never 0 */
	uint64_t last_ns;       /* mono ns of the last restart, 0 = none yet */
};

void nc_dither_init(struct nc_dither *d, unsigned hz, uint64_t seed);
/* Whether the timers are due for a restart at mono time now. */
bool nc_dither_due(const struct nc_dither *d, uint64_t now);
/* A new random period (ns) for one CPU's timer. */
uint64_t nc_dither_draw(struct nc_dither *d);

/* The sampled classes of one CPU (enum nc_class order, then the remote
 * sampler's six counts: record/families/netcpu.c NC_DW_SOCK_SIRQ...)
 * weighed by their timer's period: samples counted while a period was in
 * force stand for that period each. */
#define NC_DW_CLASSES 10
struct nc_dweight {
	uint64_t base[NC_DW_CLASSES];   /* the counters when last weighed */
	double ns[NC_DW_CLASSES];       /* weighed ns since the last take */
	uint64_t period;                /* the timer's period now */
	double lost;                    /* ns the restarts dropped since the last take */
};

/* Starts at the counters cnt with the timer at period. */
void nc_dweight_reset(struct nc_dweight *w, const uint64_t cnt[NC_DW_CLASSES], uint64_t period);
/* Weighs the samples counted since the last call at the period in force. */
void nc_dweight_add(struct nc_dweight *w, const uint64_t cnt[NC_DW_CLASSES]);
/* The timer was restarted at a new period (after nc_dweight_add). The
 * restart drops the part of the old period already run: it falls at a
 * point independent of the timer's phase, so half the old period on
 * average. */
void nc_dweight_restart(struct nc_dweight *w, uint64_t period);
/* The estimate of each class over an interval of span_ns (ns): the weighed
 * ns scaled by span / (span - lost), the time the timer covered; starts the
 * next interval. */
void nc_dweight_take(struct nc_dweight *w, uint64_t span_ns, uint64_t out[NC_DW_CLASSES]);

/* The count that stands for a remote-split estimate (record/families/
 * netcpu.c nc_combine: the call's own samples, call of them, times the
 * share f outside softirqs that nr remote samples found) in the records'
 * *_smp, so that the Poisson interval that npanalyze and the tests put on
 * the count (common/sampleci.h) is the estimate's: the count whose
 * relative variance 1/count is the product's, 1/call (the call total) +
 * (1 - f)/(f (nr - 1)) (the share: the unbiased binomial estimate, so
 * that intervals with few remote samples do not count as sure) + the
 * cross term. About call x f when nr = call; fewer when the remote
 * samples are fewer; call x f with none (nc_combine then takes the own
 * timer's split, whose count that is) and at a share of 0 or 1 (a
 * receive call without softirqs: paced HTTP). rtest_netcpu_dither
 * checks the interval's coverage against simulated truth. */
double nc_split_count(uint64_t call, uint64_t nr, double f);

#endif
