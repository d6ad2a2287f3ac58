// SPDX-License-Identifier: GPL-2.0
/* Transactions family (deep-mon §3.1.2, Fig. 4): per TCP connection, a
 * transaction is a run of data in the request direction followed by a run
 * in the response direction; the next request run ends it. Client side:
 * start of the first request send (tcp:tcp_sendmsg_locked) -> last
 * response receive; server side: first request receive -> last response
 * send. Completed transactions update per-connection cumulative per-CPU
 * counters and a log-linear latency sketch (common/npwire.h), both keyed
 * by the connection id, and are sent one by one through a ring buffer
 * (failed reserves counted). With the tp_btf programs the counters and
 * sketch counts first gather in the socket's own storage and reach the two
 * maps at every snapshot (txn_flush_iter) and at close: see txn_finish.
 * Only socket tracepoints are hooked: no syscall hook runs for the
 * machine's other reads and writes (a client request's start comes from
 * netcpu's syscall stamps when that family runs: req_start). */
#pragma clang diagnostic ignored "-Wunused-parameter"   /* BPF_PROG names every argument */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "filter.bpf.h"
#include "npwire.h"
#include "txn.h"
#include "netcpu.h"
#include "hub.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define RC_IPPROTO_TCP 6
#define RC_TCP_ESTABLISHED 1
#define RC_TCP_SYN_SENT 2
#define RC_TCP_SYN_RECV 3
#define RC_TCP_FIN_WAIT1 4
#define RC_TCP_CLOSE 7
#define RC_TCP_CLOSE_WAIT 8
#define RC_TCP_LAST_ACK 9
#define RC_MSG_PEEK 2
#define RC_SEND_SHUTDOWN 2

enum { PH_IDLE = 0, PH_REQ = 1, PH_RESP = 2 };

/* tp_btf/tcp_destroy_sock attached (txn_destroy_btf): a connection that
 * reaches CLOSE before its application is done ends there instead */
const volatile bool txn_destroy_hook = false;

const volatile bool txn_http = true;       /* read request lines for method + path */

/* Events are kept for the connections whose ckey.evh is below this (txn.h);
 * user space lowers it while recording (--txn-events auto). */
__u32 txn_ev_keep = TXN_EV_ALL;

/* Per socket: where the current transaction is; everything a request
 * touches in the steady state (no event kept, no request line read),
 * together with txn_acc's first 64 bytes: in socket storage these 56
 * bytes share one cache line with the storage's map pointer that the
 * lookup reads (the element's data part is line-aligned, the data 8 bytes
 * in), and the hot part of txn_acc is the next line. A transaction's end
 * and the next request's start then touch two lines of the storage and a
 * sketch word's, not three, and a call that starts no request one (issue
 * 24: under load the hooks run cache-cold, and their misses, not their
 * instructions, are the cost). What only kept events read (the
 * connection id, the first response's time) is in txn_conn_id. */
struct txn_conn {
	__u8  role;                 /* k.role, for the hot path */
	__u8  phase, keyed;
	__u8  pend;                 /* a request head is waiting in txn_heads */
	__u8  parse;                /* the request's first bytes are still to be parsed */
	__u8  ev;                   /* the current transaction's event is kept */
	__u8  path_due;             /* read the next request line even without an event */
	__u8  fresh;                /* method/path parsed since they were last stored */
	__u8  http;
	__u8  nstart;               /* request starts stored as acc's first two (0-2) */
	__u16 evh;                  /* id.k.evh, for a request's start */
	__u32 pid, tid;
	__u32 ws_mark;              /* !txn_send_calls: tcp_sock.write_seq at the last mark */
	__u64 start_ns, last_ns;
	__u64 bytes_req, bytes_resp;
};
_Static_assert(sizeof(struct txn_conn) == 56, "txn_conn is not the 56 bytes after the storage's map pointer");

/* Who the connection is and the request line read last: written at its
 * key and at a parsed request, read by flushes, events and HTTP
 * transactions' ends. Kept after the state a transaction's end writes
 * (txn_conn_sk), not between: that end then touches two lines of the
 * socket's storage and its sketch word's (issue 24). */
struct txn_conn_id {
	__u64 conn;                 /* connection id (per boot of the BPF object) */
	__u64 first_resp_ns;        /* of the current transaction, when its event is kept */
	struct rc_txn_ckey k;
	char  method[TXN_METHOD_LEN];
	char  path[TXN_PATH_LEN];
};

/* The raw_tp variants' state (txn_conns). */
struct txn_conn_raw {
	struct txn_conn c;                /* first: their txn_conn * points here */
	struct txn_conn_id id;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TXN_CONNS_MAX);
	__type(key, __u64);              /* struct sock * */
	__type(value, struct txn_conn_raw);
} txn_conns SEC(".maps");

/* Sums of a connection's completed transactions (tp_btf only). count_http
 * is count + (HTTP ones << 32) in one word (one line less for a
 * transaction's end): a flush's difference of it, taken mod 2^64, splits
 * back exactly as long as fewer than 2^32 transactions end between two
 * flushes of the connection. */
struct txn_sums {
	__u64 count_http, bytes_req, bytes_resp, lat_sum_ns;
};

/* Completed transactions not yet in txn_stats / txn_sketch (tp_btf only).
 * sum only grows, with plain adds by the connection's own programs (the
 * writers of all its other state too); a flush (iterator, close) moves
 * taken up to what it read with a compare-and-swap and adds the
 * difference to the maps, so flushes racing each other or a transaction
 * ending never lose or double one, and a transaction's end takes no
 * locked instruction for them (it took five). */
struct txn_acc {
	/* what a transaction's end writes, together: the 64 bytes of the
	 * storage's line after txn_conn's (txn_conn_sk) */
	struct txn_sums sum;
	__u64 last_ns;                    /* of the last completed one */
	__u64 start_prev_ns;              /* of the last two completed */
	__u64 start_last_ns;
	__u32 pid, tid;
	/* request starts of the first two completed (kept), written while
	 * txn_conn's nstart < 2 only */
	__u64 start_first_ns;
	__u64 start_second_ns;
	struct txn_sums taken;            /* the flushes' */
	char  method[TXN_METHOD_LEN];     /* of the last completed HTTP one */
	char  path[TXN_PATH_LEN];
};

/* Pending sketch counts, direct-mapped by bucket: word bucket % TXN_SKW is
 * (bucket + 1) << TXN_SKW_CBITS | count (txn.h), 0 when empty (buckets < 4096:
 * common/npwire.h). 256 words hold four octaves of latencies (common/
 * sketch.h: 64 buckets per power of two) without a collision; a bucket
 * whose word another holds tries a second one (skw_add), and when that is
 * taken too, moves the older bucket's count to the map. 64 words of one
 * octave sent ~30 % of the transactions of a loaded saturated wrk to the
 * map (a per-CPU hash update, the costliest step of a transaction's end). */
_Static_assert(NP_SK_NBUCKETS < (1u << (32 - TXN_SKW_CBITS)), "bucket tag does not fit a word");

/* The socket's storage: the state plus what waits to be flushed. The
 * storage's data starts 8 bytes into a cache line (after the element's
 * map pointer: struct bpf_local_storage_elem's sdata is cache-line
 * aligned), so c is the rest of line 0 and acc's hot part line 1. */
struct txn_conn_sk {
	struct txn_conn c;                /* first: a txn_conn * of tp_btf programs points here */
	struct txn_acc acc;
	struct txn_conn_id id;
	__u32 skw[TXN_SKW];
};
_Static_assert(__builtin_offsetof(struct txn_conn_sk, acc) == 64 - 8 &&
	       __builtin_offsetof(struct txn_acc, start_first_ns) == 64,
	       "a transaction's end writes more than lines 0-1 of the storage");

/* btf: c is a txn_conn_sk's (tp_btf programs: socket storage, whether
 * buffered or not), else a txn_conn_raw's */
static __always_inline struct txn_conn_id *conn_id(struct txn_conn *c, bool btf)
{
	if (btf)
		return &((struct txn_conn_sk *)c)->id;
	return &((struct txn_conn_raw *)c)->id;
}

