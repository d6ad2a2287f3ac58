/* Cooperative time slices for nprec's own work (--cpu-slice).
 *
 * On a kernel without preemption of kernel code (PREEMPT_NONE) and with a
 * 4 ms tick (HZ=250), a runnable nprec that the scheduler picked keeps the
 * CPU until it sleeps or the next tick, niced or SCHED_IDLE alike. Each of
 * those stretches stalls the traced application on that CPU for up to a
 * tick, and a closed-loop load generator that corrects for coordinated
 * omission (wrk) turns one 4 ms stall into dozens of ms-long latency
 * samples: that was most of nprec's saturated-p99 inflation
 * (docs/BENCHMARKS.md). So every loop of nprec's that can run long calls
 * cpuslice_point(), which gives the CPU away with sched_yield() once the
 * current stretch is older than the slice. With nothing else runnable on
 * the CPU the yield returns at once, so an idle machine loses nothing. */
#ifndef NP_REC_CPUSLICE_H
#define NP_REC_CPUSLICE_H

#include <stdint.h>

#define CPUSLICE_DEFAULT_NS 200000ull

/* slice_ns 0 turns yielding off (cpuslice_point then only counts). */
void cpuslice_set(uint64_t slice_ns);
uint64_t cpuslice_get(void);
/* nprec woke up: a new stretch starts now. */
void cpuslice_begin(void);
/* A place where nprec may give the CPU away. */
void cpuslice_point(void);
/* The same, for hot loops: looks at the clock every 64th call only. */
static inline void cpuslice_point_every64(unsigned *ctr)
{
	if ((++*ctr & 63) == 0)
		cpuslice_point();
}
/* Counters since start: yields made, and stretches that ran longer than
 * twice the slice between two points (work that cannot be cut finer). */
uint64_t cpuslice_yields(void);
uint64_t cpuslice_overruns(void);

#endif
