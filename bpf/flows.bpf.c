// SPDX-License-Identifier: GPL-2.0
/* Flows family: per TCP/UDP flow payload bytes each way, segments,
 * retransmissions, srtt/cwnd, open/close time, owner; drops by flow and
 * kernel drop reason. A flow is a slot of two arrays found from its
 * socket's address and tuple (flows.h), without a hash-map lookup. Every
 * tracepoint has a tp_btf and a raw_tp variant; user space loads one of
 * the two (bpf_program__set_autoload). */
/* BPF_PROG names every tracepoint argument; most handlers use few of them. */
#pragma clang diagnostic ignored "-Wunused-parameter"
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "filter.bpf.h"
#include "flows.h"
#include "hub.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define RC_IPPROTO_TCP 6
#define RC_IPPROTO_UDP 17
#define RC_TCP_ESTABLISHED 1
#define RC_TCP_SYN_SENT 2
#define RC_TCP_FIN_WAIT1 4
#define RC_TCP_FIN_WAIT2 5
#define RC_TCP_TIME_WAIT 6
#define RC_TCP_CLOSE 7
#define RC_TCP_CLOSE_WAIT 8
#define RC_TCP_LAST_ACK 9
#define RC_TCP_CLOSING 11
#define RC_RCV_SHUTDOWN 1
#define RC_MSG_PEEK 2
#define RC_ETH_P_IP 0x0800
#define RC_ETH_P_IPV6 0x86DD

/* Per-flow counters by slot and CPU that the send/recv hot path does not
 * touch; who the flow is and its byte/call counters, by slot (flows.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FLOWS_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct rc_flow_ctr);
} flow_ctr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, FLOWS_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct rc_flow_meta);
} flow_meta SEC(".maps");

/* A TCP flow's slot by socket, for its close (written once per flow). */
struct rc_flow_at {
	__u32 slot, pad;
	__u64 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FLOWS_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, struct rc_flow_at);
} flow_tcp_slot SEC(".maps");

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

/* per-CPU counters, FLOWS_EV_* */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FLOWS_EV_N);
	__type(key, __u32);
	__type(value, __u64);
} flow_events SEC(".maps");

const volatile bool rc_task_filter = false;   /* --pid given: softirq hooks only update */
const volatile __u32 flows_slot_mask = FLOWS_MAX_ENTRIES - 1;   /* flow_meta's max_entries - 1 */
/* tcp:tcp_retransmit_skb has a third argument, err, on newer kernels (this
 * VM's 6.18), and then fires for attempts that sent nothing too (on_retrans).
 * Set from BTF at load; while false the argument is never read, so older
 * kernels load the programs. */
const volatile bool flows_retrans_has_err = false;

/* False with --no-send-calls (tp_btf only): a TCP flow's bytes sent come
 * from its socket (tcp_written) at every snapshot (flows_tcp_iter) and
 * when it closes, and the send program counts only the other protocols'
 * sends (UDP: no socket field totals them); TCP send calls are not
 * counted. */
const volatile bool flows_send_calls = true;

/* NPREC_TEST_COUNT_ENTRIES=1 (tests only: rec_flows_gate.sh): the send
 * and receive programs count their runs, which a tail call does not add to
 * the kernel's run_cnt. A constant of the loaded program: when false the
 * verifier leaves the counting out. */
const volatile bool flows_count_entries = false;

/* generations handed out so far */
__u64 flows_gen = 0;

/* The hub's TCP gates (bpf/hub.h), shared with the hub by user space.
 * The receive gate's want counts the TCP flows claimed with no owner known
 * (flow meta's unowned): while there are any, every TCP receive looks its
 * flow up to name the owner (tcp_rx_call); else 1 in FLOWS_RX_SAMPLE
 * does, drawn by the hub when its gate is on (the others never enter this
 * program), here when not. Without a hub the map is this object's own. */
HUB_GATES_MAP(hub_gates);

static __always_inline struct hub_gate *flows_rx_gate(void)
{
	__u32 k = HUB_SOCK_RECV;
	return bpf_map_lookup_elem(&hub_gates, &k);
}

/* !flows_send_calls without --pid: a TCP flow's bytes received come from
 * its socket too (tcp_read), and its receives only name the owner and
 * sample (tcp_rx_call): the receive path was ~80 ns a call under nginx
 * (docs/BENCHMARKS.md "flows: where its per-call time goes"). With --pid
 * flows are claimed by the filtered tasks' calls, which count as before. */
static __always_inline bool tcp_rx_sock(bool btf)
{
	return btf && !flows_send_calls && !rc_task_filter;
}

/* A TCP socket's flow and what the application had written to it and read
 * from it when the flow's slot was claimed (!flows_send_calls); the owner
 * of an active open, from its connect() (the flow is claimed at
 * ESTABLISHED, in softirq); whether a FIN came in order. */
