/* Cooperative time slices for nprec's own work: see cpuslice.h. One
 * process-wide state: nprec does all its work on one thread. */
#include "cpuslice.h"

#include <sched.h>
#include <time.h>

static struct {
	uint64_t slice_ns;
	uint64_t t0;             /* start of the current stretch */
	uint64_t yields, overruns;
} cs = { .slice_ns = CPUSLICE_DEFAULT_NS };

static uint64_t cs_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cpuslice_set(uint64_t slice_ns) { cs.slice_ns = slice_ns; }
uint64_t cpuslice_get(void) { return cs.slice_ns; }
void cpuslice_begin(void) { cs.t0 = cs_now(); }
uint64_t cpuslice_yields(void) { return cs.yields; }
uint64_t cpuslice_overruns(void) { return cs.overruns; }

void cpuslice_point(void)
{
	uint64_t now = cs_now(), ran = now - cs.t0;
	if (!cs.t0) {
		cs.t0 = now;
		return;
	}
	uint64_t slice = cs.slice_ns ? cs.slice_ns : CPUSLICE_DEFAULT_NS;
	if (ran < slice)
		return;
	if (ran > 2 * slice)
		cs.overruns++;
	if (cs.slice_ns) {
		sched_yield();
		cs.yields++;
		now = cs_now();
	}
	cs.t0 = now;
}
