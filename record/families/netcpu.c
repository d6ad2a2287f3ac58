/* Recorder family "netcpu": per-CPU network CPU cost (netto thesis ch. 4-5).
 * Kernel side: bpf/netcpu.bpf.c. Records: NP_REC_NETCPU every interval,
 * NP_REC_NETRX_STACKS when stack sampling is on. docs/NETCPU.md has the
 * method, docs/records/netcpu-threads.md the bodies. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <zlib.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "family.h"
#include "hostinfo.h"
#include "cpuslice.h"
#include "hookhub.h"
#include "kfs.h"
#include "ksyms.h"
#include "netcpu.h"
#include "netcpu_dither.h"
#include "netcpu.skel.h"
#include "netrxcat.h"
#include "npmsg.h"
#include "powerattr.h"
#include "rapl.h"
#include "rcbpf.h"
#include "rcfilter.h"
#include "records.h"

#define NC_REC_VERSION 1
#define NC_TOP_STACKS 5
#define NC_TOP_FRAMES 16
/* nc_stack_counts' size: room for NC_COUNT_SPAN intervals of NET_RX
 * samples at the stack source's rate on every CPU (two slots, one of
 * them drained late), within these bounds; not preallocated */
#define NC_COUNT_KEYS_MIN 16384
#define NC_COUNT_KEYS_MAX (1u << 20)
#define NC_COUNT_SPAN 3
#define NC_SYS_TPS 10            /* entry of the 10 syscalls that can be socket ops */
#define NC_SYS_SEC "tracepoint/syscalls/"

static const char *const nc_class_key[NC_CLASS_MAX] = { "netrx", "nettx", "send", "recv" };

/* NC_SRC_SOCK: --netcpu sample with the tick asked for: the socket-time
 * sampler's own timer takes the stacks (bpf/netcpu.bpf.c nc_sock_stacks) */
enum nc_source { NC_SRC_OFF, NC_SRC_TICK, NC_SRC_CLOCK, NC_SRC_SOCK };

static const char *const nc_source_name[] = { "off", "tick", "cpu-clock", "socket-timer" };

/* Syscall entry work the socket sampler leaves out (bpf/netcpu.bpf.c
 * nc_in_entry_work): do_syscall_64 holds the inlined entry/exit work. */
static const char *const nc_entry_syms[] = { "do_syscall_64" };
/* The exact clock's two ends, the sys_enter and sock_*_length tracepoints
 * with their programs (nprec's own, any other tracer's), and the entry
 * slow path: the sampler leaves samples whose stack passes through them
 * out (bpf/netcpu.bpf.c nc_in_tracer). */
/* The tracepoint iterators are on the stack only while two or more probes
 * share the tracepoint: with one (nprec's hub alone on the machine, the
 * usual case) the static call jumps straight to the probe. net/socket.c's
 * noinline wrappers around the sock_*_length tracepoints are on the stack
 * either way (j24q: samples in the programs there were counted as socket
 * time whenever no other recorder shared the hooks). */
static const char *const nc_trace_syms[] = { "__traceiter_sock_send_length", "__traceiter_sock_recv_length",
					      "__traceiter_sys_enter", "syscall_trace_enter", "perf_syscall_enter",
					      "call_trace_sock_send_length", "call_trace_sock_recv_length" };

/* What the time sampler looks for on the stack (bpf/netcpu.bpf.c
 * nc_sirq_vector): the NET_RX and NET_TX actions, then the softirq loop
 * (handle_softirqs since 6.10, __do_softirq before). */
static const char *const nc_vec_syms[] = { "net_rx_action", "net_tx_action", "handle_softirqs", "__do_softirq" };

/* The scheduler tick's hrtimer function, newest kernels first. */
static const char *const nc_tick_syms[] = { "tick_nohz_handler", "tick_sched_timer" };

#define NC_TICK_PROBE "tp_btf/hrtimer_expire_entry"
#define NC_CLOCK_PROBE "perf_event/cpu-clock"
#define NC_SOCK_PROBE "perf_event/cpu-clock (socket time)"
#define NC_SIRQ_SKIP "--netcpu sample: softirq time sampled (the stack says softirq and vector)"

struct nc_top {
	uint64_t samples;
	int cat;
	uint64_t ips[NC_STACK_DEPTH];
};

/* One count of the drained slot: its key, cut to NET_RX's own frames. */
struct nc_count {
	struct nc_stack_key k;
	uint64_t n;
};

enum { NC_HUB_SEND, NC_HUB_RECV, NC_HUB_SWITCH, NC_HUB_N };

/* One perf_event cpu-clock timer per CPU running one program. */
struct nc_timers {
	int *fds;
	struct bpf_link **links;
};

#define NC_ONLINE_EVERY 10

struct nc_state {
	struct netcpu_bpf *skel;
	struct hub_member hub[NC_HUB_N];
	int ncpu;                        /* possible CPUs */
	long online;                     /* online CPUs, read every NC_ONLINE_EVERY snapshots */
	unsigned online_age;
	struct nc_cpu *cur, *prev;       /* per-CPU values, ncpu each */
	struct nc_timers stack_timers;   /* --sample-hz N */
	struct nc_timers sock_timers;    /* the socket-time sampler's own */
	struct nc_timers *sock_src;      /* the timers whose samples count socket time */
	struct nc_dither dither;         /* their random rate (netcpu_dither.h) */
	struct nc_dweight *dw;           /* per CPU: the sampled classes weighed by period */
	struct nc_cpu *scratch;          /* the counters read at a restart, ncpu */
	uint64_t *est;                   /* ncpu x NC_CLASS_MAX: this interval's estimates */
	unsigned sock_hz;                /* socket-time sampler's rate asked for */
	unsigned sock_rate;              /* socket samples per CPU-second taken, 0 = none */
	enum nc_source src;              /* sampling source in use */
	unsigned sample_hz;              /* cpu-clock rate */
	unsigned kernel_hz;              /* CONFIG_HZ, 0 if unreadable */
	uint64_t tick_fn;                /* the tick's hrtimer function */
	uint64_t entry_lo[1], entry_hi[1];   /* nc_entry_syms' text, 0 if absent */
	uint64_t trace_lo[7], trace_hi[7];   /* nc_trace_syms' */
	uint64_t vec_lo[4], vec_hi[4];       /* nc_vec_syms' */
	bool sirq_clock;                 /* the exact softirq pair is loaded */
	bool sampling;
	bool exact;                      /* --netcpu exact: every socket call stamped */
	bool sys_tps_loaded;             /* the per-syscall tracepoints are in the object */
	bool sched_entry;                /* exact: the kernel has sched_entry_tp (6.16+) */
	bool remote_recv_only;           /* the remote split for receive calls, the own
					  * one for send (the default; not with
					  * NPREC_TEST_SOCK_SAMPLER=remote) */
	bool sock_remote;                /* socket time read from another CPU's timer
					  * (nc_sock_sample_remote) */
	char remote_why[120];            /* why the local sampler instead */
	int *rsrc;                       /* per CPU: the CPU whose counters hold its socket
					  * samples (itself unless remote), -1 none */
	double *rfrac;                   /* 2 x ncpu: the combined estimate's split of the
					  * call this interval (send, receive per CPU) */
	struct ksyms *ksyms;
	struct rapl rapl;
	bool have_rapl;
	char rapl_why[160];
	uint64_t events, lost;
	struct bpf_link *sys_links[NC_SYS_TPS];   /* classic syscall tracepoints */
	/* scratch for stack draining, grown up to nc_stack_counts' size */
	struct nc_count *keys;
	size_t keys_cap, keys_max;
	uint64_t *cpu_cat;               /* ncpu x NC_CAT_MAX */
};

static void nc_close(void *state);

/* The weighed classes (struct nc_dweight): enum nc_class, then the
 * remote sampler's combined estimate's counts, send and receive each: the
 * CPU's own samples of the call under softirqs, the remote samples of
 * the CPU it samples in the call outside / under softirqs. */
enum { NC_DW_SOCK_SIRQ = NC_CLASS_MAX, NC_DW_RSOCK = NC_CLASS_MAX + 2, NC_DW_RSIRQ = NC_CLASS_MAX + 4 };
_Static_assert(NC_DW_CLASSES == NC_CLASS_MAX + 6, "NC_DW_CLASSES: enum nc_class and 6 more");
static size_t nc_take_counts(struct nc_state *s);

static int nc_perf_open(unsigned hz, int cpu, bool user)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = hz,
		.freq = 1,
		.exclude_user = 1,     /* NET_RX and socket ops run in the kernel only */
	};
	/* the remote sampler: another CPU's state, whatever this one's mode */
	a.exclude_user = !user;
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Opens one cpu-clock event per CPU at hz and attaches p to each.
 * Returns the number of CPUs sampled; reason says why none was. */
static int nc_attach_timers(struct nc_state *s, struct nc_timers *tm, struct bpf_program *p,
			    unsigned hz, bool user, char *reason, size_t rlen)
{
	int ok = 0, err = 0;
	tm->fds = calloc(s->ncpu, sizeof(int));
	tm->links = calloc(s->ncpu, sizeof(*tm->links));
	if (!tm->fds || !tm->links) {
		snprintf(reason, rlen, "out of memory");
		return 0;
	}
	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		tm->fds[cpu] = nc_perf_open(hz, cpu, user);
		if (tm->fds[cpu] < 0) {
			if (errno != ENODEV)      /* offline CPU: nothing to sample */
				err = errno;
			continue;
		}
		tm->links[cpu] = bpf_program__attach_perf_event(p, tm->fds[cpu]);
		if (!tm->links[cpu]) {
			err = errno;
			close(tm->fds[cpu]);
			tm->fds[cpu] = -1;
			continue;
		}
		ok++;
	}
	if (!ok)
		snprintf(reason, rlen, "perf_event_open(cpu-clock) or attach failed: %s",
			 strerror(err ? err : ENODEV));
	return ok;
}

