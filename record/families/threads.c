/* Recorder family "threads": per-thread on-CPU time, context switches,
 * cgroup (container) and, where the hardware has them, cycles /
 * instructions / cache references / misses and the HT-aware power
 * attribution of deep-mon §3.1.1 (eq. 1-2). Kernel side:
 * bpf/threads.bpf.c. Records: NP_REC_THREADS, NP_REC_CGROUPS and, with
 * RAPL and counters, NP_REC_POWER (docs/records/netcpu-threads.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgpath.h"
#include "cpuslice.h"
#include "family.h"
#include "hookhub.h"
#include "npmsg.h"
#include "powerattr.h"
#include "rapl.h"
#include "rcbpf.h"
#include "rcdelta.h"
#include "rcfilter.h"
#include "records.h"
#include "recschema.h"
#include "threads.h"
#include "threads.skel.h"

#define NT_REC_VERSION 1

static const struct { const char *key; __u64 config; } nt_hw_events[NT_HW_MAX] = {
	[NT_HW_CYCLES] = { "cycles", PERF_COUNT_HW_CPU_CYCLES },   /* NPK(THREADS, CYCLES) ... */
	[NT_HW_INSTRUCTIONS] = { "instructions", PERF_COUNT_HW_INSTRUCTIONS },
	[NT_HW_CACHE_REFS] = { "cache_refs", PERF_COUNT_HW_CACHE_REFERENCES },
	[NT_HW_CACHE_MISSES] = { "cache_misses", PERF_COUNT_HW_CACHE_MISSES },
};

/* What was last reported for a thread (cumulative), to emit differences. */
struct nt_prev {
	uint64_t oncpu_ns, nvcsw, nivcsw, hw[NT_HW_MAX], alone, overlap;
};

/* One emitted row. */
struct nt_row {
	uint32_t tid, pid;
	char comm[NT_COMM_LEN];
	uint64_t cgroup_id;
	struct nt_prev d;        /* this interval */
	bool exited;
};

struct nt_state {
	struct threads_bpf *skel;
	struct hub_member hub;          /* sched_switch */
	int ncpu;
	bool hw;
	bool iter;               /* task iterator variant (no sched_switch program) */
	bool settle;             /* switch variant: the iterator charges stretches in flight */
	int *pmu_fds;            /* NT_HW_MAX x ncpu */
	struct rapl rapl;
	bool have_rapl;
	struct cgpaths *cg;
	struct rc_dtab prev;
	__u32 *keys;
	struct nt_thread *vals;
	struct nt_row *rows;
	struct nt_cpu *cpus;
	uint64_t events;
	uint64_t iter_failed;    /* snapshots whose iteration failed (counted as lost) */
};

static void nt_close(void *state);

static uint64_t nt_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int nt_pmu_open(__u64 config, int cpu)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_HARDWARE,
		.config = config,
	};
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Opens every counter on every CPU; all or nothing. */
static bool nt_pmu_probe(struct nt_state *s, char *why, size_t wlen)
{
	s->pmu_fds = malloc(sizeof(int) * NT_HW_MAX * s->ncpu);
	if (!s->pmu_fds) {
		snprintf(why, wlen, "out of memory");
		return false;
	}
	for (int i = 0; i < NT_HW_MAX * s->ncpu; i++)
		s->pmu_fds[i] = -1;
	for (int e = 0; e < NT_HW_MAX; e++)
		for (int cpu = 0; cpu < s->ncpu; cpu++) {
			int fd = nt_pmu_open(nt_hw_events[e].config, cpu);
			if (fd < 0 && errno == ENODEV)
				continue;   /* offline CPU */
			if (fd < 0) {
				snprintf(why, wlen, "no hardware counters: perf_event_open(%s): %s",
					 nt_hw_events[e].key, strerror(errno));
				return false;
			}
			s->pmu_fds[e * s->ncpu + cpu] = fd;
		}
	return true;
}

