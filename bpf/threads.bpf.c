// SPDX-License-Identifier: GPL-2.0
/* Per-thread on-CPU time and context switches (deep-mon §3.1.1), two
 * variants in one object (record/families/threads.c):
 *  - nt_iter (no hardware counters, the common case in VMs): a task
 *    iterator run by user space at every snapshot reads what the scheduler
 *    keeps per thread anyway (se.sum_exec_runtime, nvcsw, nivcsw), and
 *    sched_process_exit takes a thread's last figures. No program runs on
 *    a context switch: on this project's VM a sched_switch program cost
 *    ~200 ns per switch (docs/BENCHMARKS.md).
 *  - nt_sched_switch (hardware counters exist): deep-mon's Fig. 3, the
 *    counters read at every switch and their deltas charged to the thread
 *    switched out; cycles split into "alone" and "overlap" by the sibling
 *    hyper-thread's state for the HT-aware power attribution (eq. 1).
 *    The same iterator, where it loads, charges at each snapshot the
 *    runtime of threads still on a CPU (nt_settle): their stretch in
 *    flight, from the scheduler's clock. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "filter.bpf.h"
#include "threads.h"
#include "hub.bpf.h"

/* BPF_PROG() declares ctx and every tracepoint argument, used or not */
#pragma clang diagnostic ignored "-Wunused-parameter"

char LICENSE[] SEC("license") = "GPL";

const volatile bool nt_hw_enabled = false;
/* CLOCK_MONOTONIC at load: a thread started after it has all its runtime
 * in the recording (task start_time is on the same clock) */
const volatile __u64 nt_t0 = 0;

#define NT_PF_EXITING 0x00000004

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct nt_thread);
} nt_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nt_cpu);
} nt_cpus SEC(".maps");

/* cpu -> 1 while it runs a thread (not idle); read by its sibling */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NT_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} nt_busy SEC(".maps");

/* cpu -> sibling hyper-thread, 0xffffffff when none (filled by user space) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NT_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} nt_sibling SEC(".maps");

#define NT_PERF_ARRAY(name) struct { \
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY); \
	__uint(max_entries, NT_MAX_CPUS); \
	__type(key, __u32); \
	__type(value, __u32); \
} name SEC(".maps")

NT_PERF_ARRAY(nt_pmu_cycles);
NT_PERF_ARRAY(nt_pmu_instructions);
NT_PERF_ARRAY(nt_pmu_cache_refs);
NT_PERF_ARRAY(nt_pmu_cache_misses);

__u64 nt_map_full = 0;    /* thread entries that could not be created */

static __always_inline struct nt_thread *nt_thread_get(struct task_struct *p, __u32 tid)
{
	struct nt_thread *t = bpf_map_lookup_elem(&nt_threads, &tid);
	struct nt_thread zero = { .start_ns = p->start_time };

	if (t)
		return t;
	if (bpf_map_update_elem(&nt_threads, &tid, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&nt_threads, &tid)) {
		__sync_fetch_and_add(&nt_map_full, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&nt_threads, &tid);
}

/* Whether t is p's entry. A tid freed and handed to a new thread before
 * user space dropped the old thread's entry names another thread: the new
 * one must not take the old one's figures (nor move its baseline, nor
 * rename its row). That entry is marked exited, so user space reports and
 * drops it; the new thread waits, and its own entry counts it from its
 * birth (it was born during the recording). */
static __always_inline bool nt_same_thread(struct nt_thread *t, struct task_struct *p)
{
	if (t->start_ns == p->start_time)
		return true;
	t->flags |= NT_F_EXITED;
	return false;
}

/* Charges the runtime cur over t->exec_last and moves exec_last to cur,
 * never back. A thread's switch-out and the snapshot's iterator can read
 * its runtime at the same time: each stretch is charged once. A lost race
 * charges nothing now; the next call from the lower exec_last does. */
static __always_inline void nt_advance(struct nt_thread *t, __u64 cur)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = t->exec_last;

		if (cur <= old)
			return;
		if (__sync_val_compare_and_swap(&t->exec_last, old, cur) == old) {
			__sync_fetch_and_add(&t->oncpu_ns, cur - old);
			return;
		}
	}
}

