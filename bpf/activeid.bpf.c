// SPDX-License-Identifier: GPL-2.0
/* Active packet IDs: cgroup sock_ops program (see bpf/activeid.h). Only
 * sockets of the recorded netns (cookie from user space) are touched. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "activeid.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 netns_cookie = 0;   /* 0 = every netns */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} aid_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AID_C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} aid_counts SEC(".maps");

static __always_inline void aid_count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&aid_counts, &c);
	if (v)
		(*v)++;
}

/* seq/ack and header length of the TCP header at skb_data. */
static __always_inline int aid_tcp_hdr(struct bpf_sock_ops *skops, __u32 *seq, __u32 *ack,
				       __u32 *hlen)
{
	__u8 *d = skops->skb_data, *end = skops->skb_data_end;
	if (d + 20 > end)
		return -1;
	*seq = ((__u32)d[4] << 24) | ((__u32)d[5] << 16) | ((__u32)d[6] << 8) | d[7];
	*ack = ((__u32)d[8] << 24) | ((__u32)d[9] << 16) | ((__u32)d[10] << 8) | d[11];
	*hlen = (d[12] >> 4) * 4;
	return 0;
}

static __always_inline void aid_emit(struct bpf_sock_ops *skops, __u32 id, __u32 seq,
				     __u32 end_seq, __u32 ack, __u8 rx)
{
	struct aid_event *e = bpf_ringbuf_reserve(&aid_events, sizeof(*e), 0);
	if (!e) {
		aid_count(AID_C_LOST);
		return;
	}
	e->ts = bpf_ktime_get_ns();
	e->id = id;
	e->seq = seq;
	e->end_seq = end_seq;
	e->ack = ack;
	e->rx = rx;
	if (skops->family == 2) {
		e->saddr = skops->local_ip4;
		e->daddr = skops->remote_ip4;
	} else {
		e->saddr = e->daddr = 0;
	}
	e->sport = (__u16)skops->local_port;
	e->dport = bpf_ntohl(skops->remote_port) & 0xffff;
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	bpf_ringbuf_submit(e, 0);
}

SEC("sockops")
int aid_sockops(struct bpf_sock_ops *skops)
{
	if (netns_cookie && bpf_get_netns_cookie(skops) != netns_cookie)
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					  BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG |
					  BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		/* data segments only: pure ACKs and SYNs stay untouched */
		if (skops->skb_tcp_flags & 0x07)
			break;
		if (bpf_reserve_hdr_opt(skops, AID_OPTLEN, 0))
			aid_count(AID_C_NOSPC);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB: {
		__u32 seq, ack, hlen;
		if (skops->skb_tcp_flags & 0x07)
			break;
		if (aid_tcp_hdr(skops, &seq, &ack, &hlen))
			break;
		__u32 id = bpf_get_prandom_u32() | 1;
		__u8 opt[AID_OPTLEN] = { AID_KIND, AID_OPTLEN, AID_MAGIC0, AID_MAGIC1,
					 id >> 24, id >> 16, id >> 8, id };
		if (bpf_store_hdr_opt(skops, opt, sizeof(opt), 0)) {
			/* no space was reserved (pure ACK) or it ran out */
			aid_count(AID_C_WRITE_ERR);
			break;
		}
		aid_count(AID_C_WRITTEN);
		__u32 payload = skops->skb_len > hlen ? skops->skb_len - hlen : 0;
		aid_emit(skops, id, seq, seq + payload, ack, 0);
		break;
	}
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB: {
		__u8 opt[AID_OPTLEN] = { AID_KIND, 4, AID_MAGIC0, AID_MAGIC1 };
		if (bpf_load_hdr_opt(skops, opt, sizeof(opt), 0) != AID_OPTLEN)
			break;
		__u32 seq, ack, hlen;
		if (aid_tcp_hdr(skops, &seq, &ack, &hlen))
			break;
		__u32 id = ((__u32)opt[4] << 24) | ((__u32)opt[5] << 16) | ((__u32)opt[6] << 8) | opt[7];
		__u32 payload = skops->skb_len > hlen ? skops->skb_len - hlen : 0;
		aid_count(AID_C_PARSED);
		aid_emit(skops, id, seq, seq + payload, ack, 1);
		break;
	}
	}
	return 1;
}
