// SPDX-License-Identifier: GPL-2.0
/* The hub's heads: one program per shared tracepoint, which runs the
 * families' programs in slot order by tail calls (bpf/hub.h). On this
 * kernel every further program on a tracepoint costs a retpolined
 * indirect call and its own bpf_trace_run() (~100 ns a program a call,
 * docs/BENCHMARKS.md); a tail call with a constant key is a direct jump. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "hub.bpf.h"

#pragma clang diagnostic ignored "-Wunused-parameter"

char LICENSE[] SEC("license") = "GPL";

HUB_PROG_ARRAY(hub_sock_send);
HUB_PROG_ARRAY(hub_sock_recv);
HUB_PROG_ARRAY(hub_sock_state);
HUB_PROG_ARRAY(hub_sched_switch);
HUB_GATES_MAP(hub_gates);

#define HUB_AF_INET 2
#define HUB_AF_INET6 10

/* A call skips the members up to flows (bpf/hub.h): flows' early returns
 * read here, once, instead of in its program, whose entry costs more than
 * the reads (docs/BENCHMARKS.md, "The hub's TCP gate"): a failed call, a
 * socket of another family (an event loop's EAGAIN on a unix socket), a
 * TCP call while no flow wants an owner but the 1 in sample drawn. */
static __always_inline bool hub_skips_flows(__u32 hook, const struct sock *sk, int ret)
{
	const struct hub_gate *g = bpf_map_lookup_elem(&hub_gates, &hook);
	if (!g || !g->on)
		return false;
	if (ret <= 0 || !sk)
		return true;
	__u16 fam = sk->__sk_common.skc_family;
	if (fam != HUB_AF_INET && fam != HUB_AF_INET6)
		return true;
	/* the receive gate's want opens both: a send names an owner too */
	__u32 rk = HUB_SOCK_RECV;
	const struct hub_gate *w = hook == HUB_SOCK_RECV ? g : bpf_map_lookup_elem(&hub_gates, &rk);
	if ((w && w->want) || sk->sk_protocol != IPPROTO_TCP)
		return false;
	return !g->sample || (bpf_get_prandom_u32() & (g->sample - 1));
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(hub_send, struct sock *sk, int ret, int flags)
{
	if (hub_skips_flows(HUB_SOCK_SEND, sk, ret)) {
		HUB_NEXT(ctx, hub_sock_send, HUB_SLOT_FLOWS);
		return 0;
	}
	HUB_FIRST(ctx, hub_sock_send);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(hub_recv, struct sock *sk, int ret, int flags)
{
	if (hub_skips_flows(HUB_SOCK_RECV, sk, ret)) {
		HUB_NEXT(ctx, hub_sock_recv, HUB_SLOT_FLOWS);
		return 0;
	}
	HUB_FIRST(ctx, hub_sock_recv);
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(hub_state, const struct sock *sk, int oldstate, int newstate)
{
	HUB_FIRST(ctx, hub_sock_state);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(hub_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	HUB_FIRST(ctx, hub_sched_switch);
	return 0;
}