/* Set by user space when the tp_btf programs run and the close of every
 * connection is seen (inet_sock_set_state): completed transactions then go
 * through the socket storage (struct txn_conn_sk), else straight into the
 * maps. */
const volatile bool txn_buffered = false;

/* False when sock_send_length is not hooked (--no-send-calls, tp_btf
 * only): what the sends told comes from the socket at the next
 * receive or the close instead (on_recv_only). */
const volatile bool txn_send_calls = true;

/* The same state in the socket itself, for the tp_btf programs (which get
 * the socket as a BTF pointer): one cached lookup instead of hashing into
 * the shared LRU map above on every send/recv, and freed with the socket.
 * The raw_tp variants cannot pass a socket to bpf_sk_storage_get and keep
 * using txn_conns. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct txn_conn_sk);
} txn_conns_sk SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, TXN_STATS_MAX);
	__type(key, __u64);              /* connection id */
	__type(value, struct rc_txn_stats);
} txn_stats SEC(".maps");

/* Not an LRU: a count that finds no room is counted lost (TXN_CNT_SK_LOST),
 * not evicted unseen; entries live one interval (txn.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, TXN_SKETCH_MAX);
	__type(key, struct rc_txn_skey);
	__type(value, __u64);
} txn_sketch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TXN_RINGBUF_SIZE);
} txn_events SEC(".maps");

/* TXN_CNT_IO: I/O events handled; TXN_CNT_RB_LOST: ring buffer reserves
 * that failed; TXN_CNT_SK_LOST: sketch counts (transactions) that found
 * no room in txn_sketch */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TXN_CNT_N);
	__type(key, __u32);
	__type(value, __u64);
} txn_counters SEC(".maps");

/* Room for a saved request head plus the next read. */
struct txn_peek { char b[2 * TXN_PEEK_LEN]; };
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct txn_peek);
} txn_peekbuf SEC(".maps");

/* The first bytes of a request whose request line did not fit in its
 * first read ("GE", "GET /ord"): kept until the next read completes it. */
struct txn_head {
	__u32 len;
	char  b[TXN_PEEK_LEN];
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TXN_HEADS_MAX);
	__type(key, __u64);              /* struct sock * */
	__type(value, struct txn_head);
} txn_heads SEC(".maps");

__u64 txn_next_conn = 0;

/* The sketch slot programs write (bit 0; user space flips it) and how many
 * programs are writing each slot now (rc_txn_skey in txn.h). */
__u32 txn_sk_epoch = 0;
__u32 txn_sk_busy[2] = {};
/* Entries made in each slot of txn_sketch since the start, and the keys
 * of the last TXN_SK_NEW (entry i of a slot at i % TXN_SK_NEW): user space
 * takes a slot's few new entries by their keys, and skips a slot none
 * was made in, instead of reading the map (a read walks every one of its
 * TXN_SKETCH_MAX hash buckets, 0.5-0.7 ms on the project VM however few
 * entries it finds, every snapshot). Written while the slot is entered,
 * so user space, once the retired slot's busy count is 0, sees them all. */
__u64 txn_sk_made[2] = {};
struct rc_txn_skey txn_sk_new[2][TXN_SK_NEW] = {};

static const struct rc_txn_stats zero_stats;
static const struct txn_conn_raw zero_conn;

static __always_inline void counter_addn(__u32 idx, __u64 v)
{
	__u64 *n = bpf_map_lookup_elem(&txn_counters, &idx);
	if (n)
		*n += v;
}

static __always_inline void counter_add(__u32 idx) { counter_addn(idx, 1); }

/* netcpu's per-CPU op slots (bpf/netcpu.bpf.h), the same map: user space
 * makes netcpu reuse this one. With txn_nc_start the start of a client's
 * request is the entry of its send syscall as netcpu stamped it, and
 * tcp:tcp_sendmsg_locked is not hooked (a program on every segment-sized
 * chunk of every TCP send, ~250 ns each on the project VM). */
#include "netcpu.bpf.h"

const volatile bool txn_nc_start = false;

/* ---- the user buffer of the socket syscall in progress ---- */

/* iovec / msghdr: the first iovec's base */
static __always_inline __u64 iov_base0(__u64 iov)
{
	struct iovec v = {};
	bpf_probe_read_user(&v, sizeof(v), (void *)iov);
	return (__u64)v.iov_base;
}

static __always_inline __u64 msg_base0(__u64 msg)
{
	struct user_msghdr m = {};
	bpf_probe_read_user(&m, sizeof(m), (void *)msg);
	return iov_base0((__u64)m.msg_iov);
}

/* x86-64 syscall numbers (the BPF objects are built for x86) */
enum {
	NR_read = 0, NR_write = 1, NR_readv = 19, NR_writev = 20,
	NR_sendto = 44, NR_recvfrom = 45, NR_sendmsg = 46, NR_recvmsg = 47,
};

/* The user buffer (first iovec's for the vector calls) of the syscall this
 * thread is in, read from its saved user registers (orig_ax: syscall
 * number, si: second argument), 0 for another syscall (sendfile, splice,
 * io_uring) or a kernel thread. Replaces 8 syscall-entry tracepoints that
 * ran on every read/write of the machine and kept the syscall slow path
 * on. On a socket hook the data is still in (send) or already copied to
 * (receive) that buffer. */
static __always_inline __u64 io_user_buf(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return 0;
	switch (regs->orig_ax) {
	case NR_read: case NR_write: case NR_recvfrom: case NR_sendto:
		return regs->si;
	case NR_readv: case NR_writev:
		return iov_base0(regs->si);
	case NR_recvmsg: case NR_sendmsg:
		return msg_base0(regs->si);
	}
	return 0;
}

/* The entry of the send syscall in progress, from netcpu's slot: live
 * (netcpu's program runs after ours on the hub) or just completed (it ran
 * first). The thread and the syscall number must match, else the end of
 * the send (now): a call netcpu does not stamp (sendfile), a stamp
 * overwritten by another task in between. */
static __always_inline __u64 req_start(__u64 now)
{
	__u32 zero = 0;
	struct nc_cpu *c = bpf_map_lookup_elem(&nc_cpus, &zero);
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u32 tid = t->pid;

	if (!c || !regs)
		return now;
	if (c->op_tid == tid && c->op_nr == regs->orig_ax && c->op_start && c->op_start <= now)
		return c->op_start;
	if (c->last_tid == tid && c->last_nr == regs->orig_ax && c->last_start && c->last_start <= now)
		return c->last_start;
	return now;
}

/* When the first segment of a client's request left, from its socket:
 * TCP stamps first_tx_mstamp (us, the transmit clock: CLOCK_MONOTONIC as
 * bpf_ktime_get_ns) when it transmits a segment with nothing in flight,
 * which a request after a complete response is (the response acked the
 * previous request). That is the send's copy plus ~a microsecond after
 * its entry, and it replaces a program on tcp:tcp_sendmsg_locked, which
 * ran on every segment-sized chunk of every TCP send of the machine
 * (~150-300 ns each, issue 24). A stamp from before lo (the previous
 * response's last receive, or the handshake's end; 0: neither seen) is
 * another window's (the request is not transmitted yet, or pipelined
 * behind unacked data): then the end of the send (now). The ACK of a
 * segment moves the stamp to that segment's (latest) transmit
 * (tcp_rate_skb_delivered): read at the response, it is the request's
 * last segment's, or its retransmission's when one was resent, which
 * on_retrans forestalls under !txn_send_calls. The stamp's us
 * truncation may put it up to 1 us before lo. The clock is read only then:
 * a fitting stamp was taken before this hook ran (by this send's transmit,
 * on the same clock), so it is never after now, and a client's request
 * start with a stamp costs no clock read (~60 ns a read on the project VM:
 * ktime_get_mono_fast_ns's retpolined clocksource call and rdtsc_ordered,
 * more than half of txn's work on a call; notes/j26b.md). */
