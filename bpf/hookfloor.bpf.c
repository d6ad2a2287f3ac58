// SPDX-License-Identifier: GPL-2.0
/* hookfloor: the cost floor of nprec's hooks. One program per (hook,
 * program) pair that nprec attaches at default settings, of the same
 * program type (classic tracepoint, tp_btf, perf_event), each with an
 * empty body. Attached by tests/tools/hookfloor.c with nprec's
 * multiplicity, it measures what dispatching to our programs costs before
 * any of their work: no optimisation of nprec's program bodies can go
 * below it. Not used by nprec (nothing in record/ includes its skeleton).
 *
 * Program names say their group (hf_<group>_...), which the tool uses for
 * --only; keep that when adding one. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* the programs never read their context */
#pragma clang diagnostic ignored "-Wunused-parameter"

char LICENSE[] SEC("license") = "GPL";

/* Set before load. Zero: the verifier removes the branch below as dead
 * code, so every program is a bare `return 0` ("dispatch only"). One: each
 * program also reads the clock into a per-CPU slot, the least work any of
 * nprec's programs does ("dispatch + one clock read"). */
const volatile __u32 hf_clock = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hf_last SEC(".maps");

static __always_inline int hf_body(void)
{
	if (hf_clock) {
		__u32 zero = 0;
		__u64 *v = bpf_map_lookup_elem(&hf_last, &zero);
		if (v)
			*v = bpf_ktime_get_ns();
	}
	return 0;
}

/* tp_btf programs take the raw argument array; none is read */
#define HF_BTF(group, name, tp)                                                \
SEC("tp_btf/" #tp)                                                            \
int hf_##group##_##name(__u64 *ctx)                                           \
{                                                                             \
	return hf_body();                                                     \
}

/* netcpu: one classic tracepoint per listed syscall (its preferred variant) */
#define HF_SYS(name)                                                           \
SEC("tracepoint/syscalls/sys_enter_" #name)                                   \
int hf_syscalls_##name(void *ctx)                                             \
{                                                                             \
	return hf_body();                                                     \
}

HF_SYS(sendto)
HF_SYS(sendmsg)
HF_SYS(sendmmsg)
HF_SYS(write)
HF_SYS(writev)
HF_SYS(recvfrom)
HF_SYS(recvmsg)
HF_SYS(recvmmsg)
HF_SYS(read)
HF_SYS(readv)

/* netcpu: softirq time */
HF_BTF(softirq, entry, softirq_entry)
HF_BTF(softirq, exit, softirq_exit)

/* sock_send_length / sock_recv_length: netcpu, txn and flows each */
HF_BTF(sock, send_nc, sock_send_length)
HF_BTF(sock, send_txn, sock_send_length)
HF_BTF(sock, send_flows, sock_send_length)
HF_BTF(sock, recv_nc, sock_recv_length)
HF_BTF(sock, recv_txn, sock_recv_length)
HF_BTF(sock, recv_flows, sock_recv_length)

/* sched_switch: netcpu and threads; process exit: threads */
HF_BTF(sched, switch_nc, sched_switch)
HF_BTF(sched, switch_nt, sched_switch)
HF_BTF(sched, exit_nt, sched_process_exit)

/* TCP state and drops: txn and flows */
HF_BTF(tcp, state_txn, inet_sock_set_state)
HF_BTF(tcp, state_flows, inet_sock_set_state)
HF_BTF(tcp, sendmsg_txn, tcp_sendmsg_locked)
HF_BTF(tcp, retrans_flows, tcp_retransmit_skb)
HF_BTF(tcp, drop_flows, kfree_skb)

/* Today's defaults (the hub: one program a shared tracepoint, the
 * families behind it by tail calls): --only send1,recv1,other1 */
HF_BTF(send1, hub, sock_send_length)
HF_BTF(recv1, hub, sock_recv_length)
HF_BTF(other1, state, inet_sock_set_state)
HF_BTF(other1, retrans, tcp_retransmit_skb)
HF_BTF(other1, drop, kfree_skb)
HF_BTF(other1, exit, sched_process_exit)

/* netcpu's tick sampling source (its default): every hrtimer expiry runs
 * it; nprec's body returns at once unless the timer is the tick. Attached
 * by the tool instead of the cpu-clock sampler with --tick. */
HF_BTF(tick, hrtimer, hrtimer_expire_entry)

/* netcpu's cpu-clock sampler, attached once per CPU by the tool */
SEC("perf_event")
int hf_sampler(void *ctx)
{
	return hf_body();
}
