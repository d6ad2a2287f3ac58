/* nprec's own scheduling priority (--nice): see recprio.h. */
#include "recprio.h"

#include <errno.h>
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
	if (want == p->cur || rp_set(want) < 0)
		return false;
	p->cur = want;
	return true;
}
