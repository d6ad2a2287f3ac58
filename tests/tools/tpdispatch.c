/* tpdispatch: per-event cost of programs on one tracepoint, alone or
 * chained (bench/tpdispatch.sh). Runs a loop of send()+recv() of 16 bytes
 * on an AF_UNIX datagram socketpair (one sock_send_length and one
 * sock_recv_length per iteration) and prints the best of 9 rounds, or
 * with "syscall" a loop of getppid() with and without a classic syscall
 * tracepoint attached elsewhere (sys_enter_write). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#ifdef NP_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tpdispatch.skel.h"

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double sendrecv_ns(int n)
{
	int sv[2];
	char b[64] = { 0 };
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return -1;
	double t0 = mono();
	for (int i = 0; i < n; i++)
		if (send(sv[0], b, 16, 0) != 16 || recv(sv[1], b, sizeof(b), 0) != 16)
			break;
	double d = mono() - t0;
	close(sv[0]);
	close(sv[1]);
	return d / n * 1e9;
}

static double getppid_ns(int n)
{
	double t0 = mono();
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (mono() - t0) / n * 1e9;
}

static double best_of(double (*f)(int), int n)
{
	double best = 1e18;
	f(n / 3);
	for (int r = 0; r < 9; r++) {
		double v = f(n);
		if (v > 0 && v < best)
			best = v;
	}
	return best;
}

static int attach(struct bpf_program *p)
{
	return bpf_program__attach(p) ? 0 : -errno;
}

/* k programs on each tracepoint, each attached on its own */
static int setup_alone(struct tpdispatch_bpf *s, int k)
{
	struct bpf_program *snd[] = { s->progs.s0, s->progs.s1, s->progs.s2 };
	struct bpf_program *rcv[] = { s->progs.r0, s->progs.r1, s->progs.r2 };
	int rc = 0;
	for (int i = 0; i < k && !rc; i++)
		rc = attach(snd[i]) ?: attach(rcv[i]);
	return rc;
}

/* one head per tracepoint and k members in its chain */
static int setup_chain(struct tpdispatch_bpf *s, int k)
{
	struct bpf_program *snd[] = { s->progs.cs0, s->progs.cs1, s->progs.cs2 };
	struct bpf_program *rcv[] = { s->progs.cr0, s->progs.cr1, s->progs.cr2 };
	for (int i = 0; i < k; i++) {
		__u32 key = (__u32)i;
		int fs = bpf_program__fd(snd[i]), fr = bpf_program__fd(rcv[i]);
		if (bpf_map_update_elem(bpf_map__fd(s->maps.td_send), &key, &fs, BPF_ANY) ||
		    bpf_map_update_elem(bpf_map__fd(s->maps.td_recv), &key, &fr, BPF_ANY))
			return -errno;
	}
	return attach(s->progs.hs) ?: attach(s->progs.hr);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int k = argc > 2 ? atoi(argv[2]) : 0;
	if (!strcmp(mode, "--help") || (strcmp(mode, "none") && strcmp(mode, "alone") &&
					strcmp(mode, "chain") && strcmp(mode, "syscall")) || k < 0 || k > 3) {
		fprintf(stderr, "usage: tpdispatch none|alone K|chain K|syscall [on]   (K = 0..3)\n");
		return 2;
	}
	struct tpdispatch_bpf *s = tpdispatch_bpf__open_and_load();
	if (!s) {
		fprintf(stderr, "tpdispatch: cannot load BPF object: %s\n", strerror(errno));
		return 1;
	}
	int rc = 0;
	if (!strcmp(mode, "alone"))
		rc = setup_alone(s, k);
	else if (!strcmp(mode, "chain"))
		rc = setup_chain(s, k);
	else if (!strcmp(mode, "syscall") && argc > 2)
		rc = attach(s->progs.sw);
	if (rc) {
		fprintf(stderr, "tpdispatch: cannot attach: %s\n", strerror(-rc));
		tpdispatch_bpf__destroy(s);
		return 1;
	}
	if (!strcmp(mode, "syscall"))
		printf("syscall %s %.1f ns/getppid\n", argc > 2 ? "tp-on" : "tp-off", best_of(getppid_ns, 500000));
	else
		printf("%s %d %.1f ns/send+recv\n", mode, k, best_of(sendrecv_ns, 300000));
	tpdispatch_bpf__destroy(s);
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "tpdispatch: built without BPF\n");
	return 1;
}
#endif