static void nt_pmu_close(struct nt_state *s)
{
	for (int i = 0; s->pmu_fds && i < NT_HW_MAX * s->ncpu; i++)
		if (s->pmu_fds[i] >= 0)
			close(s->pmu_fds[i]);
	free(s->pmu_fds);
	s->pmu_fds = NULL;
}

static int nt_pmu_install(struct nt_state *s)
{
	struct bpf_map *maps[NT_HW_MAX] = {
		s->skel->maps.nt_pmu_cycles, s->skel->maps.nt_pmu_instructions,
		s->skel->maps.nt_pmu_cache_refs, s->skel->maps.nt_pmu_cache_misses,
	};
	for (int e = 0; e < NT_HW_MAX; e++)
		for (__u32 cpu = 0; cpu < (__u32)s->ncpu && cpu < NT_MAX_CPUS; cpu++) {
			int fd = s->pmu_fds[e * s->ncpu + cpu];
			if (fd >= 0 && bpf_map__update_elem(maps[e], &cpu, sizeof(cpu), &fd,
							    sizeof(fd), BPF_ANY) < 0)
				return -errno;
		}
	return 0;
}

/* First sibling listed in thread_siblings_list that is not cpu itself. */
static __u32 nt_sibling_of(int cpu)
{
	char p[128], buf[128];
	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0xffffffff;
	__u32 sib = 0xffffffff;
	if (fgets(buf, sizeof(buf), f)) {
		char *tok = buf;
		while (*tok) {
			char *end;
			long a = strtol(tok, &end, 10), b = a;
			if (end == tok)
				break;
			if (*end == '-')
				b = strtol(end + 1, &end, 10);
			for (long x = a; x <= b; x++)
				if (x != cpu && sib == 0xffffffff)
					sib = (__u32)x;
			tok = *end ? end + 1 : end;
		}
	}
	fclose(f);
	return sib;
}

static void nt_fill_siblings(struct nt_state *s)
{
	for (__u32 cpu = 0; cpu < (__u32)s->ncpu && cpu < NT_MAX_CPUS; cpu++) {
		__u32 sib = nt_sibling_of((int)cpu);
		bpf_map__update_elem(s->skel->maps.nt_sibling, &cpu, sizeof(cpu), &sib, sizeof(sib), BPF_ANY);
	}
}

static bool nt_attach(struct rec_ctx *ctx, struct bpf_program *p, struct bpf_link **slot, const char *probe)
{
	*slot = bpf_program__attach(p);
	if (!*slot) {
		char why[160];
		snprintf(why, sizeof(why), "attach failed: %s", strerror(errno));
		*slot = NULL;
		rec_probe(ctx, "threads", probe, REC_PROBE_FAILED, why);
		return false;
	}
	rec_probe(ctx, "threads", probe, REC_PROBE_ATTACHED, NULL);
	return true;
}

static int nt_alloc(struct nt_state *s)
{
	s->ncpu = libbpf_num_possible_cpus();
	if (s->ncpu <= 0)
		return -EINVAL;
	s->keys = calloc(NT_MAX_THREADS, sizeof(*s->keys));
	s->vals = calloc(NT_MAX_THREADS, sizeof(*s->vals));
	s->rows = calloc(NT_MAX_THREADS, sizeof(*s->rows));
	s->cpus = calloc(s->ncpu, sizeof(*s->cpus));
	if (!s->keys || !s->vals || !s->rows || !s->cpus)
		return -ENOMEM;
	return rc_dtab_init(&s->prev, sizeof(__u32), sizeof(struct nt_prev));
}

