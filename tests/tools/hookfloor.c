/* hookfloor: attaches bpf/hookfloor.bpf.c's empty programs to the hooks
 * nprec uses at default settings, with nprec's multiplicity (three
 * programs on sock_send_length, two on sched_switch, a cpu-clock sampler
 * per CPU or, with --tick, one program on hrtimer_expire_entry (nprec's
 * default tick sampling source) ...), and waits for SIGINT/SIGTERM. Run beside a benchmark, it
 * shows the cost of merely dispatching to our programs: the floor under
 * any optimisation of nprec's program bodies (bench/hookfloor.sh).
 *
 * Built with libbpf by its own Makefile rule (NP_HAVE_BPF); without BPF the
 * generic tools rule builds the stub at the end, so `make tools` never
 * breaks on a machine without the BPF toolchain. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NP_HAVE_BPF
#include <getopt.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include "hookfloor.skel.h"

static const char *const groups[] = { "syscalls", "softirq", "sock", "sched", "sampler", "tick",
				      "tcp", "send1", "recv1", "other1" };
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))
#define MAX_LINKS 512

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hookfloor [--clock] [--tick|--no-sampler] [--sample-hz N] [--only GROUP[,GROUP...]] [-q]\n"
		"Attaches empty BPF programs to every hook nprec uses at default settings,\n"
		"as many per hook as nprec attaches, until SIGINT or SIGTERM.\n"
		"  --clock        each program also writes bpf_ktime_get_ns() to a per-CPU slot\n"
		"  --tick         sample as nprec's default: a program on hrtimer_expire_entry\n"
		"                 (the scheduler tick) instead of the cpu-clock sampler\n"
		"  --no-sampler   neither sampler\n"
		"  --sample-hz N  sampler frequency per CPU (default 1000, as nprec)\n"
		"  --only LIST    attach these groups (comma-separated): syscalls softirq sock sched\n"
		"                 sampler tick tcp, or today's default hooks, one program a hook as\n"
		"                 the hub attaches them: send1 (sock_send_length) recv1\n"
		"                 (sock_recv_length) other1 (state, retransmit, kfree_skb, exit)\n"
		"  -q             print nothing but errors\n");
}

/* The group is the name's second word: hf_<group>_... (hf_sampler alone). */
static bool in_group(const char *prog, const char *group)
{
	size_t n = strlen(group);
	return strncmp(prog, "hf_", 3) == 0 && strncmp(prog + 3, group, n) == 0 &&
	       (prog[3 + n] == '_' || prog[3 + n] == '\0');
}

/* LIST (comma-separated group names) into *mask, bit i for groups[i]. */
static int parse_groups(const char *list, unsigned *mask)
{
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ","), i;
		for (i = 0; i < NGROUPS && (strlen(groups[i]) != n || strncmp(p, groups[i], n)); i++)
			;
		if (i == NGROUPS) {
			fprintf(stderr, "hookfloor: unknown group %.*s\n", (int)n, p);
			return -1;
		}
		*mask |= 1u << i;
		p += n + (p[n] == ',');
	}
	return 0;
}

static bool in_groups(const char *prog, unsigned mask)
{
	for (size_t i = 0; i < NGROUPS; i++)
		if ((mask & (1u << i)) && in_group(prog, groups[i]))
			return true;
	return false;
}

/* Same event as nprec's netcpu sampler: kernel-only cpu-clock at hz. */
static int perf_open(unsigned hz, int cpu)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = hz,
		.freq = 1,
		.exclude_user = 1,
	};
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "clock", no_argument, NULL, 'c' },
		{ "no-sampler", no_argument, NULL, 'n' },
		{ "tick", no_argument, NULL, 't' },
		{ "sample-hz", required_argument, NULL, 'z' },
		{ "only", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool clock = false, sampler = true, tick = false, quiet = false;
	unsigned only = 0;   /* bit i: groups[i]; 0 = every group */
	unsigned hz = 1000;
	int c;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': clock = true; break;
		case 'n': sampler = false; break;
		case 't': tick = true; break;
		case 'q': quiet = true; break;
		case 'z': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v == 0 || v > 100000) {
				fprintf(stderr, "hookfloor: bad --sample-hz %s\n", optarg);
				return 2;
			}
			hz = (unsigned)v;
			break;
		}
		case 'o':
			if (parse_groups(optarg, &only)) {
				usage(stderr);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	/* before attaching, so a signal during a slow attach still detaches cleanly */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	struct hookfloor_bpf *skel = hookfloor_bpf__open();
	if (!skel) {
		fprintf(stderr, "hookfloor: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->hf_clock = clock;
	int err = hookfloor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "hookfloor: load: %s\n", strerror(-err));
		hookfloor_bpf__destroy(skel);
		return 1;
	}

	/* Links are kept here, not in the skeleton, because the sampler
	 * needs one per CPU. */
	struct bpf_link *links[MAX_LINKS];
	int fds[MAX_LINKS], nlinks = 0, nfds = 0, rc = 1;
	struct bpf_program *p;
	bpf_object__for_each_program(p, skel->obj) {
		const char *name = bpf_program__name(p);
		if (only && !in_groups(name, only))
			continue;
		/* every group = the legacy multiplicity; the one-a-hook groups
		 * only when named */
		if (!only && in_groups(name, 7u << 7))
			continue;
		/* one sampling source: the tick program only with --tick or
		 * --only tick, the cpu-clock sampler only without --tick */
		if (in_group(name, "tick") && ((!tick && !only) || !sampler))
			continue;
		if (in_group(name, "sampler")) {
			if (!sampler || tick)
				continue;
			int ncpu = libbpf_num_possible_cpus();
			for (int cpu = 0; cpu < ncpu && nlinks < MAX_LINKS; cpu++) {
				int fd = perf_open(hz, cpu);
				if (fd < 0) {
					if (errno == ENODEV)    /* offline CPU */
						continue;
					fprintf(stderr, "hookfloor: perf_event_open cpu %d: %s\n", cpu,
						strerror(errno));
					goto out;
				}
				fds[nfds++] = fd;
				links[nlinks] = bpf_program__attach_perf_event(p, fd);
				if (!links[nlinks]) {
					fprintf(stderr, "hookfloor: attach %s cpu %d: %s\n", name, cpu,
						strerror(errno));
					goto out;
				}
				nlinks++;
			}
			continue;
		}
		if (nlinks >= MAX_LINKS)
			break;
		links[nlinks] = bpf_program__attach(p);
		if (!links[nlinks]) {
			fprintf(stderr, "hookfloor: attach %s: %s\n", name, strerror(errno));
			goto out;
		}
		nlinks++;
	}
	if (!quiet)
		fprintf(stderr, "hookfloor: %d links attached (%s%s%s), clock %s\n", nlinks,
			only ? "chosen groups" : "all groups", "",
			!sampler ? ", no sampler" : tick ? ", tick sampler" : "", clock ? "on" : "off");

	while (!stop)
		pause();
	rc = 0;
out:
	for (int i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	hookfloor_bpf__destroy(skel);
	return rc;
}

#else /* !NP_HAVE_BPF */

int main(void)
{
	fprintf(stderr, "hookfloor: built without BPF (clang, bpftool, libbpf-dev missing)\n");
	return 2;
}

#endif
