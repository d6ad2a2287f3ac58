// SPDX-License-Identifier: GPL-2.0
/* Network CPU cost (netto thesis ch. 4-5) with tracepoints only:
 *  - NET_RX / NET_TX softirq time: at --netcpu sample (the default)
 *    estimated by the socket sampler's timer (preempt_count says softirq,
 *    the stack says which vector); exact from irq:softirq_entry/exit at
 *    --netcpu exact (the sampled figure then its cross-check);
 *  - socket send / receive time: the entry of a syscall that can be a
 *    socket op only stamps a per-CPU slot (no fd walk); the socket layer's
 *    own sock:sock_send_length / sock_recv_length tracepoints, which fire
 *    only for socket ops, in the caller's context and with the socket,
 *    apply the filters and charge the op; no sys_exit hooks;
 *  - the op clock stops under any softirq on that CPU and while the task
 *    is switched out (parked in task storage, created only then), and
 *    restarts on the CPU the task comes back on (netto §4.2), so every ns
 *    lands on the CPU that spent it;
 *  - the kernel stack is sampled while NET_RX runs, on the scheduler tick
 *    (hrtimer_expire_entry of the tick's hrtimer) or on a perf_event
 *    cpu-clock timer (--sample-hz N).
 * All counters are per-CPU and monotonic; user space stores differences.
 * docs/NETCPU.md explains why this shape is the cheap one. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "filter.bpf.h"
#include "netcpu.h"
#include "hub.bpf.h"

/* BPF_PROG() declares ctx and every tracepoint argument, used or not */
#pragma clang diagnostic ignored "-Wunused-parameter"

char LICENSE[] SEC("license") = "GPL";

/* Filters (filter.bpf.h) apply to socket ops only: softirq time belongs
 * to no task and no socket. */

/* selector of the stack count map, flipped by user space every interval */
__u32 nc_slot = 0;

/* socket ops parked in task storage right now (blocked or preempted):
 * sched_switch looks up the next task's storage only while some op is
 * parked. A parked task always runs again before it exits, which unparks. */
__s64 nc_parked = 0;

#include "netcpu.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct nc_task);
} nc_tasks SEC(".maps");

/* NET_RX stack counts keyed by the stack itself. Not preallocated (a
 * key is 520 bytes); user space sizes it for two intervals of samples
 * (record/families/netcpu.c nc_count_map_size), so at the sampling rate
 * asked for an insert does not fail for want of room. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct nc_stack_key);
	__type(value, __u64);
} nc_stack_counts SEC(".maps");

/* x86_64 syscall numbers of the calls that can be socket operations */
#define NC_NR_READ      0
#define NC_NR_WRITE     1
#define NC_NR_READV     19
#define NC_NR_WRITEV    20
#define NC_NR_SENDTO    44
#define NC_NR_RECVFROM  45
#define NC_NR_SENDMSG   46
#define NC_NR_RECVMSG   47
#define NC_NR_RECVMMSG  299
#define NC_NR_SENDMMSG  307

#define NC_F_COUNTED 0x1    /* the op's call is counted (later messages of *mmsg) */
#define NC_F_ENDING  0x2    /* nc_op_done has read the op's end: the exact
			     * clock no longer runs though the slot is still
			     * set (the sampler's probe count, nc_exact_runs) */

static __always_inline struct nc_cpu *nc_this_cpu(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&nc_cpus, &zero);
}

static __always_inline bool nc_syscall_listed(long id)
{
	switch (id) {
	case NC_NR_SENDTO: case NC_NR_SENDMSG: case NC_NR_SENDMMSG:
	case NC_NR_WRITE: case NC_NR_WRITEV:
	case NC_NR_RECVFROM: case NC_NR_RECVMSG: case NC_NR_RECVMMSG:
	case NC_NR_READ: case NC_NR_READV:
		return true;
	}
	return false;
}

/* Stamps the slot of this CPU for the current task's syscall nr. Whether
 * it is a socket op is learnt at sock_*_length; a call that never gets
 * there (read() of a pipe) leaves a stale slot that the next stamp
 * overwrites or the next switch drops: it is never charged. */
static __always_inline int nc_op_enter(long nr, unsigned long fd)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct nc_cpu *c;

	if (!rc_filter_pid(id >> 32))
		return 0;
	c = nc_this_cpu();
	if (!c)
		return 0;
	c->op_ts = bpf_ktime_get_ns();
	c->op_start = c->op_ts;
	c->last_tid = 0;
	c->op_acc = 0;
	c->op_nested = 0;
	c->op_rcpu = 0;
	c->op_rns = 0;
	c->op_flags = 0;
	c->op_nr = (__u32)nr;
	c->op_fd = (__u32)fd;
	c->op_tid = (__u32)id;
	return 0;
}

static __always_inline void nc_slot_clear(struct nc_cpu *c)
{
	c->op_tid = 0;
	c->op_ts = 0;
}

/* The op of the slot completed as a socket op of class kind on this CPU:
 * its on-CPU ns here, the part that ran on another CPU (charged there,
 * atomically: that CPU writes its own counters without atomics only in
 * ns[], never in ns_remote[]) and the softirq ns taken out of it. */
static __always_inline void nc_charge(struct nc_cpu *c, int kind, __u64 now)
{
	__u64 d = c->op_acc;
	__u32 rcpu = c->op_rcpu, zero = 0;
	struct nc_cpu *r;

	if (c->op_ts && now > c->op_ts)
		d += now - c->op_ts;
	c->ns[kind] += d;
	if (!(c->op_flags & NC_F_COUNTED))
		c->n[kind]++;
	c->nested_ns += c->op_nested;
	if (rcpu) {
		r = bpf_map_lookup_percpu_elem(&nc_cpus, &zero, rcpu - 1);
		if (r)
			__sync_fetch_and_add(&r->ns_remote[kind], c->op_rns);
	}
}

/* A socket call of ours that has no stamp of its own: counted, not
 * clocked. Runs only on the calls without a stamp, where the filters'
 * cost does not add to a clocked call's time. */