/* destroying a perf_event link also closes its perf fd */
static void nc_timers_free(struct nc_state *s, struct nc_timers *tm)
{
	for (int i = 0; tm->links && i < s->ncpu; i++)
		bpf_link__destroy(tm->links[i]);
	free(tm->links);
	free(tm->fds);
}

static int nc_read_cpus(struct nc_state *s, struct nc_cpu *out);

/* The sampler's counters of the classes it estimates (enum nc_class order). */
static void nc_smp_counts(const struct nc_cpu *x, uint64_t out[NC_DW_CLASSES])
{
	out[NC_NET_RX] = x->smp_sirq[NC_SV_RX];
	out[NC_NET_TX] = x->smp_sirq[NC_SV_TX];
	out[NC_SOCK_SEND] = x->smp_sock[0];
	out[NC_SOCK_RECV] = x->smp_sock[1];
	for (int k = 0; k < 2; k++) {
		out[NC_DW_SOCK_SIRQ + k] = x->smp_sock_sirq[k];
		out[NC_DW_RSOCK + k] = x->smp_rsock[k];
		out[NC_DW_RSIRQ + k] = x->smp_rsirq[k];
	}
}

/* Weighs every CPU's samples since the last call at its period in force. */
static void nc_weigh(struct nc_state *s, const struct nc_cpu *now)
{
	uint64_t cnt[NC_DW_CLASSES];
	for (int i = 0; i < s->ncpu; i++) {
		nc_smp_counts(&now[i], cnt);
		nc_dweight_add(&s->dw[i], cnt);
	}
}

/* Restarts every timer of the socket sampler at a rate of its own
 * (netcpu_dither.h). PERF_EVENT_IOC_PERIOD stops the hrtimer, drops the
 * part of the period already run and starts the new period whole. Returns
 * 0 or the errno of the first CPU that refused; dithering then stops (the
 * timers keep their periods, whose mean stays the rate asked for). The
 * samples so far are weighed first: a sample counted between that
 * read and its CPU's restart is weighed at the new period, an error of
 * either sign (the new period is drawn independently). */
static int nc_dither_now(struct nc_state *s)
{
	struct nc_timers *tm = s->sock_src;
	int err = 0;
	if (!tm || !s->dither.hz)
		return 0;
	if (nc_read_cpus(s, s->scratch) < 0)
		return 0;                 /* no restart: the periods stay known */
	nc_weigh(s, s->scratch);
	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		uint64_t p = nc_dither_draw(&s->dither);
		if (tm->fds[cpu] < 0)
			continue;
		if (ioctl(tm->fds[cpu], PERF_EVENT_IOC_PERIOD, &p) == 0)
			nc_dweight_restart(&s->dw[cpu], p);
		else if (!err)
			err = errno;
	}
	s->dither.last_ns = np_mono_ns();
	if (err)
		s->dither.hz = 0;
	return err;
}

/* Dithering from the first sample on; appends to the probe's why how the
 * rate is drawn, or why it stays fixed. */
static void nc_dither_start(struct nc_state *s, char *why, size_t len)
{
	uint64_t seed = 0;
	size_t n = strlen(why);
	for (int i = 0; i < s->ncpu; i++)     /* the kernel's period for a cpu-clock rate */
		s->dw[i].period = 1000000000ull / s->sock_rate;
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = np_mono_ns();
	/* NPREC_TEST_NO_DITHER=1: the fixed period, for A/B runs of one build */
	if (getenv("NPREC_TEST_NO_DITHER")) {
		snprintf(why + n, len - n, ", fixed period (NPREC_TEST_NO_DITHER)");
		return;
	}
	nc_dither_init(&s->dither, s->sock_rate, seed);
	int err = nc_dither_now(s);
	if (err)
		snprintf(why + n, len - n, ", fixed period (PERF_EVENT_IOC_PERIOD: %s)", strerror(err));
	else
		snprintf(why + n, len - n, ", rate dithered +-%.0f %% every %u periods", NC_DITHER_W * 100,
			 NC_DITHER_PERIODS);
}

/* Every tick: a restart when due (NC_DITHER_PERIODS mean periods). */
static int nc_drain(void *state)
{
	struct nc_state *s = state;
	if (nc_dither_due(&s->dither, np_mono_ns()))
		nc_dither_now(s);
	return 0;
}

static int nc_read_cpus(struct nc_state *s, struct nc_cpu *out)
{
	__u32 zero = 0;
	return bpf_map__lookup_elem(s->skel->maps.nc_cpus, &zero, sizeof(zero), out,
				    sizeof(struct nc_cpu) * s->ncpu, 0);
}

/* Attaches one tracepoint program into its skeleton link slot (destroyed
 * with the skeleton) and reports the result. */
static bool nc_attach_one(struct rec_ctx *ctx, struct bpf_program *p, struct bpf_link **slot,
			  const char *probe)
{
	*slot = bpf_program__attach(p);
	if (!*slot) {
		char why[160];
		snprintf(why, sizeof(why), "attach failed: %s", strerror(errno));
		*slot = NULL;
		rec_probe(ctx, "netcpu", probe, REC_PROBE_FAILED, why);
		return false;
	}
	rec_probe(ctx, "netcpu", probe, REC_PROBE_ATTACHED, NULL);
	return true;
}

static struct nc_state *nc_alloc(const struct rec_config *cfg)
{
	struct nc_state *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->ncpu = libbpf_num_possible_cpus();
	s->sample_hz = cfg->sample_hz;
	s->exact = cfg->netcpu_exact;
	s->sock_hz = cfg->netcpu_sock_hz ? cfg->netcpu_sock_hz : REC_NETCPU_SOCK_HZ;
	s->src = cfg->sample_tick ? NC_SRC_TICK : cfg->sample_hz ? NC_SRC_CLOCK : NC_SRC_OFF;
	if (s->src == NC_SRC_TICK && !s->sample_hz)
		s->sample_hz = REC_TICK_FALLBACK_HZ;
	if (s->ncpu > 0) {
		s->cur = calloc(s->ncpu, sizeof(struct nc_cpu));
		s->prev = calloc(s->ncpu, sizeof(struct nc_cpu));
		s->cpu_cat = calloc((size_t)s->ncpu * NC_CAT_MAX, sizeof(uint64_t));
		s->dw = calloc(s->ncpu, sizeof(*s->dw));
		s->scratch = calloc(s->ncpu, sizeof(struct nc_cpu));
		s->est = calloc((size_t)s->ncpu * NC_DW_CLASSES, sizeof(uint64_t));
		s->rsrc = calloc(s->ncpu, sizeof(int));
		s->rfrac = calloc((size_t)s->ncpu * 2, sizeof(double));
		for (int i = 0; s->rsrc && i < s->ncpu; i++)
			s->rsrc[i] = i;
	}
	if (!s->cur || !s->prev || !s->cpu_cat || !s->dw || !s->scratch || !s->est || !s->rsrc || !s->rfrac) {
		nc_close(s);
		return NULL;
	}
	return s;
}

static bool nc_is_sys_tp(const struct bpf_program *p)
{
	return strncmp(bpf_program__section_name(p), NC_SYS_SEC, strlen(NC_SYS_SEC)) == 0;
}

static void nc_sys_tps_autoload(struct netcpu_bpf *k, bool on)
{
	struct bpf_program *p;
	bpf_object__for_each_program(p, k->obj)
		if (nc_is_sys_tp(p))
			bpf_program__set_autoload(p, on);
}

/* The programs of the exact socket clock: syscall-entry stamps (both
 * variants; nc_sys_tps_autoload narrows them), the socket layer's end and
 * the switch that parks an op. Sampled mode loads none of them. */
static void nc_per_call_autoload(struct netcpu_bpf *k, bool on)
{
	nc_sys_tps_autoload(k, on);
	bpf_program__set_autoload(k->progs.nc_sys_enter, on);
	bpf_program__set_autoload(k->progs.nc_send_len, on);
	bpf_program__set_autoload(k->progs.nc_recv_len, on);
	bpf_program__set_autoload(k->progs.nc_sched_switch, on);
}

/* The per-syscall tracepoints (fallback: see nc_attach_tracepoints).
 * Returns false (nothing left attached) when one of them fails. */
static bool nc_attach_sys_tps(struct rec_ctx *ctx, struct nc_state *s)
{
	struct bpf_program *p;
	unsigned n = 0;
	char why[160];
	bpf_object__for_each_program(p, s->skel->obj) {
		if (!nc_is_sys_tp(p) || !bpf_program__autoload(p))
			continue;
		struct bpf_link *l = n < NC_SYS_TPS ? bpf_program__attach(p) : NULL;
		if (!l) {
			int e = errno ? errno : ENOSPC;
			snprintf(why, sizeof(why), "%s: %s%s", bpf_program__section_name(p), strerror(e),
				 kfs_usable(ctx->kfs, KFS_TRACEFS) ? "" : " (tracefs not mounted)");
			rec_probe(ctx, "netcpu", NC_SYS_SEC "sys_enter_<socket calls>",
				  REC_PROBE_FAILED, why);
			for (unsigned i = 0; i < n; i++)
				bpf_link__destroy(s->sys_links[i]);
			memset(s->sys_links, 0, sizeof(s->sys_links));
			return false;
		}
		s->sys_links[n++] = l;
	}
	if (n == 0)
		return false;
	snprintf(why, sizeof(why), "%u tracepoints", n);
	rec_probe(ctx, "netcpu", NC_SYS_SEC "sys_enter_<socket calls>", REC_PROBE_ATTACHED, why);
	return true;
}

/* Syscall-entry stamps. tp_btf/sys_enter first: it runs for every
 * syscall of the machine, but a per-syscall tracepoint builds a perf
 * record before its program, and a system-wide profile put that at more
 * than the other syscalls' program runs on network workloads
 * (docs/NETCPU.md). NPREC_TEST_SYSCALL_HOOK=per-call prefers the per-syscall
 * tracepoints (hosts whose syscalls are mostly not socket calls); each
 * variant is the other's fallback. */
