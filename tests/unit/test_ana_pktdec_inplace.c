/* PKT_EVENTS appended in place (analyze/ana_pktdec.c, the reading thread
 * decoding: --threads 1 and 2) against the copy through a per-record
 * buffer (decoding workers: --threads 3) on records where the in-place
 * flow numbers cannot hold: two flow ids of one model flow (the model
 * keys a flow by the low 48 bits of its id), a column malformed half-way
 * (the record is built again without it), a record with no usable
 * events, flows known from earlier records. The events, flows and host
 * counters are what the records hold, and the same at every thread count. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ana.h"
#include "container.h"
#include "records.h"
#include "tap.h"

#define HI48 (1ull << 48)
#define BIG 700

static void key(msgpack_packer *pk, const char *k)
{
	msgpack_pack_str_with_body(pk, k, strlen(k));
}

/* One PKT_EVENTS record: n events, ts from t0 in steps of 1000 ns, hook
 * 2 except where hooks[i] says, flows ids[i]; with bad, the slen column
 * holds a string at row bad - 1. */
static void pkt_record(struct np_recbuf *rb, uint64_t t0, const uint64_t *ids, const unsigned *hooks,
		       size_t n, size_t bad)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_PKT_EVENTS, 1);
	msgpack_pack_map(pk, 5);
	key(pk, "n");
	msgpack_pack_uint64(pk, n);
	key(pk, "ts_d");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_uint64(pk, i ? 1000 : t0);
	key(pk, "hook");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_uint32(pk, hooks ? hooks[i] : 2);
	key(pk, "flow");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_uint64(pk, ids[i]);
	key(pk, "slen");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		if (bad && i + 1 == bad)
			key(pk, "x");
		else
			msgpack_pack_uint32(pk, 100 + (uint32_t)i);
	}
}

static int write_file(const char *path)
{
	struct np_writer *w;
	struct np_recbuf rb;
	if (np_writer_open(&w, path, NP_KIND_RECORDING, NULL))
		return -1;
	np_recbuf_init(&rb);
	/* 5 and 5 + 2^48 are one model flow; 7 new */
	static const uint64_t r1[] = { 5, 5 + HI48, 7, 5, 5 + HI48 };
	pkt_record(&rb, 1000000, r1, NULL, 5, 0);
	/* 7 known, 9 new; 11 only at a hook that is no path event */
	static const uint64_t r2[] = { 7, 9, 11, 9 };
	static const unsigned h2[] = { 2, 3, PK_HOOK_AID_TX, 4 };
	pkt_record(&rb, 2000000, r2, h2, 4, 0);
	/* slen malformed at row 3: built again without it */
	static const uint64_t r3[] = { 13, 9, 13, 15 };
	pkt_record(&rb, 3000000, r3, NULL, 4, 3);
	/* and where the first attempt numbered flows already (rows past the
	 * first piece of 512) */
	static uint64_t r3b[BIG];
	for (size_t i = 0; i < BIG; i++)
		r3b[i] = i % 3 ? 23 : 25;
	pkt_record(&rb, 3500000, r3b, NULL, BIG, BIG - 10);
	/* flow column of another length: no usable events */
	msgpack_packer *pk = np_recbuf_begin(&rb, NP_REC_PKT_EVENTS, 1);
	msgpack_pack_map(pk, 3);
	key(pk, "ts_d");
	msgpack_pack_array(pk, 2);
	msgpack_pack_uint64(pk, 4000000);
	msgpack_pack_uint64(pk, 1);
	key(pk, "hook");
	msgpack_pack_array(pk, 2);
	msgpack_pack_uint32(pk, 2);
	msgpack_pack_uint32(pk, 2);
	key(pk, "flow");
	msgpack_pack_array(pk, 1);
	msgpack_pack_uint32(pk, 17);
	/* new again after the others, and one two ids of a new flow */
	static const uint64_t r5[] = { 19 + HI48, 5, 19, 21 };
	pkt_record(&rb, 5000000, r5, NULL, 4, 0);
	int rc = np_writer_commit(w, &rb);
	np_recbuf_free(&rb);
	return np_writer_close(w) || rc ? -1 : 0;
}

struct loaded { struct ana_options o; struct ana_model m; };