static __always_inline void nc_unclocked(struct nc_cpu *c, struct sock *sk, int kind)
{
	if (!rc_filter_pid(bpf_get_current_pid_tgid() >> 32) || !rc_filter_sk(sk) ||
	    (rc_filter_cgroup_id && bpf_get_current_cgroup_id() != rc_filter_cgroup_id))
		return;
	c->unclocked[kind == NC_SOCK_SEND ? 0 : 1]++;
}

/* sock_send_length / sock_recv_length: the end of the socket layer's part
 * of the op (the syscall's tail to its exit is not counted). */
static __always_inline int nc_op_done(struct sock *sk, int kind)
{
	struct nc_cpu *c = nc_this_cpu();
	struct task_struct *t;
	struct pt_regs *regs;
	__u64 now;

	if (!c)
		return 0;
	if (!c->op_tid) {
		nc_unclocked(c, sk, kind);
		return 0;
	}
	/* the op's end, read before this program's own checks: the exact
	 * clock holds as little of its own probes as it can (the sampler
	 * leaves them out, bpf/netcpu.bpf.c nc_count_probe) */
	now = bpf_ktime_get_ns();
	c->op_flags |= NC_F_ENDING;
	t = bpf_get_current_task_btf();
	/* a socket op of a syscall we did not stamp (sendfile, splice) must
	 * not complete a stale slot of an earlier call */
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (c->op_tid != (__u32)t->pid || !regs || regs->orig_ax != c->op_nr) {
		c->op_flags &= ~NC_F_ENDING;
		nc_unclocked(c, sk, kind);
		return 0;
	}
	/* for txn, which may run after us on this tracepoint (bpf/txn.bpf.c,
	 * req_start) */
	c->last_tid = c->op_tid;
	c->last_nr = c->op_nr;
	c->last_start = c->op_start;
	if (!rc_filter_sk(sk) ||
	    (rc_filter_cgroup_id && bpf_get_current_cgroup_id() != rc_filter_cgroup_id)) {
		nc_slot_clear(c);
		return 0;
	}
	nc_charge(c, kind, now);
	if (c->op_nr == NC_NR_SENDMMSG || c->op_nr == NC_NR_RECVMMSG) {
		/* more messages may follow in this call: go on from here */
		c->op_ts = now;
		c->op_acc = 0;
		c->op_nested = 0;
		c->op_rcpu = 0;
		c->op_rns = 0;
		c->op_flags = (c->op_flags | NC_F_COUNTED) & ~NC_F_ENDING;
		return 0;
	}
	nc_slot_clear(c);
	return 0;
}

/* hub members (bpf/hub.h): the last in the chain on both socket hooks,
 * so the op's time includes the other families' programs, as it did when
 * each attached its own */
HUB_PROG_ARRAY(hub_sock_send);
HUB_PROG_ARRAY(hub_sock_recv);
HUB_PROG_ARRAY(hub_sched_switch);

