/* Loader of bench/netcpu_timerlab.bpf.c (bench/netcpu_timerlab.sh builds
 * both): logs the timeline to a file until SIGINT.
 * Usage: timerlab TGID NR SEND HZ0 HZ1 OUT
 *   TGID, NR: the process and syscall nr whose calls are logged, SEND 1
 *   when they end at sock_send_length; HZn: the cpu-clock timer's rate on
 *   CPU n (0: none there). User mode is sampled too, so that every expiry
 *   is logged and the analysis has the whole grid. */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "timerlab.skel.h"

static volatile sig_atomic_t stop;

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
	return bpf_program__attach_perf_event(o->progs.tl_smp, fd) ? 0 : -errno;
}

int main(int argc, char **argv)
{
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
	 * either: drain every 20 ms */
	while (!stop) {
		usleep(20000);
		ring_buffer__consume(rb);
	}
	ring_buffer__consume(rb);
	fprintf(stderr, "timerlab: %llu events dropped\n", (unsigned long long)o->bss->tl_drops);
	ring_buffer__free(rb);
	fclose(out);
	timerlab_bpf__destroy(o);
	return 0;
}