static void nc_attach_entry(struct rec_ctx *ctx, struct nc_state *s)
{
	struct netcpu_bpf *k = s->skel;
	const char *want = getenv("NPREC_TEST_SYSCALL_HOOK");
	bool per_call = want && strcmp(want, "per-call") == 0;

	if (!per_call && nc_attach_one(ctx, k->progs.nc_sys_enter, &k->links.nc_sys_enter, "tp_btf/sys_enter")) {
		if (s->sys_tps_loaded)   /* else nc_load_any said why they are not there */
			rec_probe(ctx, "netcpu", NC_SYS_SEC "sys_enter_<socket calls>", REC_PROBE_SKIPPED,
				  "tp_btf/sys_enter used");
		return;
	}
	if (nc_attach_sys_tps(ctx, s)) {
		if (per_call)
			rec_probe(ctx, "netcpu", "tp_btf/sys_enter", REC_PROBE_SKIPPED, "syscall tracepoints used");
		return;
	}
	if (per_call)
		nc_attach_one(ctx, k->progs.nc_sys_enter, &k->links.nc_sys_enter, "tp_btf/sys_enter");
}

/* Sampled socket time: the exact clock's probes are listed as skipped. */
static void nc_skip_per_call(struct rec_ctx *ctx)
{
	static const char *const probes[] = { "tp_btf/sys_enter", NC_SYS_SEC "sys_enter_<socket calls>",
					      "tp_btf/sock_send_length", "tp_btf/sock_recv_length",
					      "tp_btf/sched_switch", "tp_btf/sched_entry_tp" };
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		rec_probe(ctx, "netcpu", probes[i], REC_PROBE_SKIPPED,
			  "--netcpu sample: socket time from the stack sampler");
}

/* The exact softirq pair, when loaded. True when the samplers can tell
 * softirq time (the pair attached, or preempt_count without it). */
static bool nc_attach_sirq(struct rec_ctx *ctx, struct nc_state *s)
{
	struct netcpu_bpf *k = s->skel;
	if (!s->sirq_clock) {
		rec_probe(ctx, "netcpu", "tp_btf/softirq_entry", REC_PROBE_SKIPPED, NC_SIRQ_SKIP);
		rec_probe(ctx, "netcpu", "tp_btf/softirq_exit", REC_PROBE_SKIPPED, NC_SIRQ_SKIP);
		return true;
	}
	bool sirq = nc_attach_one(ctx, k->progs.nc_softirq_entry, &k->links.nc_softirq_entry,
				  "tp_btf/softirq_entry");
	sirq &= nc_attach_one(ctx, k->progs.nc_softirq_exit, &k->links.nc_softirq_exit,
			      "tp_btf/softirq_exit");
	return sirq;
}

/* Returns true when the samplers can tell softirq time (nc_attach_sirq). */
static bool nc_attach_tracepoints(struct rec_ctx *ctx, struct nc_state *s)
{
	struct netcpu_bpf *k = s->skel;
	bool sirq = nc_attach_sirq(ctx, s);
	if (!s->exact) {
		nc_skip_per_call(ctx);
		return sirq;
	}
	nc_attach_entry(ctx, s);
	hub_member_attach(ctx, "netcpu", &s->hub[NC_HUB_SEND], k->progs.nc_send_len, &k->links.nc_send_len);
	hub_member_attach(ctx, "netcpu", &s->hub[NC_HUB_RECV], k->progs.nc_recv_len, &k->links.nc_recv_len);
	hub_member_attach(ctx, "netcpu", &s->hub[NC_HUB_SWITCH], k->progs.nc_sched_switch,
			  &k->links.nc_sched_switch);
	/* without it a switch's boundary is the sched_switch tracepoint
	 * (bpf/netcpu.bpf.c nc_switch_time) */
	if (s->sched_entry)
		nc_attach_one(ctx, k->progs.nc_sched_entry, &k->links.nc_sched_entry, "tp_btf/sched_entry_tp");
	else
		rec_probe(ctx, "netcpu", "tp_btf/sched_entry_tp", REC_PROBE_FAILED,
			  "not in this kernel (6.16+): a switch is timed at sched_switch");
	return sirq;
}

/* CONFIG_HZ from the kernel's config (/proc/config.gz, else
 * /boot/config-RELEASE; gzread reads plain files too), 0 if unreadable:
 * the tick source's rate on a busy CPU. */
static unsigned nc_kernel_hz(void)
{
	struct utsname u;
	char path[300], line[256];
	unsigned hz = 0;
	gzFile f = gzopen("/proc/config.gz", "r");
	if (!f && uname(&u) == 0) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		f = gzopen(path, "r");
	}
	if (!f)
		return 0;
	while (!hz && gzgets(f, line, sizeof(line)))
		if (sscanf(line, "CONFIG_HZ=%u", &hz) != 1)
			hz = 0;
	gzclose(f);
	return hz;
}

/* Whether the tick runs as an hrtimer (high-resolution mode) on some CPU:
 * 1, 0 when every CPU in /proc/timer_list says `.hres_active : 0` (low-res
 * mode calls the tick handler from the clockevent, no hrtimer expires, so
 * hrtimer_expire_entry would never see a tick), -1 when unreadable. */
static int nc_tick_is_hrtimer(void)
{
	FILE *f = fopen("/proc/timer_list", "r");
	char line[256];
	int seen = 0, on = 0, v;
	if (!f)
		return -1;
	while (!on && fgets(line, sizeof(line), f))
		if (sscanf(line, " .hres_active : %d", &v) == 1) {
			seen = 1;
			on = v != 0;
		}
	fclose(f);
	return on ? 1 : seen ? 0 : -1;
}

/* Switches the sampling source to the cpu-clock timer (the tick source
 * cannot be used) and says why on the tick probe. */
static void nc_tick_fallback(struct rec_ctx *ctx, struct nc_state *s, enum rec_probe_state st,
			     const char *why)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "%.200s; cpu-clock at %u Hz instead", why, s->sample_hz);
	rec_probe(ctx, "netcpu", NC_TICK_PROBE, st, msg);
	s->src = NC_SRC_CLOCK;
}

/* [lo, hi) of the function at name: hi where the next symbol starts (a
 * function is at most 64 KiB here). */
/* name as in kallsyms, or with a suffix the compiler gave a local copy */
static uint64_t nc_sym_addr(const struct ksyms *k, const char *name)
{
	static const char *const sfx[] = { "", ".constprop.0", ".isra.0" };
	char buf[128];
	uint64_t a = 0;
	for (size_t i = 0; !a && i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", name, sfx[i]);
		a = ksyms_addr(k, buf);
	}
	return a;
}

static void nc_sym_range(const struct ksyms *k, const char *name, uint64_t *lo, uint64_t *hi)
{
	uint64_t a = nc_sym_addr(k, name), start = 0, ip = a;
	*lo = *hi = 0;
	if (!a)
		return;
	while (ip < a + 65536 && ksyms_lookup(k, ip, &start) && start == a)
		ip++;
	*lo = a;
	*hi = ip;
}

/* Sampled softirq time needs both vector actions and the softirq loop
 * in kallsyms; else the exact pair runs at --netcpu sample too. */
static void nc_choose_sirq(struct rec_ctx *ctx, struct nc_state *s)
{
	s->sirq_clock = s->exact || !s->vec_lo[0] || !s->vec_lo[1] || !(s->vec_lo[2] || s->vec_lo[3]);
	if (s->sirq_clock && !s->exact)
		rec_probe(ctx, "netcpu", "softirq sampling", REC_PROBE_SKIPPED,
			  "net_rx_action, net_tx_action or the softirq loop not in kallsyms: exact softirq pair used");
}

/* Before load: kallsyms (stack symbols; the tick source also needs the
 * address of the tick's hrtimer function for its rodata, the socket
 * sampler the ranges of the syscall entry work). */
static void nc_prepare_sampler(struct rec_ctx *ctx, struct nc_state *s)
{
	char why[200];
	int rc = ksyms_load(&s->ksyms, "/proc/kallsyms");
	if (rc < 0) {
		snprintf(why, sizeof(why), "/proc/kallsyms: %s: stacks stay unresolved", strerror(-rc));
		rec_probe(ctx, "netcpu", "kallsyms", REC_PROBE_FAILED, why);
	}
	for (size_t i = 0; rc == 0 && i < sizeof(nc_entry_syms) / sizeof(nc_entry_syms[0]); i++)
		nc_sym_range(s->ksyms, nc_entry_syms[i], &s->entry_lo[i], &s->entry_hi[i]);
	for (size_t i = 0; rc == 0 && i < sizeof(nc_trace_syms) / sizeof(nc_trace_syms[0]); i++)
		nc_sym_range(s->ksyms, nc_trace_syms[i], &s->trace_lo[i], &s->trace_hi[i]);
	for (size_t i = 0; rc == 0 && i < sizeof(nc_vec_syms) / sizeof(nc_vec_syms[0]); i++)
		nc_sym_range(s->ksyms, nc_vec_syms[i], &s->vec_lo[i], &s->vec_hi[i]);
	nc_choose_sirq(ctx, s);
	if (s->src == NC_SRC_TICK && !s->sirq_clock)
		s->src = NC_SRC_SOCK;
	if (s->src != NC_SRC_TICK)
		return;
	for (size_t i = 0; !s->tick_fn && i < sizeof(nc_tick_syms) / sizeof(nc_tick_syms[0]); i++)
		s->tick_fn = ksyms_addr(s->ksyms, nc_tick_syms[i]);
	if (!s->tick_fn)
		nc_tick_fallback(ctx, s, REC_PROBE_SKIPPED,
				 rc < 0 ? "no /proc/kallsyms for the tick's hrtimer function"
					: "neither tick_nohz_handler nor tick_sched_timer in /proc/kallsyms");
	else if (nc_tick_is_hrtimer() == 0)
		nc_tick_fallback(ctx, s, REC_PROBE_SKIPPED,
				 "the tick is no hrtimer here (/proc/timer_list: hres_active 0)");
	s->kernel_hz = nc_kernel_hz();
}

/* Attaches the tick program (loaded only for the tick source). False when
 * it does not attach: the caller reloads for the cpu-clock source. */
