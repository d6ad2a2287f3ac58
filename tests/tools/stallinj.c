/*
 * stallinj: disturbs the machine the way the official CI's VM appears to be
 * disturbed, so e2e tests can be checked against it (not used by any test).
 *
 *   stallinj stall [-d SECONDS] [-l LOG] [-s SEED] [-i] [-g MIN,MAX] [-L MIN,MAX]
 *       On every online CPU, one SCHED_FIFO (priority 1) busy loop for
 *       0.3-2 s (-L) at random intervals of 3-15 s (-g): a burst of "CPU steal" that
 *       stops every normal task at once. The kernel's RT throttling
 *       (sched_rt_runtime_us, 95 % here) still leaves others 5 %. By
 *       default all CPUs stall together (one shared schedule), as when a
 *       hypervisor deschedules the whole VM; -i gives each CPU its own.
 *   stallinj hog [-d SECONDS] [-n PROCS] [-m MB]
 *       PROCS (default 2) steady busy loops at nice 0, unpinned; with -m
 *       each streams over its own MB-megabyte buffer instead (memory
 *       bandwidth and cache: a neighbour that makes others' CPU time per
 *       unit of work grow, not only their waits).
 *
 * It always stops: after -d seconds (default 600, at most 3600), on
 * SIGTERM/SIGINT/SIGHUP, or when the parent dies (the workers hold
 * PR_SET_PDEATHSIG and check the deadline themselves). -l appends one line
 * per stall: "UTC-seconds cpu ms".
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 64

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64: the schedule only needs to be cheap and repeatable per seed */
static double rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (*s >> 11) * (1.0 / 9007199254740992.0);
}

static void spin_until(double end, double deadline)
{
	volatile uint64_t x = 0;

	while (!stop_flag && mono_s() < end && mono_s() < deadline)
		for (int i = 0; i < 10000; i++)
			x++;
}

/* sleeps in slices so a signal or the deadline ends it promptly */
static void sleep_until(double end, double deadline)
{
	while (!stop_flag && mono_s() < end && mono_s() < deadline) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static double gap_lo = 3, gap_hi = 15, len_lo = 0.3, len_hi = 2;

static void stall_worker(int cpu, uint64_t seed, double deadline, const char *log)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		fprintf(stderr, "stallinj: cpu %d affinity: %s\n", cpu, strerror(errno));
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
		fprintf(stderr, "stallinj: SCHED_FIFO: %s\n", strerror(errno));
		_exit(1);
	}
	while (!stop_flag && mono_s() < deadline) {
		double gap = gap_lo + (gap_hi - gap_lo) * rnd(&seed);
		double len = len_lo + (len_hi - len_lo) * rnd(&seed);

		sleep_until(mono_s() + gap, deadline);
		if (stop_flag || mono_s() >= deadline)
			break;
		if (log) {
			FILE *f = fopen(log, "a");
			if (f) {
				fprintf(f, "%ld %d %d\n", (long)time(NULL), cpu, (int)(len * 1000));
				fclose(f);
			}
		}
		spin_until(mono_s() + len, deadline);
	}
	_exit(0);
}

static void hog_worker(double deadline, size_t mb)
{
	size_t n = mb << 20;
	volatile char *buf = mb ? malloc(n) : NULL;

	if (!buf)
		spin_until(deadline, deadline);
	while (buf && !stop_flag && mono_s() < deadline)
		for (size_t i = 0; i < n; i += 64)
			buf[i]++;
	_exit(0);
}

/* "A,B" -> two doubles, A <= B */
static int range(const char *s, double *a, double *b)
{
	return sscanf(s, "%lf,%lf", a, b) == 2 && *a >= 0 && *b >= *a;
}

static void usage(void)
{
	fprintf(stderr, "usage: stallinj stall [-d SECONDS] [-l LOG] [-s SEED] [-i] [-g MIN,MAX] [-L MIN,MAX]\n"
			"       stallinj hog [-d SECONDS] [-n PROCS] [-m MB]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double secs = 600, deadline;
	const char *log = NULL;
	uint64_t seed = (uint64_t)time(NULL) * 2654435761u | 1;
	int indep = 0, nproc = 2, hog, opt, n = 0;
	size_t mb = 0;
	pid_t pids[MAX_WORKERS];
	struct sigaction sa;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "hog"))
		hog = 1;
	else if (!strcmp(argv[1], "stall"))
		hog = 0;
	else
		usage();
	optind = 2;
	while ((opt = getopt(argc, argv, "d:l:s:in:g:L:m:")) != -1) {
		switch (opt) {
		case 'd': secs = atof(optarg); break;
		case 'l': log = optarg; break;
		case 's': seed = strtoull(optarg, NULL, 0) | 1; break;
		case 'i': indep = 1; break;
		case 'n': nproc = atoi(optarg); break;
		case 'm': mb = strtoul(optarg, NULL, 0); break;
		case 'g': if (!range(optarg, &gap_lo, &gap_hi)) usage(); break;
		case 'L': if (!range(optarg, &len_lo, &len_hi)) usage(); break;
		default: usage();
		}
	}
	if (secs <= 0 || secs > 3600 || nproc < 1 || nproc > MAX_WORKERS)
		usage();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	deadline = mono_s() + secs;

	int workers = hog ? nproc : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (workers > MAX_WORKERS)
		workers = MAX_WORKERS;
	for (int i = 0; i < workers; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("stallinj: fork");
			break;
		}
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			if (hog)
				hog_worker(deadline, mb);
			stall_worker(i, indep ? seed + 0x9e3779b97f4a7c15ull * (i + 1) : seed,
				     deadline, log);
		}
		pids[n++] = p;
	}
	fprintf(stderr, "stallinj: %s, %d workers, %.0f s, pid %d\n",
		hog ? "hog" : "stall", n, secs, (int)getpid());
	sleep_until(deadline, deadline);
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	return 0;
}
