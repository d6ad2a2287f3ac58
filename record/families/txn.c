/* Transactions family, user side: loads bpf/txn.bpf.c, drains the
 * per-transaction ring buffer every tick, and every interval writes
 * NP_REC_TXN_STATS (per connection: count, bytes, latency sketch of the
 * transactions completed in the interval, HTTP method/path) and
 * NP_REC_TXN_EVENTS (one row per completed transaction).
 *
 * At ~90k transactions/s the per-event work must not pile up at the
 * interval boundary (that burst showed as wrk's p99): every drained event
 * is packed right away, column by column, into per-column msgpack byte
 * buffers kept across intervals, and the snapshot only writes the
 * record's keys and copies those bytes. The per-connection maps are read
 * with batched lookups (a few syscalls, not two per key). */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cpuslice.h"
#include "pathhash.h"
#include "family.h"
#include "npmsg.h"
#include "rcbpf.h"
#include "rcdelta.h"
#include "rcfilter.h"
#include "records.h"
#include "recschema.h"
#include "sketch.h"
#include "txn.h"
#include "txn.skel.h"

#define RC_TXN_FAMILY "txn"
#define RC_TXN_NTP 5
#define RC_TXN_TP_SEND 0        /* sock_send_length: tps from tp0 (1 without it) */
#define RC_TXN_TP_RECV 1
#define RC_TXN_TP_STATE 2       /* inet_sock_set_state in rc_txn.tps */
#define RC_TXN_TP_DESTROY 3     /* tcp_destroy_sock (tp_btf only) */
#define RC_TXN_TP_EXTRA 4       /* the last one, when in use: tcp_sendmsg_locked
				 * (sendmsg) or tcp_retransmit_skb (!send_calls) */
/* --txn-events auto: every connection's events until an interval has more
 * than RC_TXN_EV_AUTO_RATE a second, then 1 in RC_TXN_EV_AUTO_N connections
 * for the rest of the recording (per-transaction events cost a ring-buffer
 * record, a request-line read and their packing; docs/BENCHMARKS.md). */
#define RC_TXN_EV_AUTO_RATE 2000
#define RC_TXN_EV_AUTO_N    16

/* start_last: the last request start counted (in d: unused) */
struct rc_txn_prev { uint64_t count, bytes_req, bytes_resp, lat_sum, http_count, start_last; };

struct rc_txn_row {
	struct rc_txn_ckey k;
	struct rc_txn_prev tot, d;
	uint64_t conn, close_ns, last_ns, path_hash;
	uint64_t start_first, start_second, start_prev;   /* the connection's request starts */
	uint64_t start_lo;            /* the row's request starts span start_lo .. tot.start_last */
	uint32_t pid, tid;
	char method[TXN_METHOD_LEN + 1], path[TXN_PATH_LEN + 1];
	char la[46], ra[46];
	size_t sk_first, sk_n;        /* this row's buckets in rc_txn.sk */
};

/* age: snapshots it has waited for its connection's row (rc_txn_join) */
struct rc_txn_bucket { uint64_t conn; uint32_t bucket, age; uint64_t count; };
/* Snapshots a bucket without its connection's row is carried before it is
 * counted lost: its row comes one snapshot later when the connection
 * closed between the stats read and the slot flip (rc_txn_sk_flip). */
#define RC_TXN_CARRY_MAX 4

/* One column of TXN_EVENTS: its values, msgpack-encoded back to back. */
struct rc_col { uint8_t *p; size_t n, cap; };
enum {
	EC_CONN, EC_ROLE, EC_PID, EC_TID, EC_START, EC_RESP, EC_DUR, EC_BREQ, EC_BRESP,
	EC_METHOD, EC_PATH, EC_PHASH, EC_N
};
#define RC_COL_ROOM 80     /* most one event adds to a column (a 64-byte path + header) */

/* Everything read from one per-CPU hash map (batched lookups). */
struct rc_mapdump { void *keys, *vals; size_t n, cap; };

struct rc_txn {
	struct txn_bpf *skel;
	struct rc_tp tps[RC_TXN_NTP];
	struct ring_buffer *ring;
	bool redact;
	struct rc_pathkey pathkey;      /* path_hash: keyed with --redact-paths (pathhash.h) */
	bool buffered;                  /* txn_buffered: flush by txn_flush_iter at snapshots */
	bool nc_start;                  /* txn_nc_start: request starts from netcpu's stamps */
	bool sendmsg;                   /* tcp_sendmsg_locked hooked (NPREC_TEST_TXN_SENDMSG=1) */
	size_t tp0, ntps;               /* tps[tp0..ntps) in use (without tcp_sendmsg_locked unless
					 * sendmsg; without sock_send_length unless send_calls) */
	bool send_calls;                /* txn_send_calls (--no-send-calls clears it) */
	uint64_t flush_failed;          /* snapshots whose flush failed (counted as lost) */
	int ncpus;
	void *vbuf;
	struct rc_dtab prev;
	struct rc_mapdump st, skd;
	uint8_t *iob; size_t iocap;     /* the flush iterator's output */
	struct rc_txn_row *rows; size_t nrows, caprows;
	struct rc_txn_bucket *sk; size_t nsk, capsk;
	struct rc_txn_bucket *carry; size_t ncarry, capcarry;   /* waiting for their row */
	uint64_t sk_orphan;             /* sketch counts whose row never came (counted lost) */
	uint32_t sk_old;                /* the slot retired at this snapshot's flip */
	uint64_t sk_seen[2];            /* txn_sk_made of each slot when it was last taken */
	bool sk_left[2];                /* entries of the slot may be left in the map: read it */
	bool sk_late;                   /* the last flip gave up waiting for the writers */
	bool test_sk_walk;              /* NPREC_TEST_TXN_SKNEW0: read the sketch map whole */
	unsigned test_flipwait_ms;      /* NPREC_TEST_TXN_FLIPWAIT: ms between stats read and flip */
	struct rc_col col[EC_N];        /* this interval's events, packed */
	size_t nev;
	unsigned slice_ctr;
	uint64_t start0, start_prev;    /* first event's start (absolute), the last one's */
	uint64_t ev_lost;               /* events that found no memory to be packed in */
	uint64_t evicted;               /* entries the full txn_stats LRU map evicted */
	bool ev_auto;                   /* --txn-events auto: may still lower ev_keep */
	bool quiet;                     /* -q: no note when it does */
	uint32_t ev_keep;               /* txn_ev_keep in force this interval */
};

/* Grows *arr (of elem bytes) to hold one more; NULL on ENOMEM. */
static void *rc_push(void **arr, size_t *n, size_t *cap, size_t elem)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		void *p = realloc(*arr, nc * elem);
		if (!p)
			return NULL;
		*arr = p;
		*cap = nc;
	}
	return (char *)*arr + (*n)++ * elem;
}

/* ---- events: packed as they are drained ---- */