static __always_inline __u64 sk_tx_start(const struct sock *sk, __u64 lo, bool btf)
{
	__u64 us;

	if (!lo)
		return bpf_ktime_get_ns();
	if (btf) {
		const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
		if (!tp)
			return bpf_ktime_get_ns();
		us = tp->first_tx_mstamp;
	} else {
		us = BPF_CORE_READ((const struct tcp_sock *)sk, first_tx_mstamp);
	}
	__u64 t = us * 1000;
	if (t + 1000 <= lo)
		return bpf_ktime_get_ns();
	return t < lo ? lo : t;
}

/* ---- HTTP/1.x request line ---- */

static __always_inline bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

enum { HP_NOT_HTTP = 0, HP_DONE = 1, HP_SHORT = 2 };

/* High bit of every byte of w that ends a path (' ', '\r', '\n', 0),
 * exact up to and including the first one (later bytes may be flagged
 * wrongly by the borrow; only the first is used). Eight bytes per step:
 * the byte loop it replaced was most of txn's cost per request. */
static __always_inline __u64 path_stops(__u64 w)
{
	const __u64 ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	__u64 sp = w ^ (ones * ' '), cr = w ^ (ones * '\r'), lf = w ^ (ones * '\n');

	return (((w - ones) & ~w) | ((sp - ones) & ~sp) | ((cr - ones) & ~cr) |
		((lf - ones) & ~lf)) & highs;
}

/* Index of the lowest flagged byte of a non-zero path_stops() value. */
static __always_inline __u32 first_flagged(__u64 x)
{
	__u32 i = 0;

	if (!(x & 0x80808080ULL)) {
		i += 4;
		x >>= 32;
	}
	if (!(x & 0x8080ULL)) {
		i += 2;
		x >>= 16;
	}
	if (!(x & 0x80ULL))
		i += 1;
	return i;
}

/* "METHOD SP PATH SP" at the start of b, of which len bytes are the
 * request's; the bytes after them up to TXN_PEEK_LEN are zero (the caller
 * clears them), so the path ends at a zero byte at the latest. HP_SHORT
 * when the request's bytes end inside the request line. */
static __always_inline int http_parse_buf(struct txn_conn *c, struct txn_conn_id *d, const char *b, int len)
{
	__u32 m, s, q = TXN_PATH_LEN;
	__u64 w, stops;

	for (m = 0; m < TXN_METHOD_LEN; m++) {
		if (m >= (__u32)len)
			return HP_SHORT;
		if (!is_upper(b[m]))
			break;
	}
	if (m < 3 || m >= TXN_METHOD_LEN || b[m] != ' ')
		return HP_NOT_HTTP;
	if (m + 1 >= (__u32)len)
		return HP_SHORT;
	s = m + 1;
	char first = b[s];
	if (first != '/' && first != '*' && first != 'h')
		return HP_NOT_HTTP;
	/* the path's words: b[s .. s + 64), inside the zeroed buffer */
	for (__u32 i = 0; i < TXN_PATH_LEN / 8; i++) {
		w = *(const __u64 *)(b + s + 8 * i);
		stops = path_stops(w);
		if (stops) {
			__u32 k = first_flagged(stops);
			q = 8 * i + k;
			*(__u64 *)(d->path + 8 * i) = k ? w & (~0ULL >> (64 - 8 * k)) : 0;
			break;
		}
		*(__u64 *)(d->path + 8 * i) = w;
	}
	if (q < TXN_PATH_LEN - 1 && s + q >= (__u32)len) {
		d->path[0] = 0;                 /* data ended inside the path */
		return HP_SHORT;
	}
	if (q >= TXN_PATH_LEN - 1)
		d->path[TXN_PATH_LEN - 1] = 0;  /* (a longer path is cut) */
	w = *(const __u64 *)b;
	*(__u64 *)d->method = w & (~0ULL >> (64 - 8 * m));
	c->http = 1;
	c->fresh = 1;
	return HP_DONE;
}

/* The request bytes one syscall moved (ret of them at ubuf): the start of
 * a request (first), or the continuation of one whose line was cut. */
static __always_inline void http_req_bytes(struct txn_conn *c, bool btf, __u64 skp, __u64 ubuf, int ret,
					   bool first)
{
	__u32 z = 0, off = 0;
	struct txn_peek *p = bpf_map_lookup_elem(&txn_peekbuf, &z);
	struct txn_head *h = NULL;
	if (!p || !ubuf)
		return;
	/* http_parse_buf reads whole words past the request's bytes */
	for (int i = 0; i < TXN_PEEK_LEN / 8; i++)
		((__u64 *)p->b)[i] = 0;
	if (first && c->pend) {          /* the previous request never completed its line */
		bpf_map_delete_elem(&txn_heads, &skp);
		c->pend = 0;
	}
	if (!first) {
		h = bpf_map_lookup_elem(&txn_heads, &skp);
		if (!h) {
			c->pend = 0;
			return;
		}
		off = h->len;
		if (off >= TXN_PEEK_LEN)
			goto drop;
		__builtin_memcpy(p->b, h->b, TXN_PEEK_LEN);
	}
	__u32 n = ret < TXN_PEEK_LEN ? (__u32)ret : TXN_PEEK_LEN;
	off &= 0x7f;                     /* < TXN_PEEK_LEN already: for the verifier */
	if (n > TXN_PEEK_LEN || bpf_probe_read_user(p->b + off, n, (void *)ubuf))
		goto drop;
	__u32 len = off + n;
	if (http_parse_buf(c, conn_id(c, btf), p->b, (int)len) != HP_SHORT || len >= TXN_PEEK_LEN)
		goto drop;
	if (!h) {
		static const struct txn_head zero_head;
		bpf_map_update_elem(&txn_heads, &skp, &zero_head, BPF_ANY);
		h = bpf_map_lookup_elem(&txn_heads, &skp);
		if (!h)
			return;
	}
	h->len = len;
	__builtin_memcpy(h->b, p->b, TXN_PEEK_LEN);
	c->pend = 1;
	return;
drop:
	if (c->pend) {
		bpf_map_delete_elem(&txn_heads, &skp);
		c->pend = 0;
	}
}

/* ---- transaction bookkeeping ---- */

/* This CPU's counters of the connection; the addresses go in once. */
static __always_inline struct rc_txn_stats *stats_get(const struct txn_conn *c, const struct txn_conn_id *d)
{
	struct rc_txn_stats *s = bpf_map_lookup_elem(&txn_stats, &d->conn);
	if (!s) {
		bpf_map_update_elem(&txn_stats, &d->conn, &zero_stats, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&txn_stats, &d->conn);
	}
	if (s && !s->conn) {
		s->k = d->k;
		s->conn = d->conn;
	}
	return s;
}

/* Enters the sketch slot in force: counted busy, then the epoch read
 * again (the locked add orders the two), so user space, which flips the
 * epoch and then waits for the old slot's busy count to reach zero, either
 * sees this writer busy or this writer sees the new epoch and moves to it.
 * A flip happens once a snapshot: the second try always holds. */
static __always_inline __u32 sk_slot_enter(void)
{
	__u32 e;

	for (int i = 0; i < 2; i++) {
		e = *(volatile __u32 *)&txn_sk_epoch & 1;
		__sync_fetch_and_add(&txn_sk_busy[e], 1);
		if ((*(volatile __u32 *)&txn_sk_epoch & 1) == e)
			return e;
		__sync_fetch_and_add(&txn_sk_busy[e], -1);
	}
	e = *(volatile __u32 *)&txn_sk_epoch & 1;
	__sync_fetch_and_add(&txn_sk_busy[e], 1);
	return e;
}

static __always_inline void sk_slot_exit(__u32 e)
{
	__sync_fetch_and_add(&txn_sk_busy[e & 1], -1);
}

/* n transactions of latency bucket b into this CPU's sketch counts of
 * slot e (entered: sk_slot_enter). */
