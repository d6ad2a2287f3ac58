/* The body schema of the record types (docs/FORMAT.md, docs/records/): one
 * X-macro table per type, one row per key: (TYPE, ID, "key", value type,
 * encoding, optional, unit). The writer packs NPK_<TYPE>__N keys (less the
 * optional ones it leaves out) under NPK(<TYPE>, ID), the readers look keys
 * up by the same name, and debug builds (NP_DEBUG) check every finished
 * record against its table (np_schema_check). A key added or renamed is
 * changed here, in its producer and in its consumer.
 *
 * Encodings: SCALAR one value; COLUMN one value per row (n rows); DELTA a
 * column whose first element is absolute, the rest differences (keys "_d"). */
#ifndef NP_RECSCHEMA_H
#define NP_RECSCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <msgpack.h>

enum np_ftype { NP_FT_U64, NP_FT_F64, NP_FT_BOOL, NP_FT_STR, NP_FT_MAP, NP_FT_BIN };
enum np_fenc { NP_FE_SCALAR, NP_FE_COLUMN, NP_FE_DELTA };

struct np_recfield {
	const char *key;
	uint8_t type;        /* enum np_ftype */
	uint8_t enc;         /* enum np_fenc */
	bool optional;       /* the writer may leave it out (e.g. path when redacted) */
	const char *unit;    /* "ns", "bytes", "us", "" */
};

struct np_recschema {
	int type;            /* enum np_rec_type */
	const struct np_recfield *f;
	size_t n;
};

/* NP_REC_FLOWS: per-flow counters of one interval (record/families/flows.c). */
#define NP_SCHEMA_FLOWS(X) \
	X(FLOWS, T0_NS,          "t0_ns",          U64, SCALAR, 0, "ns") \
	X(FLOWS, T1_NS,          "t1_ns",          U64, SCALAR, 0, "ns") \
	X(FLOWS, N,              "n",              U64, SCALAR, 0, "") \
	X(FLOWS, PROTO,          "proto",          U64, COLUMN, 0, "") \
	X(FLOWS, NETNS,          "netns",          U64, COLUMN, 0, "") \
	X(FLOWS, LADDR,          "laddr",          STR, COLUMN, 0, "") \
	X(FLOWS, LPORT,          "lport",          U64, COLUMN, 0, "") \
	X(FLOWS, RADDR,          "raddr",          STR, COLUMN, 0, "") \
	X(FLOWS, RPORT,          "rport",          U64, COLUMN, 0, "") \
	X(FLOWS, TX_BYTES,       "tx_bytes",       U64, COLUMN, 0, "bytes") \
	X(FLOWS, RX_BYTES,       "rx_bytes",       U64, COLUMN, 0, "bytes") \
	X(FLOWS, TX_PKTS,        "tx_pkts",        U64, COLUMN, 0, "") \
	X(FLOWS, RX_PKTS,        "rx_pkts",        U64, COLUMN, 0, "") \
	X(FLOWS, RETRANS,        "retrans",        U64, COLUMN, 0, "") \
	X(FLOWS, RETRANS_SEGS,   "retrans_segs",   U64, COLUMN, 0, "") \
	X(FLOWS, TX_BYTES_TOTAL, "tx_bytes_total", U64, COLUMN, 0, "bytes") \
	X(FLOWS, RX_BYTES_TOTAL, "rx_bytes_total", U64, COLUMN, 0, "bytes") \
	X(FLOWS, SRTT_N,         "srtt_n",         U64, COLUMN, 0, "") \
	X(FLOWS, SRTT_MEAN_US,   "srtt_mean_us",   U64, COLUMN, 0, "us") \
	X(FLOWS, SRTT_MIN_US,    "srtt_min_us",    U64, COLUMN, 0, "us") \
	X(FLOWS, SRTT_MAX_US,    "srtt_max_us",    U64, COLUMN, 0, "us") \
	X(FLOWS, SRTT_US,        "srtt_us",        U64, COLUMN, 0, "us") \
	X(FLOWS, CWND,           "cwnd",           U64, COLUMN, 0, "") \
	X(FLOWS, OPEN_NS,        "open_ns",        U64, COLUMN, 0, "ns") \
	X(FLOWS, CLOSE_NS,       "close_ns",       U64, COLUMN, 0, "ns") \
	X(FLOWS, PID,            "pid",            U64, COLUMN, 0, "") \
	X(FLOWS, TID,            "tid",            U64, COLUMN, 0, "") \
	X(FLOWS, COMM,           "comm",           STR, COLUMN, 0, "") \
	X(FLOWS, CGROUP_ID,      "cgroup_id",      U64, COLUMN, 0, "")

