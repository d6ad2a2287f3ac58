// SPDX-License-Identifier: GPL-2.0
/* bench/tpdispatch.sh: what one more program on a tracepoint costs, and
 * what a further member of a tail-call chain costs (record/core/hookhub.c).
 * Empty programs on sock:sock_send_length / sock_recv_length: three that
 * attach on their own (s0-s2, r0-r2), three chain members (cs*, cr*) and
 * the chain's heads (hs, hr); and one classic syscall tracepoint (sw),
 * whose presence puts every syscall of the machine on the slow path. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#pragma clang diagnostic ignored "-Wunused-parameter"

char LICENSE[] SEC("license") = "GPL";

struct chain {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
};
struct chain td_send SEC(".maps"), td_recv SEC(".maps");

#define TD_ALONE(n)                                                                  \
SEC("tp_btf/sock_send_length") int BPF_PROG(s##n, struct sock *sk, int ret, int fl) \
{ return 0; }                                                                        \
SEC("tp_btf/sock_recv_length") int BPF_PROG(r##n, struct sock *sk, int ret, int fl) \
{ return 0; }
TD_ALONE(0)
TD_ALONE(1)
TD_ALONE(2)

#define TD_MEMBER(n)                                                                  \
SEC("tp_btf/sock_send_length") int BPF_PROG(cs##n, struct sock *sk, int ret, int fl) \
{ bpf_tail_call(ctx, &td_send, n + 1); return 0; }                                   \
SEC("tp_btf/sock_recv_length") int BPF_PROG(cr##n, struct sock *sk, int ret, int fl) \
{ bpf_tail_call(ctx, &td_recv, n + 1); return 0; }
TD_MEMBER(0)
TD_MEMBER(1)
TD_MEMBER(2)

SEC("tp_btf/sock_send_length")
int BPF_PROG(hs, struct sock *sk, int ret, int fl) { bpf_tail_call(ctx, &td_send, 0); return 0; }
SEC("tp_btf/sock_recv_length")
int BPF_PROG(hr, struct sock *sk, int ret, int fl) { bpf_tail_call(ctx, &td_recv, 0); return 0; }

SEC("tracepoint/syscalls/sys_enter_write")
int sw(void *ctx) { return 0; }