/* p is current (prev at sched_switch): its fields by direct loads, the
 * helpers only for the filters that are set (rodata: the verifier drops
 * the dead branches, but not a helper call made before them). */
static __always_inline bool nt_selected(struct task_struct *p)
{
	if (rc_filter_npids && !rc_filter_pid(p->tgid))
		return false;
	if (rc_filter_cgroup_id && bpf_get_current_cgroup_id() != rc_filter_cgroup_id)
		return false;
	if (rc_filter_netns_ino && p->nsproxy->net_ns->ns.inum != rc_filter_netns_ino)
		return false;
	return true;
}

/* The cgroup v2 id of p, as bpf_get_current_cgroup_id() computes it
 * (task_dfl_cgroup(p)->kn->id), with direct loads instead of a helper. */
static __always_inline __u64 nt_cgroup_id(struct task_struct *p)
{
	return p->cgroups->dfl_cgrp->kn->id;
}

static __always_inline __u64 nt_read_pmu(void *map)
{
	struct bpf_perf_event_value v = {};
	if (bpf_perf_event_read_value(map, BPF_F_CURRENT_CPU, &v, sizeof(v)))
		return 0;
	return v.counter;
}

/* Reads the counters and charges their growth since the last switch on
 * this CPU to t (may be NULL: only the baseline moves). */
static __always_inline void nt_account_hw(struct nt_cpu *c, struct nt_thread *t)
{
	__u64 now[NT_HW_MAX];
	__u32 cpu = bpf_get_smp_processor_id(), *sib, *busy = NULL;

	now[NT_HW_CYCLES] = nt_read_pmu(&nt_pmu_cycles);
	now[NT_HW_INSTRUCTIONS] = nt_read_pmu(&nt_pmu_instructions);
	now[NT_HW_CACHE_REFS] = nt_read_pmu(&nt_pmu_cache_refs);
	now[NT_HW_CACHE_MISSES] = nt_read_pmu(&nt_pmu_cache_misses);
	if (t) {
		for (int i = 0; i < NT_HW_MAX; i++)
			if (now[i] > c->hw_last[i])
				t->hw[i] += now[i] - c->hw_last[i];
		sib = bpf_map_lookup_elem(&nt_sibling, &cpu);
		if (sib && *sib != 0xffffffff)
			busy = bpf_map_lookup_elem(&nt_busy, sib);
		if (now[NT_HW_CYCLES] > c->hw_last[NT_HW_CYCLES]) {
			__u64 d = now[NT_HW_CYCLES] - c->hw_last[NT_HW_CYCLES];
			if (busy && *busy)
				t->cycles_overlap += d;
			else
				t->cycles_alone += d;
		}
	}
	for (int i = 0; i < NT_HW_MAX; i++)
		c->hw_last[i] = now[i];
}

/* comm is 16 bytes: compare as two words (direct loads) and copy only when
 * it changed, which is rare (exec, prctl(PR_SET_NAME)). */
static __always_inline void nt_copy_comm(struct nt_thread *t, struct task_struct *p)
{
	__u64 a = *(__u64 *)&p->comm[0], b = *(__u64 *)&p->comm[8], *dst = (__u64 *)t->comm;

	if (dst[0] != a || dst[1] != b) {
		dst[0] = a;
		dst[1] = b;
	}
}