static void nt_probe_extras(struct rec_ctx *ctx, struct nt_state *s, const char *hw_why)
{
	char why[200];
	rec_probe(ctx, "threads", "perf_event/hw-counters", s->hw ? REC_PROBE_ATTACHED : REC_PROBE_SKIPPED,
		  s->hw ? NULL : hw_why);
	s->have_rapl = rapl_open(&s->rapl, "/sys/class/powercap", why, sizeof(why)) == 0;
	if (s->hw && s->have_rapl)
		rec_probe(ctx, "threads", "power-attribution", REC_PROBE_ATTACHED, NULL);
	else
		rec_probe(ctx, "threads", "power-attribution", REC_PROBE_SKIPPED,
			  !s->hw ? "needs hardware counters (cycles)" : why);
	int rc = cgpath_open(&s->cg, NULL);
	if (rc < 0) {
		snprintf(why, sizeof(why), "no cgroup2 mount: %s: cgroup paths unknown", strerror(-rc));
		rec_probe(ctx, "threads", "cgroup-paths", REC_PROBE_FAILED, why);
	}
}

/* Opens, configures and loads the object for one variant (bpf/threads.bpf.c):
 * the task iterator (iter) or the sched_switch program, with the iterator
 * as its settler (with_iter) or without. 0 or -errno. */
static int nt_load(struct rec_ctx *ctx, struct nt_state *s, bool iter, bool with_iter)
{
	s->skel = threads_bpf__open();
	if (!s->skel)
		return -errno;
	s->iter = iter;
	RC_FILTER_SET(s->skel->rodata, ctx->cfg);
	s->skel->rodata->nt_hw_enabled = s->hw;
	s->skel->rodata->nt_iter_mode = iter;
	s->skel->rodata->nt_t0 = nt_mono_ns();
	if (iter)
		bpf_program__set_autoload(s->skel->progs.nt_sched_switch, false);
	else if (!with_iter)
		bpf_program__set_autoload(s->skel->progs.nt_iter, false);
	if (!iter)
		hub_member_share(ctx, &s->hub, HUB_SCHED_SWITCH, HUB_SLOT_THREADS, s->skel->maps.hub_sched_switch);
	return threads_bpf__load(s->skel);
}

/* One pass of the task iterator: every thread's figures into nt_threads. */
static int nt_iterate(struct nt_state *s)
{
	return rc_iter_run(s->skel->links.nt_iter);
}

/* The switch variant's settler: false where the iterator cannot run, and
 * then a stretch in flight is estimated by ktime since its switch-in. */
static bool nt_attach_settle(struct rec_ctx *ctx, struct nt_state *s)
{
	struct threads_bpf *k = s->skel;
	char why[200];
	int rc;

	if (!bpf_program__autoload(k->progs.nt_iter)) {
		rec_probe(ctx, "threads", "iter/task-inflight", REC_PROBE_FAILED,
			  "did not load: in-flight stretches from ktime since the switch-in (steal counts)");
		return false;
	}
	k->links.nt_iter = bpf_program__attach_iter(k->progs.nt_iter, NULL);
	rc = k->links.nt_iter ? nt_iterate(s) : -errno;
	if (rc < 0) {
		snprintf(why, sizeof(why), "%s: in-flight stretches from ktime since the switch-in (steal counts)",
			 strerror(-rc));
		rec_probe(ctx, "threads", "iter/task-inflight", REC_PROBE_FAILED, why);
		return false;
	}
	rec_probe(ctx, "threads", "iter/task-inflight", REC_PROBE_ATTACHED, NULL);
	return true;
}

/* The iterator variant's hooks; false (err set) when it cannot run. */
static bool nt_attach_iter(struct rec_ctx *ctx, struct nt_state *s, char *err, size_t errlen)
{
	struct threads_bpf *k = s->skel;
	int rc;

	k->links.nt_iter = bpf_program__attach_iter(k->progs.nt_iter, NULL);
	rc = k->links.nt_iter ? nt_iterate(s) : -errno;
	if (rc < 0) {
		snprintf(err, errlen, "task iterator: %s", strerror(-rc));
		return false;
	}
	rec_probe(ctx, "threads", "iter/task", REC_PROBE_ATTACHED, NULL);
	rec_probe(ctx, "threads", "tp_btf/sched_switch", REC_PROBE_SKIPPED,
		  "not needed: without hardware counters the task iterator reads each thread's runtime "
		  "and switches at every snapshot");
	return true;
}