static __always_inline void sketch_add_in(__u32 e, __u64 conn, __u32 b, __u64 n)
{
	struct rc_txn_skey sk = { .conn = conn, .bucket = b, .slot = e };
	__u64 *v = bpf_map_lookup_elem(&txn_sketch, &sk);
	if (!v && bpf_map_update_elem(&txn_sketch, &sk, &n, BPF_NOEXIST) == 0) {
		__u64 i = __sync_fetch_and_add(&txn_sk_made[e & 1], 1);
		txn_sk_new[e & 1][i & (TXN_SK_NEW - 1)] = sk;
		return;
	}
	/* there already, or another CPU created it just now (a flush can
	 * carry many transactions: not one to lose) */
	if (!v)
		v = bpf_map_lookup_elem(&txn_sketch, &sk);
	/* locked: a softirq's flush (a close) may interrupt a process's
	 * program adding to the same entry of this CPU */
	if (v)
		__sync_fetch_and_add(v, n);
	else
		counter_addn(TXN_CNT_SK_LOST, n);
}

static __always_inline void sketch_add(__u64 conn, __u32 b, __u64 n)
{
	__u32 e = sk_slot_enter();
	sketch_add_in(e, conn, b, n);
	sk_slot_exit(e);
}

/* A completed transaction's request start into the first two and last
 * two kept (user space drops a straggler at either end: a request a
 * stalled server read long after the others). */
static __always_inline void txn_starts_add(__u64 *first, __u64 *second, __u64 *prev, __u64 *last, __u64 t)
{
	if (!*first)
		*first = t;
	else if (!*second)
		*second = t;
	*prev = *last;
	*last = t;
}

/* Straight into the maps: two per-CPU hash lookups, ~250 ns together on
 * the project VM (docs/BENCHMARKS.md), hence the buffered path below. */
static __always_inline void finish_direct(struct txn_conn *c, struct txn_conn_id *d, __u64 lat)
{
	struct rc_txn_stats *s = stats_get(c, d);
	if (s) {
		txn_starts_add(&s->start_first_ns, &s->start_second_ns, &s->start_prev_ns,
			       &s->start_last_ns, c->start_ns);
		s->count++;
		s->bytes_req += c->bytes_req;
		s->bytes_resp += c->bytes_resp;
		s->lat_sum_ns += lat;
		s->last_ns = c->last_ns;
		s->pid = c->pid;
		s->tid = c->tid;
		if (c->http) {
			s->http_count++;
			__builtin_memcpy(s->method, d->method, TXN_METHOD_LEN);
			__builtin_memcpy(s->path, d->path, TXN_PATH_LEN);
		}
	}
	sketch_add(d->conn, np_sketch_index(lat), 1);
}

/* One more transaction of bucket b (tag: its word's) in word *w if that
 * word holds b with room or is empty: 1, else 0 (taken by another bucket
 * or full; -1: lost a race with a flush). */
static __always_inline int skw_try(__u32 *w, __u32 b, __u32 tag)
{
	__u32 cur = *w;

	if ((cur >> TXN_SKW_CBITS) == b + 1 && (cur & TXN_SKW_CMAX) != TXN_SKW_CMAX)
		return __sync_val_compare_and_swap(w, cur, cur + 1) == cur ? 1 : -1;
	if (cur == 0)
		return __sync_val_compare_and_swap(w, 0, tag | 1) == 0 ? 1 : -1;
	return 0;
}

/* The transaction's latency bucket b into the socket's sketch words: word
 * b % TXN_SKW, or when another bucket holds it, the word half the array
 * away (two octaves), so two groups of latencies four octaves apart (a
 * paced client on this bench: ~0.2 and ~3 ms) both fit: with one choice
 * they took each other's words and ~5-10 % of the transactions went to
 * the map. A bucket may then be in both words at once (placed in the
 * second, and later in the first after a flush emptied it): user space
 * adds up a connection's equal buckets (rc_txn_merge_run). */
static __always_inline void skw_add(struct txn_conn_sk *x, __u32 b)
{
	__u32 *w = &x->skw[b & (TXN_SKW - 1)];
	__u32 tag = (b + 1) << TXN_SKW_CBITS, cur;
	int r = skw_try(w, b, tag);

	if (!r)
		r = skw_try(&x->skw[(b ^ (TXN_SKW / 2)) & (TXN_SKW - 1)], b, tag);
	if (r > 0)
		return;
	if (!r) {
		/* other buckets (or full counts) hold both words: the first
		 * one's goes to the map, this one takes its place */
		cur = __sync_lock_test_and_set(w, tag | 1);
		if (cur & TXN_SKW_CMAX)
			sketch_add(x->id.conn, (cur >> TXN_SKW_CBITS) - 1, cur & TXN_SKW_CMAX);
		return;
	}
	sketch_add(x->id.conn, b, 1);     /* lost a race with a flush: directly */
}

/* Into the socket's storage (c is the first member of a txn_conn_sk). */
static __always_inline void finish_buffered(struct txn_conn *c, __u64 lat)
{
	struct txn_conn_sk *x = (struct txn_conn_sk *)c;
	struct txn_acc *a = &x->acc;

	/* everything before the count: a flush that takes this transaction's
	 * count (txn_take) sees its start and its sketch word, and one that
	 * takes no count may skip the words (txn_flush) */
	skw_add(x, np_sketch_index(lat));
	/* the first two starts (txn_starts_add's) on their cold line only
	 * while they are being set */
	if (c->nstart < 2) {
		if (c->nstart)
			a->start_second_ns = c->start_ns;
		else
			a->start_first_ns = c->start_ns;
		c->nstart++;
	}
	a->start_prev_ns = a->start_last_ns;
	a->start_last_ns = c->start_ns;
	a->last_ns = c->last_ns;
	a->pid = c->pid;
	a->tid = c->tid;
	a->sum.bytes_req += c->bytes_req;
	a->sum.bytes_resp += c->bytes_resp;
	a->sum.lat_sum_ns += lat;
	if (c->http) {
		if (c->fresh) {
			__builtin_memcpy(a->method, x->id.method, TXN_METHOD_LEN);
			__builtin_memcpy(a->path, x->id.path, TXN_PATH_LEN);
			c->fresh = 0;
		}
	}
	/* stored after the rest: x86 keeps stores in order, the barrier
	 * keeps clang from moving them */
	asm volatile("" ::: "memory");
	a->sum.count_http += 1 + ((__u64)(c->http != 0) << 32);
}

/* What of *sum this flush takes: from taken up to the value read, claimed
 * by a compare-and-swap; one lost to another flush is retried from where
 * that one left it (the last flush of a closing socket must take the rest). */
static __always_inline __u64 txn_take(__u64 *sum, __u64 *taken)
{
	__u64 old = *(volatile __u64 *)taken;

	for (int i = 0; i < 8; i++) {
		__u64 cur = *(volatile __u64 *)sum;
		if (cur == old)
			return 0;
		__u64 seen = __sync_val_compare_and_swap(taken, old, cur);
		if (seen == old)
			return cur - old;
		old = seen;
	}
	return 0;
}

struct skw_walk {
	struct txn_conn_sk *x;
	struct rc_txn_skw_out *o;   /* NULL: into the map */
	__u32 slot;                 /* entered for the whole walk (map) */
};

/* One sketch word out of the storage: into the map, or appended to o. */
static __always_inline void skw_move(struct skw_walk *k, __u32 i)
{
	__u32 *p = &k->x->skw[i & (TXN_SKW - 1)];
	if (!*p)
		return;
	__u32 w = __sync_lock_test_and_set(p, 0);
	if (!(w & TXN_SKW_CMAX) || !(w >> TXN_SKW_CBITS))
		return;
	struct rc_txn_skw_out *o = k->o;
	if (o)
		o->w[o->n++ & (TXN_SKW - 1)] = w;
	else
		sketch_add_in(k->slot, k->x->id.conn, (w >> TXN_SKW_CBITS) - 1, w & TXN_SKW_CMAX);
}

#define TXN_SKW_STEP 4      /* words a bpf_loop step looks at: one 16-byte test */

/* bpf_loop step i: words TXN_SKW_STEP * i on, skipped together when all
 * are empty (most are: a connection's latencies fill a few octaves). */
static long skw_move_step(__u32 i, void *ctx)
{
	struct skw_walk *k = ctx;
	__u32 at = (i * TXN_SKW_STEP) & (TXN_SKW - 1);
	__u64 *q = (__u64 *)&k->x->skw[at];

	if (!(q[0] | q[1]))
		return 0;
	for (int j = 0; j < TXN_SKW_STEP; j++)
		skw_move(k, at + j);
	return 0;
}

