/* bench/txn_copyprobe.sh's loader: txn_copyprobe.bpf.c for one process
 * (argv[1]: its pid), "ready" on stdout once attached, the histograms at
 * SIGINT/SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "txn_copyprobe.skel.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
	static const char *row[] = {
		"cache at/after the last copy [0 no, 1 yes]",
		"read's return - last copy, log2 ns",
		"cache - last copy (>= 0), log2 ns",
		"last copy - cache (> 0), log2 ns",
		"read's return - cache, log2 ns",
		"copies per read",
		"transmitted after the last copy [0 no, 1 yes]",
		"read's return - that transmit, log2 ns",
	};
	if (argc != 2)
		return 2;
	struct txn_copyprobe_bpf *p = txn_copyprobe_bpf__open();
	if (!p)
		return 1;
	p->rodata->tgid = (unsigned)atoi(argv[1]);
	if (txn_copyprobe_bpf__load(p) || txn_copyprobe_bpf__attach(p)) {
		fprintf(stderr, "txn_copyprobe: load/attach failed\n");
		return 1;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	int fd = bpf_map__fd(p->maps.hist);
	for (unsigned r = 0; r < sizeof(row) / sizeof(row[0]); r++) {
		printf("%s:", row[r]);
		for (unsigned b = 0; b < 64; b++) {
			__u32 k = r * 64 + b;
			__u64 v = 0;
			if (!bpf_map_lookup_elem(fd, &k, &v) && v)
				printf(" %u:%llu", b, (unsigned long long)v);
		}
		printf("\n");
	}
	txn_copyprobe_bpf__destroy(p);
	return 0;
}
