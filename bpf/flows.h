/* Types shared by bpf/flows.bpf.c and record/flows.c. */
#ifndef NP_BPF_FLOWS_H
#define NP_BPF_FLOWS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define FLOWS_MAX_ENTRIES 16384      /* flow slots (fewer on hosts with many CPUs) */
#define DROPS_MAX_ENTRIES 4096
#define DROPS_RING_BYTES (1u << 20)
/* slots probed from a new flow's starting slot before the table counts as full */
#define FLOWS_CLAIM_TRIES 16
/* srtt/cwnd and the tcp_sock segment counters are read on 1 send/recv in
 * FLOWS_SAMPLE_EVERY of a flow on a CPU (the first one included) */
#define FLOWS_SAMPLE_EVERY 4
/* rc_flow_meta.gen of a slot user space is releasing: no socket's gen, and
 * not free (0) yet */
#define FLOWS_GEN_RELEASING (~0ULL)
/* rc_flow_sk.slot of a socket the filters (or its protocol) leave out */
#define FLOWS_SLOT_NONE (~0U)
/* flow_events indexes (per-CPU counters) */
#define FLOWS_EV_HANDLED 0             /* events handled (events/s) */
#define FLOWS_EV_DROPS_FULL 2          /* drop events that found the ring buffer full */
#define FLOWS_EV_NO_SLOT 3             /* events lost: flow table full, no socket storage */
#define FLOWS_EV_N 4

/* A flow as its socket sees it: local/remote addresses (v4 mapped into v6),
 * ports in host order, the network namespace inode. */
struct rc_flow_key {
	__u32 laddr[4];
	__u32 raddr[4];
	__u64 netns;
	__u16 lport, rport;
	__u8  proto;       /* IPPROTO_TCP / IPPROTO_UDP */
	__u8  family;      /* AF_INET / AF_INET6 */
	__u8  pad[2];
};

/* Flows live in slots: a socket holds its slot number and generation in
 * its socket storage (tp_btf) or in a hash keyed by socket address
 * (raw_tp), so an event indexes two arrays instead of hashing a 5-tuple.
 *
 * Per slot and CPU (flow_ctr), cumulative since the slot was claimed: user
 * space sums the CPUs and subtracts what it read last interval, so nothing
 * is reset under a writer and no update between two reads is lost. User
 * space zeroes a slot only after taking it away from its socket
 * (FLOWS_GEN_RELEASING) and before freeing it. */
struct rc_flow_ctr {
	__u64 tx_bytes, rx_bytes;      /* payload, from sock_send/recv_length */
	__u64 tx_calls, rx_calls;      /* send/recv operations (UDP datagrams) */
	__u64 retrans;                 /* tcp_retransmit_skb calls */
	__u64 srtt_sum_us, srtt_n;     /* samples read at send/recv */
	__u32 srtt_min_us, srtt_max_us;
	/* tcp_sock counters (monotonic, user space takes the max over CPUs) */
	__u32 segs_in, segs_out, total_retrans, pad0;
};

/* Per slot, shared by the CPUs (flow_meta, mmapped by user space). gen is
 * claimed with a compare-and-swap from 0; the rest is written by the
 * claimer, then ready = gen says it is complete. */
struct rc_flow_meta {
	__u64 gen;                     /* 0 free, else the flow's generation */
	__u32 tid, pid;                /* owner: the last task that sent or received */
	__u32 srtt_last_us, cwnd_last; /* the last sample */
	__u8  proto;                   /* k.proto, next to what every event reads */
	__u8  pad[7];
	struct rc_flow_key k;
	__u64 ready;                   /* == gen once k and open_ns are written */
	__u64 open_ns, close_ns;       /* ESTABLISHED / first seen, CLOSE */
	__u64 cgroup_id;
	char  comm[16];                /* 128 bytes: one element, two cache lines */
};

/* Per socket: which slot, and the tuple the slot was claimed for (a UDP
 * socket that connects elsewhere becomes another flow). */
struct rc_flow_sk {
	__u64 gen;
	__u64 addrpair;                /* skc_addrpair */
	__u32 v6daddr[4];              /* AF_INET6: skc_v6_daddr */
	__u32 portpair;                /* skc_portpair */
	__u32 slot;                    /* FLOWS_SLOT_NONE: not recorded */
	__u16 family;
	__u8  proto, pad[5];
};

/* A drop: the packet's own addresses (src -> dst, not local/remote). */
struct rc_drop_key {
	__u32 saddr[4];
	__u32 daddr[4];
	__u64 netns;
	__u16 sport, dport;
	__u8  proto, family;
	__u16 pad0;
	__u32 reason;
	__u32 pad;
};

/* One drop, through the drop_events ring buffer. A drop whose event cannot
 * be reserved (ring full) is counted in the drops map instead, so the sum of
 * both is every drop exactly once. */
struct rc_drop_event {
	__u64 ts;                      /* bpf_ktime_get_ns() at kfree_skb */
	struct rc_drop_key k;
	__u32 seq, ack;                /* TCP header; 0 otherwise */
	__u32 len;                     /* L4 payload bytes (TCP: without header) */
	__u8  tcpflags;
	__u8  pad[3];
};

#endif
