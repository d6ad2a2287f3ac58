// SPDX-License-Identifier: GPL-2.0
/* Flows family: per TCP/UDP flow payload bytes each way, segments,
 * retransmissions, srtt/cwnd, open/close time, owner; drops by flow and
 * kernel drop reason. Every tracepoint has a tp_btf and a raw_tp variant;
 * user space loads one of the two (bpf_program__set_autoload). */
/* BPF_PROG names every tracepoint argument; most handlers use few of them. */
#pragma clang diagnostic ignored "-Wunused-parameter"
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "filter.bpf.h"
#include "flows.h"

char LICENSE[] SEC("license") = "GPL";

#define RC_IPPROTO_TCP 6
#define RC_IPPROTO_UDP 17
#define RC_TCP_ESTABLISHED 1
#define RC_TCP_SYN_SENT 2
#define RC_TCP_CLOSE 7
#define RC_MSG_PEEK 2
#define RC_ETH_P_IP 0x0800
#define RC_ETH_P_IPV6 0x86DD

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, FLOWS_MAX_ENTRIES);
	__type(key, struct rc_flow_key);
	__type(value, struct rc_flow_stats);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, DROPS_MAX_ENTRIES);
	__type(key, struct rc_drop_key);
	__type(value, __u64);
} drops SEC(".maps");

/* every drop with its own time and TCP sequence number; when it is full
 * the drop is counted in the drops map above */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DROPS_RING_BYTES);
} drop_events SEC(".maps");

/* per-CPU: [0] events handled (for events/s), [1] tcp_probe calls,
 * [2] drop events that found the ring buffer full (counted in drops) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} flow_events SEC(".maps");

const volatile bool rc_task_filter = false;   /* --pid given: softirq hooks only update */

static const struct rc_flow_stats zero_stats;

static __always_inline void count_event(void)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&flow_events, &k);
	if (n)
		(*n)++;
}

/* Key of the socket's flow; false when it is not a TCP/UDP inet socket. */
/* btf: the program is a tp_btf one (direct loads, see filter.bpf.h). */
static __always_inline bool sk_flow_key_x(const struct sock *sk, struct rc_flow_key *k, bool btf)
{
	__u8 proto = rc_sk_protocol_x(sk, btf);
	if (proto != RC_IPPROTO_TCP && proto != RC_IPPROTO_UDP)
		return false;
	__builtin_memset(k, 0, sizeof(*k));
	int fam = rc_sk_addrs_x(sk, btf, k->laddr, k->raddr, &k->lport, &k->rport);
	if (!fam)
		return false;
	k->family = fam;
	k->proto = proto;
	k->netns = rc_sk_netns_ino_x(sk, btf);
	return true;
}

static __always_inline bool sk_flow_key(const struct sock *sk, struct rc_flow_key *k)
{
	return sk_flow_key_x(sk, k, false);
}

static __always_inline bool flow_filter(const struct sock *sk, const struct rc_flow_key *k)
{
	return rc_filter_tuple(k->netns, k->laddr, k->raddr, k->lport, k->rport) && rc_filter_sk_cgroup(sk);
}

static __always_inline struct rc_flow_stats *flow_get(const struct rc_flow_key *k, bool create)
{
	struct rc_flow_stats *s = bpf_map_lookup_elem(&flows, k);
	if (s || !create)
		return s;
	bpf_map_update_elem(&flows, k, &zero_stats, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&flows, k);
	if (s && !s->open_ns)
		s->open_ns = bpf_ktime_get_ns();
	return s;
}

static __always_inline void read_tcp_counters(const struct sock *sk, struct rc_flow_stats *s)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;
	__u32 v;
	v = BPF_CORE_READ(tp, segs_in);       if (v > s->segs_in) s->segs_in = v;
	v = BPF_CORE_READ(tp, segs_out);      if (v > s->segs_out) s->segs_out = v;
	v = BPF_CORE_READ(tp, total_retrans); if (v > s->total_retrans) s->total_retrans = v;
}

/* tp: the socket as bpf_skc_to_tcp_sock returned it (a BTF pointer the
 * verifier lets us read past struct sock) */