/* NP_REC_DROPS: drops by flow and kernel drop reason (record/families/flows.c). */
#define NP_SCHEMA_DROPS(X) \
	X(DROPS, T0_NS,         "t0_ns",         U64,  SCALAR, 0, "ns") \
	X(DROPS, T1_NS,         "t1_ns",         U64,  SCALAR, 0, "ns") \
	X(DROPS, N,             "n",             U64,  SCALAR, 0, "") \
	X(DROPS, NETNS,         "netns",         U64,  COLUMN, 0, "") \
	X(DROPS, PROTO,         "proto",         U64,  COLUMN, 0, "") \
	X(DROPS, SADDR,         "saddr",         STR,  COLUMN, 0, "") \
	X(DROPS, SPORT,         "sport",         U64,  COLUMN, 0, "") \
	X(DROPS, DADDR,         "daddr",         STR,  COLUMN, 0, "") \
	X(DROPS, DPORT,         "dport",         U64,  COLUMN, 0, "") \
	X(DROPS, REASON,        "reason",        U64,  COLUMN, 0, "") \
	X(DROPS, REASON_NAME,   "reason_name",   STR,  COLUMN, 0, "") \
	X(DROPS, COUNT,         "count",         U64,  COLUMN, 0, "") \
	X(DROPS, T_NS,          "t_ns",          U64,  COLUMN, 0, "ns") \
	X(DROPS, SEQ,           "seq",           U64,  COLUMN, 0, "") \
	X(DROPS, ACK,           "ack",           U64,  COLUMN, 0, "") \
	X(DROPS, LEN,           "len",           U64,  COLUMN, 0, "bytes") \
	X(DROPS, TCPFLAGS,      "tcpflags",      U64,  COLUMN, 0, "") \
	X(DROPS, TUPLE_FROM_PACKET, "tuple_from_packet", BOOL, SCALAR, 0, "") \
	X(DROPS, PROG_MISSED,   "prog_missed",   U64,  SCALAR, 0, "")

/* NP_REC_TXN_STATS: per-connection transaction aggregates (record/families/txn.c). */
#define NP_SCHEMA_TXN_STATS(X) \
	X(TXN_STATS, T0_NS,       "t0_ns",       U64,  SCALAR, 0, "ns") \
	X(TXN_STATS, T1_NS,       "t1_ns",       U64,  SCALAR, 0, "ns") \
	X(TXN_STATS, N,           "n",           U64,  SCALAR, 0, "") \
	X(TXN_STATS, CONN,        "conn",        U64,  COLUMN, 0, "") \
	X(TXN_STATS, ROLE,        "role",        U64,  COLUMN, 0, "") \
	X(TXN_STATS, NETNS,       "netns",       U64,  COLUMN, 0, "") \
	X(TXN_STATS, LADDR,       "laddr",       STR,  COLUMN, 0, "") \
	X(TXN_STATS, LPORT,       "lport",       U64,  COLUMN, 0, "") \
	X(TXN_STATS, RADDR,       "raddr",       STR,  COLUMN, 0, "") \
	X(TXN_STATS, RPORT,       "rport",       U64,  COLUMN, 0, "") \
	X(TXN_STATS, COUNT,       "count",       U64,  COLUMN, 0, "") \
	X(TXN_STATS, COUNT_TOTAL, "count_total", U64,  COLUMN, 0, "") \
	X(TXN_STATS, BYTES_REQ,   "bytes_req",   U64,  COLUMN, 0, "bytes") \
	X(TXN_STATS, BYTES_RESP,  "bytes_resp",  U64,  COLUMN, 0, "bytes") \
	X(TXN_STATS, LAT_SUM_NS,  "lat_sum_ns",  U64,  COLUMN, 0, "ns") \
	X(TXN_STATS, HTTP_COUNT,  "http_count",  U64,  COLUMN, 0, "") \
	X(TXN_STATS, PID,         "pid",         U64,  COLUMN, 0, "") \
	X(TXN_STATS, TID,         "tid",         U64,  COLUMN, 0, "") \
	X(TXN_STATS, CLOSE_NS,    "close_ns",    U64,  COLUMN, 0, "ns") \
	X(TXN_STATS, METHOD,      "method",      STR,  COLUMN, 0, "") \
	X(TXN_STATS, PATH,        "path",        STR,  COLUMN, 1, "") \
	X(TXN_STATS, PATH_HASH,   "path_hash",   U64,  COLUMN, 0, "") \
	X(TXN_STATS, REDACTED,    "redacted",    BOOL, SCALAR, 0, "") \
	X(TXN_STATS, LAT,         "lat",         MAP,  COLUMN, 0, "ns") \
	X(TXN_STATS, EV_SAMPLE,   "ev_sample",   U64,  SCALAR, 0, "") \
	X(TXN_STATS, EV,          "ev",          U64,  COLUMN, 0, "") \
	X(TXN_STATS, START_LO_NS, "start_lo_ns", U64,  COLUMN, 0, "ns") \
	X(TXN_STATS, START_HI_NS, "start_hi_ns", U64,  COLUMN, 0, "ns") \
	X(TXN_STATS, START_SECOND_NS, "start_second_ns", U64, COLUMN, 0, "ns") \
	X(TXN_STATS, START_PREV_NS, "start_prev_ns", U64, COLUMN, 0, "ns")