static inline uint8_t *rc_put_be(uint8_t *p, uint64_t v, int nbytes)
{
	for (int i = nbytes - 1; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

/* The encodings msgpack_pack_uint64 / msgpack_pack_int64 choose. */
static inline void rc_col_u64(struct rc_col *c, uint64_t v)
{
	uint8_t *p = c->p + c->n;
	if (v < 128)
		*p++ = (uint8_t)v;
	else if (v < 256)
		*p++ = 0xcc, *p++ = (uint8_t)v;
	else if (v < 65536)
		*p++ = 0xcd, p = rc_put_be(p, v, 2);
	else if (v < (1ull << 32))
		*p++ = 0xce, p = rc_put_be(p, v, 4);
	else
		*p++ = 0xcf, p = rc_put_be(p, v, 8);
	c->n = (size_t)(p - c->p);
}

static inline void rc_col_i64(struct rc_col *c, int64_t v)
{
	if (v >= 0) {
		rc_col_u64(c, (uint64_t)v);
		return;
	}
	uint8_t *p = c->p + c->n;
	if (v >= -32)
		*p++ = (uint8_t)v;
	else if (v >= -128)
		*p++ = 0xd0, *p++ = (uint8_t)v;
	else if (v >= -32768)
		*p++ = 0xd1, p = rc_put_be(p, (uint64_t)v, 2);
	else if (v >= -2147483648ll)
		*p++ = 0xd2, p = rc_put_be(p, (uint64_t)v, 4);
	else
		*p++ = 0xd3, p = rc_put_be(p, (uint64_t)v, 8);
	c->n = (size_t)(p - c->p);
}

/* s: up to max bytes, NUL-terminated if shorter */
static inline size_t rc_col_str(struct rc_col *c, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	uint8_t *p = c->p + c->n;
	if (n < 32)
		*p++ = 0xa0 | (uint8_t)n;
	else
		*p++ = 0xd9, *p++ = (uint8_t)n;
	memcpy(p, s, n);
	c->n = (size_t)(p + n - c->p);
	return n;
}

/* Room for one more event in every column; false on ENOMEM. */
static bool rc_cols_room(struct rc_txn *t)
{
	for (int i = 0; i < EC_N; i++) {
		struct rc_col *c = &t->col[i];
		if (c->cap - c->n >= RC_COL_ROOM)
			continue;
		size_t nc = c->cap ? c->cap * 2 : 64 * 1024;
		uint8_t *p = realloc(c->p, nc);
		if (!p)
			return false;
		c->p = p;
		c->cap = nc;
	}
	return true;
}

static void rc_txn_ev_lower(struct rc_txn *t);

static int rc_txn_on_event(void *ctx, void *data, size_t len)
{
	struct rc_txn *t = ctx;
	const struct rc_txn_event *e = data;
	if (len < sizeof(*e))
		return 0;
	if (!rc_cols_room(t)) {
		t->ev_lost++;
		return 0;
	}
	struct rc_col *c = t->col;
	rc_col_u64(&c[EC_CONN], e->conn);
	rc_col_u64(&c[EC_ROLE], e->role);
	rc_col_u64(&c[EC_PID], e->pid);
	rc_col_u64(&c[EC_TID], e->tid);
	/* start_ns_d: the first start absolute (written at the snapshot,
	 * shifted), then differences */
	if (t->nev)
		rc_col_i64(&c[EC_START], (int64_t)(e->start_ns - t->start_prev));
	else
		t->start0 = e->start_ns;
	t->start_prev = e->start_ns;
	rc_col_u64(&c[EC_RESP], e->first_resp_ns ? e->first_resp_ns - e->start_ns : 0);
	rc_col_u64(&c[EC_DUR], e->end_ns - e->start_ns);
	rc_col_u64(&c[EC_BREQ], e->bytes_req);
	rc_col_u64(&c[EC_BRESP], e->bytes_resp);
	rc_col_str(&c[EC_METHOD], e->method, TXN_METHOD_LEN);
	size_t pl = strnlen(e->path, TXN_PATH_LEN);
	if (!t->redact)
		rc_col_str(&c[EC_PATH], e->path, TXN_PATH_LEN);
	rc_col_u64(&c[EC_PHASH], pl ? rc_path_hash(&t->pathkey, e->path, pl) : 0);
	t->nev++;
	/* a second's worth before the interval ends: lower now, inside the
	 * consume, not after it (a recorder starved by the load it records
	 * drains for long while the ring refills, and lost 15-30 k events
	 * of a saturating loopback wrk at start-up when it lowered only
	 * after the whole drain) */
	if (t->ev_auto && t->nev > RC_TXN_EV_AUTO_RATE)
		rc_txn_ev_lower(t);
	cpuslice_point_every64(&t->slice_ctr);
	return 0;
}

/* ---- open / close ---- */

static void rc_txn_tps(struct rc_txn *t)
{
	struct txn_bpf *s = t->skel;
	struct rc_tp v[RC_TXN_NTP] = {
		{ .name = "sock_send_length", .btf_prog = s->progs.txn_send_btf, .raw_prog = s->progs.txn_send_raw, .required = true,
		  .hub_hook = HUB_SOCK_SEND, .hub_slot = HUB_SLOT_TXN, .hub_map = s->maps.hub_sock_send },
		{ .name = "sock_recv_length", .btf_prog = s->progs.txn_recv_btf, .raw_prog = s->progs.txn_recv_raw, .required = true,
		  .hub_hook = HUB_SOCK_RECV, .hub_slot = HUB_SLOT_TXN, .hub_map = s->maps.hub_sock_recv },
		[RC_TXN_TP_STATE] = { .name = "inet_sock_set_state", .btf_prog = s->progs.txn_state_btf, .raw_prog = s->progs.txn_state_raw,
		  .hub_hook = HUB_SOCK_STATE, .hub_slot = HUB_SLOT_TXN, .hub_map = s->maps.hub_sock_state },
		/* a connection CLOSE before its application was done (a
		 * half-closed client reading its response) ends at its socket's
		 * end; once a connection, not a hub member */
		[RC_TXN_TP_DESTROY] = { .name = "tcp_destroy_sock", .btf_prog = s->progs.txn_destroy_btf },
	};
	/* the client's start time, with NPREC_TEST_TXN_SENDMSG=1 only */
	struct rc_tp sendmsg = { .name = "tcp_sendmsg_locked", .btf_prog = s->progs.txn_sendmsg_btf,
				 .raw_prog = s->progs.txn_sendmsg_raw };
	/* a resent client request's start without send calls (tp_btf only) */
	struct rc_tp retrans = { .name = "tcp_retransmit_skb", .btf_prog = s->progs.txn_retrans_btf };
	v[RC_TXN_TP_EXTRA] = t->sendmsg ? sendmsg : retrans;
	memcpy(t->tps, v, sizeof(v));
	t->ntps = t->sendmsg || !t->send_calls ? RC_TXN_NTP : RC_TXN_TP_EXTRA;
	if (!t->sendmsg) {
		bpf_program__set_autoload(s->progs.txn_sendmsg_btf, false);
		bpf_program__set_autoload(s->progs.txn_sendmsg_raw, false);
	}
	if (t->send_calls)
		bpf_program__set_autoload(s->progs.txn_retrans_btf, false);
	/* without send calls, sends come from the socket at the next receive
	 * or the close instead (bpf/txn.bpf.c sends_from_socket) */
	t->tp0 = t->send_calls ? RC_TXN_TP_SEND : RC_TXN_TP_RECV;
	if (!t->send_calls) {
		bpf_program__set_autoload(s->progs.txn_send_btf, false);
		bpf_program__set_autoload(s->progs.txn_send_raw, false);
	}
}

static int rc_txn_load(struct rc_txn *t, struct rec_ctx *ctx, bool use_raw, char *err, size_t errlen)
{
	t->skel = txn_bpf__open();
	if (!t->skel) {
		snprintf(err, errlen, "cannot open BPF object: %s", strerror(errno));
		return -errno;
	}
	RC_FILTER_SET(t->skel->rodata, ctx->cfg);
	rc_size_pcpu_map(t->skel->maps.txn_stats, t->ncpus);
	rc_size_pcpu_map(t->skel->maps.txn_sketch, t->ncpus);
	/* a client request's start: the syscall entry netcpu stamps (its
	 * programs run anyway; netcpu stamps syscalls only with --netcpu
	 * exact), else its first segment's transmit stamp in the socket
	 * (bpf/txn.bpf.c sk_tx_start), instead of a program on every chunk
	 * of every TCP send (tcp_sendmsg_locked, issue 24).
	 * NPREC_TEST_TXN_SENDMSG=1 hooks it again (bench A/B, tests). */
	const char *keep = getenv("NPREC_TEST_TXN_SENDMSG");
	t->sendmsg = keep && *keep == '1';
	t->nc_start = !ctx->cfg->no_netcpu && ctx->cfg->netcpu_exact && !t->sendmsg;
	t->skel->rodata->txn_nc_start = t->nc_start;
	/* the flush's fallback into the map for half the connections (rec_txn.sh) */
	const char *sf = getenv("NPREC_TEST_TXN_SEQFULL");
	t->skel->rodata->txn_test_seq_full = sf && *sf == '1';
	/* a wide window for closes between the stats read and the slot flip
	 * (rec_txn.sh: their rows come a snapshot after their buckets) */
	const char *fw = getenv("NPREC_TEST_TXN_FLIPWAIT");
	t->test_flipwait_ms = fw ? (unsigned)atoi(fw) : 0;
	/* the sketch map read whole at every snapshot, as with more new
	 * entries than txn_sk_new holds (rec_txn_sketchwords.sh) */
	const char *sk = getenv("NPREC_TEST_TXN_SKNEW0");
	t->test_sk_walk = sk && *sk == '1';
	uint32_t n = ctx->cfg->txn_events_n;
	t->ev_auto = n == 0;
	t->ev_keep = n > 1 ? TXN_EV_ALL / n : TXN_EV_ALL;
	t->skel->data->txn_ev_keep = t->ev_keep;
	/* --no-send-calls: tp_btf only (the raw_tp programs cannot read the
	 * socket's fields) */
	t->send_calls = use_raw || rc_tp_raw_forced() || t->sendmsg || t->nc_start || !ctx->cfg->no_send_calls;
	t->skel->rodata->txn_send_calls = t->send_calls;
	rc_txn_tps(t);
	int rc = rc_tp_select(ctx, RC_TXN_FAMILY, t->tps + t->tp0, t->ntps - t->tp0, use_raw, err, errlen);
	/* Transactions gather in socket storage and are flushed into the maps
	 * at every snapshot and at close (bpf/txn.bpf.c): needs the tp_btf
	 * programs and the close of every connection, so the state hook
	 * becomes required. */
	struct rc_tp *state = &t->tps[RC_TXN_TP_STATE];
	t->buffered = !rc && bpf_program__autoload(t->tps[RC_TXN_TP_RECV].btf_prog) && state->present;
	t->skel->rodata->txn_buffered = t->buffered;
	t->skel->rodata->txn_destroy_hook = !rc && bpf_program__autoload(t->skel->progs.txn_destroy_btf);
	state->required = t->buffered;
	bpf_program__set_autoload(t->skel->progs.txn_flush_iter, t->buffered);
	if (!rc)
		rc = txn_bpf__load(t->skel);
	if (rc) {
		if (!err[0])
			snprintf(err, errlen, "cannot load BPF programs: %s", strerror(-rc));
		txn_bpf__destroy(t->skel);
		t->skel = NULL;
	}
	return rc;
}

static void rc_txn_close(void *state)
{
	struct rc_txn *t = state;
	if (!t)
		return;
	ring_buffer__free(t->ring);
	rc_tp_detach(t->tps + t->tp0, t->ntps - t->tp0);
	txn_bpf__destroy(t->skel);
	rc_dtab_free(&t->prev);
	rc_pathkey_wipe(&t->pathkey);
	free(t->vbuf);
	free(t->rows);
	free(t->sk);
	free(t->st.keys);
	free(t->st.vals);
	free(t->skd.keys);
	free(t->skd.vals);
	free(t->iob);
	free(t->carry);
	for (int i = 0; i < EC_N; i++)
		free(t->col[i].p);
	free(t);
}

/* The flush iterator over the connections' socket storage. */
static int rc_txn_attach_flush(struct rc_txn *t, char *err, size_t errlen)
{
	t->skel->links.txn_flush_iter = rc_iter_attach_sk_storage(t->skel->progs.txn_flush_iter,
								  t->skel->maps.txn_conns_sk);
	if (!t->skel->links.txn_flush_iter) {
		int e = errno;
		snprintf(err, errlen, "cannot attach the connection flush iterator: %s", strerror(e));
		return -e;
	}
	return 0;
}

static int rc_txn_open(struct rec_ctx *ctx, void **state, char *err, size_t errlen)
{
	if (ctx->cfg->no_txn) {
		snprintf(err, errlen, "disabled by --no-txn");
		return REC_FAM_OFF_OPTION;
	}
	struct rc_txn *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->redact = ctx->cfg->redact_paths;
	int krc = rc_pathkey_init(&t->pathkey, t->redact, ctx->cfg->redact_key_file, err, errlen);
	if (krc) {
		free(t);
		return krc;
	}
	t->quiet = ctx->cfg->quiet;
	t->ncpus = rc_ncpus();
	t->vbuf = calloc((size_t)t->ncpus, rc_pcpu_stride(sizeof(struct rc_txn_stats)));
	if (!t->vbuf || rc_dtab_init(&t->prev, sizeof(uint64_t), sizeof(struct rc_txn_prev))) {
		rc_txn_close(t);
		return -ENOMEM;
	}
	int rc = rc_txn_load(t, ctx, false, err, errlen);
	if (rc && rc != -ENOENT) {
		char err2[256] = "";
		rc = rc_txn_load(t, ctx, true, err2, sizeof(err2));
		if (rc)
			snprintf(err, errlen, "%s", err2);
	}
	if (!rc)
		rc = rc_tp_attach(ctx, RC_TXN_FAMILY, t->tps + t->tp0, t->ntps - t->tp0,
				  !bpf_program__autoload(t->tps[RC_TXN_TP_RECV].btf_prog), err, errlen);
	if (!rc && t->buffered)
		rc = rc_txn_attach_flush(t, err, errlen);
	if (!rc) {
		t->ring = ring_buffer__new(bpf_map__fd(t->skel->maps.txn_events), rc_txn_on_event, t, NULL);
		if (!t->ring) {
			rc = -errno;
			snprintf(err, errlen, "cannot set up the transaction ring buffer: %s", strerror(errno));
		}
	}
	if (rc) {
		rc_txn_close(t);
		return rc == -ENOENT ? REC_FAM_OFF_KERNEL : rc;   /* no such tracepoint: family off */
	}
	if (!t->send_calls)
		rec_probe(ctx, RC_TXN_FAMILY, "sock_send_length", REC_PROBE_SKIPPED,
			  "not hooked (--no-send-calls): what a connection wrote is read from its "
			  "socket at its next receive or close; no client request lines");
	if (!t->sendmsg)
		rec_probe(ctx, RC_TXN_FAMILY, "tcp_sendmsg_locked", REC_PROBE_SKIPPED,
			  t->nc_start ? "not needed: a client request starts at its send syscall's entry, "
					"from netcpu's stamps (at the send's end where there is none)"
				      : "not needed: a client request starts when its first segment "
					"is transmitted, from the socket's stamp (at the send's end where there is none)");
	if (t->nc_start) {
		/* netcpu loads with this copy of its per-CPU op slots instead of its own */
		int rc2 = rec_shared_map_put(ctx, "nc_cpus", bpf_map__fd(t->skel->maps.nc_cpus));
		if (rc2) {
			snprintf(err, errlen, "txn: cannot share nc_cpus with netcpu");
			rc_txn_close(t);
			return rc2;
		}
	}
	*state = t;
	return 0;
}

/* --txn-events auto: lowers the threshold once, for the rest of the
 * recording. The connections kept then are a subset of those kept before,
 * so their events stay complete. */
static void rc_txn_ev_lower(struct rc_txn *t)
{
	t->ev_auto = false;
	t->ev_keep = TXN_EV_ALL / RC_TXN_EV_AUTO_N;
	t->skel->data->txn_ev_keep = t->ev_keep;
	if (!t->quiet)
		fprintf(stderr, "nprec: txn: more than %u transaction events/s: from now on events of 1 in %u "
			"connections (--txn-events all keeps every one)\n", RC_TXN_EV_AUTO_RATE, RC_TXN_EV_AUTO_N);
}

/* At a snapshot: an interval (of any length) above the rate. */
static void rc_txn_ev_adapt(struct rc_txn *t, uint64_t nev, uint64_t dt_ns)
{
	if (t->ev_auto && dt_ns && (double)nev * 1e9 / (double)dt_ns > RC_TXN_EV_AUTO_RATE)
		rc_txn_ev_lower(t);
}

static int rc_txn_drain(void *state)
{
	struct rc_txn *t = state;
	return ring_buffer__consume(t->ring);   /* records consumed (drain_counts) */
}

/* ---- snapshot ---- */

/* Reads every entry of a per-CPU hash map into d (valsz: all CPUs' values
 * of one key) with batched lookups: a few syscalls instead of a
 * get_next_key and a lookup per key. 0 or -errno. */
static int rc_map_dump(int fd, size_t keysz, size_t valsz, struct rc_mapdump *d)
{
	/* a batch runs in the kernel, where nothing preempts it: keep each
	 * one well inside a --slice */
	const size_t chunk = 256;
	uint64_t in = 0, out = 0;
	bool first = true;
	d->n = 0;
	for (;;) {
		if (d->cap - d->n < chunk) {
			size_t nc = d->cap ? d->cap * 2 : 4 * chunk;
			void *k = realloc(d->keys, nc * keysz);
			if (k)
				d->keys = k;
			void *v = k ? realloc(d->vals, nc * valsz) : NULL;
			if (!v)
				return -ENOMEM;
			d->vals = v;
			d->cap = nc;
		}
		__u32 count = (__u32)chunk;
		int rc = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, (char *)d->keys + d->n * keysz,
					      (char *)d->vals + d->n * valsz, &count, NULL);
		if (rc && errno != ENOENT)
			return -errno;
		d->n += count;
		if (rc)             /* ENOENT: that was the last batch */
			return 0;
		in = out;
		first = false;
		cpuslice_point();
	}
}

/* The connection's second and last-but-one request starts: every CPU's
 * entry holds the first two and last two starts counted there (or, with
 * the socket-storage flush, the connection's), and starts of one
 * connection are distinct. */
static void rc_txn_fold_starts(struct rc_txn *t, struct rc_txn_row *r, const void *vals)
{
	size_t stride = rc_pcpu_stride(sizeof(struct rc_txn_stats));
	for (int c = 0; c < t->ncpus; c++) {
		const struct rc_txn_stats *v = (const void *)((const char *)vals + (size_t)c * stride);
		const uint64_t lo[2] = { v->start_first_ns, v->start_second_ns };
		const uint64_t hi[2] = { v->start_prev_ns, v->start_last_ns };
		for (int i = 0; v->conn && i < 2; i++) {
			if (lo[i] > r->start_first && (!r->start_second || lo[i] < r->start_second))
				r->start_second = lo[i];
			if (hi[i] && hi[i] < r->tot.start_last && hi[i] > r->start_prev)
				r->start_prev = hi[i];
		}
	}
}

static void rc_txn_fold(struct rc_txn *t, struct rc_txn_row *r, const void *vals)
{
	size_t stride = rc_pcpu_stride(sizeof(struct rc_txn_stats));
	uint64_t best = 0;
	memset(&r->tot, 0, sizeof(r->tot));
	memset(&r->k, 0, sizeof(r->k));
	r->close_ns = r->last_ns = r->start_first = r->start_second = r->start_prev = 0;
	r->method[0] = r->path[0] = 0;
	r->pid = r->tid = 0;
	for (int c = 0; c < t->ncpus; c++) {
		const struct rc_txn_stats *v = (const void *)((const char *)vals + (size_t)c * stride);
		if (!v->conn)
			continue;               /* never updated on this CPU */
		r->k = v->k;
		r->tot.count += v->count;
		r->tot.bytes_req += v->bytes_req;
		r->tot.bytes_resp += v->bytes_resp;
		r->tot.lat_sum += v->lat_sum_ns;
		r->tot.http_count += v->http_count;
		if (v->close_ns > r->close_ns) r->close_ns = v->close_ns;
		if (v->start_first_ns && (!r->start_first || v->start_first_ns < r->start_first))
			r->start_first = v->start_first_ns;
		if (v->start_last_ns > r->tot.start_last) r->tot.start_last = v->start_last_ns;
		if (v->last_ns >= best && v->count) {
			best = v->last_ns;
			r->last_ns = v->last_ns;
			r->pid = v->pid;
			r->tid = v->tid;
			if (v->method[0]) {
				memcpy(r->method, v->method, TXN_METHOD_LEN);
				r->method[TXN_METHOD_LEN] = 0;
				memcpy(r->path, v->path, TXN_PATH_LEN);
				r->path[TXN_PATH_LEN] = 0;
			}
		}
	}
	rc_txn_fold_starts(t, r, vals);
}

/* Flips the sketch slot programs write and waits until none writes the
 * old one any more (sk_slot_enter in bpf/txn.bpf.c: a program holds it
 * for a few microseconds, with preemption off). Returns the old slot;
 * *late: gave up waiting (a count may then be written after the read). */
static uint32_t rc_txn_sk_flip(struct rc_txn *t, bool *late)
{
	struct txn_bpf__bss *b = t->skel->bss;
	uint32_t old = __atomic_load_n(&b->txn_sk_epoch, __ATOMIC_RELAXED) & 1;

	__atomic_store_n(&b->txn_sk_epoch, old ^ 1, __ATOMIC_SEQ_CST);
	*late = false;
	for (long i = 0; __atomic_load_n(&b->txn_sk_busy[old], __ATOMIC_SEQ_CST); i++) {
		if (i == 100000) {
			*late = true;
			break;
		}
		if (i > 100)
			sched_yield();
	}
	return old;
}

/* Per-connection rows with transactions (or a close) since the last read;
 * closed connections' entries are deleted. */
static int rc_txn_collect_stats(struct rc_txn *t)
{
	struct rc_dtab next;
	int fd = bpf_map__fd(t->skel->maps.txn_stats);
	size_t vsz = rc_pcpu_stride(sizeof(struct rc_txn_stats)) * (size_t)t->ncpus, matched = 0;
	int rc = rc_map_dump(fd, sizeof(uint64_t), vsz, &t->st);
	if (rc)
		return rc;
	/* The sketch slot flips right after the stats are read, not after
	 * they are worked through: a connection closing in between has its
	 * close's buckets read now and its row next time (rc_txn_join carries
	 * them), and the shorter that window the fewer wait. */
	bool late;
	if (t->test_flipwait_ms)
		usleep(t->test_flipwait_ms * 1000u);
	t->sk_old = rc_txn_sk_flip(t, &late);
	t->flush_failed += late;
	t->sk_late = late;
	if (rc_dtab_init_for(&next, sizeof(uint64_t), sizeof(struct rc_txn_prev), t->st.n))
		return -ENOMEM;
	t->nrows = 0;
	size_t ndel = 0;    /* closed connections' keys, moved to the front of st.keys */
	for (size_t i = 0; i < t->st.n; i++) {
		const uint64_t key = ((const uint64_t *)t->st.keys)[i];
		if ((i & 63) == 63)
			cpuslice_point();
		struct rc_txn_row *r = rc_push((void **)&t->rows, &t->nrows, &t->caprows, sizeof(*r));
		if (!r)
			break;
		r->conn = key;
		rc_txn_fold(t, r, (const char *)t->st.vals + i * vsz);
		const struct rc_txn_prev *p = rc_dtab_find(&t->prev, &key);
		matched += p != NULL;
		r->d.count = r->tot.count - (p ? p->count : 0);
		r->d.bytes_req = r->tot.bytes_req - (p ? p->bytes_req : 0);
		r->d.bytes_resp = r->tot.bytes_resp - (p ? p->bytes_resp : 0);
		r->d.lat_sum = r->tot.lat_sum - (p ? p->lat_sum : 0);
		r->d.http_count = r->tot.http_count - (p ? p->http_count : 0);
		/* the starts of the row's transactions: after the previous row's
		 * last one (count gaps between starts), or from the connection's
		 * first (count - 1), whatever --txn-events keeps of the events */
		r->start_lo = r->d.count == r->tot.count ? r->start_first : p ? p->start_last : 0;
		if (r->close_ns) {
			((uint64_t *)t->st.keys)[ndel++] = key;
		} else {
			struct rc_txn_prev *n = rc_dtab_put(&next, &key);
			if (n)
				*n = r->tot;
		}
		if (!r->d.count && !r->close_ns) {
			t->nrows--;
			continue;
		}
		r->path_hash = r->path[0] ? rc_path_hash(&t->pathkey, r->path, strnlen(r->path, sizeof(r->path))) : 0;
		rc_format_addr(r->k.laddr, r->la, sizeof(r->la));
		rc_format_addr(r->k.raddr, r->ra, sizeof(r->ra));
	}
	if (ndel) {
		/* one syscall for all of them (thousands a second under connection churn) */
		__u32 cnt = (__u32)ndel;
		if (bpf_map_delete_batch(fd, t->st.keys, &cnt, NULL))
			for (size_t i = cnt; i < ndel; i++)   /* cnt: deleted before the failure */
				bpf_map_delete_elem(fd, (uint64_t *)t->st.keys + i);
	}
	if (t->prev.n > matched)
		t->evicted += t->prev.n - matched;
	rc_dtab_swap(&t->prev, &next);
	rc_dtab_free(&next);
	return 0;
}

/* The buckets of one rc_txn_skw_out record into this interval's. */
static int rc_txn_take_words(struct rc_txn *t, const struct rc_txn_skw_out *o)
{
	for (uint32_t i = 0; i < o->n; i++) {
		uint32_t w = o->w[i];
		struct rc_txn_bucket *b = rc_push((void **)&t->sk, &t->nsk, &t->capsk, sizeof(*b));
		if (!b)
			return -ENOMEM;
		*b = (struct rc_txn_bucket){ .conn = o->conn, .bucket = (w >> TXN_SKW_CBITS) - 1,
					     .count = w & TXN_SKW_CMAX };
	}
	return 0;
}

/* Runs the flush iterator (every connection's gathered transactions into
 * the maps) and takes the sketch words it writes to its output. */
static int rc_txn_flush(struct rc_txn *t)
{
	int fd = bpf_iter_create(bpf_link__fd(t->skel->links.txn_flush_iter));
	size_t len = 0;
	ssize_t n = 0;
	if (fd < 0)
		return -errno;
	for (;;) {
		if (t->iocap - len < 64 * 1024) {
			size_t nc = t->iocap ? t->iocap * 2 : 256 * 1024;
			uint8_t *p = realloc(t->iob, nc);
			if (!p) {
				n = -1;
				errno = ENOMEM;
				break;
			}
			t->iob = p;
			t->iocap = nc;
		}
		n = read(fd, t->iob + len, t->iocap - len);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		if (n > 0)
			len += (size_t)n;
	}
	int rc = n < 0 ? -errno : 0;
	close(fd);
	/* what was read before a failure was taken from the storages: kept */
	const size_t hdr = offsetof(struct rc_txn_skw_out, w);
	for (size_t off = 0; off + hdr <= len;) {
		const struct rc_txn_skw_out *o = (const void *)(t->iob + off);
		size_t sz = hdr + (size_t)o->n * sizeof(uint32_t);
		if (o->n > TXN_SKW || off + sz > len)
			return -EPROTO;
		int rc2 = rc_txn_take_words(t, o);
		if (rc2)
			return rc2;
		off += sz;
	}
	return rc;
}

/* One entry's counts (all CPUs' values v) as a bucket of this interval. */
static int rc_txn_take_entry(struct rc_txn *t, const struct rc_txn_skey *key, const char *v)
{
	size_t stride = rc_pcpu_stride(sizeof(uint64_t));
	uint64_t d = 0;
	for (int c = 0; c < t->ncpus; c++)
		d += *(const uint64_t *)(v + (size_t)c * stride);
	if (!d)
		return 0;
	struct rc_txn_bucket *b = rc_push((void **)&t->sk, &t->nsk, &t->capsk, sizeof(*b));
	if (!b)
		return -ENOMEM;
	*b = (struct rc_txn_bucket){ .conn = key->conn, .bucket = key->bucket, .count = d };
	return 0;
}

/* The n entries made in the slot since it was last taken, by their keys
 * (txn_sk_new): one system call each, where reading the map walks all
 * its hash buckets. */
static int rc_txn_take_new(struct rc_txn *t, uint32_t slot, uint64_t from, uint64_t n)
{
	int fd = bpf_map__fd(t->skel->maps.txn_sketch);
	const struct rc_txn_skey *keys = t->skel->bss->txn_sk_new[slot];
	for (uint64_t i = 0; i < n; i++) {
		struct rc_txn_skey key = keys[(from + i) & (TXN_SK_NEW - 1)];
		if ((i & 63) == 63)
			cpuslice_point();
		if (bpf_map_lookup_and_delete_elem(fd, &key, t->vbuf)) {
			t->sk_left[slot] = true;        /* the map read next time finds it */
			continue;
		}
		int rc = rc_txn_take_entry(t, &key, t->vbuf);
		if (rc)
			return rc;
	}
	return 0;
}

/* This interval's sketch counts: the entries of the slot just retired,
 * read and deleted. Every entry is the counts added since its slot was
 * last taken, so a snapshot reads the buckets that changed, not every
 * bucket of every open connection (~1 us an entry in the kernel); a
 * closed connection's buckets go with the rest. A slot with no new entry
 * is not read at all, one with a few is taken key by key. */
static int rc_txn_collect_sketch(struct rc_txn *t)
{
	int fd = bpf_map__fd(t->skel->maps.txn_sketch);
	size_t vsz = rc_pcpu_stride(sizeof(uint64_t)) * (size_t)t->ncpus;
	uint32_t slot = t->sk_old;
	/* read after the flip's wait: every entry made in the slot is
	 * counted, and its key in txn_sk_new (unless the wait gave up) */
	uint64_t made = __atomic_load_n(&t->skel->bss->txn_sk_made[slot], __ATOMIC_ACQUIRE);
	uint64_t n = made - t->sk_seen[slot];
	bool left = t->sk_left[slot];
	t->sk_seen[slot] = made;
	t->sk_left[slot] = t->sk_late;  /* a late writer's entry: read the map next time */
	if (!left && !t->sk_late && n <= TXN_SK_NEW && !t->test_sk_walk)
		return rc_txn_take_new(t, slot, made - n, n);
	int rc = rc_map_dump(fd, sizeof(struct rc_txn_skey), vsz, &t->skd);
	if (rc) {
		t->sk_left[slot] = true;
		return rc;
	}
	size_t ndel = 0;    /* the slot's keys, moved to the front of skd.keys */
	for (size_t i = 0; i < t->skd.n && !rc; i++) {
		const struct rc_txn_skey key = ((const struct rc_txn_skey *)t->skd.keys)[i];
		if ((i & 255) == 255)
			cpuslice_point();
		if (key.slot != slot)
			continue;       /* written since the flip: the next interval's */
		((struct rc_txn_skey *)t->skd.keys)[ndel++] = key;
		rc = rc_txn_take_entry(t, &key, (const char *)t->skd.vals + i * vsz);
	}
	if (ndel) {
		__u32 cnt = (__u32)ndel;
		if (bpf_map_delete_batch(fd, t->skd.keys, &cnt, NULL))
			for (size_t i = cnt; i < ndel; i++)   /* cnt: deleted before the failure */
				if (bpf_map_delete_elem(fd, (struct rc_txn_skey *)t->skd.keys + i))
					t->sk_left[slot] = true;
	}
	if (rc)                 /* some were not taken: read the slot next time */
		t->sk_left[slot] = true;
	return rc;
}

static int rc_cmp_row(const void *a, const void *b)
{
	uint64_t x = ((const struct rc_txn_row *)a)->conn, y = ((const struct rc_txn_row *)b)->conn;
	return x < y ? -1 : x > y;
}

static int rc_cmp_bucket(const void *a, const void *b)
{
	const struct rc_txn_bucket *x = a, *y = b;
	if (x->conn != y->conn)
		return x->conn < y->conn ? -1 : 1;
	return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

/* One row's buckets sorted by bucket (all of one connection): two 6-bit
 * counting passes through tmp (n entries), buckets being < 4096 (txn.h:
 * the word's 12-bit tag); a short run by insertion. qsort's merge sort
 * with a comparator call per step was 7 % of nprec's CPU under paced wrk
 * (~200 buckets a connection a snapshot). */
static void rc_sort_buckets(struct rc_txn_bucket *b, size_t n, struct rc_txn_bucket *tmp)
{
	if (n < 32) {
		for (size_t i = 1; i < n; i++) {
			struct rc_txn_bucket x = b[i];
			size_t j = i;
			for (; j && b[j - 1].bucket > x.bucket; j--)
				b[j] = b[j - 1];
			b[j] = x;
		}
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (b[i].bucket >= 4096) {
			qsort(b, n, sizeof(*b), rc_cmp_bucket);
			return;
		}
	for (unsigned sh = 0; sh < 12; sh += 6) {
		struct rc_txn_bucket *src = sh ? tmp : b, *dst = sh ? b : tmp;
		size_t at[64] = { 0 };
		for (size_t i = 0; i < n; i++)
			at[(src[i].bucket >> sh) & 63]++;
		for (size_t k = 0, sum = 0; k < 64; k++) {
			size_t c = at[k];
			at[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[at[(src[i].bucket >> sh) & 63]++] = src[i];
	}
}

static size_t rc_row_of(const struct rc_txn *t, uint64_t conn)
{
	size_t lo = 0, hi = t->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->rows[mid].conn < conn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nrows && t->rows[lo].conn == conn ? lo : t->nrows;
}

/* One entry per bucket in a row's sorted run: a bucket's counts can come
 * from the flush iterator's output, from the map (spilled, closed) and
 * from an earlier snapshot (carried). */
static void rc_txn_merge_run(struct rc_txn *t, struct rc_txn_row *r)
{
	struct rc_txn_bucket *b = t->sk + r->sk_first;
	size_t n = 0;
	for (size_t i = 0; i < r->sk_n; i++) {
		if (n && b[n - 1].bucket == b[i].bucket)
			b[n - 1].count += b[i].count;
		else
			b[n++] = b[i];
	}
	r->sk_n = n;
}

/* Points every row at its run of buckets, the runs in row (connection)
 * order and each sorted by bucket. Grouped with a counting pass and
 * sorted row by row rather than with one sort of every bucket: thousands
 * of buckets in one qsort were one of the longest uncut stretches of a
 * snapshot (--cpu-slice). Buckets of a connection without a row wait
 * for it in t->carry (RC_TXN_CARRY_MAX). */
static int rc_txn_join(struct rc_txn *t)
{
	for (size_t i = 0; i < t->ncarry; i++) {
		struct rc_txn_bucket *b = rc_push((void **)&t->sk, &t->nsk, &t->capsk, sizeof(*b));
		if (!b)
			return -ENOMEM;
		*b = t->carry[i];
	}
	t->ncarry = 0;
	if (t->nrows)
		qsort(t->rows, t->nrows, sizeof(*t->rows), rc_cmp_row);
	for (size_t i = 0; i < t->nrows; i++)
		t->rows[i].sk_n = 0;
	size_t *row = malloc((t->nsk ? t->nsk : 1) * sizeof(*row));
	struct rc_txn_bucket *out = malloc((t->nsk ? t->nsk : 1) * sizeof(*out));
	if (!row || !out) {
		free(row);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nsk; i++) {
		if ((i & 1023) == 1023)
			cpuslice_point();
		row[i] = rc_row_of(t, t->sk[i].conn);
		if (row[i] < t->nrows)
			t->rows[row[i]].sk_n++;
	}
	size_t at = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		t->rows[i].sk_first = at;
		at += t->rows[i].sk_n;
		t->rows[i].sk_n = 0;
	}
	for (size_t i = 0; i < t->nsk; i++) {
		struct rc_txn_row *r = row[i] < t->nrows ? &t->rows[row[i]] : NULL;
		if (r) {
			out[r->sk_first + r->sk_n++] = t->sk[i];
			continue;
		}
		struct rc_txn_bucket *c = t->sk[i].age + 1 < RC_TXN_CARRY_MAX ?
			rc_push((void **)&t->carry, &t->ncarry, &t->capcarry, sizeof(*c)) : NULL;
		if (c) {
			*c = t->sk[i];
			c->age++;
		} else {
			t->sk_orphan += t->sk[i].count;
		}
	}
	free(row);
	/* the old array, as large as out, is the sort's scratch */
	struct rc_txn_bucket *tmp = t->sk;
	t->capsk = t->nsk ? t->nsk : 1;     /* what out holds */
	t->sk = out;
	t->nsk = at;
	for (size_t i = 0; i < t->nrows; i++) {
		cpuslice_point();
		rc_sort_buckets(t->sk + t->rows[i].sk_first, t->rows[i].sk_n, tmp);
		rc_txn_merge_run(t, &t->rows[i]);
	}
	free(tmp);
	return 0;
}

/* Same map as np_sketch_pack (n, sum, min, max, b), built from sparse
 * buckets; sum is the exact latency sum, min/max the bucket bounds. */
static void rc_txn_pack_sketch(msgpack_packer *pk, const struct rc_txn *t, const struct rc_txn_row *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->sk_n; i++)
		n += t->sk[r->sk_first + i].count;
	msgpack_pack_map(pk, 5);
	np_pack_kv_u64(pk, "n", n);
	np_pack_kv_f64(pk, "sum", (double)r->d.lat_sum);
	np_pack_kv_u64(pk, "min", r->sk_n ? np_sketch_bucket_lo(t->sk[r->sk_first].bucket) : 0);
	np_pack_kv_u64(pk, "max", r->sk_n ? np_sketch_bucket_hi(t->sk[r->sk_first + r->sk_n - 1].bucket) : 0);
	np_pack_str(pk, "b");
	msgpack_pack_array(pk, 2 * r->sk_n);
	for (size_t i = 0; i < r->sk_n; i++) {
		msgpack_pack_uint32(pk, t->sk[r->sk_first + i].bucket);
		msgpack_pack_uint64(pk, t->sk[r->sk_first + i].count);
	}
}

#define RC_TCOL(key, expr) do {                                             \
	for (size_t i_ = 0; i_ < n; i_++) { const struct rc_txn_row *r = &t->rows[i_]; col[i_] = (expr); } \
	np_pack_kv_u64_array(pk, key, col, n);                                 \
} while (0)

static void rc_txn_pack_stats(struct rc_txn *t, struct rec_ctx *ctx, struct np_recbuf *rb,
			      uint64_t t0, uint64_t t1, uint64_t *col)
{
	size_t n = t->nrows;
	uint64_t sh = (uint64_t)ctx->shift_ns;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_TXN_STATS, 1);
	msgpack_pack_map(pk, NPK_TXN_STATS__N - (t->redact ? NPK_TXN_STATS__NOPT : 0));
	np_pack_kv_u64(pk, NPK(TXN_STATS, T0_NS), t0);
	np_pack_kv_u64(pk, NPK(TXN_STATS, T1_NS), t1);
	np_pack_kv_u64(pk, NPK(TXN_STATS, N), n);
	RC_TCOL(NPK(TXN_STATS, CONN), r->conn);
	RC_TCOL(NPK(TXN_STATS, ROLE), r->k.role);
	RC_TCOL(NPK(TXN_STATS, NETNS), r->k.netns);
	rc_pack_kv_strcol(pk, NPK(TXN_STATS, LADDR), n ? t->rows[0].la : NULL, sizeof(*t->rows), n);
	RC_TCOL(NPK(TXN_STATS, LPORT), r->k.lport);
	rc_pack_kv_strcol(pk, NPK(TXN_STATS, RADDR), n ? t->rows[0].ra : NULL, sizeof(*t->rows), n);
	RC_TCOL(NPK(TXN_STATS, RPORT), r->k.rport);
	RC_TCOL(NPK(TXN_STATS, COUNT), r->d.count);
	RC_TCOL(NPK(TXN_STATS, COUNT_TOTAL), r->tot.count);
	RC_TCOL(NPK(TXN_STATS, BYTES_REQ), r->d.bytes_req);
	RC_TCOL(NPK(TXN_STATS, BYTES_RESP), r->d.bytes_resp);
	RC_TCOL(NPK(TXN_STATS, LAT_SUM_NS), r->d.lat_sum);
	RC_TCOL(NPK(TXN_STATS, HTTP_COUNT), r->d.http_count);
	RC_TCOL(NPK(TXN_STATS, PID), r->pid);
	RC_TCOL(NPK(TXN_STATS, TID), r->tid);
	RC_TCOL(NPK(TXN_STATS, CLOSE_NS), r->close_ns ? r->close_ns + sh : 0);
	rc_pack_kv_strcol(pk, NPK(TXN_STATS, METHOD), n ? t->rows[0].method : NULL, sizeof(*t->rows), n);
	if (!t->redact)
		rc_pack_kv_strcol(pk, NPK(TXN_STATS, PATH), n ? t->rows[0].path : NULL, sizeof(*t->rows), n);
	RC_TCOL(NPK(TXN_STATS, PATH_HASH), r->path_hash);
	np_pack_kv_bool(pk, NPK(TXN_STATS, REDACTED), t->redact);
	np_pack_kv_u64(pk, NPK(TXN_STATS, EV_SAMPLE), TXN_EV_ALL / t->ev_keep);
	RC_TCOL(NPK(TXN_STATS, EV), r->k.evh < t->ev_keep);
	RC_TCOL(NPK(TXN_STATS, START_LO_NS), r->d.count && r->start_lo ? r->start_lo + sh : 0);
	RC_TCOL(NPK(TXN_STATS, START_HI_NS), r->d.count && r->tot.start_last ? r->tot.start_last + sh : 0);
	RC_TCOL(NPK(TXN_STATS, START_SECOND_NS), r->d.count && r->start_second ? r->start_second + sh : 0);
	RC_TCOL(NPK(TXN_STATS, START_PREV_NS), r->d.count && r->start_prev ? r->start_prev + sh : 0);
	np_pack_str(pk, NPK(TXN_STATS, LAT));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		if ((i & 15) == 15)
			cpuslice_point();
		rc_txn_pack_sketch(pk, t, &t->rows[i]);
	}
}