static bool nc_attach_tick(struct rec_ctx *ctx, struct nc_state *s)
{
	struct netcpu_bpf *k = s->skel;
	char why[200];
	k->links.nc_tick = bpf_program__attach(k->progs.nc_tick);
	if (!k->links.nc_tick) {
		snprintf(why, sizeof(why), "attach failed: %s", strerror(errno));
		nc_tick_fallback(ctx, s, REC_PROBE_FAILED, why);
		return false;
	}
	return true;
}

/* After the tracepoints: the sampling source attached, or why not. The
 * tick program is already attached (nc_attach_tick). */
static void nc_setup_sampler(struct rec_ctx *ctx, struct nc_state *s, bool sirq)
{
	struct netcpu_bpf *k = s->skel;
	char why[200];
	if (s->src == NC_SRC_OFF || !sirq) {
		const char *r = s->src == NC_SRC_OFF ? "--sample-hz 0" : "needs the softirq tracepoints";
		bpf_link__destroy(k->links.nc_tick);
		k->links.nc_tick = NULL;
		rec_probe(ctx, "netcpu", NC_TICK_PROBE, REC_PROBE_SKIPPED, r);
		rec_probe(ctx, "netcpu", NC_CLOCK_PROBE, REC_PROBE_SKIPPED, r);
		return;
	}
	if (s->src == NC_SRC_SOCK) {
		static const char r[] = "--netcpu sample: NET_RX stacks from the socket-time sampler's timer";
		rec_probe(ctx, "netcpu", NC_TICK_PROBE, REC_PROBE_SKIPPED, r);
		rec_probe(ctx, "netcpu", NC_CLOCK_PROBE, REC_PROBE_SKIPPED, r);
		return;                  /* nc_setup_sock_sampler sets sampling */
	}
	if (s->src == NC_SRC_TICK) {
		snprintf(why, sizeof(why), "scheduler tick (hrtimer function at 0x%llx), HZ %u",
			 (unsigned long long)s->tick_fn, s->kernel_hz);
		rec_probe(ctx, "netcpu", NC_TICK_PROBE, REC_PROBE_ATTACHED, why);
		rec_probe(ctx, "netcpu", NC_CLOCK_PROBE, REC_PROBE_SKIPPED, "tick source used");
	} else {
		if (nc_attach_timers(s, &s->stack_timers, k->progs.nc_sample, s->sample_hz, false, why,
				     sizeof(why)) == 0) {
			rec_probe(ctx, "netcpu", NC_CLOCK_PROBE, REC_PROBE_FAILED, why);
			return;
		}
		snprintf(why, sizeof(why), "%u Hz", s->sample_hz);
		rec_probe(ctx, "netcpu", NC_CLOCK_PROBE, REC_PROBE_ATTACHED, why);
		if (!ctx->cfg->sample_tick)   /* else nc_tick_fallback said why */
			rec_probe(ctx, "netcpu", NC_TICK_PROBE, REC_PROBE_SKIPPED, "--sample-hz N");
	}
	s->sampling = true;
}

static void nc_set_target(struct nc_state *s, int fd, int from, int to)
{
	__u32 key = (__u32)from, v = (__u32)to + 1;
	if (bpf_map_update_elem(fd, &key, &v, BPF_ANY) == 0)
		s->rsrc[to] = from;
}

/* The remote sampler's ring: each CPU with a timer samples the next one
 * with a timer (s->rsrc the converse); one alone samples itself. Appends
 * to why what the probe line says. */
static void nc_set_targets(struct nc_state *s, char *why, size_t len)
{
	int first = -1, prev = -1, fd = bpf_map__fd(s->skel->maps.nc_rtarget);
	for (int cpu = 0; cpu < s->ncpu; cpu++)
		s->rsrc[cpu] = -1;
	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		if (s->sock_timers.fds[cpu] < 0)
			continue;
		if (prev < 0)
			first = cpu;
		else
			nc_set_target(s, fd, prev, cpu);
		prev = cpu;
	}
	if (prev >= 0)
		nc_set_target(s, fd, prev, first);
	snprintf(why, len, ", %s%s", prev == first ? "split by a remote read of its own CPU (one CPU sampled)"
						    : "split by the other CPU's timer (remote read)",
		 s->remote_recv_only ? ", receive calls only" : "");
}

/* After the stack sampler: socket time rides on its cpu-clock timer, else
 * gets a timer of its own (the tick is biased for it: bpf/netcpu.bpf.c
 * nc_sock_sample). Needs the softirq tracepoints, which keep softirq time
 * out of it. */
static void nc_setup_sock_sampler(struct rec_ctx *ctx, struct nc_state *s, bool sirq)
{
	char why[200];
	if (!sirq) {
		rec_probe(ctx, "netcpu", NC_SOCK_PROBE, REC_PROBE_SKIPPED, "needs the softirq tracepoints");
		return;
	}
	if (s->src == NC_SRC_CLOCK) {
		if (!s->sampling)
			return;           /* nc_setup_sampler said why */
		s->sock_rate = s->sample_hz;
		s->sock_src = &s->stack_timers;
		snprintf(why, sizeof(why), "rides on the --sample-hz timer");
		nc_dither_start(s, why, sizeof(why));
		rec_probe(ctx, "netcpu", NC_SOCK_PROBE, REC_PROBE_SKIPPED, why);
		return;
	}
	struct bpf_program *p = s->sock_remote ? s->skel->progs.nc_sock_sample_remote
					       : s->skel->progs.nc_sock_sample;
	if (nc_attach_timers(s, &s->sock_timers, p, s->sock_hz, s->sock_remote, why, sizeof(why)) == 0) {
		rec_probe(ctx, "netcpu", NC_SOCK_PROBE, REC_PROBE_FAILED, why);
		return;
	}
	s->sock_rate = s->sock_hz;
	s->sock_src = &s->sock_timers;
	s->sampling |= s->src == NC_SRC_SOCK;
	int n = snprintf(why, sizeof(why), "%u Hz", s->sock_hz);
	if (s->sock_remote)
		nc_set_targets(s, why + n, sizeof(why) - (size_t)n);
	else if (s->remote_why[0])
		snprintf(why + n, sizeof(why) - (size_t)n, ", own CPU's state (%s)", s->remote_why);
	nc_dither_start(s, why, sizeof(why));
	rec_probe(ctx, "netcpu", NC_SOCK_PROBE, REC_PROBE_ATTACHED, why);
}

/* Counters and stack counts start together, after the (slow) kallsyms
 * load, so both cover the same samples. */
static void nc_baseline(struct nc_state *s)
{
	if (s->sampling) {
		nc_take_counts(s);    /* both slots */
		nc_take_counts(s);
	}
	uint64_t cnt[NC_DW_CLASSES];
	nc_read_cpus(s, s->prev);
	for (int i = 0; i < s->ncpu; i++) {   /* the first restart's drop lies before */
		nc_smp_counts(&s->prev[i], cnt);
		nc_dweight_reset(&s->dw[i], cnt, s->dw[i].period);
	}
}

/* &__preempt_count - &runqueues: both per-CPU variables' offsets in the
 * per-CPU data section of vmlinux BTF (bpf/netcpu.bpf.c nc_pc_softirq);
 * 0 when either is missing (the sampler then decides by the stack). */
static int64_t nc_preempt_delta(void)
{
	const struct btf *btf = rc_vmlinux_btf();
	int id = btf ? btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC) : -1;
	if (id < 0)
		return 0;
	const struct btf_type *sec = btf__type_by_id(btf, id);
	const struct btf_var_secinfo *v = btf_var_secinfos(sec);
	int64_t pc = -1, rq = -1;
	for (unsigned i = 0; i < btf_vlen(sec) && (pc < 0 || rq < 0); i++, v++) {
		const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);
		if (name && strcmp(name, "__preempt_count") == 0)
			pc = v->offset;
		else if (name && strcmp(name, "runqueues") == 0)
			rq = v->offset;
	}
	return pc < 0 || rq < 0 ? 0 : pc - rq;
}

/* nc_stack_counts' max_entries: a full map is the only way a NET_RX
 * sample's stack goes uncounted (stack_lost) besides a failed walk, so it
 * holds NC_COUNT_SPAN intervals of samples of the stack source on every
 * CPU; beyond NC_COUNT_KEYS_MAX (e.g. --sample-hz 10000 on 64 CPUs) an
 * interval can still lose some. */
static size_t nc_count_map_size(const struct nc_state *s, const struct rec_config *cfg)
{
	uint64_t hz = s->src == NC_SRC_TICK ? (s->kernel_hz ? s->kernel_hz : 1000)
		    : s->src == NC_SRC_CLOCK ? s->sample_hz : s->sock_hz;
	uint64_t secs = (cfg->interval_ns + 999999999ull) / 1000000000ull;
	uint64_t n = NC_COUNT_SPAN * hz * (uint64_t)(s->ncpu > 0 ? s->ncpu : 1) * (secs ? secs : 1);
	return n < NC_COUNT_KEYS_MIN ? NC_COUNT_KEYS_MIN : n > NC_COUNT_KEYS_MAX ? NC_COUNT_KEYS_MAX : n;
}

/* Whether vmlinux BTF has the raw tracepoint name (tp_btf needs its
 * btf_trace_ typedef). */
static bool nc_have_tp_btf(const char *name)
{
	const struct btf *btf = rc_vmlinux_btf();
	char t[128];

	snprintf(t, sizeof(t), "btf_trace_%s", name);
	return btf && btf__find_by_name_kind(btf, t, BTF_KIND_TYPEDEF) > 0;
}

/* Opens and loads the object; sys_tps false leaves the per-syscall
 * tracepoint programs out (fallback). tp_btf/sys_enter is loaded either
 * way: it is the fallback when one of them does not attach. 0 or -errno. */