struct flows_tcp_at {
	__u32 slot, fin_in;
	__u64 gen, base, rbase;
	__u32 tid, pid;
	__u64 cgroup_id;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct flows_tcp_at);
} flows_tcp_sk SEC(".maps");

/* Bytes the application has written to a TCP socket: those acknowledged
 * (64 bits) and those after snd_una (in flight or unsent). A queued FIN
 * counts one: read only before the application's close queues it. */
static __always_inline __u64 tcp_written(const struct tcp_sock *tp)
{
	return tp->bytes_acked + (__u32)(tp->write_seq - tp->snd_una);
}

/* The slot's tx_bytes from its socket (!flows_send_calls). Only raised:
 * an iterator pass and a close racing each other store what they read,
 * and the later read is the larger. */
static __always_inline void tcp_tx_store(const struct tcp_sock *tp, const struct flows_tcp_at *a,
					 struct rc_flow_meta *m)
{
	__u64 w = tcp_written(tp);
	if (w > a->base && w - a->base > m->tx_bytes)
		m->tx_bytes = w - a->base;
}

/* Bytes the application has read from a TCP socket: those received in
 * order (bytes_received, 64 bits; a FIN counts one) less those still
 * queued (rcv_nxt - copied_seq), less the FIN once a read stepped over it
 * (copied_seq moves past it). Neither a peek nor unread data at a close
 * moves copied_seq; a splice or zero-copy receive does (bytes read that
 * sock_recv_length never saw). fin_in after the counters: the state hook
 * sets it before any read can step over the FIN (x86 loads in order).
 * bytes_received and rcv_nxt are stored one after the other by the
 * softirq: a read between the two can count a segment as read before it
 * is; the next read of the application makes that true. */
static __always_inline __u64 tcp_read(const struct tcp_sock *tp, const struct flows_tcp_at *a)
{
	__u64 got = tp->bytes_received;
	/* bytes_received first: a segment that comes between the two reads
	 * (tcp_rcv_nxt_update counts it, then moves rcv_nxt) is then in
	 * unread and not in got, an undercount the raise-only stores pass
	 * over; in the other order it would be counted before it is read */
	asm volatile("" ::: "memory");
	__u32 unread = tp->rcv_nxt - tp->copied_seq;
	asm volatile("" ::: "memory");
	__u64 off = (__u64)unread + (!unread && a->fin_in);
	return got > off ? got - off : 0;
}

/* The slot's rx_bytes from its socket (tcp_rx_sock): only raised, as
 * tcp_tx_store. */
static __always_inline void tcp_rx_store(const struct tcp_sock *tp, const struct flows_tcp_at *a,
					 struct rc_flow_meta *m)
{
	__u64 r = tcp_read(tp, a);
	if (r > a->rbase && r - a->rbase > m->rx_bytes)
		m->rx_bytes = r - a->rbase;
}

static __always_inline void count_ev(__u32 k)
{
	__u64 *n = bpf_map_lookup_elem(&flow_events, &k);
	if (n)
		(*n)++;
}

/* Key of the socket's flow; false when it is not a TCP/UDP inet socket. */
/* btf: the program is a tp_btf one (direct loads, see filter.bpf.h). */
static __always_inline bool sk_flow_key_x(const struct sock *sk, struct rc_flow_key *k, bool btf)
{
	/* first: the verifier refuses the undefined values that clang
	 * otherwise spills on the early return */
	__builtin_memset(k, 0, sizeof(*k));
	__u8 proto = rc_sk_protocol_x(sk, btf);
	if (proto != RC_IPPROTO_TCP && proto != RC_IPPROTO_UDP)
		return false;
	int fam = rc_sk_addrs_x(sk, btf, k->laddr, k->raddr, &k->lport, &k->rport);
	if (!fam)
		return false;
	k->family = fam;
	k->proto = proto;
	k->netns = rc_sk_netns_ino_x(sk, btf);
	return true;
}

static __always_inline bool flow_filter(const struct sock *sk, const struct rc_flow_key *k)
{
	return rc_filter_tuple(k->netns, k->laddr, k->raddr, k->lport, k->rport) && rc_filter_sk_cgroup(sk);
}

/* ---- a socket's slot ---- */

/* The socket's identity as a number: its address minus that of a map. The
 * verifier lets only a pointer minus a pointer become a scalar (to hash and
 * store), and the difference is as unique as the address. */
static __always_inline __u64 sk_id(const struct sock *sk, bool btf)
{
	if (!btf)                 /* a raw_tp argument is a number already */
		return (__u64)sk;
	return (__u64)sk - (__u64)(void *)&flow_meta;
}

/* What identifies a socket's flow on the hot path: the socket and the
 * tuple it has now (v6 addresses compared separately). */
struct sk_ident {
	__u64 skid, addrpair;
	__u32 portpair;
};

static __always_inline void sk_ident(const struct sock *sk, bool btf, struct sk_ident *x)
{
	x->skid = sk_id(sk, btf);
	if (btf) {
		x->addrpair = sk->__sk_common.skc_addrpair;
		x->portpair = sk->__sk_common.skc_portpair;
	} else {
		x->addrpair = BPF_CORE_READ(sk, __sk_common.skc_addrpair);
		x->portpair = BPF_CORE_READ(sk, __sk_common.skc_portpair);
	}
}