SEC("tp_btf/sock_send_length")
int BPF_PROG(nc_send_len, struct sock *sk, int ret, int flags)
{
	nc_op_done(sk, NC_SOCK_SEND);
	HUB_NEXT(ctx, hub_sock_send, HUB_SLOT_NETCPU);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(nc_recv_len, struct sock *sk, int ret, int flags)
{
	nc_op_done(sk, NC_SOCK_RECV);
	HUB_NEXT(ctx, hub_sock_recv, HUB_SLOT_NETCPU);
	return 0;
}

/* Variant 1 (preferred): one classic tracepoint per listed syscall, so
 * the other syscalls of the machine run no program of ours. */
#define NC_SYSCALL_TP(name)                                                    \
SEC("tracepoint/syscalls/sys_enter_" #name)                                   \
int nc_enter_##name(struct trace_event_raw_sys_enter *ctx)                    \
{                                                                             \
	return nc_op_enter(ctx->id, ctx->args[0]);                            \
}

NC_SYSCALL_TP(sendto)
NC_SYSCALL_TP(sendmsg)
NC_SYSCALL_TP(sendmmsg)
NC_SYSCALL_TP(write)
NC_SYSCALL_TP(writev)
NC_SYSCALL_TP(recvfrom)
NC_SYSCALL_TP(recvmsg)
NC_SYSCALL_TP(recvmmsg)
NC_SYSCALL_TP(read)
NC_SYSCALL_TP(readv)

/* Variant 2 (fallback when those do not load or attach): tp_btf on
 * raw_syscalls:sys_enter, one program for every syscall of the machine,
 * returning at once unless it is a listed call. */
SEC("tp_btf/sys_enter")
int BPF_PROG(nc_sys_enter, struct pt_regs *regs, long id)
{
	return nc_syscall_listed(id) ? nc_op_enter(id, regs->di) : 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(nc_softirq_entry, unsigned int vec)
{
	struct nc_cpu *c = nc_this_cpu();
	__u64 now;

	if (!c)
		return 0;
	/* the socket-time sampler leaves softirq time out (as the exact
	 * clock does), whatever the vector */
	c->sirq_any = 1;
	/* timer/RCU/... softirqs matter only when they interrupt an op: no
	 * clock read for them otherwise (the exit sees sirq_ts 0) */
	if (vec != NC_VEC_NET_RX && vec != NC_VEC_NET_TX && !c->op_ts)
		return 0;
	now = bpf_ktime_get_ns();
	c->sirq_ts = now;
	c->sirq_vec = vec;
	/* the interrupted op does not own this time; the slot is the current
	 * task's (sched_switch keeps it so) */
	if (c->op_ts) {
		if (now > c->op_ts)
			c->op_acc += now - c->op_ts;
		c->op_ts = 0;
	}
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(nc_softirq_exit, unsigned int vec)
{
	struct nc_cpu *c = nc_this_cpu();
	__u64 d = 0, now;
	bool net = vec == NC_VEC_NET_RX || vec == NC_VEC_NET_TX;

	if (!c)
		return 0;
	c->sirq_any = 0;
	if (!c->sirq_ts)
		return 0;
	now = bpf_ktime_get_ns();
	if (now > c->sirq_ts) {
		d = now - c->sirq_ts;
		if (net) {
			__u32 k = vec == NC_VEC_NET_RX ? NC_NET_RX : NC_NET_TX;
			c->ns[k] += d;
			c->n[k]++;
		}
	}
	c->sirq_ts = 0;
	if (c->op_tid && !c->op_ts) {
		if (net)
			c->op_nested += d;
		c->op_ts = now;
	}
	return 0;
}

#define NC_S_IFMT   0170000
#define NC_S_IFSOCK 0140000

/* The file behind fd of task t when it is a socket, else NULL. Costs a
 * few hundred ns (probe reads through the fd table): done only when an op
 * in flight is switched out (so that blocking read()s of pipes, ttys and
 * files are not parked) and in the socket-time sampler. */
/* t may be another CPU's task (nc_sample_remote): probe reads throughout. */
static __always_inline struct file *nc_fd_sock_file(struct task_struct *t, unsigned long fd)
{
	struct files_struct *files = BPF_CORE_READ(t, files);
	struct fdtable *fdt;
	struct file *f = NULL, **fds;

	if (!files)
		return NULL;
	fdt = BPF_CORE_READ(files, fdt);
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (!fds || bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	if ((BPF_CORE_READ(f, f_inode, i_mode) & NC_S_IFMT) != NC_S_IFSOCK)
		return NULL;
	return f;
}

/* The socket's struct sock (filters), NULL when fd is no socket. */
static __always_inline struct sock *nc_fd_sock(struct task_struct *t, unsigned long fd)
{
	struct file *f = nc_fd_sock_file(t, fd);
	struct socket *so = f ? BPF_CORE_READ(f, private_data) : NULL;

	return so ? BPF_CORE_READ(so, sk) : NULL;
}

/* prev leaves this CPU in the middle of an op: move the slot into its task
 * storage. A slot whose syscall is over (prev now in another syscall or
 * preempted in user mode: orig_ax differs) or whose fd is no socket is
 * dropped. */
static __always_inline void nc_park(struct nc_cpu *c, struct task_struct *prev, __u64 now)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	struct nc_task *s;

	if (c->op_tid != (__u32)prev->pid || !regs || regs->orig_ax != c->op_nr ||
	    !nc_fd_sock_file(prev, c->op_fd))
		goto out;
	s = bpf_task_storage_get(&nc_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s)
		goto out;
	s->acc = c->op_acc;
	if (c->op_ts && now > c->op_ts)
		s->acc += now - c->op_ts;
	s->rns = c->op_rns;
	s->nested = c->op_nested;
	s->nr = c->op_nr;
	s->flags = c->op_flags;
	s->cpu = bpf_get_smp_processor_id();
	s->rcpu = c->op_rcpu;
	s->start = c->op_start;
	s->parked = 1;
	__sync_fetch_and_add(&nc_parked, 1);
out:
	nc_slot_clear(c);
}

/* next comes back with a parked op: the slot takes it over on this CPU;
 * what ran elsewhere becomes the remote part (a third CPU in one op is
 * merged into the most recent other CPU). */
static __always_inline void nc_unpark(struct nc_cpu *c, struct task_struct *next, __u64 now)
{
	struct nc_task *s = bpf_task_storage_get(&nc_tasks, next, 0, 0);
	__u32 cpu;

	if (!s || !s->parked)
		return;
	s->parked = 0;
	__sync_fetch_and_add(&nc_parked, -1);
	cpu = bpf_get_smp_processor_id();
	c->op_nested = s->nested;
	c->op_nr = s->nr;
	c->op_flags = s->flags;
	if (s->cpu == cpu) {
		c->op_acc = s->acc;
		c->op_rcpu = s->rcpu;
		c->op_rns = s->rns;
	} else if (s->rcpu == cpu + 1) {
		c->op_acc = s->rns;
		c->op_rcpu = s->cpu + 1;
		c->op_rns = s->acc;
	} else {
		c->op_acc = 0;
		c->op_rcpu = s->cpu + 1;
		c->op_rns = s->acc + s->rns;
	}
	c->op_ts = now;
	c->op_start = s->start;
	c->op_tid = next->pid;
}

/* When this CPU's __schedule() began (sched_entry_tp, kernel 6.16+; 0
 * without it): the switch's time boundary. __schedule() disables
 * interrupts right after it and the next task enables them again in
 * finish_task_switch(), so a timer that expires in between is taken in
 * the next task: a sampler charges the whole switch (for a CPU going
 * idle the newidle balancing too) to the task switched in. The exact
 * clock draws the line where the sampler does: prev's op stops at this
 * stamp instead of at the sched_switch tracepoint, next's op starts at
 * it. Without it prev's op kept the switch's irqs-off part, which no
 * timer sample can land in, and next's op lacked prev's part, where
 * samples land (1.7-2 us a switch here; docs/NETCPU.md "Sampled against
 * exact"). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} nc_sched_ts SEC(".maps");

/* A stamp older than this is no stamp of the running __schedule() (its
 * program was skipped): the tracepoint's own time is used then. */
#define NC_SCHED_TS_MAX_NS 1000000ull

SEC("tp_btf/sched_entry_tp")
int BPF_PROG(nc_sched_entry)
{
	__u32 zero = 0;
	__u64 *ts = bpf_map_lookup_elem(&nc_sched_ts, &zero);

	if (ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline __u64 nc_switch_time(void)
{
	__u32 zero = 0;
	__u64 *ts = bpf_map_lookup_elem(&nc_sched_ts, &zero), now = bpf_ktime_get_ns();

	if (ts && *ts && *ts <= now && now - *ts < NC_SCHED_TS_MAX_NS)
		return *ts;
	return now;
}

static __always_inline void nc_switch(struct task_struct *prev, struct task_struct *next)
{
	struct nc_cpu *c = nc_this_cpu();
	__u64 now = 0;

	if (!c)
		return;
	/* common case: no op in flight on this CPU and none parked anywhere */
	if (c->op_tid) {
		now = nc_switch_time();
		nc_park(c, prev, now);
	}
	if (nc_parked > 0) {
		if (!now)
			now = nc_switch_time();
		nc_unpark(c, next, now);
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(nc_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	nc_switch(prev, next);
	HUB_NEXT(ctx, hub_sched_switch, HUB_SLOT_NETCPU);
	return 0;
}

/* x86_64: the entry code sets pt_regs->ax to -ENOSYS before it calls the
 * syscall function and stores the return value there when it returns */
#define NC_AX_IN_SYSCALL ((__u64)-38)
#define NC_PF_KTHREAD 0x00200000    /* include/linux/sched.h */

static __always_inline bool nc_syscall_is_send(__u64 nr)
{
	return nr == NC_NR_SENDTO || nr == NC_NR_SENDMSG || nr == NC_NR_SENDMMSG ||
	       nr == NC_NR_WRITE || nr == NC_NR_WRITEV;
}

/* Socket-time sampler (--netcpu sample): the sampled CPU's task counts as
 * inside a socket op when its user-entry frame says it is in one of the
 * listed syscalls (orig_ax; an interrupt from user mode writes -1 there),
 * the syscall function has not returned yet (ax still -ENOSYS: the exit
 * work after it is left out, as sock_*_length leaves it out of the exact
 * clock), the interrupted instruction ip is not in the entry work (whose
 * irqs-off part delays a timer to where do_syscall_64 enables them: the
 * exact clock starts after it, at the sys_enter stamp; without this check
 * the sampler read 1.1-1.25 x the exact socket time, ~1.5 us per call on
 * the project VM), its first argument is a socket and the filters pass. Softirq
 * time was excluded by the caller. One sample stands for one sampling
 * period of on-CPU time (user space: x period, with a Poisson error). */
/* Kernel text of do_syscall_64, which holds the inlined syscall entry and
 * exit work (checked on the interrupted ip only: it is on every syscall's
 * stack): [lo, hi) from /proc/kallsyms, 0 = unknown. */
#define NC_ENTRY_RANGES 1
const volatile __u64 nc_entry_lo[NC_ENTRY_RANGES] = {};
const volatile __u64 nc_entry_hi[NC_ENTRY_RANGES] = {};

static __always_inline bool nc_in_entry_work(__u64 ip)
{
	for (int i = 0; i < NC_ENTRY_RANGES; i++)
		if (ip >= nc_entry_lo[i] && ip < nc_entry_hi[i])
			return true;
	return false;
}

/* Kernel text of the exact clock's two ends (the sys_enter and
 * sock_*_length tracepoints, whose programs run outside that clock,
 * nprec's own or another tracer's) and of the entry slow path: a sample
 * whose stack passes through one of them is not socket work. With
 * another recorder on the machine, programs there made the sampled figure
 * 1.07-1.27 x the exact one (rtest_netcpu); excluding every tracepoint
 * program instead (also those inside the socket layer, which the exact
 * clock counts) made it 0.80-0.91 x. */
#define NC_TRACE_RANGES 7
#define NC_SMP_DEPTH 32     /* deep enough for a helper called from a program (12 let txn's storage helpers through) */
const volatile __u64 nc_trace_lo[NC_TRACE_RANGES] = {};
const volatile __u64 nc_trace_hi[NC_TRACE_RANGES] = {};

/* One walk of the interrupted kernel stack per time sample, shared by the
 * softirq and tracer tests. perf_event_max_stack's default: a NET_RX
 * stack through bridge, netfilter and TCP under the tick's own interrupt
 * frames fits. */
#define NC_WALK_DEPTH 127

struct nc_walk {
	__u32 cpu, slot;            /* with ips[0..NC_STACK_DEPTH): a struct nc_stack_key */
	__u64 ips[NC_WALK_DEPTH];
	long len;                   /* bytes bpf_get_stack filled, <= 0 none */
};
_Static_assert(__builtin_offsetof(struct nc_walk, ips) == __builtin_offsetof(struct nc_stack_key, ips),
	       "struct nc_walk must start with a struct nc_stack_key");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nc_walk);
} nc_smp_stack SEC(".maps");

static __always_inline struct nc_walk *nc_walk_stack(void *ctx)
{
	__u32 zero = 0;
	struct nc_walk *w = bpf_map_lookup_elem(&nc_smp_stack, &zero);

	if (w)
		w->len = bpf_get_stack(ctx, w->ips, sizeof(w->ips), 0);
	return w;
}

/* The three scans of a walk are global functions: verified once each,
 * not once per call site and path (nc_sample, with every path, went over
 * the verifier's 1 M instructions when they were inlined). */
__noinline int nc_in_tracer(const struct nc_walk *w)
{
	if (!w || !nc_trace_lo[0] || w->len <= 0)
		return false;
	for (int f = 0; f < NC_SMP_DEPTH; f++) {
		if (f * (long)sizeof(__u64) >= w->len)
			break;
		for (int i = 0; i < NC_TRACE_RANGES; i++)
			if (w->ips[f] >= nc_trace_lo[i] && w->ips[f] < nc_trace_hi[i])
				return true;
	}
	return false;
}

/* Softirq without the entry/exit pair (--netcpu sample; nc_sirq_clock 0):
 * a sample is in a softirq when the interrupted stack passes through the
 * softirq loop (handle_softirqs, __do_softirq: softirqs run from irq exit,
 * local_bh_enable and ksoftirqd all go there), and in NET_RX / NET_TX when
 * the vector's action comes first, walking out from the leaf (softirqs do
 * not nest). preempt_count would say softirq without a walk, but on
 * kernels without CONFIG_KALLSYMS_ALL (the project VM's) its per-CPU
 * variable has no address a program can load. Text ranges from
 * /proc/kallsyms, indexed by enum nc_sirq_vec then the loop's two. */
#define NC_VEC_RANGES 4
const volatile __u64 nc_vec_lo[NC_VEC_RANGES] = {};
const volatile __u64 nc_vec_hi[NC_VEC_RANGES] = {};
const volatile __u32 nc_sirq_clock = 1;

/* enum nc_sirq_vec of the walked stack, -1 outside softirq */
__noinline int nc_sirq_vector(const struct nc_walk *w)
{
	if (!w || w->len <= 0)
		return -1;
	for (int f = 0; f < NC_WALK_DEPTH; f++) {
		if (f * (long)sizeof(__u64) >= w->len)
			break;
		for (int i = 0; i < NC_VEC_RANGES; i++)
			if (w->ips[f] >= nc_vec_lo[i] && w->ips[f] < nc_vec_hi[i])
				return i < NC_SV_OTHER ? i : NC_SV_OTHER;
	}
	return -1;
}

/* Whether the interrupted instruction is in the softirq loop itself
 * (handle_softirqs, __do_softirq), outside every vector's action. A timer
 * that expires in a hardirq (the tick, another timer) or in the loop's
 * irqs-off prologue is taken where the loop enables interrupts, so such a
 * sample stands for the hardirq's time or the loop's, both of which the
 * exact clock counts as the interrupted op's (it stops at a vector's
 * softirq_entry only). 14-18 % of the socket samples of veth iperf3 were
 * there, 95 % of them under an apic timer interrupt's exit (j29d). */
static __always_inline bool nc_at_sirq_loop(__u64 ip)
{
	return (ip >= nc_vec_lo[NC_SV_OTHER] && ip < nc_vec_hi[NC_SV_OTHER]) ||
	       (ip >= nc_vec_lo[NC_SV_OTHER + 1] && ip < nc_vec_hi[NC_SV_OTHER + 1]);
}

#define NC_KSOFTIRQD 0x717269746f66736bULL    /* "ksoftirq", little-endian */

/* &__preempt_count - &runqueues in the per-CPU section, from vmlinux BTF
 * (record/families/netcpu.c nc_preempt_delta); 0 = unknown. Neither
 * per-CPU variable has a kallsyms address here (no CONFIG_KALLSYMS_ALL),
 * but this CPU's runqueue is reachable from the current task, and both
 * live at the same distance in every CPU's copy of the section. */
const volatile __s64 nc_pc_delta = 0;

#define NC_SOFTIRQ_OFFSET 0x100     /* preempt_count: serving a softirq */
#define NC_HARDIRQ_MASK   0xf0000

/* Whether the interrupted code serves a softirq, from this CPU's
 * preempt_count: 1 yes, 0 no, -1 unknown (no delta, or the value read
 * lacks the hardirq count the timer interrupt we run in must have set:
 * then the address is wrong and the walk decides). */
static __always_inline int nc_pc_softirq(struct task_struct *t)
{
	struct cfs_rq *cfs;
	struct rq *rq;
	__u32 pc = 0;

	/* cfs_rq.rq exists with CONFIG_FAIR_GROUP_SCHED only */
	if (!nc_pc_delta || !bpf_core_field_exists(struct cfs_rq, rq) ||
	    !bpf_core_field_exists(struct rq, cpu))
		return -1;
	cfs = t->se.cfs_rq;
	rq = cfs ? BPF_CORE_READ(cfs, rq) : NULL;
	if (!rq || BPF_CORE_READ(rq, cpu) != (int)bpf_get_smp_processor_id() ||
	    bpf_probe_read_kernel(&pc, sizeof(pc), (char *)rq + nc_pc_delta) ||
	    !(pc & NC_HARDIRQ_MASK))
		return -1;
	return (pc & NC_SOFTIRQ_OFFSET) != 0;
}

/* Whether the interrupted kernel code (stack pointer sp) cannot be in a
 * softirq, told without a walk: it runs on the current task's own stack
 * ([t->stack, its user pt_regs)), and that task is the idle task, a
 * kthread other than ksoftirqd, or a user task inside a syscall. On
 * x86_64 a softirq runs on the per-CPU irq stack when it comes from an
 * interrupt's exit in kernel mode or from local_bh_enable
 * (do_softirq_own_stack), and on the task stack only in ksoftirqd or at
 * the exit of an interrupt from user mode (then the task's orig_ax is -1,
 * no syscall). A walk costs ~3.5 us plus ~1.5 us a frame on the project
 * VM; most samples of idle and busy-but-not-networking CPUs need none.
 * False (walk) whenever unsure. The exact pair's cross-check counts what
 * this misses (smp_sirq_missed). */
static __always_inline bool nc_sirq_impossible(struct task_struct *t, __u64 sp)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 comm = 0;

	if (!regs || sp < (__u64)t->stack || sp >= (__u64)regs)
		return false;
	if (!t->pid)
		return true;
	if (t->flags & NC_PF_KTHREAD) {
		bpf_probe_read_kernel(&comm, sizeof(comm), t->comm);
		return comm != NC_KSOFTIRQD;
	}
	return (__s64)regs->orig_ax >= 0;
}

static __always_inline void nc_count_sirq(struct nc_cpu *c, int vec)
{
	/* constant indexes: a checked variable one was spilled unchecked by
	 * the compiler once (the verifier refused it) */
	if (vec == NC_SV_RX)
		c->smp_sirq[NC_SV_RX]++;
	else if (vec == NC_SV_TX)
		c->smp_sirq[NC_SV_TX]++;
	else if (vec == NC_SV_OTHER)
		c->smp_sirq[NC_SV_OTHER]++;
}

/* One time sample (the socket sampler's timer): in a softirq it counts
 * for the vector the walk found (in exact mode too: the cross-check of the
 * estimate), outside for socket time. With the exact pair running, the
 * pair says whether a softirq runs (as it stops the exact socket clock). */
static __always_inline void nc_sample_sock(void *ctx, struct nc_walk **wp, struct nc_cpu *c,
					   struct task_struct *t, __u64 ip, bool sirq);

static __always_inline void nc_count_pair_probe(struct nc_cpu *c, struct task_struct *t);

/* what a time sample counts of its own CPU's socket calls */
#define NC_SOCK_NONE 0      /* nothing (the stack sampler's timer) */
#define NC_SOCK_LOCAL 1     /* socket time outside softirqs */
#define NC_SOCK_CALL 2      /* that, and the call's time under softirqs apart
			     * (the remote sampler's combined estimate) */

/* *wp gets the walk if one was taken (NULL: none was needed). */
static __always_inline int nc_time_sample(struct bpf_perf_event_data *ctx, struct nc_cpu *c,
					  struct nc_walk **wp, int sock)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct nc_walk *w = NULL;
	int vec = -1, sirq = nc_pc_softirq(t);

	if (sirq < 0)
		c->smp_pc_unknown++;
	if (sirq > 0 || (sirq < 0 && !nc_sirq_impossible(t, PT_REGS_SP(&ctx->regs)))) {
		w = nc_walk_stack(ctx);
		vec = nc_sirq_vector(w);
		/* a softirq whose walk shows no vector action (cut short) */
		if (sirq > 0 && vec < 0)
			vec = NC_SV_OTHER;
		/* --netcpu sample: a sample taken at the loop itself is not
		 * softirq work (nc_at_sirq_loop); exact mode decides by the pair */
		if (!nc_sirq_clock && vec == NC_SV_OTHER && nc_at_sirq_loop(PT_REGS_IP(&ctx->regs)))
			vec = -1;
	}

	nc_count_sirq(c, vec);
	/* exact mode, the cross-check's counts: inside the exact NET_RX
	 * window but outside net_rx_action, i.e. the pair's own programs (and
	 * the tracepoint code around them), which the exact clock counts and
	 * sampled mode does not have; and the converse, which should not be */
	if (nc_sirq_clock) {
		bool win = c->sirq_ts && c->sirq_vec == NC_VEC_NET_RX;

		if (win && vec != NC_SV_RX)
			c->smp_rx_probe++;
		else if (!win && vec == NC_SV_RX)
			c->smp_rx_stray++;
		/* a softirq runs but the walk found none: at --netcpu sample
		 * such a sample could count as socket time (the converse, the
		 * walk in the softirq loop outside a vector's window, is the
		 * loop and the pair's own programs: 27 % of the softirq
		 * samples on loopback iperf3) */
		if (c->sirq_any && vec < 0)
			c->smp_sirq_missed++;
	}
	if (sock != NC_SOCK_NONE && nc_sirq_clock && c->sirq_any && c->op_ts)
		nc_count_pair_probe(c, t);
	if (sock != NC_SOCK_NONE && (nc_sirq_clock ? !c->sirq_any : vec < 0))
		nc_sample_sock(ctx, &w, c, t, PT_REGS_IP(&ctx->regs), false);
	else if (sock == NC_SOCK_CALL)
		nc_sample_sock(ctx, &w, c, t, PT_REGS_IP(&ctx->regs), true);
	*wp = w;
	return vec;
}

/* Whether the walk got down to the syscall entry (do_syscall_64): a walk
 * cut short (the unwinder stops in some BPF programs, e.g. at their
 * prologue) cannot show the tracer frames nc_in_tracer looks for, so
 * such a sample is not counted as socket time (smp_sock_cut). */
__noinline int nc_walk_reaches_entry(const struct nc_walk *w)
{
	if (!nc_entry_lo[0])
		return true;
	if (!w || w->len <= 0)
		return false;
	for (int f = 0; f < NC_WALK_DEPTH; f++) {
		if (f * (long)sizeof(__u64) >= w->len)
			break;
		if (w->ips[f] >= nc_entry_lo[0] && w->ips[f] < nc_entry_hi[0])
			return true;
	}
	return false;
}

/* Exact mode: a socket sample left out (in a tracer, or a walk cut short
 * in a BPF program) while the exact clock runs for the task is the exact
 * clock's own probes (the stamp program after its clock read, the
 * sock_*_length dispatch and end program before it): time the exact
 * figure holds and the sampled one, like --netcpu sample that has no such
 * probes, does not. Counted apart so the cross-check compares the same
 * time (at --netcpu sample no slot is ever stamped: 0). */
const volatile __u32 nc_sock_clock = 0;    /* the exact socket clock runs (--netcpu exact) */

static __always_inline bool nc_exact_runs(struct nc_cpu *c, struct task_struct *t, __u64 nr)
{
	return c->op_tid == (__u32)t->pid && c->op_ts && c->op_nr == (__u32)nr &&
	       !(c->op_flags & NC_F_ENDING);
}

static __always_inline void nc_count_probe(struct nc_cpu *c, struct task_struct *t, __u64 nr)
{
	if (nc_sock_clock && nc_exact_runs(c, t, nr))
		c->smp_sock_probe[nc_syscall_is_send(nr) ? 0 : 1]++;
}

/* Exact mode: the softirq flag is set but the exact clock still runs for
 * the task: the sample fell in the pair's softirq_entry program before its
 * clock read (inside the softirq). The exact clock holds that time, this
 * sample's own stall included, as the op's; the sampler calls it softirq,
 * as the default's preempt_count does: a probe sample of the exact clock's
 * own programs. 1.5-2.3 % of the exact send time of veth HTTP, whose send
 * calls run the peer's NET_RX inside (docs/NETCPU.md j32g). */
static __always_inline void nc_count_pair_probe(struct nc_cpu *c, struct task_struct *t)
{
	struct pt_regs *regs;
	struct sock *sk;

	if (!nc_sock_clock || !t->pid || (t->flags & NC_PF_KTHREAD))
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs || !nc_exact_runs(c, t, regs->orig_ax) || regs->ax != NC_AX_IN_SYSCALL)
		return;
	sk = nc_fd_sock(t, regs->di);
	if (!sk || !rc_filter_sk(sk))
		return;
	c->smp_sock_probe[nc_syscall_is_send(regs->orig_ax) ? 0 : 1]++;
}

/* sirq: the sample is under a softirq (NC_SOCK_CALL); it counts as the
 * call's time under softirqs (smp_sock_sirq) when the task is in a socket
 * call, by the same checks but the entry work's (the interrupted ip is
 * the softirq's). */
static __always_inline void nc_sample_sock(void *ctx, struct nc_walk **wp, struct nc_cpu *c,
					   struct task_struct *t, __u64 ip, bool sirq)
{
	struct nc_walk *w = *wp;
	struct pt_regs *regs;
	struct sock *sk;
	__u64 nr;

	if (!t->pid || (t->flags & NC_PF_KTHREAD))
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs)
		return;
	nr = regs->orig_ax;
	if (!nc_syscall_listed((long)nr) || regs->ax != NC_AX_IN_SYSCALL || (!sirq && nc_in_entry_work(ip)))
		return;
	if (!rc_filter_pid(t->tgid) ||
	    (rc_filter_cgroup_id && bpf_get_current_cgroup_id() != rc_filter_cgroup_id))
		return;
	sk = nc_fd_sock(t, regs->di);
	if (!sk || !rc_filter_sk(sk))
		return;
	/* the walk is taken here when the softirq test needed none */
	if (!w)
		*wp = w = nc_walk_stack(ctx);
	if (sirq) {
		if (!nc_in_tracer(w) && nc_walk_reaches_entry(w))
			c->smp_sock_sirq[nc_syscall_is_send(nr) ? 0 : 1]++;
		return;
	}
	if (nc_in_tracer(w)) {
		nc_count_probe(c, t, nr);
		return;
	}
	if (!nc_walk_reaches_entry(w)) {
		c->smp_sock_cut[nc_syscall_is_send(nr) ? 0 : 1]++;
		nc_count_probe(c, t, nr);
		return;
	}
	c->smp_sock[nc_syscall_is_send(nr) ? 0 : 1]++;
	/* the converse of a probe sample: the sampler's time that the exact
	 * clock does not hold (exact mode's cross-check only) */
	if (nc_sock_clock && !nc_exact_runs(c, t, nr))
		c->smp_sock_outside[nc_syscall_is_send(nr) ? 0 : 1]++;
}

/* Address of the scheduler tick's hrtimer function (tick_nohz_handler,
 * tick_sched_timer on older kernels), from /proc/kallsyms; 0 = no tick
 * source (nc_tick is then not loaded). */
const volatile __u64 nc_tick_fn = 0;

/* Counts the NET_RX sample's stack (the walk w: bpf_get_stack zero-fills
 * past the frames it found, so the first NC_STACK_DEPTH are the key) in
 * this interval's slot. User space cuts the frames outside net_rx_action,
 * which only split the counts (record/families/netcpu.c nc_take_counts). */
static __always_inline void nc_count_stack(struct nc_cpu *c, struct nc_walk *w)
{
	__u64 one = 1, *cnt;

	if (!w || w->len <= 0) {
		c->stack_lost++;
		return;
	}
	w->cpu = bpf_get_smp_processor_id();
	w->slot = nc_slot & 1;
	cnt = bpf_map_lookup_elem(&nc_stack_counts, w);
	if (cnt) {
		__sync_fetch_and_add(cnt, 1);
		return;
	}
	/* no other CPU inserts this key (its cpu field differs), and the
	 * two timers that call this do not nest: only a full map (or no
	 * memory) fails here */
	if (bpf_map_update_elem(&nc_stack_counts, w, &one, BPF_NOEXIST))
		c->stack_lost++;
}

/* One sample of this CPU: counted always, its kernel stack taken and
 * counted when NET_RX runs; with sock, a socket-time sample otherwise. Shared by both sampling sources; ctx is the
 * program's context, which bpf_get_stack walks from (the interrupted
 * context for perf_event, the tracepoint's own frames for tp_btf, stripped
 * in user space: record/families/netrxcat.c nc_strip_irq). */
/* sock: NC_SOCK_* (NONE: no time sample, the stack sampler's timer) */
static __always_inline int nc_sample_body(void *ctx, int sock)
{
	struct nc_cpu *c = nc_this_cpu();
	struct nc_walk *w = NULL;
	int vec = -1;
	bool rx;

	if (!c)
		return 0;
	c->samples++;
	/* the tick with the exact pair needs no walk to decide: the pair
	 * says NET_RX */
	if (sock != NC_SOCK_NONE) {
		vec = nc_time_sample(ctx, c, &w, sock);
	} else if (!nc_sirq_clock) {
		w = nc_walk_stack(ctx);
		vec = nc_sirq_vector(w);
	}
	rx = nc_sirq_clock ? c->sirq_ts && c->sirq_vec == NC_VEC_NET_RX : vec == NC_SV_RX;
	if (!rx)
		return 0;
	c->samples_netrx++;
	/* the exact pair's NET_RX where no walk was needed to decide */
	if (!w)
		w = nc_walk_stack(ctx);
	nc_count_stack(c, w);
	return 0;
}

/* Sampling source "cpu-clock": a perf_event timer per CPU at --sample-hz N.
 * Exact rate, idle CPUs sampled too, but every sample is an extra timer
 * interrupt (docs/NETCPU.md: expensive in a VM). */
SEC("perf_event")
int nc_sample(struct bpf_perf_event_data *ctx)
{
	return nc_sample_body(ctx, NC_SOCK_LOCAL);
}

/* --netcpu sample with the tick source asked for: the NET_RX stacks come
 * from this timer's samples instead (its walk says NET_RX already; a walk
 * at the tick cost ~20 us on the project VM, more than the exact pair it
 * replaced), and nc_tick is not loaded. */
const volatile __u32 nc_sock_stacks = 0;

/* Socket-time sampler of its own (perf_event cpu-clock at a rate that is
 * no multiple of HZ) when the stack sampler is the tick or off. Not the
 * tick: on a kernel without preemption a task whose slice ran out at a
 * tick goes on to the end of its syscall before it yields, so the moments
 * right after a tick belong to socket ops more often than the moments at
 * it; the tick sampled 40-80 % of the exact socket time on the 2-CPU
 * project VM under load, an independent timer 100-104 % (docs/NETCPU.md). */
SEC("perf_event")
int nc_sock_sample(struct bpf_perf_event_data *ctx)
{
	struct nc_cpu *c;
	struct nc_walk *w;

	if (nc_sock_stacks)
		return nc_sample_body(ctx, NC_SOCK_LOCAL);
	c = nc_this_cpu();
	if (c)
		nc_time_sample(ctx, c, &w, NC_SOCK_LOCAL);
	return 0;
}

/* Remote split (two or more CPUs; the default for receive calls since
 * j33a, for send calls too with NPREC_TEST_SOCK_SAMPLER=remote:
 * docs/NETCPU.md "Receive calls: the split by the other CPU's timer",
 * j32c). A CPU's own timer finds its task inside
 * a socket call at the call's share, but the softirqs inside the call
 * less often than theirs where TCP paces on this VM: arming a pacing
 * hrtimer costs a ~13 us VM exit unless the CPU's own next timer event
 * comes first, which near the sampler's own expiry it does (j31d), so the
 * rest of the call is over-found (1.1-1.2 x exact for iperf3 receive
 * under BBR). Another CPU's timer has no such coupling. So the estimate
 * is combined: the call total from the CPU's own timer, with all its
 * checks (NC_SOCK_CALL: smp_sock + smp_sock_sirq), and its split between
 * the call's own work and softirqs from CPU i's timer reading the state
 * of CPU nc_rtarget[i] from memory (smp_rsock, smp_rsirq): the current
 * task of its runqueue, its preempt_count (softirq) and the task's
 * user-entry frame (syscall nr, -ENOSYS until the syscall function
 * returns, first argument). A remote read alone (j32c's first version)
 * cannot see the interrupted instruction or stack, so it counted the
 * syscall entry's slow path and tail as the call's (20-25 % of wrk's
 * samples beside an exact recorder): it sets the split only. The split
 * has a bias of its own: the remote read runs ~20 us into this CPU's
 * timer stop, and what the other CPU does then depends on it (a sender's
 * softirqs under Reno found 0.5-0.9 x the own timer's share, send 1.04-1.14
 * x exact), which is why it is not the default. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);     /* user space: the possible CPUs */
	__type(key, __u32);
	__type(value, __u32);       /* 1 + the CPU this CPU's timer samples, 0 none */
} nc_rtarget SEC(".maps");

/* task_pt_regs(t) - t->stack (x86_64: THREAD_SIZE less the frame and any
 * padding), taken from the first task a timer program finds */
__u64 nc_regs_off = 0;

/* This CPU's runqueue (as nc_pc_softirq finds it) for the other CPUs'
 * timers: once, from the first sample whose task's cfs_rq is this CPU's. */
static __always_inline void nc_publish_rq(struct nc_cpu *c)
{
	struct task_struct *t;
	struct cfs_rq *cfs;
	struct rq *rq;
	__u64 regs;

	if (c->rq_addr || !bpf_core_field_exists(struct cfs_rq, rq) ||
	    !bpf_core_field_exists(struct rq, cpu))
		return;
	t = bpf_get_current_task_btf();
	cfs = t->se.cfs_rq;
	rq = cfs ? BPF_CORE_READ(cfs, rq) : NULL;
	if (!rq || BPF_CORE_READ(rq, cpu) != (int)bpf_get_smp_processor_id())
		return;
	if (!nc_regs_off) {
		*(volatile __u64 *)&c->ptr_tmp = (__u64)bpf_task_pt_regs(t);
		regs = *(volatile __u64 *)&c->ptr_tmp;
		if (regs)
			nc_regs_off = regs - (__u64)BPF_CORE_READ(t, stack);
	}
	c->rq_addr = (__u64)rq;
}

/* The task on another CPU (rq->curr, read without its lock) in a socket
 * call: counted in c, this CPU's counters, outside or under a softirq
 * (exact mode: the pair's flag of CPU r, as for the local sampler). */
static __always_inline void nc_sample_remote(struct nc_cpu *c)
{
	__u32 me = bpf_get_smp_processor_id(), zero = 0, pc = 0, *tgt;
	struct task_struct *t;
	struct pt_regs *regs;
	struct nc_cpu *r;
	struct sock *sk;
	struct rq *rq;
	bool sirq;
	__u64 nr;

	tgt = bpf_map_lookup_elem(&nc_rtarget, &me);
	if (!tgt || !*tgt)
		return;
	r = bpf_map_lookup_percpu_elem(&nc_cpus, &zero, *tgt - 1);
	if (!r)
		return;
	rq = (struct rq *)r->rq_addr;
	if (!rq || !nc_regs_off) {
		c->smp_remote_unknown++;
		return;
	}
	if (bpf_probe_read_kernel(&pc, sizeof(pc), (char *)rq + nc_pc_delta)) {
		c->smp_pc_unknown++;
		return;
	}
	sirq = nc_sirq_clock ? r->sirq_any : pc & NC_SOFTIRQ_OFFSET;
	t = BPF_CORE_READ(rq, curr);
	if (!t || !BPF_CORE_READ(t, pid) || (BPF_CORE_READ(t, flags) & NC_PF_KTHREAD))
		return;
	regs = (struct pt_regs *)((__u64)BPF_CORE_READ(t, stack) + nc_regs_off);
	nr = BPF_CORE_READ(regs, orig_ax);
	if (!nc_syscall_listed((long)nr) || BPF_CORE_READ(regs, ax) != NC_AX_IN_SYSCALL)
		return;
	/* a tracing program runs on the task: a tracer's time, neither */
	if (bpf_core_field_exists(t->bpf_ctx) && BPF_CORE_READ(t, bpf_ctx))
		return;
	if (!rc_filter_pid(BPF_CORE_READ(t, tgid)) ||
	    (rc_filter_cgroup_id && BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id) != rc_filter_cgroup_id))
		return;
	sk = nc_fd_sock(t, BPF_CORE_READ(regs, di));
	if (!sk || !rc_filter_sk(sk))
		return;
	/* constant indexes (nc_count_sirq) */
	if (pc & NC_SOFTIRQ_OFFSET) {
		if (nc_syscall_is_send(nr))
			c->smp_rpc_sirq[0]++;
		else
			c->smp_rpc_sirq[1]++;
	}
	if (nc_syscall_is_send(nr)) {
		if (sirq)
			c->smp_rsirq[0]++;
		else
			c->smp_rsock[0]++;
	} else {
		if (sirq)
			c->smp_rsirq[1]++;
		else
			c->smp_rsock[1]++;
	}
}

/* The socket sampler's timer with remote socket samples: the timer runs
 * in user mode too (exclude_user 0: what the other CPU does owes nothing
 * to this one's mode); this CPU's softirq estimate (and NET_RX stacks)
 * from its kernel-mode samples as nc_sock_sample takes them. */
SEC("perf_event")
int nc_sock_sample_remote(struct bpf_perf_event_data *ctx)
{
	struct nc_cpu *c = nc_this_cpu();
	struct nc_walk *w;

	if (!c)
		return 0;
	nc_publish_rq(c);
	/* kernel text is in the upper half (a u64 context load: a narrower
	 * one of cs is refused) */
	if ((__s64)PT_REGS_IP(&ctx->regs) < 0) {
		if (nc_sock_stacks)
			nc_sample_body(ctx, NC_SOCK_CALL);
		else
			nc_time_sample(ctx, c, &w, NC_SOCK_CALL);
	}
	nc_sample_remote(c);
	return 0;
}

/* Sampling source "tick" (default): rides the scheduler tick the kernel
 * takes anyway, HZ times a second on a busy CPU, no extra interrupt. Every
 * other hrtimer expiry (TCP pacing, hrtimer sleeps, ...) only pays the
 * compare. */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(nc_tick, struct hrtimer *timer, ktime_t *now)
{
	if ((__u64)timer->function != nc_tick_fn)
		return 0;
	return nc_sample_body(ctx, NC_SOCK_NONE);
}
