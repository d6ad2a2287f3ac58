/* Loader of bench/netcpu_timerlab.bpf.c (bench/netcpu_timerlab.sh builds
 * both): logs the timeline to a file until SIGINT.
 * Usage: timerlab TGID NR SEND HZ0 HZ1 OUT
 *   TGID, NR: the process and syscall nr whose calls are logged, SEND 1
 *   when they end at sock_send_length; HZn: the cpu-clock timer's rate on
 *   CPU n (0: none there). User mode is sampled too, so that every expiry
 *   is logged and the analysis has the whole grid.
 * Env TL_RESTART_US=N: every N us restart each timer at a period drawn in
 *   0.5-1.5 x its own (PERF_EVENT_IOC_PERIOD), so that no phase lasts
 *   more than a few periods (does the bias need a lock to build?). */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "timerlab.skel.h"

static volatile sig_atomic_t stop;
static int timer_fd[2] = { -1, -1 }, timer_hz[2];

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_ev(void *ctx, void *data, size_t len)
{
	return fwrite(data, len, 1, ctx) == 1 ? 0 : -EIO;
}

static int open_timer(struct timerlab_bpf *o, int cpu, int hz)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000ull / (unsigned)hz,
	};
	int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, 0);

	if (fd < 0)
		return -errno;
	timer_fd[cpu] = fd;
	timer_hz[cpu] = hz;
	return bpf_program__attach_perf_event(o->progs.tl_smp, fd) ? 0 : -errno;
}

static unsigned long restart_timers(void)
{
	unsigned long n = 0;

	for (int cpu = 0; cpu < 2; cpu++) {
		__u64 p;

		if (timer_fd[cpu] < 0)
			continue;
		p = 1000000000ull / (unsigned)timer_hz[cpu] * (500 + (unsigned)rand() % 1000) / 1000;
		n += ioctl(timer_fd[cpu], PERF_EVENT_IOC_PERIOD, &p) == 0;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned long restarts = 0;
	int restart_us;
	struct timerlab_bpf *o;
	struct ring_buffer *rb;
	FILE *out;
	int err;

	if (argc != 7) {
		fprintf(stderr, "usage: timerlab TGID NR SEND HZ0 HZ1 OUT\n");
		return 2;
	}
	o = timerlab_bpf__open();
	if (!o)
		return 1;
	o->rodata->tl_tgid = atoi(argv[1]);
	o->rodata->tl_nr = atoi(argv[2]);
	o->rodata->tl_send = atoi(argv[3]);
	err = timerlab_bpf__load(o) ?: timerlab_bpf__attach(o);
	for (int cpu = 0; !err && cpu < 2; cpu++)
		if (atoi(argv[4 + cpu]) > 0)
			err = open_timer(o, cpu, atoi(argv[4 + cpu]));
	out = err ? NULL : fopen(argv[6], "w");
	rb = out ? ring_buffer__new(bpf_map__fd(o->maps.tl_rb), write_ev, out, NULL) : NULL;
	if (!rb) {
		fprintf(stderr, "timerlab: set-up failed (%s)\n", strerror(err ? -err : errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* no wake-ups (the BPF side submits without them), so no epoll
	 * either: drain every ~20 ms */
	restart_us = getenv("TL_RESTART_US") ? atoi(getenv("TL_RESTART_US")) : 0;
	for (unsigned long i = 0; !stop; i++) {
		usleep(restart_us > 0 ? restart_us : 20000);
		if (restart_us > 0)
			restarts += restart_timers();
		if (restart_us <= 0 || i % (20000 / restart_us + 1) == 0)
			ring_buffer__consume(rb);
	}
	if (restart_us > 0)
		fprintf(stderr, "timerlab: %lu restarts\n", restarts);
	ring_buffer__consume(rb);
	fprintf(stderr, "timerlab: %llu events dropped\n", (unsigned long long)o->bss->tl_drops);
	ring_buffer__free(rb);
	fclose(out);
	timerlab_bpf__destroy(o);
	return 0;
}
