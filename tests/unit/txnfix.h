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
