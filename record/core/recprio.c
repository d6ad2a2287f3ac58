/* nprec's own scheduling priority (--nice): see recprio.h. */
#include "recprio.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t rp_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int rp_set(int nice)
{
	return setpriority(PRIO_PROCESS, 0, nice);
}

/* nice and, when a light policy is set, the policy that goes with it:
 * leaving SCHED_IDLE needs RLIMIT_NICE to allow the current nice, so the
 * policy changes first on the way up and last on the way down */
static int rp_apply(const struct rec_prio *p, int nice)
{
	struct sched_param sp = { 0 };
	if (p->light_policy == SCHED_OTHER)
		return rp_set(nice);
	if (nice == p->base)
		return sched_setscheduler(0, SCHED_OTHER, &sp) < 0 ? -1 : rp_set(nice);
	return rp_set(nice) < 0 ? -1 : sched_setscheduler(0, p->light_policy, &sp);
}

int rec_prio_light_policy(struct rec_prio *p, int policy)
{
	p->light_policy = policy;
	if (policy == SCHED_OTHER || p->cur == p->base)
		return 0;
	return rp_apply(p, p->cur);
}

int rec_prio_init(struct rec_prio *p, int nice_delta, uint64_t now, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	errno = 0;
	int base = getpriority(PRIO_PROCESS, 0);
	if (base == -1 && errno)
		base = 0;
	p->base = p->light = p->cur = base;
	p->win_t0 = p->last_tick = now;
	p->win_cpu0 = rp_cpu_ns();
	if (nice_delta <= 0 || base >= 19)
		return 1;
	int light = base + nice_delta > 19 ? 19 : base + nice_delta;
	/* Going back up later needs CAP_SYS_NICE (or RLIMIT_NICE): try it
	 * one step above the start priority first, so a recorder that could
	 * never speed up again is never slowed down. */
	if (base > -20 && rp_set(base - 1) < 0) {
		snprintf(err, errlen, "--nice not applied: cannot raise the priority back later (%s; needs CAP_SYS_NICE)",
			 strerror(errno));
		return 1;
	}
	if (rp_set(light) < 0) {
		rp_set(base);
		snprintf(err, errlen, "--nice not applied: setpriority: %s", strerror(errno));
		return 1;
	}
	p->light = p->cur = light;
	return 0;
}

