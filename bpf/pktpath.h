/* Packet-path tracing: types shared by bpf/pktpath.bpf.c, record/families/pktpath.c
 * and every reader of NP_REC_PKT_EVENTS (analyzer, tests/tools/pktmatch.c).
 * Include <linux/types.h> (user space) or vmlinux.h (BPF) first.
 * docs/PACKET_IDS.md explains the passive ID; docs/records/pktpath.md the
 * record bodies. */
#ifndef NP_PKTPATH_H
#define NP_PKTPATH_H

#include "npwire.h"   /* hook ids, PK_F_* flags, the packet-ID functions */

#define PK_MAX_IFACES 16
#define PK_MAX_PORTS  16

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
	__u64 missed;       /* netif_receive: packets TC ingress saw right after
			     * the tracepoint without this program having parsed
			     * them (the kernel did not run it for them);
			     * dev_queue: packets TC egress saw right before the
			     * tracepoint that this program did not parse */
};

/* pk_qdisc_pend value: a packet a qdisc accepted (bpf/pktpath.bpf.c). */
struct pk_qpend {
	__u64 key;          /* pk_rx_key of the packet */
	__u64 t;            /* enqueue time, CLOCK_MONOTONIC ns */
};

#endif