/* A word of o into the map (its record found no room in the output). */
static long skw_out_step(__u32 i, void *ctx)
{
	struct skw_walk *k = ctx;
	__u32 w = k->o->w[i & (TXN_SKW - 1)];

	sketch_add_in(k->slot, k->o->conn, (w >> TXN_SKW_CBITS) - 1, w & TXN_SKW_CMAX);
	return 0;
}

/* Every sketch word of x into the map, or with o into o->w (o->n of them,
 * returned). A global function, verified once
 * for itself (x: any txn_conn_sk or NULL), not once per call site, and a
 * bpf_loop, whose step is verified once, not TXN_SKW times: the unrolled
 * walk at its three inlined call sites was ~600 k instructions to
 * verify, nprec's start-up 1.2 s of CPU instead of 0.5. A global
 * function also turns the iterator's buffer into a plain memory pointer,
 * which the step may index (the iterator's buffer cannot be indexed by a
 * variable). */
__noinline int txn_skw_flush(struct txn_conn_sk *x, struct rc_txn_skw_out *o)
{
	if (!x)
		return 0;
	struct skw_walk k = { .x = x, .o = o };

	if (o) {
		o->n = 0;
		bpf_loop(TXN_SKW / TXN_SKW_STEP, skw_move_step, &k, 0);
		return o->n;
	}
	k.slot = sk_slot_enter();
	bpf_loop(TXN_SKW / TXN_SKW_STEP, skw_move_step, &k, 0);
	sk_slot_exit(k.slot);
	return 0;
}

/* o's n words into the map. */
__noinline int txn_skw_out_to_map(struct rc_txn_skw_out *o)
{
	if (!o)
		return 0;
	struct skw_walk k = { .o = o, .slot = sk_slot_enter() };

	bpf_loop(o->n < TXN_SKW ? o->n : TXN_SKW, skw_out_step, &k, 0);
	sk_slot_exit(k.slot);
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rc_txn_skw_out);
} txn_skw_outbuf SEC(".maps");

const volatile bool txn_test_seq_full = false;   /* NPREC_TEST_TXN_SEQFULL=1 (tests) */

/* The flush iterator's sketch words go to user space in its output
 * (rc_txn_skw_out records), not into the map: a snapshot then neither
 * inserts nor reads nor deletes a map entry per changed bucket. A record
 * that does not fit the output buffer goes into the map instead: the
 * iterator shows this connection again for the next read, and then finds
 * nothing left to take (so nothing is counted twice). */
static __always_inline void skw_to_seq(struct txn_conn_sk *x, struct seq_file *seq)
{
	__u32 zero = 0;
	struct rc_txn_skw_out *o = bpf_map_lookup_elem(&txn_skw_outbuf, &zero);
	if (!o) {
		txn_skw_flush(x, NULL);
		return;
	}
	__u32 n = txn_skw_flush(x, o);
	if (!n)
		return;
	if (n > TXN_SKW)
		n = TXN_SKW;
	o->conn = x->id.conn;
	o->n = n;
	/* txn_test_seq_full: odd connections as if their record found no room */
	if ((txn_test_seq_full && (o->conn & 1)) ||
	    bpf_seq_write(seq, o, offsetof(struct rc_txn_skw_out, w) + n * sizeof(__u32)))
		txn_skw_out_to_map(o);
}

/* What the socket's storage gathered goes into this CPU's map entries.
 * The sketch words are walked only when this flush took a count (a
 * transaction stores its word before its count, so the words of every
 * count taken earlier were there for that flush's walk): a connection
 * without new transactions costs a few loads, not TXN_SKW. all: walk them
 * anyway (at close, the storage's last flush). */
static __always_inline void txn_flush_to(struct txn_conn_sk *x, bool all, struct seq_file *seq)
{
	struct txn_acc *a = &x->acc;
	/* the count first: a transaction it takes has its starts and its
	 * sketch word in already */
	__u64 ch = txn_take(&a->sum.count_http, &a->taken.count_http);
	asm volatile("" ::: "memory");
	__u64 count = (__u32)ch, http = ch >> 32;
	__u64 breq = txn_take(&a->sum.bytes_req, &a->taken.bytes_req);
	__u64 bresp = txn_take(&a->sum.bytes_resp, &a->taken.bytes_resp);
	__u64 lat = txn_take(&a->sum.lat_sum_ns, &a->taken.lat_sum_ns);

	if (!x->id.conn)
		return;
	/* a connection without events has its request line read once an
	 * interval: the path its TXN_STATS row carries */
	x->c.path_due = 1;
	if (count | breq | bresp | lat | http) {
		struct rc_txn_stats *s = stats_get(&x->c, &x->id);
		if (s) {
			s->count += count;
			s->bytes_req += breq;
			s->bytes_resp += bresp;
			s->lat_sum_ns += lat;
			s->http_count += http;
			s->last_ns = a->last_ns;
			if (!s->start_first_ns) {
				s->start_first_ns = a->start_first_ns;
				s->start_second_ns = a->start_second_ns;
			} else if (!s->start_second_ns) {
				s->start_second_ns = a->start_second_ns;
			}
			if (a->start_last_ns > s->start_last_ns) {
				s->start_prev_ns = a->start_prev_ns;
				s->start_last_ns = a->start_last_ns;
			}
			s->pid = a->pid;
			s->tid = a->tid;
			if (a->method[0]) {
				__builtin_memcpy(s->method, a->method, TXN_METHOD_LEN);
				__builtin_memcpy(s->path, a->path, TXN_PATH_LEN);
			}
		}
	}
	if (!count && !all)
		return;
	if (seq)
		skw_to_seq(x, seq);
	else
		txn_skw_flush(x, NULL);
}

/* Into the maps only (program hooks: no iterator output). */
static __always_inline void txn_flush(struct txn_conn_sk *x, bool all)
{
	txn_flush_to(x, all, NULL);
}

/* btf: the tp_btf programs, whose connection state is socket storage */
static __always_inline void txn_finish(struct txn_conn *c, bool btf)
{
	__u64 lat = c->last_ns - c->start_ns;
	struct txn_conn_id *d = conn_id(c, btf);
	if (btf && txn_buffered)
		finish_buffered(c, lat);
	else
		finish_direct(c, d, lat);

	if (!c->ev) {
		c->phase = PH_IDLE;
		return;
	}
	struct rc_txn_event *e = bpf_ringbuf_reserve(&txn_events, sizeof(*e), 0);
	if (!e) {
		counter_add(TXN_CNT_RB_LOST);
	} else {
		e->conn = d->conn;
		e->start_ns = c->start_ns;
		e->first_resp_ns = d->first_resp_ns;
		e->end_ns = c->last_ns;
		e->bytes_req = c->bytes_req;
		e->bytes_resp = c->bytes_resp;
		e->pid = c->pid;
		e->tid = c->tid;
		e->role = c->role;
		e->http = c->http;
		__builtin_memcpy(e->method, d->method, TXN_METHOD_LEN);
		__builtin_memcpy(e->path, d->path, TXN_PATH_LEN);
		/* user space drains on its own timer and never waits on the
		 * ring: a wakeup would only cost an irq_work */
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	}
	c->phase = PH_IDLE;
}

/* btf: a tp_btf program, whose socket can hold its state (txn_conns_sk) */
static __always_inline struct txn_conn *conn_find(const struct sock *sk, bool btf)
{
	__u64 skp = (__u64)sk;
	if (btf)
		return bpf_sk_storage_get(&txn_conns_sk, (void *)sk, 0, 0);
	return bpf_map_lookup_elem(&txn_conns, &skp);
}

static __always_inline void conn_forget(const struct sock *sk, bool btf)
{
	__u64 skp = (__u64)sk;
	if (btf)
		bpf_sk_storage_delete(&txn_conns_sk, (void *)sk);
	else
		bpf_map_delete_elem(&txn_conns, &skp);
}

/* A connection whose handshake was not seen, met at a receive with
 * !txn_send_calls (who sends first is not seen): the side on the higher
 * port is taken as the client (ephemeral ports are high). */