int rec_prio_before_drop(struct rec_prio *p, char *err, size_t errlen)
{
	if (p->light == p->base)
		return 0;
	int lim = 20 - p->base;
	struct rlimit rl;
	rlim_t want = (rlim_t)(lim < 1 ? 1 : lim > 40 ? 40 : lim);
	if (getrlimit(RLIMIT_NICE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		struct rlimit nl = { want, want };
		if (setrlimit(RLIMIT_NICE, &nl) < 0) {
			int e = errno;
			p->no_way_back = true;
			if (p->light_policy == SCHED_IDLE) {   /* never stuck in SCHED_IDLE: starved under load */
				struct sched_param sp = { 0 };
				sched_setscheduler(0, SCHED_OTHER, &sp);
				p->light_policy = SCHED_OTHER;
			}
			snprintf(err, errlen, "--nice: RLIMIT_NICE cannot be raised to %d (%s; needs CAP_SYS_RESOURCE): "
				 "after the privilege drop nprec stays at nice %d even when busy",
				 (int)want, strerror(e), p->light);
			return 1;
		}
	}
	return 0;
}

int rec_prio_decide(struct rec_prio *p, uint64_t now, double cpu_pct)
{
	p->last_pct = cpu_pct;
	if (p->light == p->base)
		return p->base;
	if (cpu_pct > REC_PRIO_BUSY_PCT) {
		if (p->cur != p->base)
			p->boosts++;
		p->hold_until = now + REC_PRIO_HOLD_NS;
		return p->base;
	}
	return now < p->hold_until ? p->base : p->light;
}

void rec_prio_due(struct rec_prio *p, uint64_t sleep_ns)
{
	p->sleep_ns = sleep_ns;
}

bool rec_prio_tick(struct rec_prio *p, uint64_t now)
{
	bool late = now > p->last_tick + p->sleep_ns + REC_PRIO_LATE_NS;
	p->last_tick = now;
	if (p->light == p->base || (!late && now < p->win_t0 + REC_PRIO_WINDOW_NS))
		return false;
	uint64_t cpu = rp_cpu_ns();
	double pct = now > p->win_t0 ? 100.0 * (double)(cpu - p->win_cpu0) / (double)(now - p->win_t0) : 0;
	p->win_t0 = now;
	p->win_cpu0 = cpu;
	int want = rec_prio_decide(p, now, late ? 100.0 : pct);
	p->last_pct = pct;
	p->last_late = late;
	if (want != p->cur && want == p->base && p->no_way_back) {
		p->boosts_missed++;
		return false;
	}
	if (want == p->cur || rp_apply(p, want) < 0)
		return false;
	p->cur = want;
	return true;
}

/* ---- affinity away from the busiest CPU ---- */

int rec_aff_choose(const double *pct, int n, int avoided)
{
	int hi = -1, lo = -1, known = 0;
	for (int i = 0; i < n; i++) {
		if (pct[i] < 0)
			continue;
		known++;
		if (hi < 0 || pct[i] > pct[hi])
			hi = i;
		if (lo < 0 || pct[i] < pct[lo])
			lo = i;
	}
	if (known < 2)
		return -1;
	if (pct[hi] >= REC_AFF_BUSY_PCT && pct[hi] - pct[lo] >= REC_AFF_GAP_PCT)
		return hi;
	if (avoided >= 0 && avoided < n && pct[avoided] >= 0 &&
	    pct[avoided] >= REC_AFF_BUSY_PCT - REC_AFF_KEEP_PCT &&
	    pct[avoided] - pct[lo] >= REC_AFF_GAP_PCT / 2)
		return avoided;
	return -1;
}

/* Fills busy/total per CPU from /proc/stat; returns the number of CPUs or -1. */
static int ra_read(uint64_t *busy, uint64_t *total, int max)
{
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	char line[512];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned cpu;
		unsigned long long us, ni, sy, id, io, irq, sirq;
		if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu", &cpu, &us, &ni, &sy, &id, &io,
			   &irq, &sirq) != 8 || (int)cpu >= max)
			continue;
		/* steal is not counted: time the host took is neither busy nor free for us */
		busy[cpu] = us + ni + sy + irq + sirq;
		total[cpu] = busy[cpu] + id + io;
		if ((int)cpu + 1 > n)
			n = (int)cpu + 1;
	}
	fclose(f);
	return n;
}

int rec_aff_init(struct rec_aff *a, bool on, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	a->avoided = -1;
	if (!on)
		return 0;
	a->busy = calloc(REC_AFF_MAXCPU, sizeof(*a->busy));
	a->total = calloc(REC_AFF_MAXCPU, sizeof(*a->total));
	const char *why = NULL;
	if (!a->busy || !a->total || sched_getaffinity(0, sizeof(a->base), &a->base) < 0 ||
	    (a->ncpu = ra_read(a->busy, a->total, REC_AFF_MAXCPU)) < 0)
		why = strerror(errno);
	else if (a->ncpu < 2 || CPU_COUNT(&a->base) < 2)
		why = "fewer than 2 CPUs to choose from";
	if (why) {
		snprintf(err, errlen, "affinity away from the busiest CPU off: %s", why);
		rec_aff_free(a);
		return -1;
	}
	a->on = true;
	return 0;
}

bool rec_aff_interval(struct rec_aff *a)
{
	if (!a->on)
		return false;
	static uint64_t busy[REC_AFF_MAXCPU], total[REC_AFF_MAXCPU];
	static double pct[REC_AFF_MAXCPU];
	int n = ra_read(busy, total, REC_AFF_MAXCPU);
	if (n > a->ncpu)
		n = a->ncpu;
	for (int i = 0; i < n; i++) {
		uint64_t dt = total[i] - a->total[i], db = busy[i] - a->busy[i];
		pct[i] = CPU_ISSET(i, &a->base) && dt > 0 ? 100.0 * (double)db / (double)dt : -1;
		a->busy[i] = busy[i];
		a->total[i] = total[i];
	}
	int want = rec_aff_choose(pct, n, a->avoided);
	if (want == a->avoided)
		return false;
	cpu_set_t m = a->base;
	if (want >= 0)
		CPU_CLR(want, &m);
	if (sched_setaffinity(0, sizeof(m), &m) < 0)
		return false;
	a->avoided = want;
	a->changes++;
	return true;
}

void rec_aff_free(struct rec_aff *a)
{
	free(a->busy);
	free(a->total);
	a->busy = a->total = NULL;
	a->on = false;
}