static int nt_open(struct rec_ctx *ctx, void **state, char *err, size_t errlen)
{
	const struct rec_config *cfg = ctx->cfg;
	if (cfg->no_threads) {
		snprintf(err, errlen, "--no-threads");
		return REC_FAM_OFF_OPTION;
	}
	struct nt_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	int rc = nt_alloc(s);
	if (rc) {
		snprintf(err, errlen, "cannot set up threads: %s", strerror(-rc));
		nt_close(s);
		return rc;
	}
	char hw_why[200] = "";
	s->hw = nt_pmu_probe(s, hw_why, sizeof(hw_why));
	if (!s->hw)
		nt_pmu_close(s);
	/* Hardware counters are read at every switch; without them the
	 * iterator does (NPREC_TEST_THREADS_SWITCH=1: the switch program anyway) */
	bool iter = !s->hw && !getenv("NPREC_TEST_THREADS_SWITCH");
	rc = nt_load(ctx, s, iter, true);
	if (rc) {
		/* no iterator here: the sched_switch program alone */
		char why[200];
		snprintf(why, sizeof(why), "cannot load: %s: sched_switch program instead", strerror(-rc));
		if (iter)
			rec_probe(ctx, "threads", "iter/task", REC_PROBE_FAILED, why);
		threads_bpf__destroy(s->skel);
		rc = nt_load(ctx, s, false, false);
	}
	if (rc) {
		snprintf(err, errlen, "cannot load BPF object threads: %s", strerror(-rc));
		rec_probe(ctx, "threads", "load", REC_PROBE_FAILED, err);
		nt_close(s);
		return rc == -EPERM ? rc : 1;
	}
	if (s->hw && nt_pmu_install(s) < 0) {
		snprintf(hw_why, sizeof(hw_why), "cannot install counters in perf arrays: %s", strerror(errno));
		s->hw = false;
	}
	nt_fill_siblings(s);
	struct threads_bpf *k = s->skel;
	bool attached = s->iter ? nt_attach_iter(ctx, s, err, errlen)
				: hub_member_attach(ctx, "threads", &s->hub, k->progs.nt_sched_switch,
						    &k->links.nt_sched_switch);
	if (!attached) {
		if (!s->iter)
			snprintf(err, errlen, "sched_switch tracepoint did not attach");
		nt_close(s);
		return REC_FAM_OFF_KERNEL;
	}
	if (!s->iter)
		s->settle = nt_attach_settle(ctx, s);
	nt_attach(ctx, k->progs.nt_process_exit, &k->links.nt_process_exit, "tp_btf/sched_process_exit");
	nt_probe_extras(ctx, s, hw_why);
	*state = s;
	return 0;
}

/* ---- snapshot ---- */

/* Every thread's entry, one lookup and one get_next_key each: kernels
 * without batched hash lookups (before 5.6). */
static size_t nt_read_threads_walk(struct nt_state *s)
{
	struct bpf_map *m = s->skel->maps.nt_threads;
	__u32 key, next;
	const void *prevp = NULL;
	size_t n = 0;
	while (n < NT_MAX_THREADS && bpf_map__get_next_key(m, prevp, &next, sizeof(next)) == 0) {
		cpuslice_point();
		if (bpf_map__lookup_elem(m, &next, sizeof(next), &s->vals[n], sizeof(s->vals[n]), 0) == 0)
			s->keys[n++] = next;
		key = next;
		prevp = &key;
	}
	return n;
}

/* Every thread's entry in batches of 256 (each well inside a --cpu-slice):
 * a few syscalls an interval instead of two per thread of the host. */
static size_t nt_read_threads(struct nt_state *s)
{
	int fd = bpf_map__fd(s->skel->maps.nt_threads);
	__u32 in = 0, out = 0;
	size_t n = 0;
	bool first = true;
	while (n < NT_MAX_THREADS) {
		__u32 cnt = NT_MAX_THREADS - n < 256 ? (__u32)(NT_MAX_THREADS - n) : 256;
		int rc = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, &s->keys[n], &s->vals[n], &cnt, NULL);
		if (rc < 0 && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP))
				return nt_read_threads_walk(s);
			if (errno != ENOSPC || !cnt)
				break;   /* a bucket larger than the room left: read what came */
		}
		n += cnt;
		first = false;
		in = out;
		cpuslice_point();
		if (rc < 0)
			break;
	}
	return n;
}