#define TXN_ROLE_BY_PORTS 0xff     /* conn_get: a new connection's role from sk_guess_role */
static __always_inline __u8 sk_guess_role(const struct sock *sk)
{
	__u16 lport = sk->__sk_common.skc_num;
	__u16 rport = bpf_ntohs(sk->__sk_common.skc_dport);
	return lport > rport ? TXN_ROLE_CLIENT : TXN_ROLE_SERVER;
}

static __always_inline struct txn_conn *conn_get(const struct sock *sk, __u8 role, bool btf)
{
	__u64 skp = (__u64)sk;
	struct txn_conn *c = conn_find(sk, btf);
	if (c)
		return c;
	if (btf) {
		c = bpf_sk_storage_get(&txn_conns_sk, (void *)sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	} else {
		bpf_map_update_elem(&txn_conns, &skp, &zero_conn, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&txn_conns, &skp);
	}
	if (c && !conn_id(c, btf)->conn) {   /* new (conn ids start at 1) */
		if (role == TXN_ROLE_BY_PORTS)
			role = sk_guess_role(sk);
		conn_id(c, btf)->k.role = role;
		c->role = role;
		c->path_due = 1;
		conn_id(c, btf)->conn = __sync_fetch_and_add(&txn_next_conn, 1) + 1;
	}
	return c;
}

static __always_inline void conn_key(struct txn_conn *c, const struct sock *sk, bool btf)
{
	struct rc_txn_ckey *k = &conn_id(c, btf)->k;
	int fam = rc_sk_addrs(sk, k->laddr, k->raddr, &k->lport, &k->rport);
	k->family = fam;
	k->netns = rc_sk_netns_ino(sk);
	k->evh = txn_ev_hash(k->laddr, k->lport, k->raddr, k->rport);
	c->evh = k->evh;
	c->keyed = 1;
}

/* A socket of ours: TCP over IP, through the filters. */
static __always_inline bool sk_wanted(const struct sock *sk, bool btf)
{
	if (rc_sk_protocol_x(sk, btf) != RC_IPPROTO_TCP)
		return false;
	__u16 fam = rc_sk_family_x(sk, btf);
	return (fam == AF_INET || fam == AF_INET6) && rc_filter_sk_task(sk);
}

/* A request starts at now: the previous transaction (if its response
 * run was going on) is complete. */
static __always_inline void req_begin(struct txn_conn *c, __u64 now, bool btf)
{
	if (c->phase == PH_RESP)
		txn_finish(c, btf);
	__u64 id = bpf_get_current_pid_tgid();
	c->start_ns = now;
	c->bytes_req = 0;
	c->bytes_resp = 0;
	c->pid = id >> 32;
	c->tid = (__u32)id;
	/* The request line is read for a transaction whose event is kept,
	 * else once an interval (path_due): a connection without events
	 * keeps the method and path read last, and its transactions skip the
	 * user-memory read that was most of the per-request cost. */
	c->ev = c->evh < txn_ev_keep;
	if (c->ev)
		conn_id(c, btf)->first_resp_ns = 0;
	c->parse = txn_http && (c->ev || c->path_due || !(btf && txn_buffered));
	if (c->parse) {
		c->http = 0;
		conn_id(c, btf)->method[0] = 0;
		conn_id(c, btf)->path[0] = 0;
	}
	c->phase = PH_REQ;
}

/* When a server's request was there, from its socket: TCP refreshes
 * tcp_clock_cache (ns, tcp_clock_ns(): CLOCK_MONOTONIC, the clock of
 * bpf_ktime_get_ns) at the start of every segment it processes
 * (tcp_rcv_established, tcp_rcv_state_process) and every transmit
 * (tcp_write_xmit), so by the time a read returns data the cache is at or
 * after the arrival of the last segment read, and never after now: the
 * request's start within [its data's arrival, the read's return], the
 * arrival when nothing happened on the socket since: the server's time
 * then includes its wait to read the request, which its client waits too.
 * It replaces a clock read (~47 ns a receive run on the project VM,
 * docs/BENCHMARKS.md "txn's in-line time by knock-out") with one load
 * from the socket's tx/rx-hot line, on the server's CPU, which saturated
 * HTTP makes the bottleneck. A value before lo (the previous response's
 * end: data that came before it, a pipelined request) or none (not TCP,
 * a kernel without the field) reads the clock: the read's return, as
 * before. Not used for a client's response, whose end is when the client
 * had it (its own wakeup delay included: txn_endpoints checks recorded
 * against the client's timing). Sends: sk_tx_end_time. */
static __always_inline __u64 sk_rx_time(const struct sock *sk, __u64 lo, bool btf)
{
	__u64 t = 0;

	if (btf) {
		const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
		if (tp)
			t = tp->tcp_clock_cache;
	} else if (bpf_core_field_exists(((struct tcp_sock *)0)->tcp_clock_cache) &&
		   rc_sk_protocol_x(sk, false) == RC_IPPROTO_TCP) {
		t = BPF_CORE_READ((const struct tcp_sock *)sk, tcp_clock_cache);
	}
	return t && t >= lo ? t : bpf_ktime_get_ns();
}

/* When a server's response send ended, from its socket: with nothing
 * left unsent (snd_nxt == write_seq) the send's last bytes went out in a
 * tcp_write_xmit that began after they were queued (the send holds the
 * socket lock while it copies; a deferred transmit runs at its release),
 * and tcp_write_xmit refreshes tcp_clock_cache (sk_rx_time) as it begins:
 * the cache is within [the last bytes' copy, now], at most the transmit's
 * own time before the send returned. With bytes still queued (cwnd,
 * autocork holding them until a TX completion, a rate-limiting qdisc) the
 * cache may be older than this send's copy: then the clock, as for UDP,
 * the raw_tp programs and a value before lo (the request's start). Saves
 * the clock read (~60-70 ns a send run, docs/BENCHMARKS.md "txn's in-line
 * time by knock-out") on most responses of a request/response server. */
static __always_inline __u64 sk_tx_end_time(const struct sock *sk, __u64 lo, bool btf)
{
	if (btf) {
		const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
		if (tp && tp->snd_nxt == tp->write_seq) {
			__u64 t = tp->tcp_clock_cache;
			if (t && t >= lo)
				return t;
		}
	}
	return bpf_ktime_get_ns();
}

/* !txn_send_calls: when a server's response (what it wrote since its
 * request began) left, read at its next request or its close. With all of
 * it acknowledged, tcp_sock.rack.mstamp is the (re)transmit time of the
 * latest-sent segment among those delivered (tcp_rack_advance, us): the
 * response's last one, sent before the client could read it and write
 * again. At a close with bytes still in flight but none unsent,
 * tcp_wstamp_ns: the last transmit's departure (the FIN is queued after
 * the state changes), unless pacing put it ahead of now. Else the clock,
 * an upper bound (a pipelined request; data still queued). lo: the
 * request's start, which the us truncation may put the stamp up to 1 us
 * before. */
static __always_inline __u64 sk_resp_end(const struct tcp_sock *tp, __u32 ws, __u64 lo, bool closing)
{
	if (tp->snd_una == ws) {
		__u64 t = tp->rack.mstamp * 1000;
		if (t + 1000 > lo)
			return t < lo ? lo : t;
	} else if (closing && tp->snd_nxt == ws) {
		__u64 t = tp->tcp_wstamp_ns, now = bpf_ktime_get_ns();
		return t >= lo && t <= now ? t : now;
	}
	return bpf_ktime_get_ns();
}

/* !txn_send_calls: what the application has written, as a sequence
 * number: write_seq less the FIN. After a shutdown(SHUT_WR) or a close
 * the FIN takes a number of its own (tcp_send_fin) once the state has
 * left ESTABLISHED or CLOSE_WAIT: a client that half-closes after its
 * request and then reads the response (socat, HTTP/1.0 tools) was given
 * one request byte too many. SEND_SHUTDOWN is set before the state moves
 * (inet_shutdown, tcp_close) and inet_sock_set_state fires before the
 * store, so the state hooks read the old state and take nothing off. An
 * abort (tcp_done) sets it too, with no FIN: a read after a reset that
 * came once all was written counts one byte short. */
static __always_inline __u32 tcp_app_seq(const struct tcp_sock *tp)
{
	const struct sock *sk = &tp->inet_conn.icsk_inet.sk;
	__u8 st = sk->__sk_common.skc_state;
	bool fin = (BPF_CORE_READ_BITFIELD(sk, sk_shutdown) & RC_SEND_SHUTDOWN) &&
		   st != RC_TCP_ESTABLISHED && st != RC_TCP_CLOSE_WAIT &&
		   st != RC_TCP_SYN_SENT && st != RC_TCP_SYN_RECV;
	return tp->write_seq - fin;
}

/* !txn_send_calls: a server's response complete by its socket (bytes
 * written since the request began, sk_resp_end); false when it wrote
 * nothing. */
static __always_inline bool resp_from_socket(struct txn_conn *c, const struct tcp_sock *tp, bool closing)
{
	__u32 ws = tcp_app_seq(tp);
	if (c->phase != PH_REQ || ws == c->ws_mark)
		return false;
	c->bytes_resp = ws - c->ws_mark;
	c->last_ns = sk_resp_end(tp, ws, c->start_ns, closing);
	c->phase = PH_RESP;
	return true;
}

/* !txn_send_calls: a client's request of the bytes written since the
 * mark (up to ws), begun when its first segment left. */
static __always_inline void req_from_socket(struct txn_conn *c, const struct sock *sk, __u32 ws)
{
	__u32 n = ws - c->ws_mark;
	c->ws_mark = ws;
	req_begin(c, sk_tx_start(sk, c->last_ns, true), true);
	c->bytes_req = n;
}

/* !txn_send_calls, at a receive: what the sends would have told, from
 * what the connection wrote since its last mark (tcp_sock.write_seq). A
 * server's writes since its request began were the response: complete
 * now, and the mark moves to where this request begins. A client's
 * writes since the mark began a request, which started when its first
 * segment left (sk_tx_start; its request line is not read: it was in the
 * send). false: nothing to record at this receive (a client connection
 * first seen here is only marked: what it wrote before is unknown). */
static __always_inline bool sends_from_socket(struct txn_conn *c, const struct sock *sk)
{
	const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
	if (!tp)
		return false;
	__u32 ws = tcp_app_seq(tp);
	if (c->role == TXN_ROLE_SERVER) {
		resp_from_socket(c, tp, false);
		if (c->phase != PH_REQ)
			c->ws_mark = ws;
		return true;
	}
	if (!c->last_ns) {
		c->ws_mark = ws;
		c->last_ns = bpf_ktime_get_ns();
		return false;
	}
	if (ws != c->ws_mark)
		req_from_socket(c, sk, ws);
	else if (!c->tid) {             /* begun at a retransmission (on_retrans) */
		__u64 id = bpf_get_current_pid_tgid();
		c->pid = id >> 32;
		c->tid = (__u32)id;
	}
	return true;
}

/* !txn_send_calls: TCP retransmits a client's segment. A request written
 * since the mark and not yet begun (no receive since) begins here, while
 * first_tx_mstamp is still its first transmit's: the ACK of the resent
 * segment will move the stamp to the retransmission (tcp_rate_skb_delivered
 * records the send time of the latest packet delivered), and the request
 * begun at the response's receive would then start after the timeout it
 * waited (the demo's resent RPCs blamed on the client's application
 * instead of the network). Runs in the timer's softirq or an ACK's, not
 * the client's thread: the thread stays the connection's last one (0 for
 * its first request: the response's receive fills it). Retransmissions
 * are rare: a program of its own, not a hub member. */
static __always_inline int on_retrans(const struct sock *sk)
{
	if (txn_send_calls || !sk)
		return 0;
	struct txn_conn *c = conn_find(sk, true);
	if (!c || c->role != TXN_ROLE_CLIENT || !c->last_ns)
		return 0;
	const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
	if (!tp)
		return 0;
	__u32 ws = tcp_app_seq(tp);
	if (ws == c->ws_mark)
		return 0;                   /* a request already begun, or nothing new */
	__u32 pid = c->pid, tid = c->tid;
	req_from_socket(c, sk, ws);
	c->pid = pid;
	c->tid = tid;
	return 0;
}

/* btf: a tp_btf program (direct loads from the socket, filter.bpf.h) */
static __always_inline int on_io(struct sock *sk, int ret, int flags, bool tx, bool btf)
{
	if (ret <= 0 || (!tx && (flags & RC_MSG_PEEK)) || !sk)
		return 0;
	if (!sk_wanted(sk, btf))
		return 0;
	/* a connection we saw no handshake for: who sends first is the client */
	bool sends = txn_send_calls || !btf;
	struct txn_conn *c = conn_get(sk, sends ? (tx ? TXN_ROLE_CLIENT : TXN_ROLE_SERVER) : TXN_ROLE_BY_PORTS, btf);
	if (!c)
		return 0;
	counter_add(TXN_CNT_IO);
	if (!c->keyed)
		conn_key(c, sk, btf);
	if (!sends && !sends_from_socket(c, sk))
		return 0;
	bool req = (c->role == TXN_ROLE_CLIENT) == tx;
	if (req) {
		/* a client's request began at its send's start (the syscall
		 * entry netcpu stamped), or when its first segment left (the
		 * socket's stamp), or at txn_sendmsg (NPREC_TEST_TXN_SENDMSG=1:
		 * the phase is PH_REQ already); without any, here. A
		 * server's, when it received it. The clock is read only for a
		 * start: last_ns is not kept in the request run (nothing reads
		 * it there: a transaction ends at its last response call, and
		 * the next request's lower bound is that end), so a request's
		 * later reads and sends take no clock read. */
		if (c->phase != PH_REQ)
			req_begin(c, !tx ? sk_rx_time(sk, c->last_ns, btf) :
				     txn_nc_start ? req_start(bpf_ktime_get_ns()) : sk_tx_start(sk, c->last_ns, btf),
				  btf);
		if (c->parse) {
			c->parse = 0;
			c->path_due = 0;
			http_req_bytes(c, btf, (__u64)sk, io_user_buf(), ret, true);
		} else if (c->pend) {
			/* the request line went on in this read */
			http_req_bytes(c, btf, (__u64)sk, io_user_buf(), ret, false);
		}
		c->bytes_req += ret;
	} else {
		if (c->phase == PH_IDLE)
			return 0;   /* unsolicited data (a banner, a late tail): no transaction */
		__u64 now = tx ? sk_tx_end_time(sk, c->start_ns, btf) : bpf_ktime_get_ns();
		if (c->phase == PH_REQ) {
			if (c->ev)          /* only events carry it */
				conn_id(c, btf)->first_resp_ns = now;
			c->phase = PH_RESP;
		}
		c->bytes_resp += ret;
		c->last_ns = now;
	}
	return 0;
}

/* Start of a TCP send (fires once per segment-sized chunk of it; only
 * the first one of a client's request counts): the client's request
 * starts here, before the data is copied and sent, as the client's own
 * clock would have it, not when the send returns. */
static __always_inline int on_sendmsg(const struct sock *sk, const struct msghdr *msg, bool btf)
{
	if (!sk)
		return 0;
	/* a later chunk of the same send (its data partly copied already):
	 * not a request's start, out before any lookup. Every send's first
	 * chunk has a fresh iterator at offset 0. */
	if (btf && msg && msg->msg_iter.iov_offset)
		return 0;
	/* most calls are a server's responses, a request's later chunks or
	 * bulk data: out before the filters */
	struct txn_conn *c = conn_find(sk, btf);
	if (c && (c->role != TXN_ROLE_CLIENT || c->phase == PH_REQ))
		return 0;
	if (!sk_wanted(sk, btf))
		return 0;
	if (!c)
		c = conn_get(sk, TXN_ROLE_CLIENT, btf);
	if (!c || c->role != TXN_ROLE_CLIENT || c->phase == PH_REQ)
		return 0;
	if (!c->keyed)
		conn_key(c, sk, btf);
	req_begin(c, bpf_ktime_get_ns(), btf);
	return 0;
}

/* Created when this CPU has no entry yet: a buffered connection's entries
 * may all be on the CPUs that ran the flushes. */
static __always_inline void stats_mark_closed(struct txn_conn *c, bool btf)
{
	struct rc_txn_stats *s = stats_get(c, conn_id(c, btf));
	if (s)
		s->close_ns = bpf_ktime_get_ns();
}

/* The connection is over: what it gathered into the maps, its stats row
 * marked closed, its storage gone. */
static __always_inline void conn_end(struct txn_conn *c, const struct sock *sk, bool btf)
{
	if (btf && txn_buffered)
		txn_flush((struct txn_conn_sk *)c, true);
	if (c->keyed)
		stats_mark_closed(c, btf);
	conn_forget(sk, btf);
}

/* struct sock before sk_flags moved into sock_common (Linux 6.x) */
struct sock___flags_old {
	unsigned long sk_flags;
} __attribute__((preserve_access_index));

/* SOCK_DEAD (bit 0 of the flags): the application has let the socket go */
static __always_inline bool sk_dead(const struct sock *sk)
{
	if (bpf_core_field_exists(sk->__sk_common.skc_flags))
		return sk->__sk_common.skc_flags & 1;
	return ((const struct sock___flags_old *)sk)->sk_flags & 1;
}

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate, bool btf)
{
	if (rc_sk_protocol_x(sk, btf) != RC_IPPROTO_TCP)
		return 0;
	if (newstate == RC_TCP_SYN_SENT || newstate == RC_TCP_SYN_RECV) {
		if (!rc_filter_netns(rc_sk_netns_ino(sk)))
			return 0;
		/* a reused socket address: a fresh connection (what an earlier
		 * one on this socket left is flushed first) */
		if (btf && txn_buffered) {
			struct txn_conn *old = conn_find(sk, btf);
			if (old)
				txn_flush((struct txn_conn_sk *)old, true);
		}
		conn_forget(sk, btf);
		conn_get(sk, newstate == RC_TCP_SYN_SENT ? TXN_ROLE_CLIENT : TXN_ROLE_SERVER, btf);
		return 0;
	}
	if (newstate == RC_TCP_ESTABLISHED && oldstate == RC_TCP_SYN_SENT) {
		/* a client's handshake is over: the lower bound of its first
		 * request's start (sk_tx_start; the SYN's stamp is older) */
		struct txn_conn *c = conn_find(sk, btf);
		if (c && c->phase == PH_IDLE) {
			c->last_ns = bpf_ktime_get_ns();
			if (!txn_send_calls && btf) {   /* what it writes from here is requests */
				const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
				if (tp)
					c->ws_mark = tp->write_seq;
			}
		}
		return 0;
	}
	if (newstate != RC_TCP_FIN_WAIT1 && newstate != RC_TCP_LAST_ACK && newstate != RC_TCP_CLOSE)
		return 0;
	struct txn_conn *c = conn_find(sk, btf);
	if (!c)
		return 0;
	/* !txn_send_calls: a server's response that no request followed,
	 * from its socket, when the connection leaves ESTABLISHED or
	 * CLOSE_WAIT: later changes (a close() after a shutdown() "changes"
	 * FIN_WAIT1 to FIN_WAIT1) have the FIN in write_seq. */
	if (!txn_send_calls && btf && c->role == TXN_ROLE_SERVER &&
	    (oldstate == RC_TCP_ESTABLISHED || oldstate == RC_TCP_CLOSE_WAIT)) {
		const struct tcp_sock *tp = bpf_skc_to_tcp_sock((void *)sk);
		if (tp)
			resp_from_socket(c, tp, true);
	}
	/* CLOSE while the application still holds the socket (the peer's
	 * FIN ended a half-close, or a reset): it may still read what came
	 * before, as a client that shut its side down after its request
	 * reads the response (socat). Finished and forgotten here, the rest
	 * of the response was a new connection's, the transaction lost
	 * (txn_halfclose.sh: 10 of 20). It ends at tcp_destroy_sock. */
	if (newstate == RC_TCP_CLOSE && btf && txn_destroy_hook && !sk_dead(sk)) {
		if (txn_buffered)
			txn_flush((struct txn_conn_sk *)c, false);
		return 0;
	}
	/* the application closed (or the connection died): the response run
	 * that was going on is complete */
	if (c->phase == PH_RESP)
		txn_finish(c, btf);
	/* the application's close (FIN_WAIT1, LAST_ACK: process context)
	 * moves what the connection gathered into the maps too: the final
	 * CLOSE often comes in a softirq, and the kernel skips (and only
	 * counts, hub_state's recursion_misses) a run that interrupts one
	 * already going on this CPU, which lost every transaction since the
	 * last snapshot with the socket's storage (j24i: 134 of 60 000 in a
	 * churn run). A flush with nothing new leaves after the count. */
	if (newstate != RC_TCP_CLOSE && btf && txn_buffered)
		txn_flush((struct txn_conn_sk *)c, false);
	if (newstate == RC_TCP_CLOSE)
		conn_end(c, sk, btf);
	return 0;
}

