/* Packet-path tracing: types shared by bpf/pktpath.bpf.c, record/pktpath.c
 * and every reader of NP_REC_PKT_EVENTS (analyzer, tests/tools/pktmatch.c).
 * Include <linux/types.h> (user space) or vmlinux.h (BPF) first.
 * docs/PACKET_IDS.md explains the passive ID; docs/records/pktpath.md the
 * record bodies. */
#ifndef NP_PKTPATH_H
#define NP_PKTPATH_H

/* Hook points, in the order a packet normally passes them. The numbers are
 * stored in recordings: never renumber, only append. */
enum pk_hook {
	PK_HOOK_NONE = 0,
	PK_HOOK_SOCK_SEND = 1,      /* sock:sock_send_length (byte range, no header) */
	PK_HOOK_DEV_QUEUE = 2,      /* net:net_dev_queue */
	PK_HOOK_TC_EGRESS = 3,      /* TC clsact egress on a selected interface */
	PK_HOOK_QDISC_ENQ = 4,      /* qdisc:qdisc_enqueue */
	PK_HOOK_QDISC_DEQ = 5,      /* qdisc:qdisc_dequeue */
	PK_HOOK_DEV_START_XMIT = 6, /* net:net_dev_start_xmit */
	PK_HOOK_DEV_XMIT = 7,       /* net:net_dev_xmit (rc == 0 only) */
	PK_HOOK_GRO_ENTRY = 8,      /* net:napi_gro_receive_entry */
	PK_HOOK_TC_INGRESS = 9,     /* TC clsact ingress on a selected interface */
	PK_HOOK_NETIF_RECEIVE = 10, /* net:netif_receive_skb */
	PK_HOOK_TCP_RCV = 11,       /* tcp:tcp_probe (established receive, before queueing) */
	PK_HOOK_COPY_TO_USER = 12,  /* skb:skb_copy_datagram_iovec */
	PK_HOOK_AID_TX = 13,        /* sock_ops wrote an active ID (uid = the ID) */
	PK_HOOK_AID_RX = 14,        /* sock_ops read an active ID (uid = the ID) */
	PK_HOOK_MAX = 15,
};

#define PK_MAX_IFACES 16
#define PK_MAX_PORTS  16

/* Event flags. */
#define PK_F_V6        0x01     /* addresses are IPv6 */
#define PK_F_HAS_TS    0x02     /* TCP timestamp option present (tsval valid) */
#define PK_F_RANGE     0x04     /* byte-range event without a header (sock send) */

/* One packet seen at one hook (ring buffer record). Fields are host order. */
struct pk_event {
	__u64 ts;           /* bpf_ktime_get_ns, unshifted */
	__u32 seq;          /* TCP: seq; UDP: 0 */
	__u32 end_seq;      /* TCP: seq + payload (+SYN/FIN); UDP: 0 */
	__u32 ack;
	__u32 tsval;        /* TCP timestamp value, 0 if none */
	__u32 uid;          /* UDP best-effort ID, 0 for TCP */
	__u32 ifindex;
	__u32 len;          /* skb->len (bytes at this hook, incl. headers) */
	__u32 saddr[4], daddr[4];
	__u16 sport, dport;
	__u16 ipid;         /* IPv4 identification, 0 for IPv6 */
	__u16 cpu;
	__u8  hook;         /* enum pk_hook */
	__u8  proto;        /* IPPROTO_TCP / IPPROTO_UDP */
	__u8  tcpflags;     /* TCP flags byte (FIN 0x01 ... CWR 0x80) */
	__u8  flags;        /* PK_F_* */
	__u8  doff;         /* TCP data offset (header length / 4) */
	__u8  pad;
	__u16 gso_size;     /* transmit hooks: segment size of a GSO skb, else 0 */
};

/* Per-hook counters (per-CPU array indexed by hook). */
struct pk_counters {
	__u64 seen;         /* matched the filters */
	__u64 sampled_out;  /* dropped by --sample 1/N */
	__u64 capped;       /* dropped by --per-flow-cap */
	__u64 lost;         /* ring buffer full */
	__u64 emitted;
	__u64 missed;       /* netif_receive only: packets TC ingress saw right
			     * after the tracepoint without this program having
			     * parsed them (the kernel did not run it for them) */
};

/* ---- passive packet ID ----------------------------------------------
 * The same function runs in the kernel (sampling) and in every reader (ID
 * of a stored event), so it must stay pure integer arithmetic. */
static inline __u32 pk_mix32(__u32 h)
{
	h ^= h >> 16; h *= 0x85ebca6bu;
	h ^= h >> 13; h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static inline __u32 pk_hash_step(__u32 h, __u32 v)
{
	return pk_mix32(h ^ (v + 0x9e3779b9u + (h << 6) + (h >> 2)));
}

/* Flags that survive GSO/GRO unchanged on every segment (PSH, FIN and CWR
 * are only on the first or last segment, ECE may be cleared by the stack). */
#define PK_TCP_INVARIANT_FLAGS 0x16   /* SYN | RST | ACK */

/* TCP packet ID: seq, ack, data offset + invariant flags, TSval and the
 * IPv4 ID (0 for IPv6). No address or port: iptables DNAT/SNAT rewrites
 * those. GSO: segment k of a super-packet has seq + k*mss and ipid + k, the
 * super-packet's ID equals that of its first segment. */
static inline __u32 pk_tcp_id(__u32 seq, __u32 ack, __u8 doff, __u8 tcpflags,
			      __u32 tsval, __u16 ipid)
{
	__u32 h = 0x70a7u;
	h = pk_hash_step(h, seq);
	h = pk_hash_step(h, ack);
	h = pk_hash_step(h, ((__u32)doff << 8) | (tcpflags & PK_TCP_INVARIANT_FLAGS));
	h = pk_hash_step(h, tsval);
	h = pk_hash_step(h, ipid);
	return h ? h : 1;
}

/* Consistent sampling key: ack and TSval are identical on every segment of
 * a GSO super-packet and GRO only merges segments whose ack and options are
 * identical, so every host takes the same decision for every piece of the
 * same data. Without timestamps the sequence number in 64 KiB blocks is
 * used (weaker: a GSO send that straddles a block boundary is split). */
static inline __u32 pk_sample_key(__u32 seq, __u32 ack, __u32 tsval, int has_ts)
{
	__u32 h = 0x5a3bu;
	h = pk_hash_step(h, ack);
	h = pk_hash_step(h, has_ts ? tsval : (seq >> 16));
	return h;
}

#endif