static int nc_load(struct rec_ctx *ctx, struct nc_state *s, const struct rec_config *cfg, bool sys_tps)
{
	netcpu_bpf__destroy(s->skel);
	s->skel = netcpu_bpf__open();
	if (!s->skel)
		return -ENOMEM;
	if (s->exact) {
		hub_member_share(ctx, &s->hub[NC_HUB_SEND], HUB_SOCK_SEND, HUB_SLOT_NETCPU,
				 s->skel->maps.hub_sock_send);
		hub_member_share(ctx, &s->hub[NC_HUB_RECV], HUB_SOCK_RECV, HUB_SLOT_NETCPU,
				 s->skel->maps.hub_sock_recv);
		hub_member_share(ctx, &s->hub[NC_HUB_SWITCH], HUB_SCHED_SWITCH, HUB_SLOT_NETCPU,
				 s->skel->maps.hub_sched_switch);
	}
	nc_per_call_autoload(s->skel, s->exact);
	s->sched_entry = s->exact && nc_have_tp_btf("sched_entry_tp");
	bpf_program__set_autoload(s->skel->progs.nc_sched_entry, s->sched_entry);
	bpf_program__set_autoload(s->skel->progs.nc_softirq_entry, s->sirq_clock);
	bpf_program__set_autoload(s->skel->progs.nc_softirq_exit, s->sirq_clock);
	s->skel->rodata->nc_sirq_clock = s->sirq_clock;
	s->skel->rodata->nc_sock_clock = s->exact;
	memcpy((void *)s->skel->rodata->nc_vec_lo, s->vec_lo, sizeof(s->vec_lo));
	memcpy((void *)s->skel->rodata->nc_vec_hi, s->vec_hi, sizeof(s->vec_hi));
	RC_FILTER_SET(s->skel->rodata, cfg);
	/* only the sampling source in use is loaded */
	s->skel->rodata->nc_tick_fn = s->tick_fn;
	memcpy((void *)s->skel->rodata->nc_entry_lo, s->entry_lo, sizeof(s->entry_lo));
	memcpy((void *)s->skel->rodata->nc_entry_hi, s->entry_hi, sizeof(s->entry_hi));
	_Static_assert(sizeof(s->skel->rodata->nc_trace_lo) == sizeof(s->trace_lo), "NC_TRACE_RANGES vs nc_trace_syms");
	memcpy((void *)s->skel->rodata->nc_trace_lo, s->trace_lo, sizeof(s->trace_lo));
	memcpy((void *)s->skel->rodata->nc_trace_hi, s->trace_hi, sizeof(s->trace_hi));
	s->skel->rodata->nc_pc_delta = nc_preempt_delta();
	s->keys_max = nc_count_map_size(s, cfg);
	bpf_map__set_max_entries(s->skel->maps.nc_stack_counts, (__u32)s->keys_max);
	bpf_program__set_autoload(s->skel->progs.nc_sample, s->src == NC_SRC_CLOCK);
	bpf_program__set_autoload(s->skel->progs.nc_tick, s->src == NC_SRC_TICK);
	bpf_program__set_autoload(s->skel->progs.nc_sock_sample, s->src != NC_SRC_CLOCK && !s->sock_remote);
	bpf_program__set_autoload(s->skel->progs.nc_sock_sample_remote, s->src != NC_SRC_CLOCK && s->sock_remote);
	bpf_map__set_max_entries(s->skel->maps.nc_rtarget, (__u32)(s->ncpu > 0 ? s->ncpu : 1));
	s->skel->rodata->nc_sock_stacks = s->src == NC_SRC_SOCK;
	nc_sys_tps_autoload(s->skel, sys_tps && s->exact);
	s->sys_tps_loaded = sys_tps && s->exact;
	/* txn reads its clients' request starts from these slots (record/families/txn.c) */
	int shared_fd = rec_shared_map_get(ctx, "nc_cpus");
	if (shared_fd >= 0) {
		int rc = bpf_map__reuse_fd(s->skel->maps.nc_cpus, shared_fd);
		if (rc)
			return rc;
	}
	return netcpu_bpf__load(s->skel);
}

static bool nc_retryable(int rc)
{
	return rc && rc != -EPERM && rc != -ENOMEM;
}

/* Loads the object, trying in order: the sampling source asked for with
 * the per-syscall tracepoints; the same with tp_btf/sys_enter instead of
 * those (a kernel without syscall tracepoints); then both again with the
 * cpu-clock program instead of the tick one (a kernel whose
 * hrtimer_expire_entry or struct hrtimer does not fit). 0 or -errno. */
static int nc_load_any(struct rec_ctx *ctx, struct nc_state *s, const struct rec_config *cfg)
{
	const enum nc_source want = s->src;
	int rc = 0, tick_rc = 0;
	char why[200];
	for (int i = 0; i < 4; i++) {
		bool tick = i < 2, sys_tps = (i & 1) == 0;
		if (!tick && want != NC_SRC_TICK)
			break;                   /* no tick source to fall back from */
		if (!sys_tps && !s->exact)
			continue;                /* sampled: no syscall programs to leave out */
		s->src = tick ? want : NC_SRC_CLOCK;
		rc = nc_load(ctx, s, cfg, sys_tps);
		if (rc && s->src == NC_SRC_TICK)
			tick_rc = rc;
		if (!nc_retryable(rc))
			break;
	}
	if (rc)
		return rc;
	if (want == NC_SRC_TICK && s->src != NC_SRC_TICK) {
		snprintf(why, sizeof(why), "does not load here: %s", strerror(-tick_rc));
		nc_tick_fallback(ctx, s, REC_PROBE_FAILED, why);
	}
	if (!s->sys_tps_loaded && s->exact)   /* e.g. a kernel without syscall tracepoints */
		rec_probe(ctx, "netcpu", NC_SYS_SEC "sys_enter_<socket calls>",
			  REC_PROBE_SKIPPED, "do not load here; tp_btf/sys_enter used");
	return 0;
}

/* Whether BTF type t (a struct or union) has member field, also inside
 * an anonymous struct or union member (rq.curr shares one with donor). */
static bool nc_type_has(const struct btf *btf, const struct btf_type *t, const char *field, int depth)
{
	if (!t || !(btf_is_struct(t) || btf_is_union(t)) || depth > 3)
		return false;
	const struct btf_member *m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		if (n && strcmp(n, field) == 0)
			return true;
		if ((!n || !*n) && nc_type_has(btf, btf__type_by_id(btf, m->type), field, depth + 1))
			return true;
	}
	return false;
}

/* Whether vmlinux BTF has struct name's member field. */
static bool nc_have_member(const char *name, const char *field)
{
	const struct btf *btf = rc_vmlinux_btf();
	int id = btf ? btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT) : -1;
	return id > 0 && nc_type_has(btf, btf__type_by_id(btf, id), field, 0);
}

/* The socket sampler's split of a call between its own work and softirqs
 * comes from the CPU's own timer by default. NPREC_TEST_SOCK_SAMPLER=
 * remote-recv takes a receive call's split from another CPU's timer
 * (bpf/netcpu.bpf.c nc_sock_sample_remote), remote a send call's too,
 * when two or more CPUs are online and the kernel has what the remote
 * read needs: the offset of preempt_count from the runqueue, the
 * runqueue's current task, the cfs_rq's runqueue (how each CPU finds its
 * own) and task_struct.bpf_ctx; else the own timer, and remote_why says
 * why. Not the default: j33a's runs read BBR receive 1.065 x exact (mean
 * of 17) against the own timer's 1.100, but a CI run on a quiet machine
 * read 1.136 against the own timer's 1.007 in the same transfer
 * (docs/NETCPU.md "j33a"): the remote read has a bias of its own, not
 * understood. Not with --sample-hz N, whose timer carries the socket
 * samples. */
