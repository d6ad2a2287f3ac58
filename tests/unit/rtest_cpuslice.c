/* record/core/cpuslice.c (--cpu-slice): a stretch of work longer than the slice
 * ends in a yield, shorter ones do not, a slice of 0 never yields, and a
 * new stretch starts at cpuslice_begin(). Counts only: how long another
 * task waits is a benchmark's business (bench/record.sh), not a test's. */
#include <stdint.h>
#include <time.h>
#include "cpuslice.h"
#include "tap.h"

/* CPU time, not wall time: on a loaded machine every yield gives the CPU
 * away for up to a tick, and 20 ms of wall time held only 5 stretches. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Busy work for ns of CPU, calling the point every ~10 us. */
static void work(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns;
	while (cpu_ns() < end) {
		uint64_t t = cpu_ns() + 10000;
		while (cpu_ns() < t)
			;
		cpuslice_point();
	}
}

static void test_yields(void)
{
	CHECK_EQ_U(cpuslice_get(), CPUSLICE_DEFAULT_NS);
	cpuslice_set(1000000);          /* 1 ms */
	uint64_t y0 = cpuslice_yields(), w0 = wall_ns();
	cpuslice_begin();
	work(20000000);                 /* 20 ms of work: ~20 yields */
	uint64_t n = cpuslice_yields() - y0, wall = wall_ns() - w0;
	/* the slice is wall time: a stretch preempted by another task ends
	 * with less than 1 ms of CPU, so more yields under load; but every
	 * yield ends a stretch of at least 1 ms of wall time, so at most one
	 * per ms that passed (a fixed 100 could fail on a starved run), and
	 * nowhere near one per point (2000) */
	CHECK(n >= 10 && n <= wall / 1000000, "20 ms of work in 1 ms slices: %llu yields in %llu us",
	      (unsigned long long)n, (unsigned long long)(wall / 1000));

	/* a stretch shorter than the slice, after a fresh begin: none, unless
	 * the 5 ms of CPU took over 50 ms of wall time (a loaded machine) */
	cpuslice_set(50000000);
	y0 = cpuslice_yields();
	w0 = wall_ns();
	cpuslice_begin();
	work(5000000);
	wall = wall_ns() - w0;
	CHECK(cpuslice_yields() - y0 <= wall / 50000000, "5 ms of work in a 50 ms slice: %llu yields in %llu us",
	      (unsigned long long)(cpuslice_yields() - y0), (unsigned long long)(wall / 1000));

	/* off: never, however long */
	cpuslice_set(0);
	cpuslice_begin();
	y0 = cpuslice_yields();
	work(5000000);
	CHECK_EQ_U(cpuslice_yields() - y0, 0);
}

static void test_every64(void)
{
	cpuslice_set(1);                /* every look at the clock yields */
	cpuslice_begin();
	uint64_t y0 = cpuslice_yields();
	unsigned ctr = 0;
	for (int i = 0; i < 640; i++)
		cpuslice_point_every64(&ctr);
	CHECK_EQ_U(cpuslice_yields() - y0, 10);
}

int main(void)
{
	test_yields();
	test_every64();
	return tap_done();
}
