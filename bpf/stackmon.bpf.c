// SPDX-License-Identifier: GPL-2.0
/* perfmon's data-plane agent (Algorithm 1) on TC hooks: the pod's veth
 * (host side) and the host's external interface. Packets are followed from
 * one interface to the other by NAT-proof header fields (seq, ack, TSval,
 * IP ID), per-flow EWMAs of RTT, RNST1, CNST and RNST2 are kept, and an
 * alert is raised when an EWMA exceeds the threshold of its bucket. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "stackmon.h"

char LICENSE[] SEC("license") = "GPL";

#define SM_TC_ACT_UNSPEC (-1)

const volatile __u32 alpha_q10 = 128;                 /* α * 1024 */
const volatile __u64 thr[SM_NBUCKET][SM_NCOMP] = {};  /* ns, 0 = no alert */

struct sm_pkey { __u32 seq, ack, tsval; __u16 ipid; __u8 out, pad; };
struct sm_pval { __u64 ts; };

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sm_pkey);
	__type(value, struct sm_pval);
} sm_pkts SEC(".maps");

/* ext side -> pod flow: NAT hides the pod tuple at ext, the packet key
 * carries it over from the veth. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sm_pkey);
	__type(value, struct sm_fkey);
} sm_pkt_flow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct sm_fkey);
	__type(value, struct sm_flow);
} sm_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} sm_alerts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SM_HIST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} sm_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} sm_counts SEC(".maps");   /* 0 alerts lost, 1 packets seen, 2 alerts raised */

struct sm_pkt {
	__u32 saddr, daddr, seq, ack, tsval, payload;
	__u16 sport, dport, ipid;
	__u8 flags;
};

static __always_inline void sm_count(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&sm_counts, &k);
	if (v)
		(*v)++;
}