static void nc_choose_remote(struct nc_state *s)
{
	const char *want = getenv("NPREC_TEST_SOCK_SAMPLER");
	const char *no = NULL;
	s->sock_remote = false;
	s->remote_recv_only = want && strcmp(want, "remote-recv") == 0;
	if (s->src == NC_SRC_CLOCK)
		return;
	if (!want || !*want)
		return;
	if (!s->remote_recv_only && strcmp(want, "remote") != 0) {
		snprintf(s->remote_why, sizeof(s->remote_why), "NPREC_TEST_SOCK_SAMPLER=%.40s", want);
		return;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		no = "one CPU online";
	else if (!nc_preempt_delta())
		no = "no __preempt_count or runqueues in vmlinux BTF";
	else if (!nc_have_member("rq", "curr") || !nc_have_member("rq", "cpu") ||
		 !nc_have_member("cfs_rq", "rq") || !nc_have_member("task_struct", "bpf_ctx"))
		no = "rq.curr, rq.cpu, cfs_rq.rq or task_struct.bpf_ctx not in vmlinux BTF";
	if (no)
		snprintf(s->remote_why, sizeof(s->remote_why), "no remote split: %s", no);
	s->sock_remote = !no;
}

static int nc_open(struct rec_ctx *ctx, void **state, char *err, size_t errlen)
{
	const struct rec_config *cfg = ctx->cfg;
	if (cfg->no_netcpu) {
		snprintf(err, errlen, "--no-netcpu");
		return REC_FAM_OFF_OPTION;
	}
	struct nc_state *s = nc_alloc(cfg);
	if (!s)
		return -ENOMEM;
	nc_prepare_sampler(ctx, s);
	rec_drain_opened(ctx);
	nc_choose_remote(s);
	int rc = nc_load_any(ctx, s, cfg);
	if (rc && s->sock_remote && nc_retryable(rc)) {
		snprintf(s->remote_why, sizeof(s->remote_why),
			 "no remote split: does not load here: %s", strerror(-rc));
		s->sock_remote = false;
		rc = nc_load_any(ctx, s, cfg);
	}
	rec_drain_opened(ctx);
	if (!rc && s->src == NC_SRC_TICK && !nc_attach_tick(ctx, s))
		rc = nc_load_any(ctx, s, cfg);      /* now with the cpu-clock program */
	if (rc) {
		snprintf(err, errlen, "cannot load BPF object netcpu: %s", strerror(-rc));
		rec_probe(ctx, "netcpu", "load", REC_PROBE_FAILED, err);
		nc_close(s);
		return rc == -EPERM ? rc : 1;
	}
	bool sirq = nc_attach_tracepoints(ctx, s);
	nc_setup_sampler(ctx, s, sirq);
	nc_setup_sock_sampler(ctx, s, sirq);
	rec_drain_opened(ctx);
	s->have_rapl = rapl_open(&s->rapl, "/sys/class/powercap", s->rapl_why,
				    sizeof(s->rapl_why)) == 0;
	rec_probe(ctx, "netcpu", "rapl", s->have_rapl ? REC_PROBE_ATTACHED : REC_PROBE_SKIPPED,
		  s->have_rapl ? NULL : s->rapl_why);
	nc_baseline(s);
	*state = s;
	return 0;
}

static void nc_pack_col(msgpack_packer *pk, const char *key, const uint64_t *v, int n)
{
	np_pack_kv_u64_array(pk, key, v, (size_t)n);
}

/* Samples per second on the busiest CPU of [t0, t1) (an idle CPU's tick
 * stops). */
static uint64_t nc_observed_hz(const struct nc_state *s, uint64_t t0, uint64_t t1)
{
	uint64_t busiest = 0;
	for (int c = 0; c < s->ncpu; c++) {
		uint64_t d = s->cur[c].samples - s->prev[c].samples;
		busiest = d > busiest ? d : busiest;
	}
	return t1 > t0 ? (uint64_t)((double)busiest * 1e9 / (double)(t1 - t0) + 0.5) : 0;
}

/* Nominal sampling rate per CPU: the cpu-clock rate, or the kernel's HZ
 * for the tick (the observed rate when HZ is unreadable). */
static uint64_t nc_nominal_hz(const struct nc_state *s, uint64_t t0, uint64_t t1)
{
	if (s->src == NC_SRC_CLOCK)
		return s->sample_hz;
	if (s->src == NC_SRC_SOCK)
		return s->sock_rate;
	return s->kernel_hz ? s->kernel_hz : nc_observed_hz(s, t0, t1);
}

/* Whether class c is written: socket classes need the exact clock or a
 * sampler (--netcpu sample with --sample-hz 0 measures no socket time). */
static bool nc_class_known(const struct nc_state *s, int c)
{
	return c < NC_SOCK_SEND ? s->sirq_clock || s->sock_rate : s->exact || s->sock_rate;
}

/* Whether class c is samples x period (no call count) in the recording. */
static bool nc_class_sampled(const struct nc_state *s, int c)
{
	return c < NC_SOCK_SEND ? !s->sirq_clock : !s->exact;
}

/* A counter of CPU j (field at offset off of struct nc_cpu) since the
 * last interval; 0 for j < 0. */
static uint64_t nc_cnt(const struct nc_state *s, int j, size_t off)
{
	if (j < 0)
		return 0;
	uint64_t a, b;
	memcpy(&a, (const char *)&s->cur[j] + off, sizeof(a));
	memcpy(&b, (const char *)&s->prev[j] + off, sizeof(b));
	return a - b;
}

/* The sampler's count of class c on CPU i, since the last interval. */
static uint64_t nc_class_smp(const struct nc_state *s, int c, int i)
{
	static const int sv[2] = { NC_SV_RX, NC_SV_TX };
	if (c < NC_SOCK_SEND)
		return s->cur[i].smp_sirq[sv[c]] - s->prev[i].smp_sirq[sv[c]];
	int k = c - NC_SOCK_SEND;
	uint64_t n = s->cur[i].smp_sock[k] - s->prev[i].smp_sock[k];
	if (!s->sock_remote)
		return n;
	/* the combined estimate: the count of the call's samples at the
	 * remote split whose interval is the estimate's */
	n += s->cur[i].smp_sock_sirq[k] - s->prev[i].smp_sock_sirq[k];
	uint64_t nr = 0;
	if (k == 1 || !s->remote_recv_only)
		nr = nc_cnt(s, s->rsrc[i], offsetof(struct nc_cpu, smp_rsock) + (size_t)k * sizeof(uint64_t)) +
		     nc_cnt(s, s->rsrc[i], offsetof(struct nc_cpu, smp_rsirq) + (size_t)k * sizeof(uint64_t));
	return (uint64_t)(nc_split_count(n, nr, s->rfrac[2 * i + k]) + 0.5);
}

/* The timers' mean period, NSEC_PER_SEC / rate (the kernel's period for a
 * fixed rate); 0 without the sampler. A sample's own period varies with
 * the dithered rate: the estimates are the samples weighed by theirs
 * (nc_take_estimates). */
static uint64_t nc_period(const struct nc_state *s)
{
	return s->sock_rate ? 1000000000ull / s->sock_rate : 0;
}

/* The remote sampler's combined estimate of CPU j's socket class k (0
 * send, 1 receive): the call's time by j's own timer (outside and under
 * softirqs), at the split the remote samples of j found (weighed at the
 * sampling CPU's periods). Without remote samples of a call this
 * interval, the own timer's split (the local estimate). */
static void nc_combine(struct nc_state *s, int j, int k)
{
	uint64_t *e = &s->est[(size_t)j * NC_DW_CLASSES];
	double call = (double)e[NC_SOCK_SEND + k] + (double)e[NC_DW_SOCK_SIRQ + k];
	double rs = 0, rq = 0, f;
	int i = s->rsrc[j];
	if (i >= 0) {
		rs = (double)s->est[(size_t)i * NC_DW_CLASSES + NC_DW_RSOCK + k];
		rq = (double)s->est[(size_t)i * NC_DW_CLASSES + NC_DW_RSIRQ + k];
	}
	if (k == 0 && s->remote_recv_only)
		rs = rq = 0;
	f = rs + rq > 0 ? rs / (rs + rq) : call > 0 ? (double)e[NC_SOCK_SEND + k] / call : 0;
	s->rfrac[2 * j + k] = f;
	e[NC_SOCK_SEND + k] = (uint64_t)(call * f + 0.5);
}

/* This interval's sampled estimate of every class on every CPU (s->est). */
static void nc_take_estimates(struct nc_state *s, uint64_t t0, uint64_t t1)
{
	nc_weigh(s, s->cur);
	for (int i = 0; i < s->ncpu; i++)
		nc_dweight_take(&s->dw[i], t1 - t0, &s->est[(size_t)i * NC_DW_CLASSES]);
	if (!s->sock_remote)
		return;
	for (int i = 0; i < s->ncpu; i++)
		for (int k = 0; k < 2; k++)
			nc_combine(s, i, k);
}

static uint64_t nc_est(const struct nc_state *s, int c, int i)
{
	return s->est[(size_t)i * NC_DW_CLASSES + c];
}

/* Column cls_ns (and cls_n when counted) of class c; adds to *total. In
 * sampled mode the socket classes are the samples weighed by their timer
 * periods (nc_take_estimates), no call count. */
static void nc_pack_class(struct nc_state *s, msgpack_packer *pk, int c, uint64_t *col, uint64_t *total)
{
	char key[24];
	bool est = nc_class_sampled(s, c);
	for (int i = 0; i < s->ncpu; i++) {
		if (est)
			col[i] = nc_est(s, c, i);
		else
			col[i] = s->cur[i].ns[c] + s->cur[i].ns_remote[c] -
				 (s->prev[i].ns[c] + s->prev[i].ns_remote[c]);
		*total += col[i];
	}
	snprintf(key, sizeof(key), "%s_ns", nc_class_key[c]);
	nc_pack_col(pk, key, col, s->ncpu);
	if (est)
		return;
	for (int i = 0; i < s->ncpu; i++)
		col[i] = s->cur[i].n[c] - s->prev[i].n[c];
	snprintf(key, sizeof(key), "%s_n", nc_class_key[c]);
	nc_pack_col(pk, key, col, s->ncpu);
}

/* The remote sampler's counts (zero with the local one), by the CPU they
 * describe: its own samples of the call under softirqs, the remote
 * samples of it in the call outside and under softirqs (whose split the
 * combined estimate takes; in exact mode by the pair, and apart by
 * preempt_count, rpc), and those not taken (its runqueue not yet
 * known); which sampler ran. */
static void nc_pack_remote(struct nc_state *s, msgpack_packer *pk, uint64_t *col)
{
	static const char *const key[4][2] = { { "send_sirq_smp", "recv_sirq_smp" },
						{ "send_rsmp", "recv_rsmp" },
						{ "send_rsirq_smp", "recv_rsirq_smp" },
						{ "send_rpc_sirq_smp", "recv_rpc_sirq_smp" } };
	static const size_t off[4][2] = {
		{ offsetof(struct nc_cpu, smp_sock_sirq[0]), offsetof(struct nc_cpu, smp_sock_sirq[1]) },
		{ offsetof(struct nc_cpu, smp_rsock[0]), offsetof(struct nc_cpu, smp_rsock[1]) },
		{ offsetof(struct nc_cpu, smp_rsirq[0]), offsetof(struct nc_cpu, smp_rsirq[1]) },
		{ offsetof(struct nc_cpu, smp_rpc_sirq[0]), offsetof(struct nc_cpu, smp_rpc_sirq[1]) } };
	for (int f = 0; f < 4; f++)
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < s->ncpu; i++)
				col[i] = nc_cnt(s, f ? s->rsrc[i] : i, off[f][k]);
			nc_pack_col(pk, key[f][k], col, s->ncpu);
		}
	for (int i = 0; i < s->ncpu; i++)
		col[i] = nc_cnt(s, s->sock_remote ? s->rsrc[i] : -1, offsetof(struct nc_cpu, smp_remote_unknown));
	nc_pack_col(pk, "remote_unknown_smp", col, s->ncpu);
	np_pack_kv_str(pk, "sock_sampler", !s->sock_remote ? "local" : s->remote_recv_only ? "remote-recv" : "remote");
}

/* The sampler's socket counts (both modes: in exact mode they are the
 * cross-check of the estimate) and what one sample stands for. */