/* First slot of the socket's window: a hash of its address and tuple.
 * The tuple matters: one socket after another, each freed before the
 * next, often gets the same address, and their flows (kept until user
 * space read them) must not all compete for one window. The product is
 * mixed down (a shift-xor after the multiplication, as in MurmurHash3's
 * finalizer) because the bits kept are the low ones: without it a local
 * port entered them only through its low 14 bits times a constant, so a
 * churn's ports made a lattice of windows and ports 16384 apart shared one
 * (rec_flows' churn found no free slot now and then). */
static __always_inline __u32 sk_slot0(const struct sk_ident *x)
{
	__u64 v = x->skid ^ x->addrpair ^ ((__u64)x->portpair << 24);
	v ^= v >> 33;
	v *= 0xFF51AFD7ED558CCDULL;
	v ^= v >> 33;
	return (__u32)v & flows_slot_mask;
}

/* The slot's owner is this socket with the tuple it has now. */
static __always_inline bool meta_is(const struct rc_flow_meta *m, const struct sk_ident *x,
				    const struct sock *sk, bool btf)
{
	if (m->sk != x->skid || m->portpair != x->portpair || m->addrpair != x->addrpair)
		return false;
	if (btf) {
		const struct sock_common *c = &sk->__sk_common;
		if (c->skc_family != AF_INET6)
			return true;
		return m->v6daddr[0] == c->skc_v6_daddr.in6_u.u6_addr32[0] &&
		       m->v6daddr[1] == c->skc_v6_daddr.in6_u.u6_addr32[1] &&
		       m->v6daddr[2] == c->skc_v6_daddr.in6_u.u6_addr32[2] &&
		       m->v6daddr[3] == c->skc_v6_daddr.in6_u.u6_addr32[3];
	}
	__u32 d6[4];
	if (BPF_CORE_READ(sk, __sk_common.skc_family) != AF_INET6)
		return true;
	bpf_core_read(d6, 16, &sk->__sk_common.skc_v6_daddr);
	return m->v6daddr[0] == d6[0] && m->v6daddr[1] == d6[1] &&
	       m->v6daddr[2] == d6[2] && m->v6daddr[3] == d6[3];
}

static __always_inline void meta_tuple(struct rc_flow_meta *m, const struct sock *sk, bool btf)
{
	if (btf) {
		const struct sock_common *c = &sk->__sk_common;
		m->portpair = c->skc_portpair;
		m->addrpair = c->skc_addrpair;
		for (int i = 0; i < 4; i++)
			m->v6daddr[i] = c->skc_v6_daddr.in6_u.u6_addr32[i];
	} else {
		m->portpair = BPF_CORE_READ(sk, __sk_common.skc_portpair);
		m->addrpair = BPF_CORE_READ(sk, __sk_common.skc_addrpair);
		bpf_core_read(m->v6daddr, 16, &sk->__sk_common.skc_v6_daddr);
	}
}

static __always_inline void flow_owner(struct rc_flow_meta *m, __u64 id)
{
	m->tid = (__u32)id;
	m->pid = id >> 32;
	m->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(m->comm, sizeof(m->comm));
}

/* !flows_send_calls: the socket's storage names its new slot, with what
 * was written and read so far (what a flow first seen mid-connection
 * moved before is not its interval's). A flow claimed outside its owner's
 * context (task false: softirq) takes the owner its connect() left, or is
 * counted unowned until a receive names it (tcp_rx_call). */
static __always_inline void tcp_at_claim(const struct sock *sk, struct rc_flow_meta *m, __u32 slot, __u64 gen,
					 bool task)
{
	const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
	if (!tp)
		return;
	struct flows_tcp_at *a = bpf_sk_storage_get(&flows_tcp_sk, (void *)sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!a)
		return;
	a->slot = slot;
	a->gen = gen;
	a->base = tcp_written(tp);
	a->rbase = tcp_read(tp, a);
	if (task || !tcp_rx_sock(true))
		return;
	if (a->tid) {
		m->tid = a->tid;
		m->pid = a->pid;
		m->cgroup_id = a->cgroup_id;
		__builtin_memcpy(m->comm, a->comm, sizeof(m->comm));
		return;
	}
	struct hub_gate *g = flows_rx_gate();
	if (!g)
		return;
	m->unowned = 1;
	__sync_fetch_and_add(&g->want, 1);
}

/* A flow counted unowned (the receive gate's want) no longer is (owned,
 * closed); once. */
static __always_inline void flow_uncount(struct rc_flow_meta *m)
{
	if (!m->unowned || __sync_val_compare_and_swap(&m->unowned, 1, 0) != 1)
		return;
	struct hub_gate *g = flows_rx_gate();
	if (g)
		__sync_fetch_and_add(&g->want, -1);
}