/* NP_REC_TXN_EVENTS: one row per transaction (record/families/txn.c). */
#define NP_SCHEMA_TXN_EVENTS(X) \
	X(TXN_EVENTS, T0_NS,       "t0_ns",       U64,  SCALAR, 0, "ns") \
	X(TXN_EVENTS, T1_NS,       "t1_ns",       U64,  SCALAR, 0, "ns") \
	X(TXN_EVENTS, N,           "n",           U64,  SCALAR, 0, "") \
	X(TXN_EVENTS, CONN,        "conn",        U64,  COLUMN, 0, "") \
	X(TXN_EVENTS, ROLE,        "role",        U64,  COLUMN, 0, "") \
	X(TXN_EVENTS, PID,         "pid",         U64,  COLUMN, 0, "") \
	X(TXN_EVENTS, TID,         "tid",         U64,  COLUMN, 0, "") \
	X(TXN_EVENTS, START_NS_D,  "start_ns_d",  U64,  DELTA,  0, "ns") \
	X(TXN_EVENTS, RESP_OFF_NS, "resp_off_ns", U64,  COLUMN, 0, "ns") \
	X(TXN_EVENTS, DUR_NS,      "dur_ns",      U64,  COLUMN, 0, "ns") \
	X(TXN_EVENTS, BYTES_REQ,   "bytes_req",   U64,  COLUMN, 0, "bytes") \
	X(TXN_EVENTS, BYTES_RESP,  "bytes_resp",  U64,  COLUMN, 0, "bytes") \
	X(TXN_EVENTS, METHOD,      "method",      STR,  COLUMN, 0, "") \
	X(TXN_EVENTS, PATH,        "path",        STR,  COLUMN, 1, "") \
	X(TXN_EVENTS, PATH_HASH,   "path_hash",   U64,  COLUMN, 0, "") \
	X(TXN_EVENTS, REDACTED,    "redacted",    BOOL, SCALAR, 0, "")

/* NP_REC_PKT_FLOWS: the flow table PKT_EVENTS rows index (common/pktcols.c);
 * addresses are 4 or 16 raw bytes by family. */
#define NP_SCHEMA_PKT_FLOWS(X) \
	X(PKT_FLOWS, IDX,    "idx",    U64, COLUMN, 0, "") \
	X(PKT_FLOWS, FAMILY, "family", U64, COLUMN, 0, "") \
	X(PKT_FLOWS, PROTO,  "proto",  U64, COLUMN, 0, "") \
	X(PKT_FLOWS, SADDR,  "saddr",  BIN, COLUMN, 0, "") \
	X(PKT_FLOWS, DADDR,  "daddr",  BIN, COLUMN, 0, "") \
	X(PKT_FLOWS, SPORT,  "sport",  U64, COLUMN, 0, "") \
	X(PKT_FLOWS, DPORT,  "dport",  U64, COLUMN, 0, "")

/* NP_REC_THREADS: per-thread CPU of one interval (record/families/threads.c);
 * the hardware-counter columns only when "hw" is true. */
#define NP_SCHEMA_THREADS(X) \
	X(THREADS, T0_NS,          "t0_ns",          U64,  SCALAR, 0, "ns") \
	X(THREADS, T1_NS,          "t1_ns",          U64,  SCALAR, 0, "ns") \
	X(THREADS, N,              "n",              U64,  SCALAR, 0, "") \
	X(THREADS, TID_D,          "tid_d",          U64,  DELTA,  0, "") \
	X(THREADS, PID,            "pid",            U64,  COLUMN, 0, "") \
	X(THREADS, COMM,           "comm",           STR,  COLUMN, 0, "") \
	X(THREADS, CGROUP_ID,      "cgroup_id",      U64,  COLUMN, 0, "") \
	X(THREADS, ONCPU_NS,       "oncpu_ns",       U64,  COLUMN, 0, "ns") \
	X(THREADS, NVCSW,          "nvcsw",          U64,  COLUMN, 0, "") \
	X(THREADS, NIVCSW,         "nivcsw",         U64,  COLUMN, 0, "") \
	X(THREADS, EXITED,         "exited",         U64,  COLUMN, 0, "") \
	X(THREADS, HW,             "hw",             BOOL, SCALAR, 0, "") \
	X(THREADS, CYCLES,         "cycles",         U64,  COLUMN, 1, "") \
	X(THREADS, INSTRUCTIONS,   "instructions",   U64,  COLUMN, 1, "") \
	X(THREADS, CACHE_REFS,     "cache_refs",     U64,  COLUMN, 1, "") \
	X(THREADS, CACHE_MISSES,   "cache_misses",   U64,  COLUMN, 1, "") \
	X(THREADS, CYCLES_ALONE,   "cycles_alone",   U64,  COLUMN, 1, "") \
	X(THREADS, CYCLES_OVERLAP, "cycles_overlap", U64,  COLUMN, 1, "")

