/* Types shared by bpf/flows.bpf.c and record/families/flows.c. */
#ifndef NP_BPF_FLOWS_H
#define NP_BPF_FLOWS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define FLOWS_MAX_ENTRIES 16384      /* flow slots, a power of 2 (fewer on hosts with many CPUs) */
#define DROPS_MAX_ENTRIES 4096
#define DROPS_RING_BYTES (1u << 20)
/* a socket's flow is in one of the FLOWS_PROBES slots from its hash. 16,
 * not 8: a claim probes them once per flow (the hot path finds most flows
 * in the first), and a recorder starved of CPU (niced, on a busy host)
 * gives closed flows back late: 10000 connections of churn at load 7-9
 * filled the table to ~28 % between two give-backs, and 8 probes then
 * found no free slot for 0.1-1.5 % of new flows */
#define FLOWS_PROBES 16
/* srtt/cwnd, the tcp_sock segment counters and the owner are read on 1
 * send/recv in FLOWS_SAMPLE_EVERY of a flow (the first one included) */
#define FLOWS_SAMPLE_EVERY 16
/* TCP receives when their bytes come from the socket (--no-send-calls,
 * the default): 1 in FLOWS_RX_SAMPLE, drawn at random, samples the owner
 * and srtt/cwnd (the snapshots' socket reads and the close sample every
 * flow anyway) and claims a connection older than the recorder. A power
 * of 2 (the hub's gate draws it); 16 before the gate, when the sampled
 * calls, cold tcp_sock lines read, were ~0.3 % of a paced HTTP server's
 * busy CPU (docs/BENCHMARKS.md "The hub's flows gate"). */
#define FLOWS_RX_SAMPLE 256
/* rc_flow_meta.sk of a slot user space is giving back: matches no socket,
 * and is not free (0) yet */
#define FLOWS_SK_RELEASING 1ULL
/* flow_events indexes (per-CPU counters) */
#define FLOWS_EV_HANDLED 0             /* events handled (events/s) */
#define FLOWS_EV_CLOSED 1              /* TCP flows closed (user space gives their slots back early) */
#define FLOWS_EV_DROPS_FULL 2          /* drop events that found the ring buffer full */
#define FLOWS_EV_NO_SLOT 3             /* events lost: no free slot for a new flow */
#define FLOWS_EV_SEND_IN 4             /* NPREC_TEST_COUNT_ENTRIES: runs of the send program */
#define FLOWS_EV_RECV_IN 5             /* ... and of the receive program (tp_btf) */
#define FLOWS_EV_N 6

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

/* Flows live in slots of two arrays, found from the socket's address and
 * its tuple as they are in struct sock (hashed with one multiplication and a mix,
 * FLOWS_PROBES slots probed): an event costs an inlined array lookup
 * instead of hashing a 5-tuple key in a hash map, or a helper call.
 *
 * Counters are cumulative since the slot was claimed: user space
 * subtracts what it read last interval, so nothing is reset under a
 * writer and no update between two reads is lost. User space zeroes a
 * slot only after taking it away from its socket (FLOWS_SK_RELEASING) and
 * before freeing it.
 *
 * Per slot and CPU (flow_ctr): what the sampled calls, retransmissions
 * and state changes add, which the send/recv hot path does not touch. */
struct rc_flow_ctr {
	__u64 retrans;                 /* segments retransmitted (flows.bpf.c on_retrans) */
	__u64 srtt_sum_us, srtt_n;     /* samples read at send/recv */
	__u32 srtt_min_us, srtt_max_us;
	/* tcp_sock counters (monotonic, user space takes the max over CPUs) */
	__u32 segs_in, segs_out, total_retrans, pad0;
};

/* Per slot, shared by the CPUs (flow_meta, mmapped by user space). sk is
 * claimed with a compare-and-swap from 0; the claimer writes the rest and
 * gen last. The first cache line is all a send/recv touches: the owner
 * socket and the tuple it had when it claimed the slot (a UDP socket that
 * connects elsewhere, or a new socket at a freed one's address with
 * another tuple, is another flow), and the byte and call counters, added
 * to atomically (exact when CPUs share a socket). Under load that line is
 * cache-cold at most calls (the application's copies evict it): one miss
 * per call instead of three with per-CPU counters (their pointer and
 * value lines). */
struct rc_flow_meta {
	__u64 sk;                      /* owner socket's address; 0 free */
	__u64 addrpair;                /* skc_addrpair */
	__u32 portpair;                /* skc_portpair */
	__u8  proto, pad0[3];
	__u64 tx_bytes, rx_bytes;      /* payload: from sock_send/recv_length, or a
					* TCP socket's own counts (!flows_send_calls) */
	__u64 tx_calls, rx_calls;      /* send/recv operations (UDP datagrams) */
	__u64 gen;                     /* flow generation, 0 until the slot is filled */
	/* second line: an AF_INET6 socket's identity, the sampled calls */
	__u32 v6daddr[4];              /* AF_INET6: skc_v6_daddr */
	__u32 tid, pid;                /* owner: the last task that sent or received */
	__u32 srtt_last_us, cwnd_last; /* the last sample */
	/* written once per flow (close_ns, owner: when they change) */
	__u64 open_ns, close_ns;       /* ESTABLISHED / first seen, CLOSE */
	__u64 cgroup_id;
	struct rc_flow_key k;
	char  comm[16];
	/* 1 while the flow is counted in flows_unowned (a TCP flow claimed
	 * outside its owner's context with no owner known); cleared with a
	 * compare-and-swap by whoever uncounts it */
	__u32 unowned;
	__u8  pad1[4];                 /* 192 bytes: three cache lines */
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