/* tcp_rx_sock, at SYN_SENT (connect(), in the caller's context): the
 * owner for the flow that ESTABLISHED will claim in softirq. */
static __always_inline void tcp_owner_stash(const struct sock *sk)
{
	struct flows_tcp_at *a = bpf_sk_storage_get(&flows_tcp_sk, (void *)sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!a)
		return;
	__u64 id = bpf_get_current_pid_tgid();
	a->tid = (__u32)id;
	a->pid = id >> 32;
	a->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(a->comm, sizeof(a->comm));
}

/* At a state change: a FIN came in order. tcp_fin() marks the receive side
 * shut before it moves the state (ESTABLISHED -> CLOSE_WAIT, FIN_WAIT1 ->
 * CLOSING or TIME_WAIT, FIN_WAIT2 -> TIME_WAIT, or -> CLOSE by
 * tcp_time_wait() when the application still holds the socket: a
 * half-closed client); an abort marks it after its move to CLOSE
 * (tcp_done). The application's close() marks it too, before its own
 * moves (ESTABLISHED -> FIN_WAIT1 -> FIN_WAIT2): those are not a FIN, and
 * taking one off a sender that had read nothing made its bytes read -1
 * (rec_flows.sh, when a snapshot fell between its close and the peer's
 * FIN). Left: FIN_WAIT2 -> CLOSE by the timer of a socket already closed,
 * which reads nothing more. */
static __always_inline bool tcp_fin_came(const struct sock *sk, int oldstate, int newstate)
{
	if (newstate != RC_TCP_CLOSE_WAIT && newstate != RC_TCP_CLOSING && newstate != RC_TCP_TIME_WAIT &&
	    !(newstate == RC_TCP_CLOSE && oldstate == RC_TCP_FIN_WAIT2))
		return false;
	return BPF_CORE_READ_BITFIELD(sk, sk_shutdown) & RC_RCV_SHUTDOWN;
}

/* tcp_rx_sock: a FIN came in order (tcp_read takes it off once read) */
static __always_inline void tcp_fin_in(const struct sock *sk)
{
	struct flows_tcp_at *a = bpf_sk_storage_get(&flows_tcp_sk, (void *)sk, 0, 0);
	if (a)
		a->fin_in = 1;
}

/* !flows_send_calls: a TCP socket's storage, the socket and its flow's
 * slot, while the slot is still its flow's (NULL else) */
static __always_inline struct rc_flow_meta *tcp_at_flow(const struct sock *sk, struct flows_tcp_at **ap,
							const struct tcp_sock **tpp, __u32 *slotp)
{
	struct flows_tcp_at *a = bpf_sk_storage_get(&flows_tcp_sk, (void *)sk, 0, 0);
	const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
	if (!a || !tp || !a->gen)
		return NULL;
	__u32 slot = a->slot;
	struct rc_flow_meta *m = bpf_map_lookup_elem(&flow_meta, &slot);
	if (!m || m->gen != a->gen)
		return NULL;
	*ap = a;
	*tpp = tp;
	*slotp = slot;
	return m;
}

/* tcp_rx_sock: the socket's bytes read into its flow's slot */
static __always_inline void tcp_rx_sync(const struct sock *sk)
{
	struct flows_tcp_at *a;
	const struct tcp_sock *tp;
	__u32 slot;
	struct rc_flow_meta *m = tcp_at_flow(sk, &a, &tp, &slot);
	if (m)
		tcp_rx_store(tp, a, m);
}

static __always_inline void tcp_sample(const struct sock *sk, bool btf, struct rc_flow_ctr *c,
				       struct rc_flow_meta *m);

/* !flows_send_calls, at the application's close: the TCP socket's bytes
 * written into its flow's slot, and a srtt/cwnd sample (a sender that
 * receives nothing and finishes between two snapshots has no other) */
static __always_inline void tcp_tx_sync(const struct sock *sk)
{
	struct flows_tcp_at *a;
	const struct tcp_sock *tp;
	__u32 slot;
	struct rc_flow_meta *m = tcp_at_flow(sk, &a, &tp, &slot);
	if (!m)
		return;
	tcp_tx_store(tp, a, m);
	if (tcp_rx_sock(true))
		tcp_rx_store(tp, a, m);
	struct rc_flow_ctr *c = bpf_map_lookup_elem(&flow_ctr, &slot);
	if (c)
		tcp_sample(sk, true, c, m);
}

/* Slow path, once per flow, and for sockets that are not recorded: the
 * tuple and the filters (first: a filtered socket's events end there),
 * the rest of the socket's probe window, a free slot in that window. task:
 * in the owner's context (not softirq). create false: find only. */