static __always_inline void read_tcp_counters_btf(const struct tcp_sock *tp, struct rc_flow_stats *s)
{
	if (tp->segs_in > s->segs_in) s->segs_in = tp->segs_in;
	if (tp->segs_out > s->segs_out) s->segs_out = tp->segs_out;
	if (tp->total_retrans > s->total_retrans) s->total_retrans = tp->total_retrans;
}

static __always_inline int on_io(struct sock *sk, int ret, int flags, bool tx, bool btf)
{
	struct rc_flow_key k;
	if (ret <= 0 || (!tx && (flags & RC_MSG_PEEK)))
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	if (!sk || !sk_flow_key_x(sk, &k, btf) || !flow_filter(sk, &k) || !rc_filter_pid(id >> 32))
		return 0;
	struct rc_flow_stats *s = flow_get(&k, true);
	if (!s)
		return 0;
	count_event();
	if (tx) { s->tx_bytes += ret; s->tx_calls++; }
	else    { s->rx_bytes += ret; s->rx_calls++; }
	if ((__u32)id != s->tid) {
		s->tid = (__u32)id;
		s->pid = id >> 32;
		s->cgroup_id = bpf_get_current_cgroup_id();
		bpf_get_current_comm(s->comm, sizeof(s->comm));
	}
	/* segment counters are read at tcp_probe (every segment received),
	 * retransmits and close: not on this hot path */
	s->owner_ns = bpf_ktime_get_ns();
	return 0;
}

/* tcp_probe fires for every received segment in softirq, where finding the
 * flow costs most (~0.7 us): take 1 segment in FLOWS_PROBE_EVERY per CPU.
 * The srtt mean stays unbiased; segment counters are also read at
 * retransmit and close. */
#define FLOWS_PROBE_EVERY 8

static __always_inline int on_probe(struct sock *sk, bool btf)
{
	struct rc_flow_key k;
	__u32 z = 1;
	__u64 *tick = bpf_map_lookup_elem(&flow_events, &z);
	if (!tick || ((*tick)++ % FLOWS_PROBE_EVERY))
		return 0;
	if (!sk_flow_key_x(sk, &k, btf) || !flow_filter(sk, &k))
		return 0;
	struct rc_flow_stats *s = flow_get(&k, !rc_task_filter);
	if (!s)
		return 0;
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;
	if (btf) {
		tp = bpf_skc_to_tcp_sock(sk);
		if (!tp)
			return 0;
	}
	count_event();
	__u32 srtt = (btf ? tp->srtt_us : BPF_CORE_READ(tp, srtt_us)) >> 3;
	s->srtt_sum_us += srtt;
	s->srtt_n++;
	if (!s->srtt_min_us || srtt < s->srtt_min_us) s->srtt_min_us = srtt;
	if (srtt > s->srtt_max_us) s->srtt_max_us = srtt;
	s->srtt_last_us = srtt;
	s->cwnd_last = btf ? tp->snd_cwnd : BPF_CORE_READ(tp, snd_cwnd);
	s->sample_ns = bpf_ktime_get_ns();
	if (btf)
		read_tcp_counters_btf(tp, s);
	else
		read_tcp_counters(sk, s);
	return 0;
}

static __always_inline int on_retrans(const struct sock *sk)
{
	struct rc_flow_key k;
	if (!sk || !sk_flow_key(sk, &k) || !flow_filter(sk, &k))
		return 0;
	struct rc_flow_stats *s = flow_get(&k, !rc_task_filter);
	if (!s)
		return 0;
	count_event();
	s->retrans++;
	read_tcp_counters(sk, s);
	return 0;
}

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate)
{
	struct rc_flow_key k;
	if (!sk_flow_key(sk, &k) || k.proto != RC_IPPROTO_TCP || !flow_filter(sk, &k))
		return 0;
	bool opening = newstate == RC_TCP_ESTABLISHED || newstate == RC_TCP_SYN_SENT;
	if (!opening && newstate != RC_TCP_CLOSE)
		return 0;
	/* a connect()ing socket has no remote port yet at SYN_SENT time for
	 * some paths; ESTABLISHED always has the full tuple */
	if (newstate == RC_TCP_SYN_SENT)
		return 0;
	struct rc_flow_stats *s = flow_get(&k, opening && !rc_task_filter);
	if (!s)
		return 0;
	count_event();
	__u64 now = bpf_ktime_get_ns();
	if (opening) {
		s->open_ns = now;
	} else {
		s->close_ns = now;
		read_tcp_counters(sk, s);
	}
	return 0;
}

