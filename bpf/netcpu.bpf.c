// SPDX-License-Identifier: GPL-2.0
/* Network CPU cost (netto thesis ch. 4-5) with tracepoints only:
 *  - NET_RX / NET_TX softirq time from irq:softirq_entry/exit;
 *  - socket send / receive time from raw_syscalls:sys_enter/exit, limited
 *    to the socket syscalls and to read/write family calls on a socket fd;
 *  - the op clock lives in the task (task storage), stops under any softirq
 *    on that CPU and while the task is switched out, and restarts on the
 *    CPU the task comes back on (netto §4.2), so every ns lands on the CPU
 *    that spent it;
 *  - a perf_event program samples the kernel stack while NET_RX runs.
 * All counters are per-CPU and monotonic; user space stores differences. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "filter.bpf.h"
#include "netcpu.h"

/* BPF_PROG() declares ctx and every tracepoint argument, used or not */
#pragma clang diagnostic ignored "-Wunused-parameter"

char LICENSE[] SEC("license") = "GPL";

/* Filters (filter.bpf.h) apply to socket ops only: softirq time belongs
 * to no task and no socket. */

/* selector of the stack count map, flipped by user space every interval */
__u32 nc_slot = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nc_cpu);
} nc_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct nc_task);
} nc_tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 8192);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, NC_STACK_DEPTH * sizeof(__u64));
} nc_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct nc_stack_key);
	__type(value, __u64);
} nc_stack_counts SEC(".maps");

/* x86_64 syscall numbers of the calls that can be socket operations. All
 * take the fd as their first argument. */
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

#define NC_S_IFMT   0170000
#define NC_S_IFSOCK 0140000

static __always_inline struct nc_cpu *nc_this_cpu(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&nc_cpus, &zero);
}

/* NC_SOCK_SEND / NC_SOCK_RECV when the syscall is one when its fd is a
 * socket, else -1. */
static __always_inline int nc_syscall_kind(long id)
{
	switch (id) {
	case NC_NR_SENDTO: case NC_NR_SENDMSG: case NC_NR_SENDMMSG:
	case NC_NR_WRITE: case NC_NR_WRITEV:
		return NC_SOCK_SEND;
	case NC_NR_RECVFROM: case NC_NR_RECVMSG: case NC_NR_RECVMMSG:
	case NC_NR_READ: case NC_NR_READV:
		return NC_SOCK_RECV;
	}
	return -1;
}

/* The socket behind fd of task t, NULL when fd is not a socket. */
static __always_inline struct sock *nc_fd_sock(struct task_struct *t, unsigned long fd)
{
	/* direct (BTF) loads where the verifier allows them: cheaper than
	 * bpf_probe_read_kernel calls on this per-syscall path */
	struct files_struct *files = t->files;
	struct fdtable *fdt;
	struct file *f = NULL;
	struct socket *so;

	if (!files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || fd >= fdt->max_fds)
		return NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fdt->fd[fd]) || !f)
		return NULL;
	if ((BPF_CORE_READ(f, f_inode, i_mode) & NC_S_IFMT) != NC_S_IFSOCK)
		return NULL;
	so = BPF_CORE_READ(f, private_data);
	return so ? BPF_CORE_READ(so, sk) : NULL;
}

/* Stops the op clock of task state s (running on this CPU) at now. */
static __always_inline void nc_op_pause(struct nc_task *s, struct nc_cpu *c, __u64 now)
{
	/* one read of kind, masked: the verifier needs the bound on the
	 * register that indexes */
	__u32 kind = *(volatile __u32 *)&s->kind;
	__u64 ts = s->ts;

	if (kind < NC_CLASS_MAX && ts && now > ts)
		c->ns[kind & (NC_CLASS_MAX - 1)] += now - ts;
	s->ts = 0;
}

/* Starts the op clock of the current task when fd is a selected socket. */
static __always_inline int nc_op_enter(unsigned long fd, int kind)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct nc_task *s;
	struct nc_cpu *c;
	struct sock *sk = nc_fd_sock(t, fd);

	if (!sk || !rc_filter_sk_task(sk) || !rc_filter_task())
		return 0;
	s = bpf_task_storage_get(&nc_tasks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s)
		return 0;
	s->kind = kind;
	s->ts = bpf_ktime_get_ns();
	c = nc_this_cpu();
	if (c)
		c->op_running = 1;
	return 0;
}

/* Stops it and charges the op to this CPU. */
static __always_inline int nc_op_exit(void)
{
	struct nc_task *s;
	struct nc_cpu *c;
	__u64 now = bpf_ktime_get_ns();
	__u32 kind;

	s = bpf_task_storage_get(&nc_tasks, bpf_get_current_task_btf(), 0, 0);
	if (!s)
		return 0;
	kind = *(volatile __u32 *)&s->kind;
	if (kind >= NC_CLASS_MAX)
		return 0;
	c = nc_this_cpu();
	if (c) {
		nc_op_pause(s, c, now);
		c->n[kind & (NC_CLASS_MAX - 1)]++;
		c->op_running = 0;
	}
	s->kind = NC_KIND_NONE;
	return 0;
}

/* Variant 1 (preferred): one classic tracepoint per socket syscall, so the
 * other syscalls run no program at all. */
