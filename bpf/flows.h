/* Types shared by bpf/flows.bpf.c and record/flows.c. */
#ifndef NP_BPF_FLOWS_H
#define NP_BPF_FLOWS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define FLOWS_MAX_ENTRIES 16384
#define DROPS_MAX_ENTRIES 4096
#define DROPS_RING_BYTES (1u << 20)

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

/* Per-CPU and cumulative since the flow was first seen: user space sums the
 * CPUs and subtracts what it read last interval, so nothing is ever reset
 * and no update between two reads is lost. */
struct rc_flow_stats {
	__u64 tx_bytes, rx_bytes;      /* payload, from sock_send/recv_length */
	__u64 tx_calls, rx_calls;      /* send/recv operations (UDP datagrams) */
	__u64 retrans;                 /* tcp_retransmit_skb calls */
	__u64 srtt_sum_us, srtt_n;     /* tcp_probe samples */
	__u32 srtt_min_us, srtt_max_us;
	__u32 srtt_last_us, cwnd_last;
	__u64 sample_ns;               /* time of srtt_last/cwnd_last on this CPU */
	__u64 open_ns, close_ns;       /* ESTABLISHED / first seen, CLOSE */
	/* tcp_sock counters (monotonic, user space takes the max over CPUs) */
	__u32 segs_in, segs_out, total_retrans, pad0;
	/* owner: the last task that sent or received on the flow */
	__u64 owner_ns;
	__u64 cgroup_id;
	__u32 pid, tid;
	char  comm[16];
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