/* ---- drops ---- */

static __always_inline __u64 skb_netns(const struct sk_buff *skb, const struct sock *sk)
{
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	if (dev)
		return BPF_CORE_READ(dev, nd_net.net, ns.inum);
	if (!sk)
		sk = BPF_CORE_READ(skb, sk);
	return sk ? rc_sk_netns_ino(sk) : 0;
}

struct rc_drop_hdr {
	__u32 seq, ack, len;
	__u8 tcpflags;
	bool parsed;                   /* the packet had an IP header to read */
};

/* Fills the tuple from the packet headers and, for TCP, seq/ack/flags and
 * the payload length. Before the stack set the network header (drops in the
 * device layer) it is found behind the Ethernet header. */
static __always_inline void skb_tuple(const struct sk_buff *skb, struct rc_drop_key *k,
				      struct rc_drop_hdr *h)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	unsigned char *data = BPF_CORE_READ(skb, data);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	__u16 mh = BPF_CORE_READ(skb, mac_header);
	__u16 proto = bpf_ntohs(BPF_CORE_READ(skb, protocol));
	__u32 l4off, l3len;
	if (nh == (__u16)~0U) {
		if (mh == (__u16)~0U || BPF_CORE_READ(skb, mac_len) != 14)
			return;
		nh = mh + 14;          /* behind an Ethernet header */
	}
	/* bytes from the network header to the end of the packet */
	l3len = BPF_CORE_READ(skb, len) + (__u32)(data - head) - nh;
	if (proto == RC_ETH_P_IP) {
		struct iphdr ip;
		if (bpf_probe_read_kernel(&ip, sizeof(ip), head + nh))
			return;
		k->family = AF_INET;
		k->proto = ip.protocol;
		k->saddr[2] = bpf_htonl(0xffff); k->saddr[3] = ip.saddr;
		k->daddr[2] = bpf_htonl(0xffff); k->daddr[3] = ip.daddr;
		l4off = nh + ip.ihl * 4;
	} else if (proto == RC_ETH_P_IPV6) {
		struct ipv6hdr ip6;
		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), head + nh))
			return;
		k->family = AF_INET6;
		k->proto = ip6.nexthdr;
		__builtin_memcpy(k->saddr, &ip6.saddr, 16);
		__builtin_memcpy(k->daddr, &ip6.daddr, 16);
		l4off = nh + sizeof(ip6);
	} else {
		return;
	}
	h->parsed = true;
	__u32 l4len = l3len > l4off - nh ? l3len - (l4off - nh) : 0;
	if (k->proto == RC_IPPROTO_TCP) {
		struct tcphdr th;
		if (bpf_probe_read_kernel(&th, sizeof(th), head + l4off))
			return;
		k->sport = bpf_ntohs(th.source);
		k->dport = bpf_ntohs(th.dest);
		h->seq = bpf_ntohl(th.seq);
		h->ack = bpf_ntohl(th.ack_seq);
		h->tcpflags = ((__u8 *)&th)[13];
		__u32 thl = th.doff * 4;
		h->len = l4len > thl ? l4len - thl : 0;
	} else if (k->proto == RC_IPPROTO_UDP) {
		__u16 ports[2];
		if (!bpf_probe_read_kernel(ports, sizeof(ports), head + l4off)) {
			k->sport = bpf_ntohs(ports[0]);
			k->dport = bpf_ntohs(ports[1]);
		}
		h->len = l4len > 8 ? l4len - 8 : 0;
	}
}