/* On-CPU time of tid since its last switch-in, if it runs right now. */
static uint64_t nt_inflight(const struct nt_state *s, __u32 tid, uint64_t now)
{
	for (int i = 0; i < s->ncpu; i++)
		if (s->cpus[i].tid == tid && s->cpus[i].ts && now > s->cpus[i].ts)
			return now - s->cpus[i].ts;
	return 0;
}

static uint64_t nt_sub(uint64_t *cur, uint64_t old)
{
	if (*cur < old)
		*cur = old;     /* never report negative time: keep the larger total */
	return *cur - old;
}

static bool nt_diff(struct nt_prev *cur, const struct nt_prev *old, struct nt_prev *d)
{
	uint64_t *c = (uint64_t *)cur, *d64 = (uint64_t *)d;
	const uint64_t *o = (const uint64_t *)old;
	bool any = false;
	for (size_t i = 0; i < sizeof(*cur) / sizeof(uint64_t); i++)
		any |= (d64[i] = nt_sub(&c[i], o[i])) != 0;
	return any;
}

static int nt_row_cmp(const void *a, const void *b)
{
	const struct nt_row *x = a, *y = b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Differences against what was last reported; exited threads leave both
 * the kernel map and the table once reported. */
static size_t nt_build_rows(struct nt_state *s, size_t n, uint64_t now, struct rc_dtab *next)
{
	static const struct nt_prev zero;
	size_t nrows = 0, ndel = 0;     /* exited threads' tids, moved to the front of s->keys */
	for (size_t i = 0; i < n; i++) {
		const struct nt_thread *v = &s->vals[i];
		__u32 tid = s->keys[i];
		struct nt_prev cur = {
			.oncpu_ns = v->oncpu_ns + nt_inflight(s, tid, now),
			.nvcsw = v->nvcsw, .nivcsw = v->nivcsw,
			.alone = v->cycles_alone, .overlap = v->cycles_overlap,
		};
		memcpy(cur.hw, v->hw, sizeof(cur.hw));
		/* rc_dtab slots are not aligned: copy in and out */
		const void *oldp = rc_dtab_find(&s->prev, &tid);
		struct nt_prev old = zero;
		if (oldp)
			memcpy(&old, oldp, sizeof(old));
		struct nt_row *r = &s->rows[nrows];
		bool exited = v->flags & NT_F_EXITED;
		bool any = nt_diff(&cur, &old, &r->d);
		if (exited) {
			s->keys[ndel++] = tid;
		} else {
			void *slot = rc_dtab_put(next, &tid);
			if (slot)
				memcpy(slot, &cur, sizeof(cur));
		}
		if (!any && !exited)
			continue;
		r->tid = tid;
		r->pid = v->pid;
		memcpy(r->comm, v->comm, NT_COMM_LEN);
		r->comm[NT_COMM_LEN - 1] = 0;
		r->cgroup_id = v->cgroup_id;
		r->exited = exited;
		nrows++;
	}
	if (ndel) {
		/* one system call for all of them (a busy host ends tens of
		 * threads a second), one each if that fails */
		int fd = bpf_map__fd(s->skel->maps.nt_threads);
		__u32 cnt = (__u32)ndel;
		if (bpf_map_delete_batch(fd, s->keys, &cnt, NULL))
			for (size_t i = cnt; i < ndel; i++)   /* cnt: deleted before the failure */
				bpf_map_delete_elem(fd, &s->keys[i]);
	}
	qsort(s->rows, nrows, sizeof(*s->rows), nt_row_cmp);
	return nrows;
}

#define NT_COL(pk, key, rows, n, expr) do { \
	np_pack_str(pk, key); \
	msgpack_pack_array(pk, n); \
	for (size_t i_ = 0; i_ < (n); i_++) { \
		const struct nt_row *r_ = &(rows)[i_]; \
		msgpack_pack_uint64(pk, (uint64_t)(expr)); \
	} } while (0)