static void nc_pack_sock_samples(struct nc_state *s, msgpack_packer *pk, uint64_t period, uint64_t *col)
{
	static const char *const key[NC_CLASS_MAX] = { "netrx_smp", "nettx_smp", "send_smp", "recv_smp" };
	static const char *const wkey[NC_CLASS_MAX] = { "netrx_smp_ns", "nettx_smp_ns", "send_smp_ns",
							 "recv_smp_ns" };
	for (int k = 0; k < NC_CLASS_MAX; k++) {
		for (int i = 0; i < s->ncpu; i++)
			col[i] = nc_class_smp(s, k, i);
		nc_pack_col(pk, key[k], col, s->ncpu);
		for (int i = 0; i < s->ncpu; i++)
			col[i] = nc_est(s, k, i);
		nc_pack_col(pk, wkey[k], col, s->ncpu);
	}
	for (int i = 0; i < s->ncpu; i++)
		col[i] = s->cur[i].smp_sirq[NC_SV_OTHER] - s->prev[i].smp_sirq[NC_SV_OTHER];
	nc_pack_col(pk, "sirq_other_smp", col, s->ncpu);
	for (int i = 0; i < s->ncpu; i++)
		col[i] = s->cur[i].smp_rx_probe - s->prev[i].smp_rx_probe;
	nc_pack_col(pk, "netrx_probe_smp", col, s->ncpu);
	for (int i = 0; i < s->ncpu; i++)
		col[i] = s->cur[i].smp_rx_stray - s->prev[i].smp_rx_stray;
	nc_pack_col(pk, "netrx_stray_smp", col, s->ncpu);
	for (int i = 0; i < s->ncpu; i++)
		col[i] = s->cur[i].smp_sirq_missed - s->prev[i].smp_sirq_missed;
	nc_pack_col(pk, "sirq_missed_smp", col, s->ncpu);
	for (int i = 0; i < s->ncpu; i++)
		col[i] = s->cur[i].smp_pc_unknown - s->prev[i].smp_pc_unknown;
	nc_pack_col(pk, "pc_unknown_smp", col, s->ncpu);
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < s->ncpu; i++)
			col[i] = s->cur[i].smp_sock_cut[k] - s->prev[i].smp_sock_cut[k];
		nc_pack_col(pk, k ? "recv_cut_smp" : "send_cut_smp", col, s->ncpu);
	}
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < s->ncpu; i++)
			col[i] = s->cur[i].smp_sock_probe[k] - s->prev[i].smp_sock_probe[k];
		nc_pack_col(pk, k ? "recv_probe_smp" : "send_probe_smp", col, s->ncpu);
	}
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < s->ncpu; i++)
			col[i] = s->cur[i].smp_sock_outside[k] - s->prev[i].smp_sock_outside[k];
		nc_pack_col(pk, k ? "recv_outside_smp" : "send_outside_smp", col, s->ncpu);
	}
	nc_pack_remote(s, pk, col);
	np_pack_kv_u64(pk, "smp_period_ns", period);
}

/* How NET_RX / NET_TX time was measured (absent before issue 24: exact). */
static const char *nc_sirq_mode(const struct nc_state *s)
{
	return s->sirq_clock ? "exact" : s->sock_rate ? "sampled" : "none";
}

static const char *nc_sock_mode(const struct nc_state *s)
{
	return s->exact ? "exact" : s->sock_rate ? "sampled" : "none";
}


/* NP_REC_NETCPU: per-CPU deltas of every class since the last interval. */
static void nc_pack_netcpu(struct nc_state *s, struct np_recbuf *rb, uint64_t t0, uint64_t t1)
{
	int n = s->ncpu, nkeys = 0;
	uint64_t *col = calloc((size_t)n, sizeof(uint64_t));
	uint64_t net_total = 0, period = nc_period(s);
	if (!col)
		return;
	bool energy = s->have_rapl;
	for (int c = 0; c < NC_CLASS_MAX; c++)
		nkeys += !nc_class_known(s, c) ? 0 : nc_class_sampled(s, c) ? 1 : 2;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_NETCPU, NC_REC_VERSION);
	msgpack_pack_map(pk, 6 + nkeys + (s->exact ? 2 : 0) + (s->sock_rate ? 30 : 0) + 2 + (energy ? 2 : 1));
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	for (int i = 0; i < n; i++)
		col[i] = (uint64_t)i;
	nc_pack_col(pk, "cpu", col, n);
	np_pack_kv_str(pk, "sock", nc_sock_mode(s));
	np_pack_kv_str(pk, "sirq", nc_sirq_mode(s));
	for (int c = 0; c < NC_CLASS_MAX; c++)
		if (nc_class_known(s, c))
			nc_pack_class(s, pk, c, col, &net_total);
	if (s->exact)
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < n; i++)
				col[i] = s->cur[i].unclocked[k] - s->prev[i].unclocked[k];
			nc_pack_col(pk, k ? "recv_unclocked_n" : "send_unclocked_n", col, n);
		}
	if (s->sock_rate)
		nc_pack_sock_samples(s, pk, period, col);
	for (int i = 0; i < n; i++)
		col[i] = s->cur[i].nested_ns - s->prev[i].nested_ns;
	nc_pack_col(pk, "nested_ns", col, n);
	/* sysconf reads sysfs (open, read, close): every snapshot it was ~3 %
	 * of an idle recorder's CPU, and CPUs seldom go on- or offline */
	if (!s->online || ++s->online_age >= NC_ONLINE_EVERY) {
		s->online = sysconf(_SC_NPROCESSORS_ONLN);
		s->online_age = 0;
	}
	long online = s->online;
	np_pack_kv_u64(pk, "ncpu_online", (uint64_t)online);
	np_pack_kv_bool(pk, "rapl", energy);
	if (energy) {
		uint64_t d[NC_RAPL_MAX], total = 0;
		rapl_read(&s->rapl, d);
		for (unsigned i = 0; i < s->rapl.n; i++)   /* netto: package + dram */
			if (s->rapl.dom[i].top || strcmp(s->rapl.dom[i].name, "dram") == 0)
				total += d[i];
		np_pack_kv_u64(pk, "energy_uj", total);
		np_pack_kv_u64(pk, "net_energy_uj",
			       (uint64_t)np_powerattr_net_share((double)total, net_total, t1 - t0,
							       (unsigned)online));
	} else {
		np_pack_kv_str(pk, "rapl_reason", s->rapl_why);
	}
	free(col);
}

/* Doubles the drain scratch, up to the map size. */
static bool nc_keys_grow(struct nc_state *s)
{
	size_t n = s->keys_cap ? 2 * s->keys_cap : 256;
	if (n > s->keys_max)
		n = s->keys_max;
	if (n <= s->keys_cap)
		return false;
	struct nc_count *k = realloc(s->keys, n * sizeof(*k));
	if (!k)
		return false;
	s->keys = k;
	s->keys_cap = n;
	return true;
}

static int nc_key_cmp(const void *a, const void *b)
{
	const struct nc_stack_key *x = &((const struct nc_count *)a)->k, *y = &((const struct nc_count *)b)->k;
	int d = memcmp(x->ips, y->ips, sizeof(x->ips));
	if (d)
		return d;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* Zeroes the frames outside net_rx_action (the interrupted context under
 * it), which the kernel side keeps to save itself a loop. */
static void nc_cut_outside_netrx(const struct nc_state *s, struct nc_stack_key *k)
{
	for (size_t f = 0; s->vec_lo[0] && f < NC_STACK_DEPTH && k->ips[f]; f++)
		if (k->ips[f] >= s->vec_lo[0] && k->ips[f] < s->vec_hi[0]) {
			memset(&k->ips[f + 1], 0, (NC_STACK_DEPTH - f - 1) * sizeof(k->ips[0]));
			return;
		}
}

/* The old slot's counts read and deleted with batched lookups, NC_BATCH
 * keys a call: a few syscalls an interval instead of three per stack
 * (get_next_key, lookup, delete), which were half of nprec's syscalls at
 * paced wrk. Deleting the keys of buckets already passed does not
 * disturb the walk (its position is a bucket). A bucket of more than
 * NC_BATCH keys would stop it (ENOSPC): the map has a bucket per entry it
 * can hold, so that takes 33 colliding stacks. -1: the kernel has no
 * batched hash lookups (before 5.6), nothing taken. */
#define NC_BATCH 32
static long nc_take_batch(struct nc_state *s, int fd, __u32 old)
{
	struct nc_stack_key *kb = malloc(NC_BATCH * sizeof(*kb));
	uint64_t vb[NC_BATCH];
	__u32 in = 0, out = 0;
	bool first = true;
	long nk = 0;
	if (!kb)
		return 0;
	for (;;) {
		__u32 cnt = NC_BATCH, ndel = 0;
		int rc = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, kb, vb, &cnt, NULL);
		if (rc && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP))
				nk = -1;
			break;
		}
		for (__u32 i = 0; i < cnt; i++) {
			if (kb[i].slot != old)
				continue;
			if ((size_t)nk < s->keys_max && ((size_t)nk < s->keys_cap || nc_keys_grow(s)))
				s->keys[nk++] = (struct nc_count){ .k = kb[i], .n = vb[i] };
			kb[ndel++] = kb[i];
		}
		if (ndel)
			bpf_map_delete_batch(fd, kb, &ndel, NULL);
		cpuslice_point();
		if (rc)             /* ENOENT: that was the last batch */
			break;
		in = out;
		first = false;
	}
	free(kb);
	return nk;
}

/* Flips the selector, then takes (and deletes) every count of the old
 * slot. Returns the number of counts in s->keys, cut to NET_RX's frames
 * and sorted by stack. */
