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

/* A connection as one side sees it, with that side's role. */
struct rc_txn_ckey {
	__u32 laddr[4];
	__u32 raddr[4];
	__u64 netns;
	__u16 lport, rport;
	__u8  role, family;
	__u8  pad[2];
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
	__u32 pid, tid;             /* of the last transaction */
	char  method[TXN_METHOD_LEN];
	char  path[TXN_PATH_LEN];
};

struct rc_txn_skey {
	__u64 conn;
	__u32 bucket;               /* np_sketch_index(latency ns) */
	__u32 pad;
};

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