static void load(struct loaded *l, const char *path, unsigned threads)
{
	memset(l, 0, sizeof(*l));
	l->o.quiet = true;
	l->o.threads = threads;
	ana_model_init(&l->m, &l->o);
	CHECK(ana_load_file(&l->m, path, NULL) == 0, "load %s, threads %u", path, threads);
}

/* What the records hold: 5 + 3 + 4 + BIG + 0 + 4 events, flows in order
 * of first appearance (11 has no path event; a flow keeps the id it was
 * created with), slen of the third and fourth records dropped (0), each
 * event in the flow of its id's low 48 bits. */
static void check_truth(const struct ana_model *m, unsigned th)
{
	static const uint64_t flows[] = { 5, 7, 9, 13, 15, 25, 23, 19 + HI48, 21 };
	static uint64_t ids[16 + BIG] = { 5, 5, 7, 5, 5, 7, 9, 9, 13, 9, 13, 15 };
	static uint32_t len[16 + BIG] = { 100, 101, 102, 103, 104, 100, 101, 103 };
	for (size_t i = 0; i < BIG; i++)
		ids[12 + i] = i % 3 ? 23 : 25;
	static const uint64_t last_ids[] = { 19 + HI48, 5, 19 + HI48, 21 };
	for (size_t i = 0; i < 4; i++) {
		ids[12 + BIG + i] = last_ids[i];
		len[12 + BIG + i] = 100 + (uint32_t)i;
	}
	size_t nf = sizeof(flows) / sizeof(flows[0]), ne = sizeof(ids) / sizeof(ids[0]);
	CHECK(m->flows.n == nf, "threads %u: %zu flows, want %zu", th, m->flows.n, nf);
	for (size_t f = 0; f < nf && f < m->flows.n; f++)
		CHECK(m->flows.v[f].local_id == flows[f], "threads %u: flow %zu is id %llu, want %llu", th, f,
		      (unsigned long long)m->flows.v[f].local_id, (unsigned long long)flows[f]);
	CHECK(m->pev.n == ne, "threads %u: %zu events, want %zu", th, m->pev.n, ne);
	size_t ok = 0;
	for (size_t i = 0; i < ne && i < m->pev.n; i++) {
		const struct ana_pev *e = &m->pev.v[i];
		ok += e->host == 0 && e->flow < m->flows.n && m->flows.v[e->flow].local_id == ids[i] &&
		      e->len == len[i];
	}
	CHECK(ok == ne, "threads %u: %zu of %zu events in their flow with their length", th, ok, ne);
	CHECK(m->hosts.n == 1 && m->hosts.v[0].pkt_events == ne, "threads %u: host counts %llu events", th,
	      m->hosts.n ? (unsigned long long)m->hosts.v[0].pkt_events : 0ull);
	CHECK(m->hosts.n == 1 && m->hosts.v[0].t_min == 1000000 && m->hosts.v[0].t_max == 5003000,
	      "threads %u: host time range", th);
}

static void same_model(const struct ana_model *x, const struct ana_model *y)
{
	CHECK(x->pev.n == y->pev.n && !memcmp(x->pev.v, y->pev.v, x->pev.n * sizeof(*x->pev.v)),
	      "events differ between thread counts");
	CHECK_EQ_U(x->flows.n, y->flows.n);
	CHECK(x->hosts.n == y->hosts.n && x->hosts.n &&
	      x->hosts.v[0].pkt_events == y->hosts.v[0].pkt_events &&
	      x->hosts.v[0].t_min == y->hosts.v[0].t_min && x->hosts.v[0].t_max == y->hosts.v[0].t_max,
	      "host counters differ between thread counts");
}

int main(void)
{
	char dir[] = "/tmp/np-test-inplace.XXXXXX", path[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/h.npr", dir);
	CHECK(write_file(path) == 0, "write %s", path);
	struct loaded l[3];
	for (unsigned t = 0; t < 3; t++) {
		load(&l[t], path, t + 1);
		check_truth(&l[t].m, t + 1);
	}
	same_model(&l[0].m, &l[2].m);
	same_model(&l[1].m, &l[2].m);
	for (unsigned t = 0; t < 3; t++)
		ana_model_free(&l[t].m);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