static __always_inline int sm_parse(struct __sk_buff *skb, struct sm_pkt *p)
{
	__u8 ip[20], th[32];
	if (skb->protocol != bpf_htons(0x0800))
		return -1;
	if (bpf_skb_load_bytes(skb, 14, ip, 20) || (ip[0] >> 4) != 4 || ip[9] != 6)
		return -1;
	__u32 ihl = (ip[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > 60)
		return -1;
	__u32 rem = skb->len > 14 + ihl ? skb->len - 14 - ihl : 0;
	if (rem < 20)
		return -1;
	__builtin_memset(th, 0, sizeof(th));
	if (bpf_skb_load_bytes(skb, 14 + ihl, th, rem >= 32 ? 32 : 20))
		return -1;
	__builtin_memcpy(&p->saddr, &ip[12], 4);
	__builtin_memcpy(&p->daddr, &ip[16], 4);
	p->ipid = ((__u16)ip[4] << 8) | ip[5];
	p->sport = ((__u16)th[0] << 8) | th[1];
	p->dport = ((__u16)th[2] << 8) | th[3];
	p->seq = ((__u32)th[4] << 24) | ((__u32)th[5] << 16) | ((__u32)th[6] << 8) | th[7];
	p->ack = ((__u32)th[8] << 24) | ((__u32)th[9] << 16) | ((__u32)th[10] << 8) | th[11];
	p->flags = th[13];
	__u32 thl = (th[12] >> 4) * 4;
	p->tsval = 0;
	if (thl >= 32 && th[20] == 1 && th[21] == 1 && th[22] == 8 && th[23] == 10)
		p->tsval = ((__u32)th[24] << 24) | ((__u32)th[25] << 16) | ((__u32)th[26] << 8) | th[27];
	__u32 tot = ((__u32)ip[2] << 8) | ip[3];
	__u32 l3 = skb->len - 14;
	if (l3 > tot)
		tot = l3;                         /* GSO: IP length is per segment or 0 */
	p->payload = tot > ihl + thl ? tot - ihl - thl : 0;
	return 0;
}

static __always_inline struct sm_pkey sm_key(const struct sm_pkt *p, __u8 out)
{
	struct sm_pkey k = { .seq = p->seq, .ack = p->ack, .tsval = p->tsval, .ipid = p->ipid,
			     .out = out };
	return k;
}

static __always_inline bool sm_after_eq(__u32 a, __u32 b)
{
	return (__s32)(a - b) >= 0;
}

/* EWMA update (perfmon: f = α f + (1-α) x), histogram, threshold check. */
static __always_inline void sm_sample(struct sm_flow *fl, const struct sm_fkey *fk,
				      const struct sm_pkt *p, __u32 comp, __u64 x, __u64 now)
{
	if (comp >= SM_NCOMP)
		return;
	__u32 b = fl->inter ? SM_INTER : SM_INTRA;
	if (fl->n[comp] == 0)
		fl->f[comp] = x;
	else
		fl->f[comp] = (alpha_q10 * fl->f[comp] + (1024 - alpha_q10) * x) >> 10;
	fl->n[comp]++;
	__u32 slot = (b * SM_NCOMP + comp) * NP_SK_NBUCKETS + np_sketch_index(x);
	if (slot < SM_HIST_SLOTS) {
		__u64 *h = bpf_map_lookup_elem(&sm_hist, &slot);
		if (h)
			(*h)++;
	}
	__u64 t = thr[b][comp];
	if (!t || fl->f[comp] <= t)
		return;
	fl->alerts[comp]++;
	struct sm_alert *a = bpf_ringbuf_reserve(&sm_alerts, sizeof(*a), 0);
	if (!a) {
		sm_count(0);
		return;
	}
	a->ts = now;
	a->value = fl->f[comp];
	a->sample = x;
	a->threshold = t;
	a->fk = *fk;
	a->seq = p->seq;
	a->ack = p->ack;
	a->comp = comp;
	a->bucket = b;
	__builtin_memset(a->pad, 0, sizeof(a->pad));
	bpf_ringbuf_submit(a, 0);
	sm_count(2);
}

static __always_inline struct sm_flow *sm_flow_get(const struct sm_fkey *fk)
{
	struct sm_flow *fl = bpf_map_lookup_elem(&sm_flows, fk);
	if (fl)
		return fl;
	struct sm_flow z = {};
	bpf_map_update_elem(&sm_flows, fk, &z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&sm_flows, fk);
}

/* From the pod (veth, host side, TC ingress): D and A packets. */
SEC("tc")
int sm_veth_ingress(struct __sk_buff *skb)
{
	struct sm_pkt p;
	if (sm_parse(skb, &p))
		return SM_TC_ACT_UNSPEC;
	__u64 now = bpf_ktime_get_ns();
	sm_count(1);
	struct sm_fkey fk = { .paddr = p.saddr, .raddr = p.daddr, .pport = p.sport, .rport = p.dport };
	struct sm_flow *fl = sm_flow_get(&fk);
	if (!fl)
		return SM_TC_ACT_UNSPEC;
	if (p.payload && !fl->rtt_pending) {
		fl->rtt_pending = 1;
		fl->rtt_ts = now;
		fl->rtt_end = p.seq + p.payload;
	}
	if ((p.flags & 0x10) && fl->da_pending && sm_after_eq(p.ack, fl->da_end)) {
		fl->da_pending = 0;
		sm_sample(fl, &fk, &p, SM_CNST, now - fl->da_ts, now);
	}
	struct sm_pkey k = sm_key(&p, 1);
	struct sm_pval v = { .ts = now };
	bpf_map_update_elem(&sm_pkts, &k, &v, BPF_ANY);
	bpf_map_update_elem(&sm_pkt_flow, &k, &fk, BPF_ANY);
	return SM_TC_ACT_UNSPEC;
}

/* To the pod (veth, host side, TC egress): DA packets; RTT and RNST1. */
SEC("tc")
int sm_veth_egress(struct __sk_buff *skb)
{
	struct sm_pkt p;
	if (sm_parse(skb, &p))
		return SM_TC_ACT_UNSPEC;
	__u64 now = bpf_ktime_get_ns();
	sm_count(1);
	struct sm_fkey fk = { .paddr = p.daddr, .raddr = p.saddr, .pport = p.dport, .rport = p.sport };
	struct sm_flow *fl = sm_flow_get(&fk);
	if (!fl)
		return SM_TC_ACT_UNSPEC;
	struct sm_pkey k = sm_key(&p, 0);
	struct sm_pval *in = bpf_map_lookup_elem(&sm_pkts, &k);
	if (in && now >= in->ts) {
		fl->rnst_da = now - in->ts;
		if (fl->rnst_d)
			sm_sample(fl, &fk, &p, SM_RNST1, fl->rnst_d + fl->rnst_da, now);
		bpf_map_delete_elem(&sm_pkts, &k);
	}
	if ((p.flags & 0x10) && fl->rtt_pending && sm_after_eq(p.ack, fl->rtt_end)) {
		fl->rtt_pending = 0;
		sm_sample(fl, &fk, &p, SM_RTT, now - fl->rtt_ts, now);
	}
	if (p.payload) {
		fl->da_pending = 1;
		fl->da_ts = now;
		fl->da_end = p.seq + p.payload;
	}
	return SM_TC_ACT_UNSPEC;
}

/* Into the host from other nodes (ext, TC ingress): remember DA arrival. */
SEC("tc")
int sm_ext_ingress(struct __sk_buff *skb)
{
	struct sm_pkt p;
	if (sm_parse(skb, &p))
		return SM_TC_ACT_UNSPEC;
	sm_count(1);
	struct sm_pkey k = sm_key(&p, 0);
	struct sm_pval v = { .ts = bpf_ktime_get_ns() };
	bpf_map_update_elem(&sm_pkts, &k, &v, BPF_ANY);
	return SM_TC_ACT_UNSPEC;
}

/* Out of the host (ext, TC egress): RNST_D for data, RNST2 for acks. */
SEC("tc")
int sm_ext_egress(struct __sk_buff *skb)
{
	struct sm_pkt p;
	if (sm_parse(skb, &p))
		return SM_TC_ACT_UNSPEC;
	__u64 now = bpf_ktime_get_ns();
	sm_count(1);
	struct sm_pkey k = sm_key(&p, 1);
	struct sm_pval *out = bpf_map_lookup_elem(&sm_pkts, &k);
	struct sm_fkey *fkp = bpf_map_lookup_elem(&sm_pkt_flow, &k);
	if (!out || !fkp || now < out->ts)
		return SM_TC_ACT_UNSPEC;
	struct sm_fkey fk = *fkp;
	__u64 d = now - out->ts;
	bpf_map_delete_elem(&sm_pkts, &k);
	bpf_map_delete_elem(&sm_pkt_flow, &k);
	struct sm_flow *fl = bpf_map_lookup_elem(&sm_flows, &fk);
	if (!fl)
		return SM_TC_ACT_UNSPEC;
	fl->inter = 1;
	if (p.payload)
		fl->rnst_d = d;
	if ((p.flags & 0x10) && fl->rnst_da)
		sm_sample(fl, &fk, &p, SM_RNST2, fl->rnst_da + d, now);
	return SM_TC_ACT_UNSPEC;
}