/* Every drop in the recorded namespace counts; the port and host filters
 * apply where the packet has them (a packet without a parsable IP header,
 * or ICMP under --port, cannot be told apart and is kept). */
static __always_inline int on_drop(const struct sk_buff *skb, __u32 reason, const struct sock *rx_sk)
{
	struct rc_drop_key k;
	struct rc_drop_hdr h = {};
	if (reason <= 1)     /* NOT_DROPPED_YET, CONSUMED */
		return 0;
	__builtin_memset(&k, 0, sizeof(k));
	k.reason = reason;
	k.netns = skb_netns(skb, rx_sk);
	if (!rc_filter_netns(k.netns))
		return 0;
	skb_tuple(skb, &k, &h);
	if (h.parsed && !rc_filter_hosts(k.saddr, k.daddr))
		return 0;
	if ((k.proto == RC_IPPROTO_TCP || k.proto == RC_IPPROTO_UDP) && !rc_filter_ports(k.sport, k.dport))
		return 0;
	count_event();
	struct rc_drop_event *e = bpf_ringbuf_reserve(&drop_events, sizeof(*e), 0);
	if (e) {
		e->ts = bpf_ktime_get_ns();
		e->k = k;
		e->seq = h.seq;
		e->ack = h.ack;
		e->len = h.len;
		e->tcpflags = h.tcpflags;
		e->pad[0] = e->pad[1] = e->pad[2] = 0;
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);   /* drained on a timer, nobody waits */
		return 0;
	}
	__u32 z = 2;
	__u64 *full = bpf_map_lookup_elem(&flow_events, &z);
	if (full)
		(*full)++;
	__u64 one = 1, *n = bpf_map_lookup_elem(&drops, &k);
	if (n)
		(*n)++;
	else if (bpf_map_update_elem(&drops, &k, &one, BPF_NOEXIST) && (n = bpf_map_lookup_elem(&drops, &k)))
		(*n)++;   /* created by a racing drop meanwhile */
	return 0;
}

/* ---- program variants ---- */

SEC("tp_btf/sock_send_length")
int BPF_PROG(flows_send_btf, struct sock *sk, int ret, int flags) { return on_io(sk, ret, flags, true, true); }
SEC("raw_tp/sock_send_length")
int BPF_PROG(flows_send_raw, struct sock *sk, int ret, int flags) { return on_io(sk, ret, flags, true, false); }

SEC("tp_btf/sock_recv_length")
int BPF_PROG(flows_recv_btf, struct sock *sk, int ret, int flags) { return on_io(sk, ret, flags, false, true); }
SEC("raw_tp/sock_recv_length")
int BPF_PROG(flows_recv_raw, struct sock *sk, int ret, int flags) { return on_io(sk, ret, flags, false, false); }

SEC("tp_btf/tcp_probe")
int BPF_PROG(flows_probe_btf, struct sock *sk, struct sk_buff *skb) { return on_probe(sk, true); }
SEC("raw_tp/tcp_probe")
int BPF_PROG(flows_probe_raw, struct sock *sk, struct sk_buff *skb) { return on_probe(sk, false); }

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(flows_retrans_btf, const struct sock *sk) { return on_retrans(sk); }
SEC("raw_tp/tcp_retransmit_skb")
int BPF_PROG(flows_retrans_raw, const struct sock *sk) { return on_retrans(sk); }

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(flows_state_btf, const struct sock *sk, int oldstate, int newstate)
{ return on_state(sk, oldstate, newstate); }
SEC("raw_tp/inet_sock_set_state")
int BPF_PROG(flows_state_raw, const struct sock *sk, int oldstate, int newstate)
{ return on_state(sk, oldstate, newstate); }

SEC("tp_btf/kfree_skb")
int BPF_PROG(flows_drop_btf, struct sk_buff *skb, void *location, int reason)
{ return on_drop(skb, (__u32)reason, NULL); }
SEC("raw_tp/kfree_skb")
int BPF_PROG(flows_drop_raw, struct sk_buff *skb, void *location, int reason)
{ return on_drop(skb, (__u32)reason, NULL); }