static void nt_pack_threads(struct nt_state *s, struct np_recbuf *rb, size_t n, uint64_t t0, uint64_t t1)
{
	const struct nt_row *rows = s->rows;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_THREADS, NT_REC_VERSION);
	msgpack_pack_map(pk, NPK_THREADS__N - (s->hw ? 0 : NPK_THREADS__NOPT));
	np_pack_kv_u64(pk, NPK(THREADS, T0_NS), t0);
	np_pack_kv_u64(pk, NPK(THREADS, T1_NS), t1);
	np_pack_kv_u64(pk, NPK(THREADS, N), n);
	uint64_t *tid = malloc((n ? n : 1) * sizeof(uint64_t));
	for (size_t i = 0; tid && i < n; i++)
		tid[i] = rows[i].tid;
	np_pack_kv_u64_delta(pk, NPK(THREADS, TID_D), tid, tid ? n : 0);
	free(tid);
	NT_COL(pk, NPK(THREADS, PID), rows, n, r_->pid);
	np_pack_str(pk, NPK(THREADS, COMM));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		np_pack_str(pk, rows[i].comm);
	NT_COL(pk, NPK(THREADS, CGROUP_ID), rows, n, r_->cgroup_id);
	NT_COL(pk, NPK(THREADS, ONCPU_NS), rows, n, r_->d.oncpu_ns);
	NT_COL(pk, NPK(THREADS, NVCSW), rows, n, r_->d.nvcsw);
	NT_COL(pk, NPK(THREADS, NIVCSW), rows, n, r_->d.nivcsw);
	NT_COL(pk, NPK(THREADS, EXITED), rows, n, r_->exited);
	np_pack_kv_bool(pk, NPK(THREADS, HW), s->hw);
	if (s->hw) {
		for (int e = 0; e < NT_HW_MAX; e++)
			NT_COL(pk, nt_hw_events[e].key, rows, n, r_->d.hw[e]);
		NT_COL(pk, NPK(THREADS, CYCLES_ALONE), rows, n, r_->d.alone);
		NT_COL(pk, NPK(THREADS, CYCLES_OVERLAP), rows, n, r_->d.overlap);
	}
}

/* cgroup id -> path for every cgroup the interval's threads were in. */
static void nt_pack_cgroups(struct nt_state *s, struct np_recbuf *rb, size_t n)
{
	uint64_t *ids = malloc((n ? n : 1) * sizeof(uint64_t));
	size_t k = 0;
	if (!ids)
		return;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < k && !seen; j++)
			seen = ids[j] == s->rows[i].cgroup_id;
		if (!seen)
			ids[k++] = s->rows[i].cgroup_id;
	}
	cgpath_new_round(s->cg);
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_CGROUPS, NT_REC_VERSION);
	msgpack_pack_map(pk, 2);
	np_pack_kv_u64_array(pk, "id", ids, k);
	np_pack_str(pk, "path");
	msgpack_pack_array(pk, k);
	for (size_t j = 0; j < k; j++)
		np_pack_str(pk, cgpath_get(s->cg, ids[j]));   /* nil when unknown */
	free(ids);
}

/* Core energy of all sockets (package when there is no core domain). */
static uint64_t nt_core_energy(struct nt_state *s)
{
	uint64_t d[NC_RAPL_MAX], core = 0, pkg = 0;
	bool have_core = false;
	rapl_read(&s->rapl, d);
	for (unsigned i = 0; i < s->rapl.n; i++) {
		if (strcmp(s->rapl.dom[i].name, "core") == 0) {
			core += d[i];
			have_core = true;
		} else if (s->rapl.dom[i].top) {
			pkg += d[i];
		}
	}
	return have_core ? core : pkg;
}

