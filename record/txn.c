/* Transactions family, user side: loads bpf/txn.bpf.c, drains the
 * per-transaction ring buffer every tick, and every interval writes
 * NP_REC_TXN_STATS (per connection: count, bytes, latency sketch of the
 * transactions completed in the interval, HTTP method/path) and
 * NP_REC_TXN_EVENTS (one row per completed transaction). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "family.h"
#include "npmsg.h"
#include "rcbpf.h"
#include "rcdelta.h"
#include "rcfilter.h"
#include "records.h"
#include "sketch.h"
#include "txn.h"
#include "txn.skel.h"

#define RC_TXN_FAMILY "txn"
#define RC_TXN_NTP 3
#define RC_TXN_NSYS 8

struct rc_txn_prev { uint64_t count, bytes_req, bytes_resp, lat_sum, http_count; };

struct rc_txn_row {
	struct rc_txn_ckey k;
	struct rc_txn_prev tot, d;
	uint64_t conn, close_ns, last_ns, path_hash;
	uint32_t pid, tid;
	char method[TXN_METHOD_LEN + 1], path[TXN_PATH_LEN + 1];
	char la[46], ra[46];
	size_t sk_first, sk_n;        /* this row's buckets in rc_txn.sk */
};

struct rc_txn_bucket { struct rc_txn_ckey k; uint32_t bucket; uint64_t count; };

struct rc_txn {
	struct txn_bpf *skel;
	struct rc_tp tps[RC_TXN_NTP];
	struct bpf_link *sys_links[RC_TXN_NSYS];
	struct ring_buffer *ring;
	bool redact;
	int ncpus;
	void *vbuf;
	struct rc_dtab prev, sk_prev;
	struct rc_txn_row *rows; size_t nrows, caprows;
	struct rc_txn_bucket *sk; size_t nsk, capsk;
	struct rc_txn_event *ev; size_t nev, capev;
	uint64_t evicted;               /* entries the full LRU maps evicted */
};

static uint64_t rc_fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

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

static int rc_txn_on_event(void *ctx, void *data, size_t len)
{
	struct rc_txn *t = ctx;
	if (len < sizeof(struct rc_txn_event))
		return 0;
	struct rc_txn_event *e = rc_push((void **)&t->ev, &t->nev, &t->capev, sizeof(*e));
	if (e)
		memcpy(e, data, sizeof(*e));
	return 0;
}

/* ---- open / close ---- */

