/* Unit tests of npanalyze's transaction figures: a one-host recording
 * written by hand (HEADER, TXN_STATS, TXN_EVENTS ...) and analysed. */
#ifndef NP_TXNFIX_H
#define NP_TXNFIX_H
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "npmsg.h"
#include "records.h"
#include "rechdr.h"
#include "tap.h"

/* Host "srv", 2 CPUs, 1 s intervals from t0. */
static inline void txf_header(struct np_writer *w, struct np_recbuf *rb, const char *producer, uint64_t t0)
{
	rechdr_commit(w, rb, producer, "srv", "ssss", 1000000000ull, t0);
}

/* key: n copies of v */
static inline void txf_strs(msgpack_packer *pk, const char *key, const char *v, size_t n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		np_pack_str(pk, v);
}

/* One TXN_EVENTS record of [t0, t0 + 1 s]: n events, method GET. */
struct txf_ev { uint64_t conn, role, start, dur; const char *path; };

static inline void txf_events(struct np_writer *w, struct np_recbuf *rb, uint64_t t0,
			      const struct txf_ev *ev, size_t n)
{
	uint64_t *col = malloc(4 * (n ? n : 1) * sizeof(*col));
	uint64_t *conn = col, *role = col + n, *start = col + 2 * n, *dur = col + 3 * n;
	for (size_t k = 0; k < n; k++) {
		conn[k] = ev[k].conn;
		role[k] = ev[k].role;
		start[k] = ev[k].start;
		dur[k] = ev[k].dur;
	}
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_TXN_EVENTS, 1);
	msgpack_pack_map(pk, 9);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t0 + 1000000000ull);
	np_pack_kv_u64(pk, "n", n);
	np_pack_kv_u64_array(pk, "conn", conn, n);
	np_pack_kv_u64_array(pk, "role", role, n);
	np_pack_kv_u64_delta(pk, "start_ns_d", start, n);
	np_pack_kv_u64_array(pk, "dur_ns", dur, n);
	txf_strs(pk, "method", "GET", n);
	np_pack_str(pk, "path");
	msgpack_pack_array(pk, n);
	for (size_t k = 0; k < n; k++)
		np_pack_str(pk, ev[k].path);
	np_writer_commit(w, rb);
	free(col);
}

struct txf_run { struct np_analysis a; struct ana_model m; struct ana_options o; bool ok; };

/* npr analysed into npa and read back. */
static inline void txf_analyse(struct txf_run *r, const char *npr, const char *npa)
{
	memset(r, 0, sizeof(*r));
	r->o.quiet = true;
	ana_model_init(&r->m, &r->o);
	ana_load_file(&r->m, npr, "srv");
	CHECK(ana_run(&r->m, npa, NULL) == 0, "ana_run %s", npr);
	r->ok = np_analysis_load(&r->a, npa, NULL, NULL) == 0;
	CHECK(r->ok, "load %s", npa);
}

static inline void txf_free(struct txf_run *r)
{
	if (r->ok)
		np_analysis_free(&r->a);
	ana_model_free(&r->m);
}

#endif
