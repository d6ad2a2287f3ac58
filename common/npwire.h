/* Wire constants shared by the kernel side (bpf/), the recorder (record/)
 * and every reader (common/, analyze/, report/, tests/tools/): packet-hook
 * ids, the passive packet-ID layout, transaction roles and the latency
 * sketch's bucket index. Numbers here are stored in recordings: never
 * renumber, only append.
 *
 * This is the one header of common/ that bpf/ may include, so it must stay
 * BPF-safe: no libc, no <linux/...> headers, no typedefs that vmlinux.h or
 * <stdint.h> also declare; plain C types only (unsigned int is 32 bits and
 * unsigned long long 64 bits on every target np builds for). */
#ifndef NP_NPWIRE_H
#define NP_NPWIRE_H

/* ---- packet hooks (NP_REC_PKT_EVENTS "hook"), in the order a packet
 * normally passes them ---- */
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

/* Packet event flags (NP_REC_PKT_EVENTS "flags"). */
#define PK_F_V6        0x01     /* addresses are IPv6 */
#define PK_F_HAS_TS    0x02     /* TCP timestamp option present (tsval valid) */
#define PK_F_RANGE     0x04     /* byte-range event without a header (sock send) */

/* ---- passive packet ID (docs/PACKET_IDS.md) ----
 * The same function runs in the kernel (sampling) and in every reader (ID
 * of a stored event), so it must stay pure integer arithmetic. */
static inline unsigned int pk_mix32(unsigned int h)
{
	h ^= h >> 16; h *= 0x85ebca6bu;
	h ^= h >> 13; h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static inline unsigned int pk_hash_step(unsigned int h, unsigned int v)
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
static inline unsigned int pk_tcp_id(unsigned int seq, unsigned int ack,
				     unsigned char doff, unsigned char tcpflags,
				     unsigned int tsval, unsigned short ipid)
{
	unsigned int h = 0x70a7u;
	h = pk_hash_step(h, seq);
	h = pk_hash_step(h, ack);
	h = pk_hash_step(h, ((unsigned int)doff << 8) | (tcpflags & PK_TCP_INVARIANT_FLAGS));
	h = pk_hash_step(h, tsval);
	h = pk_hash_step(h, ipid);
	return h ? h : 1;
}

/* Consistent sampling key: ack and TSval are identical on every segment of
 * a GSO super-packet and GRO only merges segments whose ack and options are
 * identical, so every host takes the same decision for every piece of the
 * same data. Without timestamps the sequence number in 64 KiB blocks is
 * used (weaker: a GSO send that straddles a block boundary is split). */
static inline unsigned int pk_sample_key(unsigned int seq, unsigned int ack,
					 unsigned int tsval, int has_ts)
{
	unsigned int h = 0x5a3bu;
	h = pk_hash_step(h, ack);
	h = pk_hash_step(h, has_ts ? tsval : (seq >> 16));
	return h;
}

/* ---- transactions (NP_REC_TXN / NP_REC_TXN_EVENTS "role") ---- */
enum { TXN_ROLE_CLIENT = 1, TXN_ROLE_SERVER = 2 };

/* ---- latency sketch bucket index (common/sketch.h) ----
 * A value v >= 64 falls in bucket (msb(v)-5)*64 + the 6 bits after its msb;
 * values below 64 are exact. Plain C, no builtins: the BPF side computes the
 * same index. */
#define NP_SK_SUB_BITS   6
#define NP_SK_SUB        (1u << NP_SK_SUB_BITS)          /* 64 */
#define NP_SK_NBUCKETS   (NP_SK_SUB * (64 - NP_SK_SUB_BITS + 1))  /* 3776 */

static inline unsigned int np_sketch_msb(unsigned long long v)
{
	unsigned int r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8)  { v >>= 8;  r += 8; }
	if (v >> 4)  { v >>= 4;  r += 4; }
	if (v >> 2)  { v >>= 2;  r += 2; }
	if (v >> 1)  { r += 1; }
	return r;
}

static inline unsigned int np_sketch_index(unsigned long long v)
{
	if (v < NP_SK_SUB)
		return (unsigned int)v;
	unsigned int m = np_sketch_msb(v);                 /* >= 6 */
	unsigned int shift = m - NP_SK_SUB_BITS;
	return (shift + 1) * NP_SK_SUB + (unsigned int)((v >> shift) & (NP_SK_SUB - 1));
}

#endif