static __always_inline void nt_switch(bool preempt, struct task_struct *prev, struct task_struct *next,
				     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 zero = 0;
	struct nt_cpu *c = bpf_map_lookup_elem(&nt_cpus, &zero);
	struct nt_thread *t = NULL;
	__u32 tid = prev->pid;

	if (!c)
		return;
	/* current is still prev here: the filters and the cgroup see prev */
	if (tid && nt_selected(prev))
		t = nt_thread_get(prev, tid);
	if (t && !nt_same_thread(t, prev))
		t = NULL;
	if (t) {
		/* The scheduler's own runtime, not ktime: in a VM ktime also runs
		 * while the host has taken the vCPU away (steal), which the kernel
		 * does not charge to the thread. put_prev_task() has updated prev's
		 * runtime before this tracepoint fires. Counted from the thread's
		 * last charge (its last switch-out, or a snapshot's nt_settle),
		 * not from its switch-in on this CPU: under load,
		 * now and then a switch-in does not reach this program
		 * (rtest_threads saw the CPU still naming another task when the
		 * thread left it): docs/NETCPU.md. */
		__u64 exec = prev->se.sum_exec_runtime;

		if (t->exec_last || (prev->start_time >= nt_t0 && !(prev->flags & NT_PF_EXITING))) {
			/* from the last charge; first seen and born during the
			 * recording: all of it, also when its first switch-in was
			 * the one missed (an exiting thread's entry may be one user
			 * space already reported and deleted) */
			nt_advance(t, exec);
		} else if (__sync_val_compare_and_swap(&t->exec_last, 0, exec) == 0 &&
			   c->ts && c->tid == tid && exec > c->exec_in) {
			__sync_fetch_and_add(&t->oncpu_ns, exec - c->exec_in);
		}
		/* the kernel's own nvcsw/nivcsw rule (__schedule) */
		if (!preempt && prev_state)
			t->nvcsw++;
		else
			t->nivcsw++;
		t->pid = prev->tgid;
		t->cgroup_id = nt_cgroup_id(prev);
		nt_copy_comm(t, prev);
		if (prev->flags & NT_PF_EXITING)
			t->flags |= NT_F_EXITED;
	}
	c->ts = now;
	c->exec_in = next->se.sum_exec_runtime;
	c->tid = next->pid;
	if (nt_hw_enabled) {
		/* the sibling's busy flag matters only to the cycle split */
		__u32 cpu = bpf_get_smp_processor_id(), *busy;

		nt_account_hw(c, t);
		busy = bpf_map_lookup_elem(&nt_busy, &cpu);
		if (busy)
			*busy = c->tid != 0;
	}
}

/* ---- iterator variant ---- */

/* nt_selected() for any task p (the iterator's current is user space). */
static __always_inline bool nt_task_selected(struct task_struct *p)
{
	if (rc_filter_npids && !rc_filter_pid(p->tgid))
		return false;
	if (rc_filter_cgroup_id && nt_cgroup_id(p) != rc_filter_cgroup_id)
		return false;
	if (rc_filter_netns_ino) {
		struct nsproxy *ns = p->nsproxy;
		if (!ns || ns->net_ns->ns.inum != rc_filter_netns_ino)
			return false;
	}
	return true;
}

/* The entry of p, created with the task's present figures as the base (a
 * thread that existed at the start: counted from then) or none (born
 * during the recording: all of its life). One creator wins (NOEXIST). */