/* NP_REC_PROGS: every BPF program the recorder loaded and the runs the kernel
 * skipped for it, per interval (record/core/progtab.c). */
#define NP_SCHEMA_PROGS(X) \
	X(PROGS, T0_NS,        "t0_ns",        U64, SCALAR, 0, "ns") \
	X(PROGS, T1_NS,        "t1_ns",        U64, SCALAR, 0, "ns") \
	X(PROGS, N,            "n",            U64, SCALAR, 0, "") \
	X(PROGS, PROG,         "prog",         STR, COLUMN, 0, "") \
	X(PROGS, FAMILY,       "family",       STR, COLUMN, 0, "") \
	X(PROGS, PROG_TYPE,    "prog_type",    STR, COLUMN, 0, "") \
	X(PROGS, MISSED,       "missed",       U64, COLUMN, 0, "") \
	X(PROGS, MISSED_TOTAL, "missed_total", U64, COLUMN, 0, "")

#define NP_SCHEMA_TYPES(X) X(FLOWS) X(DROPS) X(TXN_STATS) X(TXN_EVENTS) X(PKT_FLOWS) X(THREADS) X(PROGS)

/* enum NPK_<TYPE>_<ID>, NPK_<TYPE>__N (all keys), NPK_<TYPE>__NOPT (optional) */
#define NP_SCH_ENUM(T, ID, k, ty, en, op, u) NPK_##T##_##ID,
#define NP_SCH_NOPT(T, ID, k, ty, en, op, u) + (op)
#define NP_SCH_DECL(T) \
	enum { NP_SCHEMA_##T(NP_SCH_ENUM) NPK_##T##__N }; \
	enum { NPK_##T##__NOPT = 0 NP_SCHEMA_##T(NP_SCH_NOPT) }; \
	extern const struct np_recfield np_schema_##T[]; \
	extern const struct np_recschema np_recschema_##T;
NP_SCHEMA_TYPES(NP_SCH_DECL)

/* The key string of field ID of record type T: NPK(FLOWS, LPORT) == "lport". */
#define NPK(T, ID) (np_schema_##T[NPK_##T##_##ID].key)

/* The schema of a record type, NULL if the type has none yet. */
const struct np_recschema *np_recschema_of(int type);

/* Checks one record body against its type's schema: every key known, of its
 * type and encoding, every column n long, and with complete set every
 * required key present (what today's writer packs; older recordings of this
 * format version, e.g. the fixtures, may lack keys readers treat as absent).
 * 0 if it conforms (or the type has no schema), -1 with the first fault in
 * err. */
int np_schema_check(int type, const msgpack_object *body, bool complete, char *err, size_t errlen);

/* The one columnar decoder of the types on the schema: every integer
 * column decoded (delta columns summed up), string and map columns
 * referenced, all indexed by the type's NPK_<TYPE>_<ID>. A column may be
 * shorter than n (damaged or older recordings): the accessors say absent. */
struct np_cols {
	const struct np_recschema *s;
	size_t n;                              /* "n", else the longest column */
	uint64_t *u64[64];                     /* NULL: absent or not integer */
	size_t len[64];
	const msgpack_object_array *arr[64];   /* string and map columns */
};
/* 0, -EINVAL (type without a schema) or -ENOMEM; close it either way. */
int  np_cols_open(struct np_cols *c, int type, const msgpack_object *body);
void np_cols_close(struct np_cols *c);
bool np_cols_u64(const struct np_cols *c, int key, size_t i, uint64_t *v);
const msgpack_object *np_cols_obj(const struct np_cols *c, int key, size_t i);

/* docs/records/schema.md: the tables above as Markdown (tests/tools/recschema_md
 * writes it; tests/unit/test_recschema.c checks the committed page matches). */
void np_recschema_markdown(FILE *out);

#endif