static __always_inline struct rc_flow_meta *flow_slow(const struct sock *sk, const struct sk_ident *x, __u32 s0,
						       bool btf, bool create, bool task, __u32 *slotp)
{
	struct rc_flow_key k;
	if (!sk_flow_key_x(sk, &k, btf) || !flow_filter(sk, &k))
		return NULL;
	for (__u32 i = 1; i < FLOWS_PROBES; i++) {
		__u32 s = (s0 + i) & flows_slot_mask;
		struct rc_flow_meta *m = bpf_map_lookup_elem(&flow_meta, &s);
		if (!m)
			return NULL;
		if (meta_is(m, x, sk, btf)) {
			*slotp = s;
			return m;
		}
	}
	if (!create)
		return NULL;
	for (__u32 i = 0; i < FLOWS_PROBES; i++) {
		__u32 s = (s0 + i) & flows_slot_mask;
		struct rc_flow_meta *m = bpf_map_lookup_elem(&flow_meta, &s);
		if (!m)
			return NULL;
		if (m->sk || __sync_val_compare_and_swap(&m->sk, 0, x->skid) != 0)
			continue;
		meta_tuple(m, sk, btf);
		m->proto = k.proto;
		m->k = k;
		m->open_ns = bpf_ktime_get_ns();
		m->close_ns = 0;
		m->srtt_last_us = m->cwnd_last = 0;
		if (task)
			flow_owner(m, bpf_get_current_pid_tgid());
		__u64 gen = __sync_fetch_and_add(&flows_gen, 1) + 1;
		m->gen = gen;
		if (k.proto == RC_IPPROTO_TCP) {
			struct rc_flow_at at = { .slot = s, .gen = gen };
			bpf_map_update_elem(&flow_tcp_slot, &x->skid, &at, BPF_ANY);
			if (btf && !flows_send_calls)
				tcp_at_claim(sk, m, s, gen, task);
		}
		*slotp = s;
		return m;
	}
	count_ev(FLOWS_EV_NO_SLOT);
	return NULL;
}

/* The socket's flow: its shared record and slot (*slotp); NULL when the
 * socket is not recorded. */
static __always_inline struct rc_flow_meta *flow_get(const struct sock *sk, bool btf, bool create, bool task,
						     __u32 *slotp)
{
	struct sk_ident x;
	sk_ident(sk, btf, &x);
	__u32 slot = sk_slot0(&x);
	struct rc_flow_meta *m = bpf_map_lookup_elem(&flow_meta, &slot);
	if (!m)
		return NULL;
	if (!meta_is(m, &x, sk, btf))
		return flow_slow(sk, &x, slot, btf, create, task, slotp);
	*slotp = slot;
	return m;
}

/* The socket's flow and its counters on this CPU (*cp). */
static __always_inline struct rc_flow_meta *flow_get_ctr(const struct sock *sk, bool btf, bool create,
							 struct rc_flow_ctr **cp)
{
	__u32 slot;
	struct rc_flow_meta *m = flow_get(sk, btf, create, false, &slot);
	if (!m || !(*cp = bpf_map_lookup_elem(&flow_ctr, &slot)))
		return NULL;
	return m;
}

/* A TCP socket's flow at close, whatever its tuple became (by then its
 * local port may be released already): the slot it registered. */
static __always_inline struct rc_flow_meta *flow_find_closing(const struct sock *sk, bool btf,
							      struct rc_flow_ctr **cp)
{
	__u64 skid = sk_id(sk, btf);
	struct rc_flow_at *at = bpf_map_lookup_elem(&flow_tcp_slot, &skid);
	if (!at)
		return NULL;
	__u32 slot = at->slot;
	__u64 gen = at->gen;
	bpf_map_delete_elem(&flow_tcp_slot, &skid);
	struct rc_flow_meta *m = bpf_map_lookup_elem(&flow_meta, &slot);
	if (!m || m->sk != skid || m->gen != gen || !(*cp = bpf_map_lookup_elem(&flow_ctr, &slot)))
		return NULL;
	return m;
}

/* ---- tcp_sock reads ---- */

static __always_inline void tcp_counters(const struct sock *sk, bool btf, struct rc_flow_ctr *c)
{
	__u32 in, out, rt;
	if (btf) {
		const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
		if (!tp)
			return;
		in = tp->segs_in; out = tp->segs_out; rt = tp->total_retrans;
	} else {
		const struct tcp_sock *tp = (const struct tcp_sock *)sk;
		in = BPF_CORE_READ(tp, segs_in);
		out = BPF_CORE_READ(tp, segs_out);
		rt = BPF_CORE_READ(tp, total_retrans);
	}
	if (in > c->segs_in) c->segs_in = in;
	if (out > c->segs_out) c->segs_out = out;
	if (rt > c->total_retrans) c->total_retrans = rt;
}

/* srtt/cwnd and the segment counters in one go, at a send/recv. There is
 * no tcp:tcp_probe hook: it fired per received segment, in softirq, more
 * often than the application's own calls, for the same values. */