static void rc_txn_tps(struct rc_txn *t)
{
	struct txn_bpf *s = t->skel;
	struct rc_tp v[RC_TXN_NTP] = {
		{ .name = "sock_send_length", .btf_prog = s->progs.txn_send_btf, .raw_prog = s->progs.txn_send_raw, .required = true },
		{ .name = "sock_recv_length", .btf_prog = s->progs.txn_recv_btf, .raw_prog = s->progs.txn_recv_raw, .required = true },
		{ .name = "inet_sock_set_state", .btf_prog = s->progs.txn_state_btf, .raw_prog = s->progs.txn_state_raw },
	};
	memcpy(t->tps, v, sizeof(v));
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
	rc_txn_tps(t);
	int rc = rc_tp_select(ctx, RC_TXN_FAMILY, t->tps, RC_TXN_NTP, use_raw, err, errlen);
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

/* The syscall-entry hooks only sharpen the client start time and find the
 * HTTP request line: each one missing degrades that, nothing else. */
static void rc_txn_attach_sys(struct rc_txn *t, struct rec_ctx *ctx)
{
	struct txn_bpf *s = t->skel;
	struct { const char *name; struct bpf_program *p; } sys[RC_TXN_NSYS] = {
		{ "sys_enter_write", s->progs.txn_enter_write }, { "sys_enter_sendto", s->progs.txn_enter_sendto },
		{ "sys_enter_read", s->progs.txn_enter_read }, { "sys_enter_recvfrom", s->progs.txn_enter_recvfrom },
		{ "sys_enter_writev", s->progs.txn_enter_writev }, { "sys_enter_readv", s->progs.txn_enter_readv },
		{ "sys_enter_sendmsg", s->progs.txn_enter_sendmsg }, { "sys_enter_recvmsg", s->progs.txn_enter_recvmsg },
	};
	char probe[64], reason[128];
	for (int i = 0; i < RC_TXN_NSYS; i++) {
		snprintf(probe, sizeof(probe), "tracepoint/syscalls/%s", sys[i].name);
		t->sys_links[i] = bpf_program__attach(sys[i].p);
		long e = libbpf_get_error(t->sys_links[i]);
		if (e) {
			t->sys_links[i] = NULL;
			snprintf(reason, sizeof(reason), "attach failed: %s (HTTP paths and client start times degrade)",
				 strerror((int)-e));
			rec_probe(ctx, RC_TXN_FAMILY, probe, REC_PROBE_FAILED, reason);
		} else {
			rec_probe(ctx, RC_TXN_FAMILY, probe, REC_PROBE_ATTACHED, "");
		}
	}
}

static void rc_txn_close(void *state)
{
	struct rc_txn *t = state;
	if (!t)
		return;
	ring_buffer__free(t->ring);
	for (int i = 0; i < RC_TXN_NSYS; i++)
		bpf_link__destroy(t->sys_links[i]);
	rc_tp_detach(t->tps, RC_TXN_NTP);
	txn_bpf__destroy(t->skel);
	rc_dtab_free(&t->prev);
	rc_dtab_free(&t->sk_prev);
	free(t->vbuf);
	free(t->rows);
	free(t->sk);
	free(t->ev);
	free(t);
}

static int rc_txn_open(struct rec_ctx *ctx, void **state, char *err, size_t errlen)
{
	if (ctx->cfg->no_txn) {
		snprintf(err, errlen, "disabled by --no-txn");
		return 1;
	}
	struct rc_txn *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->redact = ctx->cfg->redact_paths;
	t->ncpus = rc_ncpus();
	t->vbuf = calloc((size_t)t->ncpus, rc_pcpu_stride(sizeof(struct rc_txn_stats)));
	if (!t->vbuf || rc_dtab_init(&t->prev, sizeof(struct rc_txn_ckey), sizeof(struct rc_txn_prev)) ||
	    rc_dtab_init(&t->sk_prev, sizeof(struct rc_txn_skey), sizeof(uint64_t))) {
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
		rc = rc_tp_attach(ctx, RC_TXN_FAMILY, t->tps, RC_TXN_NTP,
				  !bpf_program__autoload(t->tps[0].btf_prog), err, errlen);
	if (!rc) {
		rc_txn_attach_sys(t, ctx);
		t->ring = ring_buffer__new(bpf_map__fd(t->skel->maps.txn_events), rc_txn_on_event, t, NULL);
		if (!t->ring) {
			rc = -errno;
			snprintf(err, errlen, "cannot set up the transaction ring buffer: %s", strerror(errno));
		}
	}
	if (rc) {
		rc_txn_close(t);
		return rc == -ENOENT ? 1 : rc;   /* no such tracepoint: family off */
	}
	*state = t;
	return 0;
}

static int rc_txn_drain(void *state)
{
	struct rc_txn *t = state;
	int n = ring_buffer__consume(t->ring);
	return n < 0 ? n : 0;
}

/* ---- snapshot ---- */

static void rc_txn_fold(struct rc_txn *t, struct rc_txn_row *r)
{
	size_t stride = rc_pcpu_stride(sizeof(struct rc_txn_stats));
	uint64_t best = 0;
	memset(&r->tot, 0, sizeof(r->tot));
	r->conn = r->close_ns = r->last_ns = 0;
	r->method[0] = r->path[0] = 0;
	r->pid = r->tid = 0;
	for (int c = 0; c < t->ncpus; c++) {
		const struct rc_txn_stats *v = (const void *)((char *)t->vbuf + (size_t)c * stride);
		r->tot.count += v->count;
		r->tot.bytes_req += v->bytes_req;
		r->tot.bytes_resp += v->bytes_resp;
		r->tot.lat_sum += v->lat_sum_ns;
		r->tot.http_count += v->http_count;
		if (v->conn > r->conn) r->conn = v->conn;
		if (v->close_ns > r->close_ns) r->close_ns = v->close_ns;
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
}

/* Per-connection rows with transactions (or a close) since the last read;
 * closed connections go into *closed to have their buckets removed too. */
static int rc_txn_collect_stats(struct rc_txn *t, struct rc_dtab *closed)
{
	struct rc_dtab next;
	struct rc_txn_ckey *keys;
	int fd = bpf_map__fd(t->skel->maps.txn_stats);
	size_t matched = 0, nkeys;
	if (rc_dtab_init(&next, sizeof(*keys), sizeof(struct rc_txn_prev)))
		return -ENOMEM;
	if (rc_map_keys(fd, sizeof(*keys), (void **)&keys, &nkeys)) {
		rc_dtab_free(&next);
		return -ENOMEM;
	}
	t->nrows = 0;
	for (size_t i = 0; i < nkeys; i++) {
		const struct rc_txn_ckey key = keys[i];
		if (bpf_map_lookup_elem(fd, &key, t->vbuf))
			continue;
		struct rc_txn_row *r = rc_push((void **)&t->rows, &t->nrows, &t->caprows, sizeof(*r));
		if (!r)
			break;
		r->k = key;
		rc_txn_fold(t, r);
		const struct rc_txn_prev *p = rc_dtab_find(&t->prev, &key);
		matched += p != NULL;
		r->d.count = r->tot.count - (p ? p->count : 0);
		r->d.bytes_req = r->tot.bytes_req - (p ? p->bytes_req : 0);
		r->d.bytes_resp = r->tot.bytes_resp - (p ? p->bytes_resp : 0);
		r->d.lat_sum = r->tot.lat_sum - (p ? p->lat_sum : 0);
		r->d.http_count = r->tot.http_count - (p ? p->http_count : 0);
		if (r->close_ns) {
			bpf_map_delete_elem(fd, &key);
			rc_dtab_put(closed, &key);
		} else {
			struct rc_txn_prev *n = rc_dtab_put(&next, &key);
			if (n)
				*n = r->tot;
		}
		if (!r->d.count && !r->close_ns) {
			t->nrows--;
			continue;
		}
		r->path_hash = r->path[0] ? rc_fnv1a(r->path) : 0;
		rc_format_addr(key.laddr, r->la, sizeof(r->la));
		rc_format_addr(key.raddr, r->ra, sizeof(r->ra));
	}
	free(keys);
	if (t->prev.n > matched)
		t->evicted += t->prev.n - matched;
	rc_dtab_swap(&t->prev, &next);
	rc_dtab_free(&next);
	return 0;
}

static int rc_txn_collect_sketch(struct rc_txn *t, const struct rc_dtab *closed)
{
	struct rc_dtab next;
	struct rc_txn_skey *keys;
	int fd = bpf_map__fd(t->skel->maps.txn_sketch);
	size_t stride = rc_pcpu_stride(sizeof(uint64_t)), matched = 0, nkeys;
	if (rc_dtab_init(&next, sizeof(*keys), sizeof(uint64_t)))
		return -ENOMEM;
	if (rc_map_keys(fd, sizeof(*keys), (void **)&keys, &nkeys)) {
		rc_dtab_free(&next);
		return -ENOMEM;
	}
	t->nsk = 0;
	for (size_t i = 0; i < nkeys; i++) {
		const struct rc_txn_skey key = keys[i];
		if (bpf_map_lookup_elem(fd, &key, t->vbuf))
			continue;
		uint64_t tot = 0;
		for (int c = 0; c < t->ncpus; c++)
			tot += *(uint64_t *)((char *)t->vbuf + (size_t)c * stride);
		const uint64_t *p = rc_dtab_find(&t->sk_prev, &key);
		matched += p != NULL;
		uint64_t d = tot - (p ? *p : 0);
		if (rc_dtab_find(closed, &key.c)) {
			bpf_map_delete_elem(fd, &key);
		} else {
			uint64_t *n = rc_dtab_put(&next, &key);
			if (n)
				*n = tot;
		}
		if (!d)
			continue;
		struct rc_txn_bucket *b = rc_push((void **)&t->sk, &t->nsk, &t->capsk, sizeof(*b));
		if (!b)
			break;
		b->k = key.c;
		b->bucket = key.bucket;
		b->count = d;
	}
	free(keys);
	if (t->sk_prev.n > matched)
		t->evicted += t->sk_prev.n - matched;
	rc_dtab_swap(&t->sk_prev, &next);
	rc_dtab_free(&next);
	return 0;
}

static int rc_cmp_row(const void *a, const void *b)
{
	return memcmp(&((const struct rc_txn_row *)a)->k, &((const struct rc_txn_row *)b)->k,
		      sizeof(struct rc_txn_ckey));
}

static int rc_cmp_bucket(const void *a, const void *b)
{
	const struct rc_txn_bucket *x = a, *y = b;
	int c = memcmp(&x->k, &y->k, sizeof(x->k));
	if (c)
		return c;
	return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

/* Points every row at its run of buckets (both sorted by connection). */
static void rc_txn_join(struct rc_txn *t)
{
	if (t->nrows)
		qsort(t->rows, t->nrows, sizeof(*t->rows), rc_cmp_row);
	if (t->nsk)
		qsort(t->sk, t->nsk, sizeof(*t->sk), rc_cmp_bucket);
	size_t j = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		struct rc_txn_row *r = &t->rows[i];
		while (j < t->nsk && memcmp(&t->sk[j].k, &r->k, sizeof(r->k)) < 0)
			j++;
		r->sk_first = j;
		while (j < t->nsk && memcmp(&t->sk[j].k, &r->k, sizeof(r->k)) == 0)
			j++;
		r->sk_n = j - r->sk_first;
	}
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
	msgpack_pack_map(pk, 23 + (t->redact ? 0 : 1));
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_u64(pk, "n", n);
	RC_TCOL("conn", r->conn);
	RC_TCOL("role", r->k.role);
	RC_TCOL("netns", r->k.netns);
	rc_pack_kv_strcol(pk, "laddr", n ? t->rows[0].la : NULL, sizeof(*t->rows), n);
	RC_TCOL("lport", r->k.lport);
	rc_pack_kv_strcol(pk, "raddr", n ? t->rows[0].ra : NULL, sizeof(*t->rows), n);
	RC_TCOL("rport", r->k.rport);
	RC_TCOL("count", r->d.count);
	RC_TCOL("count_total", r->tot.count);
	RC_TCOL("bytes_req", r->d.bytes_req);
	RC_TCOL("bytes_resp", r->d.bytes_resp);
	RC_TCOL("lat_sum_ns", r->d.lat_sum);
	RC_TCOL("http_count", r->d.http_count);
	RC_TCOL("pid", r->pid);
	RC_TCOL("tid", r->tid);
	RC_TCOL("close_ns", r->close_ns ? r->close_ns + sh : 0);
	rc_pack_kv_strcol(pk, "method", n ? t->rows[0].method : NULL, sizeof(*t->rows), n);
	if (!t->redact)
		rc_pack_kv_strcol(pk, "path", n ? t->rows[0].path : NULL, sizeof(*t->rows), n);
	RC_TCOL("path_hash", r->path_hash);
	np_pack_kv_bool(pk, "redacted", t->redact);
	np_pack_str(pk, "lat");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		rc_txn_pack_sketch(pk, t, &t->rows[i]);
}

#define RC_ECOL(key, expr) do {                                             \
	for (size_t i_ = 0; i_ < n; i_++) { const struct rc_txn_event *e = &t->ev[i_]; col[i_] = (expr); } \
	np_pack_kv_u64_array(pk, key, col, n);                                 \
} while (0)

static void rc_txn_pack_events(struct rc_txn *t, struct rec_ctx *ctx, struct np_recbuf *rb,
			       uint64_t t0, uint64_t t1, uint64_t *col)
{
	size_t n = t->nev;
	uint64_t sh = (uint64_t)ctx->shift_ns;
	char (*strs)[TXN_PATH_LEN + 1] = calloc(n ? n : 1, sizeof(*strs));
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_TXN_EVENTS, 1);
	msgpack_pack_map(pk, 15 + (t->redact ? 0 : 1));
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_u64(pk, "n", n);
	RC_ECOL("conn", e->conn);
	RC_ECOL("role", e->role);
	RC_ECOL("pid", e->pid);
	RC_ECOL("tid", e->tid);
	for (size_t i = 0; i < n; i++)
		col[i] = t->ev[i].start_ns + sh;
	np_pack_kv_u64_delta(pk, "start_ns_d", col, n);
	RC_ECOL("resp_off_ns", e->first_resp_ns ? e->first_resp_ns - e->start_ns : 0);
	RC_ECOL("dur_ns", e->end_ns - e->start_ns);
	RC_ECOL("bytes_req", e->bytes_req);
	RC_ECOL("bytes_resp", e->bytes_resp);
	for (size_t i = 0; strs && i < n; i++) {
		memcpy(strs[i], t->ev[i].method, TXN_METHOD_LEN);
		strs[i][TXN_METHOD_LEN] = 0;
	}
	rc_pack_kv_strcol(pk, "method", strs ? strs[0] : NULL, sizeof(*strs), strs ? n : 0);
	for (size_t i = 0; strs && i < n; i++) {
		memcpy(strs[i], t->ev[i].path, TXN_PATH_LEN);
		strs[i][TXN_PATH_LEN] = 0;
		col[i] = strs[i][0] ? rc_fnv1a(strs[i]) : 0;
	}
	if (!t->redact)
		rc_pack_kv_strcol(pk, "path", strs ? strs[0] : NULL, sizeof(*strs), strs ? n : 0);
	np_pack_kv_u64_array(pk, "path_hash", col, n);
	np_pack_kv_bool(pk, "redacted", t->redact);
	free(strs);
	t->nev = 0;
}

static int rc_txn_snapshot(void *state, struct rec_ctx *ctx, struct np_recbuf *rb,
			   uint64_t t0, uint64_t t1)
{
	struct rc_txn *t = state;
	struct rc_dtab closed;
	rc_txn_drain(t);
	if (rc_dtab_init(&closed, sizeof(struct rc_txn_ckey), 1))
		return -ENOMEM;
	int rc = rc_txn_collect_stats(t, &closed);
	if (!rc)
		rc = rc_txn_collect_sketch(t, &closed);
	rc_dtab_free(&closed);
	if (rc)
		return rc;
	rc_txn_join(t);
	size_t ncol = t->nrows > t->nev ? t->nrows : t->nev;
	uint64_t *col = calloc(ncol ? ncol : 1, sizeof(uint64_t));
	if (!col)
		return -ENOMEM;
	rc_txn_pack_stats(t, ctx, rb, t0, t1, col);
	if (t->nev)
		rc_txn_pack_events(t, ctx, rb, t0, t1, col);
	free(col);
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

static uint64_t rc_txn_events(void *state) { return rc_txn_counter(state, 0); }
/* ring buffer reserves that failed + entries full LRU maps evicted */
static uint64_t rc_txn_lost(void *state)
{
	return rc_txn_counter(state, 1) + ((struct rc_txn *)state)->evicted;
}

const struct rec_family rec_family_txn = {
	.name = RC_TXN_FAMILY,
	.open = rc_txn_open,
	.drain = rc_txn_drain,
	.snapshot = rc_txn_snapshot,
	.lost = rc_txn_lost,
	.events = rc_txn_events,
	.close = rc_txn_close,
};