/* The socket is freed (the application's close of a connection already
 * CLOSE, or an orphan's end): a connection still known here is one
 * whose CLOSE came before its application was done (on_state). */
static __always_inline int on_destroy(struct sock *sk)
{
	struct txn_conn *c = conn_find(sk, true);
	if (!c)
		return 0;
	if (c->phase == PH_RESP)
		txn_finish(c, true);
	conn_end(c, sk, true);
	return 0;
}

/* Run by user space before it reads the maps at every snapshot: each
 * connection's gathered transactions into the maps. */
SEC("iter/bpf_sk_storage_map")
int txn_flush_iter(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct txn_conn_sk *x = ctx->value;

	if (x)
		txn_flush_to(x, false, ctx->meta->seq);
	return 0;
}

/* tp_btf variants are also hub members (bpf/hub.h): after their work
 * they run the next family's program for the same tracepoint */
HUB_PROG_ARRAY(hub_sock_send);
HUB_PROG_ARRAY(hub_sock_recv);
HUB_PROG_ARRAY(hub_sock_state);

SEC("tp_btf/sock_send_length")
int BPF_PROG(txn_send_btf, struct sock *sk, int ret, int flags)
{
	on_io(sk, ret, flags, true, true);
	HUB_NEXT(ctx, hub_sock_send, HUB_SLOT_TXN);
	return 0;
}
SEC("raw_tp/sock_send_length")
int BPF_PROG(txn_send_raw, struct sock *sk, int ret, int flags) { return on_io(sk, ret, flags, true, false); }

