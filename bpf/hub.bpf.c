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

SEC("tp_btf/sock_send_length")
int BPF_PROG(hub_send, struct sock *sk, int ret, int flags)
{
	HUB_FIRST(ctx, hub_sock_send);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(hub_recv, struct sock *sk, int ret, int flags)
{
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