#define NC_SYSCALL_TP(name, kind)                                              \
SEC("tracepoint/syscalls/sys_enter_" #name)                                   \
int nc_enter_##name(struct trace_event_raw_sys_enter *ctx)                    \
{                                                                             \
	return nc_op_enter(ctx->args[0], kind);                               \
}                                                                             \
SEC("tracepoint/syscalls/sys_exit_" #name)                                    \
int nc_exit_##name(void *ctx)                                                 \
{                                                                             \
	return nc_op_exit();                                                  \
}

NC_SYSCALL_TP(sendto, NC_SOCK_SEND)
NC_SYSCALL_TP(sendmsg, NC_SOCK_SEND)
NC_SYSCALL_TP(sendmmsg, NC_SOCK_SEND)
NC_SYSCALL_TP(write, NC_SOCK_SEND)
NC_SYSCALL_TP(writev, NC_SOCK_SEND)
NC_SYSCALL_TP(recvfrom, NC_SOCK_RECV)
NC_SYSCALL_TP(recvmsg, NC_SOCK_RECV)
NC_SYSCALL_TP(recvmmsg, NC_SOCK_RECV)
NC_SYSCALL_TP(read, NC_SOCK_RECV)
NC_SYSCALL_TP(readv, NC_SOCK_RECV)

/* Variant 2 (fallback when the syscall tracepoints cannot be attached):
 * raw_syscalls, every syscall runs these and returns early unless it is
 * one of the socket calls. */
SEC("tp_btf/sys_enter")
int BPF_PROG(nc_sys_enter, struct pt_regs *regs, long id)
{
	int kind = nc_syscall_kind(id);

	return kind < 0 ? 0 : nc_op_enter(regs->di, kind);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(nc_sys_exit, struct pt_regs *regs, long ret)
{
	/* most syscalls are not socket calls: skip the storage lookup */
	if (nc_syscall_kind(regs->orig_ax) < 0)
		return 0;
	return nc_op_exit();
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(nc_softirq_entry, unsigned int vec)
{
	__u64 now = bpf_ktime_get_ns();
	struct nc_cpu *c = nc_this_cpu();
	struct nc_task *s;

	if (!c)
		return 0;
	c->sirq_ts = now;
	c->sirq_vec = vec;
	/* the interrupted task's socket op does not own this time */
	if (!c->op_running)
		return 0;
	s = bpf_task_storage_get(&nc_tasks, bpf_get_current_task_btf(), 0, 0);
	if (s && s->kind < NC_CLASS_MAX && s->ts)
		nc_op_pause(s, c, now);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(nc_softirq_exit, unsigned int vec)
{
	__u64 now = bpf_ktime_get_ns();
	struct nc_cpu *c = nc_this_cpu();
	struct nc_task *s;
	__u64 d = 0;

	if (!c)
		return 0;
	if (c->sirq_ts && now > c->sirq_ts) {
		d = now - c->sirq_ts;
		if (vec == NC_VEC_NET_RX) {
			c->ns[NC_NET_RX] += d;
			c->n[NC_NET_RX]++;
		} else if (vec == NC_VEC_NET_TX) {
			c->ns[NC_NET_TX] += d;
			c->n[NC_NET_TX]++;
		}
	}
	c->sirq_ts = 0;
	if (!c->op_running)
		return 0;
	s = bpf_task_storage_get(&nc_tasks, bpf_get_current_task_btf(), 0, 0);
	if (s && s->kind < NC_CLASS_MAX && !s->ts) {
		if (vec == NC_VEC_NET_RX || vec == NC_VEC_NET_TX)
			c->nested_ns += d;
		s->ts = now;
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(nc_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct nc_cpu *c = nc_this_cpu();
	struct nc_task *s;

	if (!c)
		return 0;
	s = bpf_task_storage_get(&nc_tasks, prev, 0, 0);
	if (s && s->kind < NC_CLASS_MAX)
		nc_op_pause(s, c, now);
	s = bpf_task_storage_get(&nc_tasks, next, 0, 0);
	c->op_running = s && s->kind < NC_CLASS_MAX;
	if (c->op_running)
		s->ts = now;
	return 0;
}

SEC("perf_event")
int nc_sample(struct bpf_perf_event_data *ctx)
{
	struct nc_cpu *c = nc_this_cpu();
	struct nc_stack_key key = {};
	__u64 one = 1, *cnt;

	if (!c)
		return 0;
	c->samples++;
	if (!c->sirq_ts || c->sirq_vec != NC_VEC_NET_RX)
		return 0;
	c->samples_netrx++;
	key.stackid = bpf_get_stackid(ctx, &nc_stacks, 0);
	if (key.stackid < 0) {
		c->stack_lost++;
		return 0;
	}
	key.cpu = bpf_get_smp_processor_id();
	key.slot = nc_slot & 1;
	cnt = bpf_map_lookup_elem(&nc_stack_counts, &key);
	if (cnt) {
		__sync_fetch_and_add(cnt, 1);
		return 0;
	}
	if (bpf_map_update_elem(&nc_stack_counts, &key, &one, BPF_NOEXIST)) {
		cnt = bpf_map_lookup_elem(&nc_stack_counts, &key);
		if (cnt)
			__sync_fetch_and_add(cnt, 1);
		else
			c->stack_lost++;
	}
	return 0;
}