/* Appends a column's bytes a piece at a time: an interval's column can
 * be megabytes, and copying it (and faulting in the buffer it grows into)
 * is work to cut into --cpu-slice stretches like any other. */
static void rc_copy_col(msgpack_packer *pk, const struct rc_col *c)
{
	const size_t piece = 256 * 1024;
	for (size_t off = 0; off < c->n; off += piece) {
		pk->callback(pk->data, (const char *)c->p + off, c->n - off < piece ? c->n - off : piece);
		cpuslice_point();
	}
}

/* key: [the column's n packed values] */
static void rc_pack_col(msgpack_packer *pk, const char *key, const struct rc_col *c, size_t n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	rc_copy_col(pk, c);
}

/* The interval's events, packed by rc_txn_on_event as they came. */
static void rc_txn_pack_events(struct rc_txn *t, struct rec_ctx *ctx, struct np_recbuf *rb,
			       uint64_t t0, uint64_t t1)
{
	size_t n = t->nev;
	const struct rc_col *c = t->col;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_TXN_EVENTS, 1);
	msgpack_pack_map(pk, NPK_TXN_EVENTS__N - (t->redact ? NPK_TXN_EVENTS__NOPT : 0));
	np_pack_kv_u64(pk, NPK(TXN_EVENTS, T0_NS), t0);
	np_pack_kv_u64(pk, NPK(TXN_EVENTS, T1_NS), t1);
	np_pack_kv_u64(pk, NPK(TXN_EVENTS, N), n);
	rc_pack_col(pk, NPK(TXN_EVENTS, CONN), &c[EC_CONN], n);
	rc_pack_col(pk, NPK(TXN_EVENTS, ROLE), &c[EC_ROLE], n);
	rc_pack_col(pk, NPK(TXN_EVENTS, PID), &c[EC_PID], n);
	rc_pack_col(pk, NPK(TXN_EVENTS, TID), &c[EC_TID], n);
	np_pack_str(pk, NPK(TXN_EVENTS, START_NS_D));
	msgpack_pack_array(pk, n);
	msgpack_pack_uint64(pk, t->start0 + (uint64_t)ctx->shift_ns);
	rc_copy_col(pk, &c[EC_START]);
	rc_pack_col(pk, NPK(TXN_EVENTS, RESP_OFF_NS), &c[EC_RESP], n);
	rc_pack_col(pk, NPK(TXN_EVENTS, DUR_NS), &c[EC_DUR], n);
	rc_pack_col(pk, NPK(TXN_EVENTS, BYTES_REQ), &c[EC_BREQ], n);
	rc_pack_col(pk, NPK(TXN_EVENTS, BYTES_RESP), &c[EC_BRESP], n);
	rc_pack_col(pk, NPK(TXN_EVENTS, METHOD), &c[EC_METHOD], n);
	if (!t->redact)
		rc_pack_col(pk, NPK(TXN_EVENTS, PATH), &c[EC_PATH], n);
	rc_pack_col(pk, NPK(TXN_EVENTS, PATH_HASH), &c[EC_PHASH], n);
	np_pack_kv_bool(pk, NPK(TXN_EVENTS, REDACTED), t->redact);
	for (int i = 0; i < EC_N; i++)
		t->col[i].n = 0;
	t->nev = 0;
}

