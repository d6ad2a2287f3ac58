/* --nice: nprec's own scheduling priority. A recorder woken at the
 * traced application's priority preempts it on a busy machine: on the
 * 2-CPU bench every drain and snapshot of nprec delayed the requests of
 * the pinned server, which is most of the p99 inflation nprec caused
 * (docs/BENCHMARKS.md, "Recorder overhead"). So nprec runs at a lower
 * priority while it is light, and goes back to the priority it was
 * started with while it needs real CPU (e.g. --packets at 200k events/s),
 * where losing ring-buffer events would cost more than a delayed request. */
#ifndef NP_REC_RECPRIO_H
#define NP_REC_RECPRIO_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Window over which nprec's CPU share is measured (one default interval,
 * so the snapshot burst is averaged with the quiet drains around it), the
 * share above which it counts as busy (per cent of one core), and how
 * long a busy period keeps the start priority once the share falls
 * again. A nice-10 task next to one nice-0 task still gets ~10 % of that
 * CPU, so a busy recorder can always show more than REC_PRIO_BUSY_PCT
 * while niced. */
#define REC_PRIO_WINDOW_NS   1000000000ull
#define REC_PRIO_BUSY_PCT    5.0
#define REC_PRIO_HOLD_NS     2000000000ull
/* A loop tick that comes this long after it was due (the sleep the loop
 * asked for, 20-100 ms: rec_prio_due) means the niced recorder is not
 * getting the CPU it needs, whatever share it managed to get: it is busy
 * too. */
#define REC_PRIO_LATE_NS     80000000ull

struct rec_prio {
	int base;                /* nice nprec was started with */
	int light;               /* nice while light; == base: feature off */
	int cur;                 /* nice in force */
	uint64_t win_t0, win_cpu0;
	uint64_t last_tick;
	uint64_t sleep_ns;       /* the loop's sleep before the next tick (0: none said) */
	uint64_t hold_until;
	uint64_t boosts;         /* light -> base switches */
	bool no_way_back;        /* rec_prio_before_drop: base out of reach after the drop */
	uint64_t boosts_missed;  /* boosts wanted while no_way_back */
	int light_policy;        /* scheduling policy while light (SCHED_OTHER: nice only) */
	double last_pct;         /* CPU share of the last window */
	bool last_late;          /* the last change came from a late tick */
};

/* Applies the light priority (nice_delta above the start priority, 0 =
 * off). It stays off, with why in err, when nprec could not come back
 * to the start priority afterwards (no CAP_SYS_NICE): a niced recorder
 * that cannot speed up under load would lose events. Returns 0 when the
 * light priority is in force, 1 when off. */
int rec_prio_init(struct rec_prio *p, int nice_delta, uint64_t now, char *err, size_t errlen);

/* Before the privilege drop (privdrop.c then sets RLIMIT_NICE to 20 - the
 * start nice, so that the start priority stays reachable without
 * CAP_SYS_NICE): raising that limit's maximum needs CAP_SYS_RESOURCE,
 * which a container's or this VM's root may lack. Without it the niced
 * recorder can never speed up again after the drop: on the project VM
 * every boost failed silently, so every recording since the privilege
 * drop ran at the light nice throughout (with 0 ring-buffer losses at
 * defaults in the benchmarks). Turning --nice off instead would change
 * that measured behaviour without evidence (nice 0 doubled the p99 in
 * earlier runs), so this only says so (err) and marks the boosts as
 * impossible (no_way_back: counted in boosts_missed, not tried; a light
 * SCHED_IDLE goes back to SCHED_OTHER now). Returns 0,
 * or 1 when there will be no way back. */
int rec_prio_before_drop(struct rec_prio *p, char *err, size_t errlen);

/* The light state also under SCHED_BATCH or SCHED_IDLE (issue 24's
 * experiment, NPREC_TEST_LIGHT_POLICY=batch|idle; SCHED_OTHER = nice
 * only, the default): the start priority goes back to SCHED_OTHER, so a
 * busy recorder is never starved the way a SCHED_IDLE one is under a
 * saturating load. Applied at once when light. Returns 0 or -1 (errno). */
int rec_prio_light_policy(struct rec_prio *p, int policy);

/* Called every loop tick (a late tick counts as busy). Returns true when the priority changed
 * (p->cur says which). */
bool rec_prio_tick(struct rec_prio *p, uint64_t now);

/* The loop sleeps sleep_ns before its next tick: lateness counts from then. */
void rec_prio_due(struct rec_prio *p, uint64_t sleep_ns);

/* Pure policy, for the unit test: the nice to use after a window with
 * cpu_pct, given the state; updates hold_until and boosts. */
int rec_prio_decide(struct rec_prio *p, uint64_t now, double cpu_pct);

/* Affinity away from the busiest CPU (issue 24; off unless
 * NPREC_TEST_AVOID_BUSY=1, an experiment until bench/e2e_pairs.sh on a
 * quiet machine says whether it helps). On a server whose bottleneck is
 * one saturated CPU (a single-threaded worker, the NIC's interrupt CPU)
 * every drain and snapshot nprec runs there is taken from the workload's
 * throughput, while on a CPU with idle time it costs nothing the workload
 * would have used. After every interval nprec compares the CPUs' busy
 * shares (/proc/stat) and leaves out of its own affinity the one CPU that
 * is both nearly saturated and clearly busier than the least busy one
 * (never the last CPU it may use), with some hysteresis so that its own
 * move does not flip the choice back. */
#define REC_AFF_MAXCPU    CPU_SETSIZE
#define REC_AFF_BUSY_PCT  90.0    /* a CPU this busy ... */
#define REC_AFF_GAP_PCT   20.0    /* ... and this many points busier than the least busy one */
#define REC_AFF_KEEP_PCT  10.0    /* the avoided one stays avoided until it is this much less busy, or the gap halves */

struct rec_aff {
	bool on;
	int ncpu;                /* CPUs counted in /proc/stat */
	cpu_set_t base;          /* the affinity nprec started with */
	int avoided;             /* the CPU left out, -1: none */
	uint64_t *busy, *total;  /* the previous /proc/stat counters per CPU (USER_HZ ticks) */
	uint64_t changes;
};

/* Reads the start affinity and /proc/stat (on: false = feature off).
 * Returns 0, or -1 with why in err (the feature then stays off). */
int rec_aff_init(struct rec_aff *a, bool on, char *err, size_t errlen);
/* After an interval: re-reads /proc/stat and sets the affinity. Returns
 * true when the CPU left out changed (a->avoided says which). */
bool rec_aff_interval(struct rec_aff *a);
/* Pure policy, for the unit test: the CPU to leave out (-1: none) given
 * each CPU's busy share in per cent (< 0: unknown or not allowed). */
int rec_aff_choose(const double *pct, int n, int avoided);
void rec_aff_free(struct rec_aff *a);

#endif