/* Deep-mon eq. 1-2 over the interval's rows (all sockets as one: threads
 * migrate, per-socket cycles are not kept). */
static void nt_pack_power(struct nt_state *s, struct np_recbuf *rb, size_t n, uint64_t t0, uint64_t t1)
{
	double *w = calloc(n ? n : 1, sizeof(double)), *out = calloc(n ? n : 1, sizeof(double));
	double energy = (double)nt_core_energy(s), lost = 0;
	if (!w || !out)
		goto done;
	for (size_t i = 0; i < n; i++)
		w[i] = np_powerattr_weighted_cycles(s->rows[i].d.alone, s->rows[i].d.overlap,
						    NP_POWERATTR_HT_R_DEFAULT);
	np_powerattr_attribute(w, n, 1, &energy, out, &lost);
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_POWER, NT_REC_VERSION);
	msgpack_pack_map(pk, 7);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_u64(pk, "core_energy_uj", (uint64_t)energy);
	np_pack_kv_f64(pk, "ht_r", NP_POWERATTR_HT_R_DEFAULT);
	np_pack_kv_u64(pk, "unattributed_uj", (uint64_t)lost);
	NT_COL(pk, "tid", s->rows, n, r_->tid);
	NT_COL(pk, "energy_uj", s->rows, n, out[r_ - s->rows]);
done:
	free(w);
	free(out);
}

static int nt_snapshot(void *state, struct rec_ctx *ctx, struct np_recbuf *rb, uint64_t t0, uint64_t t1)
{
	struct nt_state *s = state;
	(void)ctx;
	__u32 zero = 0;
	if ((s->iter || s->settle) && nt_iterate(s) < 0)
		s->iter_failed++;
	size_t n = nt_read_threads(s);
	/* Without the settler, the switch variant's in-flight stretches by
	 * ktime: the CPUs read after the threads, and the clock after both. A
	 * stretch that ended (and was charged) before the threads were read
	 * no longer names its thread then; read before them, it did, and was
	 * added once more to a total that held it (rtest_threads: ~10 ms). */
	memset(s->cpus, 0, sizeof(*s->cpus) * s->ncpu);
	if (!s->iter && !s->settle)
		bpf_map__lookup_elem(s->skel->maps.nt_cpus, &zero, sizeof(zero), s->cpus,
				     sizeof(*s->cpus) * s->ncpu, 0);
	uint64_t now = nt_mono_ns();
	struct rc_dtab next;
	if (rc_dtab_init(&next, sizeof(__u32), sizeof(struct nt_prev)) < 0)
		return -ENOMEM;
	size_t nrows = nt_build_rows(s, n, now, &next);
	rc_dtab_swap(&s->prev, &next);
	rc_dtab_free(&next);
	for (size_t i = 0; i < nrows; i++)
		s->events += s->rows[i].d.nvcsw + s->rows[i].d.nivcsw;
	nt_pack_threads(s, rb, nrows, t0, t1);
	nt_pack_cgroups(s, rb, nrows);
	if (s->hw && s->have_rapl)
		nt_pack_power(s, rb, nrows, t0, t1);
	return 0;
}

static uint64_t nt_lost(void *state)
{
	struct nt_state *s = state;
	return s->iter_failed + (s->skel && s->skel->bss ? s->skel->bss->nt_map_full : 0);
}

static uint64_t nt_events(void *state)
{
	return ((struct nt_state *)state)->events;
}

static void nt_close(void *state)
{
	struct nt_state *s = state;
	if (!s)
		return;
	hub_member_leave(&s->hub);
	threads_bpf__destroy(s->skel);
	nt_pmu_close(s);
	cgpath_free(s->cg);
	rc_dtab_free(&s->prev);
	free(s->keys);
	free(s->vals);
	free(s->rows);
	free(s->cpus);
	free(s);
}

const struct rec_family rec_family_threads = {
	.name = "threads",
	.open = nt_open,
	.drain = NULL,
	.snapshot = nt_snapshot,
	.lost = nt_lost,
	.events = nt_events,
	.close = nt_close,
};