static int rc_txn_snapshot(void *state, struct rec_ctx *ctx, struct np_recbuf *rb,
			   uint64_t t0, uint64_t t1)
{
	struct rc_txn *t = state;
	rc_txn_drain(t);
	t->nsk = 0;
	if (t->buffered && rc_txn_flush(t) < 0)
		t->flush_failed++;
	/* the slot flips in there, so it is read every time (an empty one is
	 * one system call) */
	int rc = rc_txn_collect_stats(t);
	if (!rc)
		rc = rc_txn_collect_sketch(t);
	if (rc)
		return rc;
	rc = rc_txn_join(t);
	if (rc)
		return rc;
	uint64_t *col = calloc(t->nrows ? t->nrows : 1, sizeof(uint64_t));
	if (!col)
		return -ENOMEM;
	rc_txn_pack_stats(t, ctx, rb, t0, t1, col);
	free(col);
	uint64_t nev = t->nev;
	if (t->nev)
		rc_txn_pack_events(t, ctx, rb, t0, t1);
	rc_txn_ev_adapt(t, nev, t1 - t0);
	return 0;
}

static uint64_t rc_txn_counter(struct rc_txn *t, uint32_t idx)
{
	uint64_t tot = 0;
	size_t stride = rc_pcpu_stride(sizeof(uint64_t));
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.txn_counters), &idx, t->vbuf))
		return 0;
	for (int c = 0; c < t->ncpus; c++)
		tot += *(uint64_t *)((char *)t->vbuf + (size_t)c * stride);
	return tot;
}

static uint64_t rc_txn_events(void *state) { return rc_txn_counter(state, TXN_CNT_IO); }
/* ring buffer reserves that failed + sketch counts without room + entries
 * the full LRU map evicted + no memory
 * + snapshots whose flush failed + sketch counts whose row never came */
static uint64_t rc_txn_lost(void *state)
{
	struct rc_txn *t = state;
	return rc_txn_counter(t, TXN_CNT_RB_LOST) + rc_txn_counter(t, TXN_CNT_SK_LOST) + t->evicted + t->ev_lost + t->flush_failed +
	       t->sk_orphan;
}

const struct rec_family rec_family_txn = {
	.name = RC_TXN_FAMILY,
	.open = rc_txn_open,
	.drain = rc_txn_drain,
	.drain_counts = true,
	.snapshot = rc_txn_snapshot,
	.lost = rc_txn_lost,
	.events = rc_txn_events,
	.close = rc_txn_close,
};