static __always_inline void tcp_sample(const struct sock *sk, bool btf, struct rc_flow_ctr *c,
				       struct rc_flow_meta *m)
{
	__u32 srtt, cwnd, in, out, rt;
	if (btf) {
		const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
		if (!tp)
			return;
		srtt = tp->srtt_us >> 3; cwnd = tp->snd_cwnd;
		in = tp->segs_in; out = tp->segs_out; rt = tp->total_retrans;
	} else {
		const struct tcp_sock *tp = (const struct tcp_sock *)sk;
		srtt = BPF_CORE_READ(tp, srtt_us) >> 3;
		cwnd = BPF_CORE_READ(tp, snd_cwnd);
		in = BPF_CORE_READ(tp, segs_in);
		out = BPF_CORE_READ(tp, segs_out);
		rt = BPF_CORE_READ(tp, total_retrans);
	}
	if (in > c->segs_in) c->segs_in = in;
	if (out > c->segs_out) c->segs_out = out;
	if (rt > c->total_retrans) c->total_retrans = rt;
	if (!srtt)                       /* no RTT measured yet */
		return;
	c->srtt_sum_us += srtt;
	c->srtt_n++;
	if (!c->srtt_min_us || srtt < c->srtt_min_us) c->srtt_min_us = srtt;
	if (srtt > c->srtt_max_us) c->srtt_max_us = srtt;
	m->srtt_last_us = srtt;
	m->cwnd_last = cwnd;
}

/* ---- hooks ---- */

/* The sampled call: the owner (pid, comm, cgroup) and TCP's srtt/cwnd and
 * segment counters, into this CPU's counters of the slot. */
static __always_inline void io_sample(const struct sock *sk, bool btf, struct rc_flow_meta *m, __u32 slot)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)id != m->tid)
		flow_owner(m, id);
	if (m->proto != RC_IPPROTO_TCP)
		return;
	struct rc_flow_ctr *c = bpf_map_lookup_elem(&flow_ctr, &slot);
	if (c)
		tcp_sample(sk, btf, c, m);
}

/* tcp_rx_sock, a TCP receive: its bytes come from the socket (tcp_read),
 * so a receive only names the owner of a flow that has none (while any
 * flow has none: a passive open claimed in softirq) and samples the owner
 * and srtt/cwnd on 1 in FLOWS_RX_SAMPLE, drawn at random (a CPU serving its
 * connections in turn would sample the same one with a counter), which
 * claims a flow older than the recorder. */
static __always_inline int tcp_rx_call(struct sock *sk)
{
	const struct hub_gate *g = flows_rx_gate();
	if (!g)
		return 0;
	__u64 want = g->want;
	/* with the gate on and nothing wanted, the hub drew this call */
	bool sample = (g->on && !want) || (bpf_get_prandom_u32() & (FLOWS_RX_SAMPLE - 1)) == 0;
	if (!sample && !want)
		return 0;
	__u16 fam = rc_sk_family_x(sk, true);
	if (fam != AF_INET && fam != AF_INET6)
		return 0;
	__u32 slot;
	struct rc_flow_meta *m = flow_get(sk, true, true, true, &slot);
	if (!m)
		return 0;
	bool named = m->unowned;
	flow_uncount(m);
	if (sample || named)
		io_sample(sk, true, m, slot);
	return 0;
}

/* tcp_rx_sock, a TCP send: nothing to count (the socket has it), but while
 * some flow has no owner it names the owner of its flow, if that is one:
 * a server that only sends on a connection (iperf3 -R's data) has no
 * receive to name it, and kept every TCP receive of the machine on the
 * lookup path until it closed. The hub lets TCP sends in only then. */
static __always_inline int tcp_tx_call(struct sock *sk)
{
	const struct hub_gate *g = flows_rx_gate();
	if (!g || !g->want)
		return 0;
	__u16 fam = rc_sk_family_x(sk, true);
	if (fam != AF_INET && fam != AF_INET6)
		return 0;
	__u32 slot;
	struct rc_flow_meta *m = flow_get(sk, true, false, true, &slot);
	if (!m || !m->unowned)
		return 0;
	flow_uncount(m);
	io_sample(sk, true, m, slot);
	return 0;
}

/* A send/recv touches the first line of its slot only (flows.h), but on 1
 * call in FLOWS_SAMPLE_EVERY of the flow (read before the add: two CPUs
 * racing may both sample or both skip, which only moves a sample). The
 * owner is checked when the flow is created and on the sampled calls
 * only: one helper call less on every other one. */