static size_t nc_take_counts(struct nc_state *s)
{
	struct bpf_map *cm = s->skel->maps.nc_stack_counts;
	__u32 old = s->skel->bss->nc_slot & 1;
	__atomic_store_n(&s->skel->bss->nc_slot, old ^ 1, __ATOMIC_SEQ_CST);
	long got = nc_take_batch(s, bpf_map__fd(cm), old);
	size_t nk = got > 0 ? (size_t)got : 0;
	/* no batched lookups: keys collected first (deleting while walking
	 * would restart get_next_key), then one lookup and delete each */
	struct nc_stack_key cur, next;
	const void *prevp = NULL;
	while (got < 0 && nk < s->keys_max &&
	       bpf_map__get_next_key(cm, prevp, &next, sizeof(next)) == 0) {
		cpuslice_point();
		if (next.slot == old && (nk < s->keys_cap || nc_keys_grow(s)))
			s->keys[nk++].k = next;
		cur = next;
		prevp = &cur;
	}
	for (size_t i = 0; i < nk; i++) {
		struct nc_count *e = &s->keys[i];
		if (got < 0) {
			e->n = 0;
			cpuslice_point();
			bpf_map__lookup_elem(cm, &e->k, sizeof(e->k), &e->n, sizeof(e->n), 0);
			bpf_map__delete_elem(cm, &e->k, sizeof(e->k), 0);
		}
		nc_cut_outside_netrx(s, &e->k);
	}
	if (nk > 1)     /* keys is NULL until the first count */
		qsort(s->keys, nk, sizeof(*s->keys), nc_key_cmp);
	return nk;
}

static void nc_top_insert(struct nc_top *top, unsigned *ntop, const struct nc_top *t)
{
	unsigned pos = *ntop;
	while (pos > 0 && top[pos - 1].samples < t->samples)
		pos--;
	if (pos >= NC_TOP_STACKS)
		return;
	unsigned last = *ntop < NC_TOP_STACKS ? *ntop : NC_TOP_STACKS - 1;
	memmove(&top[pos + 1], &top[pos], (last - pos) * sizeof(*top));
	top[pos] = *t;
	if (*ntop < NC_TOP_STACKS)
		(*ntop)++;
}

struct nc_stack_sum {
	uint64_t cat[NC_CAT_MAX];
	uint64_t unresolved;
	struct nc_top top[NC_TOP_STACKS];
	unsigned ntop;
};

/* Resolves every distinct stack once (keys sorted by stack), charges its
 * counts to its category per CPU. */
static void nc_classify(struct nc_state *s, size_t nk, struct nc_stack_sum *sum)
{
	memset(s->cpu_cat, 0, (size_t)s->ncpu * NC_CAT_MAX * sizeof(uint64_t));
	for (size_t i = 0; i < nk;) {
		size_t j = i;
		struct nc_top t = { 0 };
		cpuslice_point();
		while (j < nk && memcmp(s->keys[j].k.ips, s->keys[i].k.ips, sizeof(t.ips)) == 0)
			t.samples += s->keys[j++].n;
		memcpy(t.ips, s->keys[i].k.ips, sizeof(t.ips));
		if (s->ksyms && s->src == NC_SRC_TICK)
			nc_strip_irq_frames(s->ksyms, t.ips, NC_STACK_DEPTH);
		if (s->ksyms) {
			t.cat = nc_cat_of_stack(s->ksyms, t.ips, NC_STACK_DEPTH, NULL);
			for (size_t x = i; x < j; x++)
				if ((int)s->keys[x].k.cpu < s->ncpu)
					s->cpu_cat[s->keys[x].k.cpu * NC_CAT_MAX + t.cat] += s->keys[x].n;
			sum->cat[t.cat] += t.samples;
			nc_top_insert(sum->top, &sum->ntop, &t);
		} else {
			sum->unresolved += t.samples;
		}
		i = j;
	}
}

static void nc_pack_top(struct nc_state *s, msgpack_packer *pk, const struct nc_stack_sum *sum)
{
	uint64_t v[NC_TOP_STACKS];
	for (unsigned i = 0; i < sum->ntop; i++)
		v[i] = sum->top[i].samples;
	np_pack_kv_u64_array(pk, "top_samples", v, sum->ntop);
	np_pack_str(pk, "top_cat");
	msgpack_pack_array(pk, sum->ntop);
	for (unsigned i = 0; i < sum->ntop; i++)
		np_pack_str(pk, nc_cat_name(sum->top[i].cat));
	np_pack_str(pk, "top_stack");
	msgpack_pack_array(pk, sum->ntop);
	for (unsigned i = 0; i < sum->ntop; i++) {
		const uint64_t *ips = sum->top[i].ips;
		unsigned nf = 0;
		while (nf < NC_TOP_FRAMES && nf < NC_STACK_DEPTH && ips[nf])
			nf++;
		msgpack_pack_array(pk, nf);
		for (unsigned f = 0; f < nf; f++) {
			uint64_t start = 0;
			const char *name = ksyms_lookup(s->ksyms, ips[f], &start);
			char buf[160];
			if (name)
				snprintf(buf, sizeof(buf), "%s+0x%llx", name,
					 (unsigned long long)(ips[f] - start));
			else
				snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)ips[f]);
			np_pack_str(pk, buf);
		}
	}
}

/* NP_REC_NETRX_STACKS: samples per category, per CPU and category, the
 * NET_RX ns each category is estimated to hold, and the top stacks. */
static void nc_pack_stacks(struct nc_state *s, struct np_recbuf *rb, uint64_t t0, uint64_t t1)
{
	struct nc_stack_sum *sum = calloc(1, sizeof(*sum));
	if (!sum)
		return;
	size_t nk = nc_take_counts(s);
	nc_classify(s, nk, sum);

	uint64_t samples = 0, netrx = 0, lost = 0, est[NC_CAT_MAX] = { 0 };
	for (int c = 0; c < s->ncpu; c++) {
		samples += s->cur[c].samples - s->prev[c].samples;
		netrx += s->cur[c].samples_netrx - s->prev[c].samples_netrx;
		lost += s->cur[c].stack_lost - s->prev[c].stack_lost;
		uint64_t *row = &s->cpu_cat[c * NC_CAT_MAX], rsum = 0;
		for (int k = 0; k < NC_CAT_MAX; k++)
			rsum += row[k];
		double rx_ns = s->sirq_clock ? (double)(s->cur[c].ns[NC_NET_RX] - s->prev[c].ns[NC_NET_RX])
					     : (double)nc_est(s, NC_NET_RX, c);
		for (int k = 0; rsum && k < NC_CAT_MAX; k++)
			est[k] += (uint64_t)(rx_ns * (double)row[k] / (double)rsum);
	}
	s->lost += lost;

	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_NETRX_STACKS, NC_REC_VERSION);
	/* per-CPU rate: observed on the busiest CPU (an idle CPU's tick
	 * stops); hz is the nominal rate, the kernel's HZ for the tick */
	uint64_t observed = nc_observed_hz(s, t0, t1), hz = nc_nominal_hz(s, t0, t1);
	msgpack_pack_map(pk, 17);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_str(pk, "source", nc_source_name[s->src]);
	np_pack_kv_u64(pk, "hz", hz);
	np_pack_kv_u64(pk, "hz_observed", observed);
	np_pack_kv_u64(pk, "samples", samples);
	np_pack_kv_u64(pk, "samples_netrx", netrx);
	np_pack_kv_u64(pk, "lost", lost);
	np_pack_kv_u64(pk, "unresolved", sum->unresolved);
	np_pack_str(pk, "cat");
	msgpack_pack_array(pk, NC_CAT_MAX);
	for (int k = 0; k < NC_CAT_MAX; k++)
		np_pack_str(pk, nc_cat_name(k));
	np_pack_kv_u64_array(pk, "cat_samples", sum->cat, NC_CAT_MAX);
	np_pack_kv_u64_array(pk, "cat_est_ns", est, NC_CAT_MAX);
	np_pack_kv_u64(pk, "ncpu", (uint64_t)s->ncpu);
	np_pack_kv_u64_array(pk, "cpu_cat_samples", s->cpu_cat, (size_t)s->ncpu * NC_CAT_MAX);
	nc_pack_top(s, pk, sum);
	free(sum);
}

static int nc_snapshot(void *state, struct rec_ctx *ctx, struct np_recbuf *rb, uint64_t t0, uint64_t t1)
{
	struct nc_state *s = state;
	(void)ctx;
	/* a restart due now drops its partial period in this interval */
	if (nc_dither_due(&s->dither, np_mono_ns()))
		nc_dither_now(s);
	int rc = nc_read_cpus(s, s->cur);
	if (rc < 0)
		return rc;
	nc_take_estimates(s, t0, t1);
	nc_pack_netcpu(s, rb, t0, t1);
	if (s->sampling)
		nc_pack_stacks(s, rb, t0, t1);
	for (int i = 0; i < s->ncpu; i++)
		for (int c = 0; c < NC_CLASS_MAX; c++)
			s->events += s->cur[i].n[c] - s->prev[i].n[c];
	memcpy(s->prev, s->cur, sizeof(struct nc_cpu) * s->ncpu);
	return 0;
}

static uint64_t nc_lost(void *state)
{
	return ((struct nc_state *)state)->lost;
}

static uint64_t nc_events(void *state)
{
	return ((struct nc_state *)state)->events;
}

static void nc_close(void *state)
{
	struct nc_state *s = state;
	if (!s)
		return;
	for (int i = 0; i < NC_HUB_N; i++)
		hub_member_leave(&s->hub[i]);
	for (int i = 0; i < NC_SYS_TPS; i++)
		bpf_link__destroy(s->sys_links[i]);
	nc_timers_free(s, &s->stack_timers);
	nc_timers_free(s, &s->sock_timers);
	netcpu_bpf__destroy(s->skel);
	ksyms_free(s->ksyms);
	free(s->cur);
	free(s->prev);
	free(s->keys);
	free(s->cpu_cat);
	free(s->dw);
	free(s->scratch);
	free(s->est);
	free(s->rsrc);
	free(s->rfrac);
	free(s);
}

const struct rec_family rec_family_netcpu = {
	.name = "netcpu",
	.open = nc_open,
	.drain = nc_drain,
	.drain_counts = true,     /* consumes no records: does not hold the tick short */
	.snapshot = nc_snapshot,
	.lost = nc_lost,
	.events = nc_events,
	.close = nc_close,
};