static __always_inline struct nt_thread *nt_thread_of(struct task_struct *p, __u32 tid)
{
	struct nt_thread *t = bpf_map_lookup_elem(&nt_threads, &tid);
	struct nt_thread base = {};

	if (t)
		return t;
	if (p->start_time < nt_t0) {
		base.exec_last = p->se.sum_exec_runtime;
		base.nvcsw_last = p->nvcsw;
		base.nivcsw_last = p->nivcsw;
	}
	base.start_ns = p->start_time;
	if (bpf_map_update_elem(&nt_threads, &tid, &base, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&nt_threads, &tid)) {
		__sync_fetch_and_add(&nt_map_full, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&nt_threads, &tid);
}

/* cur's growth over *last goes to *sum. The exchange makes the iterator and
 * a thread's exit, which can meet on one entry, charge each stretch once. */
static __always_inline void nt_take(__u64 *sum, __u64 *last, __u64 cur)
{
	__u64 old = __sync_lock_test_and_set(last, cur);

	if (cur > old)
		__sync_fetch_and_add(sum, cur - old);
}

/* The scheduler's figures of p, read now. sum_exec_runtime of a thread
 * running right now lags by at most a tick (the tick updates it): that
 * stretch lands in the next interval, the totals stay exact. */
static __always_inline struct nt_thread *nt_observe(struct task_struct *p)
{
	__u32 tid = p->pid;
	struct nt_thread *t;

	if (!tid || !nt_task_selected(p))
		return NULL;
	t = nt_thread_of(p, tid);
	if (!t || !nt_same_thread(t, p))
		return NULL;
	nt_take(&t->oncpu_ns, &t->exec_last, p->se.sum_exec_runtime);
	nt_take(&t->nvcsw, &t->nvcsw_last, p->nvcsw);
	nt_take(&t->nivcsw, &t->nivcsw_last, p->nivcsw);
	t->pid = p->tgid;
	t->cgroup_id = nt_cgroup_id(p);
	nt_copy_comm(t, p);
	return t;
}

/* With the sched_switch program, at a snapshot: a thread's runtime so far
 * (for one on a CPU now: as of its last tick) is charged, so the stretch in
 * flight lands in this interval and its switch-out charges only the rest.
 * Only threads already charged once (exec_last set). */
static __always_inline void nt_settle(struct task_struct *p)
{
	__u32 tid = p->pid;
	struct nt_thread *t;

	if (!tid || !nt_task_selected(p))
		return;
	t = bpf_map_lookup_elem(&nt_threads, &tid);
	if (t && t->exec_last && nt_same_thread(t, p))
		nt_advance(t, p->se.sum_exec_runtime);
}

const volatile bool nt_iter_mode = false;

SEC("iter/task")
int nt_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *p = ctx->task;

	/* an exiting thread's last figures are taken at its exit (below):
	 * after user space reported them its entry is gone, and a second
	 * look here would count a thread born during the recording twice */
	if (!p || (p->flags & NT_PF_EXITING))
		return 0;
	if (nt_iter_mode)
		nt_observe(p);
	else
		nt_settle(p);
	return 0;
}

/* hub member (bpf/hub.h), last on sched_switch */
HUB_PROG_ARRAY(hub_sched_switch);

SEC("tp_btf/sched_switch")
int BPF_PROG(nt_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	nt_switch(preempt, prev, next, prev_state);
	HUB_NEXT(ctx, hub_sched_switch, HUB_SLOT_THREADS);
	return 0;
}

/* With the sched_switch program, at the exit of p (current): its runtime
 * so far charged, and this CPU's switch-in figure moved to it. User space
 * may drop the entry before the thread's last switch-out; that switch-out
 * then counts from here, not from the switch-in: what the iterator settled
 * of this stretch is not counted again. */
static __always_inline struct nt_thread *nt_exit_switch(struct task_struct *p, __u32 tid)
{
	struct nt_thread *t = bpf_map_lookup_elem(&nt_threads, &tid);
	__u64 exec = p->se.sum_exec_runtime;
	__u32 zero = 0;
	struct nt_cpu *c;

	if (!t || !nt_same_thread(t, p))
		return NULL;
	if (t->exec_last)
		nt_advance(t, exec);
	c = bpf_map_lookup_elem(&nt_cpus, &zero);
	if (c && c->tid == tid)
		c->exec_in = exec;
	return t;
}

/* The thread's final figures with the iterator (its runtime is up to date
 * as of its last tick, switch or clock read); the switch program takes the
 * rest at its last switch-out. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(nt_process_exit, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct nt_thread *t;

	if (!tid)
		return 0;
	if (nt_iter_mode)
		t = nt_observe(p);
	else
		t = nt_exit_switch(p, tid);
	if (t)
		t->flags |= NT_F_EXITED;
	return 0;
}
