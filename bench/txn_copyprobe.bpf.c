// SPDX-License-Identifier: GPL-2.0
/* bench/txn_copyprobe.sh's probe: for one process (tgid), where the TCP
 * socket's cached clock (tcp_clock_cache, which bpf/txn.bpf.c sk_clock
 * stamps with) stands at the end of each receive call, against the call's
 * last copy to the user. tcp:tcp_rcv_space_adjust fires after each copy
 * (tcp_recvmsg_locked) and before that function's own refresh of the
 * cache, if the kernel has one; sock:sock_recv_length fires when the read
 * returns. Per read: whether the cache is at or after the last copy, how
 * far, how far the read's return is from the copy and from the cache,
 * and whether the call transmitted (net:net_dev_queue: the window-update
 * ACK) after its last copy. Histograms in log2 ns buckets. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 tgid = 0;

struct call { __u64 copy_ns, xmit_ns, ncopies; };

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct call);
} calls SEC(".maps");

/* rows of 64 log2 buckets (copyprobe.c prints them) */
enum { R_AFTER, R_RET_COPY, R_CACHE_COPY, R_COPY_CACHE, R_RET_CACHE, R_NCOPY, R_XMIT, R_RET_XMIT, R_N };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, R_N * 64);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

static __always_inline __u32 lg(__u64 v)
{
	__u32 r = 0;
	for (int i = 0; i < 63 && v > 1; i++) {
		v >>= 1;
		r++;
	}
	return r;
}

static __always_inline void inc(__u32 row, __u32 b)
{
	__u32 k = row * 64 + (b & 63);
	__u64 *p = bpf_map_lookup_elem(&hist, &k);
	if (p)
		__sync_fetch_and_add(p, 1);
}

static __always_inline bool ours(void) { return (bpf_get_current_pid_tgid() >> 32) == tgid; }

SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(cp_copy, struct sock *sk)
{
	if (!ours())
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	struct call z = {}, *c = bpf_map_lookup_elem(&calls, &id);
	if (!c) {
		bpf_map_update_elem(&calls, &id, &z, BPF_ANY);
		c = bpf_map_lookup_elem(&calls, &id);
		if (!c)
			return 0;
	}
	c->copy_ns = bpf_ktime_get_ns();
	c->xmit_ns = 0;
	c->ncopies++;
	return 0;
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(cp_xmit, struct sk_buff *skb)
{
	if (!ours())
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	struct call *c = bpf_map_lookup_elem(&calls, &id);
	if (c && c->copy_ns && !c->xmit_ns)
		c->xmit_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(cp_ret, struct sock *sk, int ret, int flags)
{
	if (!ours() || ret <= 0)
		return 0;
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	struct call *c = bpf_map_lookup_elem(&calls, &id);
	if (!c || !c->copy_ns)
		return 0;
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return 0;
	__u64 t = tp->tcp_clock_cache;
	inc(R_AFTER, t >= c->copy_ns);
	inc(R_RET_COPY, lg(now - c->copy_ns));
	if (t >= c->copy_ns)
		inc(R_CACHE_COPY, lg(t - c->copy_ns));
	else
		inc(R_COPY_CACHE, lg(c->copy_ns - t));
	inc(R_RET_CACHE, lg(now > t ? now - t : 0));
	inc(R_NCOPY, c->ncopies);
	inc(R_XMIT, c->xmit_ns != 0);
	if (c->xmit_ns)
		inc(R_RET_XMIT, lg(now - c->xmit_ns));
	c->copy_ns = 0;
	c->ncopies = 0;
	return 0;
}