static __always_inline int on_io(struct sock *sk, int ret, int flags, bool tx, bool btf)
{
	__u32 slot;
	if (ret <= 0 || (!tx && (flags & RC_MSG_PEEK)) || !sk)
		return 0;
	/* !flows_send_calls: a TCP socket's bytes sent come from the socket
	 * (flows_tcp_iter); the send program stays for the protocols that
	 * keep no such count (UDP) */
	if (tx && btf && !flows_send_calls && rc_sk_protocol_x(sk, btf) == RC_IPPROTO_TCP)
		return tcp_rx_sock(btf) ? tcp_tx_call(sk) : 0;
	if (!tx && tcp_rx_sock(btf) && rc_sk_protocol_x(sk, btf) == RC_IPPROTO_TCP)
		return tcp_rx_call(sk);
	/* AF_UNIX and the like pass here too: out before any lookup */
	__u16 fam = rc_sk_family_x(sk, btf);
	if (fam != AF_INET && fam != AF_INET6)
		return 0;
	if (rc_filter_npids && !rc_filter_pid(bpf_get_current_pid_tgid() >> 32))
		return 0;
	struct rc_flow_meta *m = flow_get(sk, btf, true, true, &slot);
	if (!m)
		return 0;
	/* no count_ev: user space counts these events from tx/rx_calls */
	if ((m->tx_calls + m->rx_calls) % FLOWS_SAMPLE_EVERY == 0)
		io_sample(sk, btf, m, slot);
	if (tx) {
		__sync_fetch_and_add(&m->tx_bytes, ret);
		__sync_fetch_and_add(&m->tx_calls, 1);
	} else {
		__sync_fetch_and_add(&m->rx_bytes, ret);
		__sync_fetch_and_add(&m->rx_calls, 1);
	}
	return 0;
}

/* The segments of a retransmission, as the kernel's TcpRetransSegs and the
 * socket's total_retrans count them: tcp_skb_pcount() of the skb, which
 * by the tracepoint holds just what was resent (a retransmission can carry
 * several segments, GSO or not). Where the tracepoint has err (args are
 * positional in both variants), attempts that stopped before sending
 * (err < 0: -EBUSY, the original still in a host queue; -ENOMEM, -EAGAIN
 * ...) count nothing; err > 0 is a local qdisc's drop (NET_XMIT_DROP)
 * of a segment the kernel counted as retransmitted. */
static __always_inline int on_retrans(const struct sock *sk, const struct sk_buff *skb,
				      const __u64 *args, bool btf)
{
	struct rc_flow_ctr *c;
	if (flows_retrans_has_err && (int)args[2] < 0)
		return 0;
	if (!sk || !skb || !flow_get_ctr(sk, btf, !rc_task_filter, &c))
		return 0;
	const struct tcp_skb_cb *cb = (const struct tcp_skb_cb *)&skb->cb[0];
	__u16 segs = BPF_CORE_READ(cb, tcp_gso_segs);
	count_ev(FLOWS_EV_HANDLED);
	c->retrans += segs ? segs : 1;
	tcp_counters(sk, btf, c);
	return 0;
}

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate, bool btf)
{
	struct rc_flow_meta *m;
	struct rc_flow_ctr *c;
	/* !flows_send_calls: what was sent, final when the connection leaves
	 * ESTABLISHED or CLOSE_WAIT (the application's shutdown or close: the
	 * FIN is queued after the state changes; an abort). Later changes
	 * would count the FIN, a close() after a shutdown() too: it "changes"
	 * FIN_WAIT1 to FIN_WAIT1 (rec_flows.sh read one byte too many when the
	 * FIN was not acknowledged yet at the close). */
	if (btf && !flows_send_calls && (oldstate == RC_TCP_ESTABLISHED || oldstate == RC_TCP_CLOSE_WAIT) &&
	    (newstate == RC_TCP_FIN_WAIT1 || newstate == RC_TCP_LAST_ACK || newstate == RC_TCP_CLOSE))
		tcp_tx_sync(sk);
	if (tcp_rx_sock(btf)) {
		if (newstate == RC_TCP_SYN_SENT)
			tcp_owner_stash(sk);
		else if (tcp_fin_came(sk, oldstate, newstate))
			tcp_fin_in(sk);
	}
	/* a connect()ing socket has no remote port yet at SYN_SENT time for
	 * some paths; ESTABLISHED always has the full tuple */
	if (newstate == RC_TCP_ESTABLISHED) {
		if (rc_sk_protocol_x(sk, btf) != RC_IPPROTO_TCP)
			return 0;
		__u32 slot;
		m = flow_get(sk, btf, !rc_task_filter, false, &slot);
		if (!m)
			return 0;
		m->open_ns = bpf_ktime_get_ns();
	} else if (newstate == RC_TCP_CLOSE) {
		/* by now the port may be released (inet_put_port): the
		 * socket's own slot, not its tuple */
		m = flow_find_closing(sk, btf, &c);
		if (!m)
			return 0;
		m->close_ns = bpf_ktime_get_ns();
		tcp_counters(sk, btf, c);
		/* reads after this (a half-closed client reading its
		 * response) come at the socket's end: flows_destroy_btf */
		if (tcp_rx_sock(btf))
			tcp_rx_sync(sk);
		flow_uncount(m);
		count_ev(FLOWS_EV_CLOSED);
	} else {
		return 0;
	}
	count_ev(FLOWS_EV_HANDLED);
	return 0;
}

/* !flows_send_calls: run by user space before it reads the slots at every
 * snapshot: each open TCP flow's bytes sent (and read: tcp_rx_sock) from
 * its socket, and one
 * srtt/cwnd sample (a sender that receives nothing has no sampled calls).
 * Sockets past the application's close keep what their close stored. */
