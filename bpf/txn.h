/* Types shared by bpf/txn.bpf.c and record/families/txn.c (transactions family). */
#ifndef NP_BPF_TXN_H
#define NP_BPF_TXN_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define TXN_CONNS_MAX    65536
#define TXN_STATS_MAX    16384
#define TXN_SKETCH_MAX   131072
#define TXN_RINGBUF_SIZE (4u << 20)
#define TXN_METHOD_LEN   8
#define TXN_PATH_LEN     64
#define TXN_PEEK_LEN     80      /* request bytes read to find method + path */
#define TXN_HEADS_MAX    4096    /* requests whose line is split across reads, at once */

#include "npwire.h"   /* TXN_ROLE_CLIENT, TXN_ROLE_SERVER */

/* Per-transaction events of a connection are kept when its txn_ev_hash is
 * below the threshold in force (TXN_EV_ALL: every connection; 1 in N:
 * TXN_EV_ALL / N). The hash is of the connection's two endpoints, whatever
 * side computes it, so the recorders of client and server keep the same
 * connections, and a lower threshold keeps a subset of a higher one's. */
#define TXN_EV_ALL 65536u

#ifdef __bpf__
#define TXN_INLINE static __always_inline
#else
#define TXN_INLINE static inline
#endif

/* One endpoint: address (4 words as stored, v4 mapped) and port. */
TXN_INLINE __u64 txn_ep_mix(const __u32 a[4], __u16 port)
{
	__u64 x = ((__u64)a[0] << 32 | a[1]) * 0x9E3779B97F4A7C15ULL;
	x ^= (__u64)a[2] << 32 | a[3];
	x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9ULL;
	x ^= port;
	x = (x ^ (x >> 32)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 29);
}

TXN_INLINE __u16 txn_ev_hash(const __u32 la[4], __u16 lport, const __u32 ra[4], __u16 rport)
{
	__u64 a = txn_ep_mix(la, lport), b = txn_ep_mix(ra, rport);
	__u64 x = ((a < b ? a : b) * 0x9E3779B97F4A7C15ULL) ^ (a < b ? b : a);
	x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ULL;
	return (__u16)(x >> 48);
}

/* A connection as one side sees it, with that side's role. */
struct rc_txn_ckey {
	__u32 laddr[4];
	__u32 raddr[4];
	__u64 netns;
	__u16 lport, rport;
	__u8  role, family;
	__u16 evh;                  /* txn_ev_hash of the connection */
};

/* Per-CPU, cumulative since the connection was first seen; keyed by the
 * connection id (a small key: one hash of 8 bytes per transaction). The
 * connection's addresses are written once per CPU, on its first update
 * there (conn != 0 marks a written slot). */
struct rc_txn_stats {
	struct rc_txn_ckey k;
	__u64 conn;                 /* connection id (per boot of the BPF object) */
	__u64 count;                /* completed transactions */
	__u64 bytes_req, bytes_resp;
	__u64 lat_sum_ns;
	__u64 http_count;           /* transactions with a parsed HTTP request line */
	__u64 last_ns;              /* end of the last transaction on this CPU */
	__u64 close_ns;
	/* request starts, for rates between them whatever --txn-events keeps:
	 * the first two counted here (set once: the least two over the CPUs
	 * are the connection's first two) and the last two */
	__u64 start_first_ns, start_second_ns, start_prev_ns, start_last_ns;
	__u32 pid, tid;             /* of the last transaction */
	char  method[TXN_METHOD_LEN];
	char  path[TXN_PATH_LEN];
};

/* Sketch counts since the slot was last taken: programs add into the
 * slot txn_sk_epoch & 1 selects, user space flips it at a snapshot, waits
 * until no program still writes the other one (txn_sk_busy) and takes
 * (reads and deletes) that one's entries: a snapshot reads the buckets
 * that changed, not every bucket of every open connection. */
struct rc_txn_skey {
	__u64 conn;
	__u32 bucket;               /* np_sketch_index(latency ns) */
	__u32 slot;                 /* 0 or 1 */
};

/* The keys of the last TXN_SK_NEW entries made in each slot (txn_sk_new in
 * bpf/txn.bpf.c): a snapshot with at most that many new ones takes them
 * key by key instead of walking the whole map. */
#define TXN_SK_NEW 256

/* Pending sketch counts of a connection's socket storage (bpf/txn.bpf.c):
 * word bucket % TXN_SKW is (bucket + 1) << TXN_SKW_CBITS | count. */
#define TXN_SKW 256
#define TXN_SKW_CBITS 20
#define TXN_SKW_CMAX ((1u << TXN_SKW_CBITS) - 1)

/* What the flush iterator writes to its output per connection with new
 * sketch counts: the header and n words (not the whole array). */
struct rc_txn_skw_out {
	__u64 conn;
	__u32 n;
	__u32 pad;
	__u32 w[TXN_SKW];
};

/* txn_counters */
enum { TXN_CNT_IO = 0, TXN_CNT_RB_LOST = 1, TXN_CNT_SK_LOST = 2, TXN_CNT_N };

/* One completed transaction (ring buffer). */
struct rc_txn_event {
	__u64 conn;
	__u64 start_ns, first_resp_ns, end_ns;
	__u64 bytes_req, bytes_resp;
	__u32 pid, tid;
	__u8  role, http;
	__u8  pad[6];
	char  method[TXN_METHOD_LEN];
	char  path[TXN_PATH_LEN];
};

#endif