SEC("tp_btf/sock_recv_length")
int BPF_PROG(txn_recv_btf, struct sock *sk, int ret, int flags)
{
	on_io(sk, ret, flags, false, true);
	HUB_NEXT(ctx, hub_sock_recv, HUB_SLOT_TXN);
	return 0;
}
SEC("raw_tp/sock_recv_length")
int BPF_PROG(txn_recv_raw, struct sock *sk, int ret, int flags) { return on_io(sk, ret, flags, false, false); }

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(txn_state_btf, const struct sock *sk, int oldstate, int newstate)
{
	on_state(sk, oldstate, newstate, true);
	HUB_NEXT(ctx, hub_sock_state, HUB_SLOT_TXN);
	return 0;
}
SEC("raw_tp/inet_sock_set_state")
int BPF_PROG(txn_state_raw, const struct sock *sk, int oldstate, int newstate)
{ return on_state(sk, oldstate, newstate, false); }

SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(txn_destroy_btf, struct sock *sk)
{ return on_destroy(sk); }

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(txn_retrans_btf, const struct sock *sk, const struct sk_buff *skb)
{ return on_retrans(sk); }

SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(txn_sendmsg_btf, const struct sock *sk, const struct msghdr *msg, const struct sk_buff *skb, int size_goal)
{ return on_sendmsg(sk, msg, true); }
SEC("raw_tp/tcp_sendmsg_locked")
int BPF_PROG(txn_sendmsg_raw, const struct sock *sk, const struct msghdr *msg, const struct sk_buff *skb, int size_goal)
{ return on_sendmsg(sk, msg, false); }