SEC("iter/bpf_sk_storage_map")
int flows_tcp_iter(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct sock *sk = ctx->sk;
	struct flows_tcp_at *a = ctx->value;
	if (!sk || !a)
		return 0;
	const struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	__u32 slot = a->slot;
	struct rc_flow_meta *m = bpf_map_lookup_elem(&flow_meta, &slot);
	if (!tp || !a->gen || !m || m->gen != a->gen)
		return 0;
	/* reads go on in every state until the application's close */
	if (tcp_rx_sock(true))
		tcp_rx_store(tp, a, m);
	/* the state after the counters: the application's close changes it
	 * before it queues the FIN, so a write_seq read here with the FIN in
	 * it is followed by a state read of FIN_WAIT1 or later (loads in
	 * order here, stores in order there, as on x86) */
	__u64 w = tcp_written(tp);
	asm volatile("" ::: "memory");
	__u8 state = sk->__sk_common.skc_state;
	if (state != RC_TCP_ESTABLISHED && state != RC_TCP_CLOSE_WAIT)
		return 0;
	if (w > a->base && w - a->base > m->tx_bytes)
		m->tx_bytes = w - a->base;
	struct rc_flow_ctr *c = bpf_map_lookup_elem(&flow_ctr, &slot);
	if (c)
		tcp_sample(sk, true, c, m);
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
	count_ev(FLOWS_EV_HANDLED);
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
	count_ev(FLOWS_EV_DROPS_FULL);
	__u64 one = 1, *n = bpf_map_lookup_elem(&drops, &k);
	if (n)
		(*n)++;
	else if (bpf_map_update_elem(&drops, &k, &one, BPF_NOEXIST) && (n = bpf_map_lookup_elem(&drops, &k)))
		(*n)++;   /* created by a racing drop meanwhile */
	return 0;
}

/* ---- program variants ---- */

/* tp_btf variants are also hub members (bpf/hub.h) */
HUB_PROG_ARRAY(hub_sock_send);
HUB_PROG_ARRAY(hub_sock_recv);
HUB_PROG_ARRAY(hub_sock_state);

SEC("tp_btf/sock_send_length")
int BPF_PROG(flows_send_btf, struct sock *sk, int ret, int flags)
{
	if (flows_count_entries)
		count_ev(FLOWS_EV_SEND_IN);
	on_io(sk, ret, flags, true, true);
	HUB_NEXT(ctx, hub_sock_send, HUB_SLOT_FLOWS);
	return 0;
}
SEC("raw_tp/sock_send_length")
int BPF_PROG(flows_send_raw, struct sock *sk, int ret, int flags) { return on_io(sk, ret, flags, true, false); }

SEC("tp_btf/sock_recv_length")
int BPF_PROG(flows_recv_btf, struct sock *sk, int ret, int flags)
{
	if (flows_count_entries)
		count_ev(FLOWS_EV_RECV_IN);
	on_io(sk, ret, flags, false, true);
	HUB_NEXT(ctx, hub_sock_recv, HUB_SLOT_FLOWS);
	return 0;
}
SEC("raw_tp/sock_recv_length")
int BPF_PROG(flows_recv_raw, struct sock *sk, int ret, int flags) { return on_io(sk, ret, flags, false, false); }

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(flows_retrans_btf, const struct sock *sk, const struct sk_buff *skb)
{ return on_retrans(sk, skb, ctx, true); }
SEC("raw_tp/tcp_retransmit_skb")
int BPF_PROG(flows_retrans_raw, const struct sock *sk, const struct sk_buff *skb)
{ return on_retrans(sk, skb, ctx, false); }

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(flows_state_btf, const struct sock *sk, int oldstate, int newstate)
{
	on_state(sk, oldstate, newstate, true);
	HUB_NEXT(ctx, hub_sock_state, HUB_SLOT_FLOWS);
	return 0;
}
SEC("raw_tp/inet_sock_set_state")
int BPF_PROG(flows_state_raw, const struct sock *sk, int oldstate, int newstate)
{ return on_state(sk, oldstate, newstate, false); }

/* tcp_rx_sock: a socket's end, after the application's close: what it
 * read after CLOSE (the FIN of a half-closed connection came before its
 * reads), into the slot while the flow is still there (user space gives a
 * closed flow's slot back a grace period after its last report) */
SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(flows_destroy_btf, struct sock *sk)
{
	if (tcp_rx_sock(true) && sk)
		tcp_rx_sync(sk);
	return 0;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(flows_drop_btf, struct sk_buff *skb, void *location, int reason)
{ return on_drop(skb, (__u32)reason, NULL); }
SEC("raw_tp/kfree_skb")
int BPF_PROG(flows_drop_raw, struct sk_buff *skb, void *location, int reason)
{ return on_drop(skb, (__u32)reason, NULL); }
