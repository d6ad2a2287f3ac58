/* Evaluation of npanalyze patterns as in ICPE 2020 §4.2-4.3: a generator of
 * E-Shopper-like sessions with two injected degradations, the scoring of
 * clusters against them, and the k-means baseline of RQ1. Used by
 * tests/tools/patgen.c and the unit tests. */
#ifndef NP_PATTERNS_EVAL_H
#define NP_PATTERNS_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "patterns.h"

struct pat_gen {
	size_t n;               /* requests */
	bool noise;             /* noise 1 and noise 2 of §4.3 */
	double spread;          /* scales every RPC's standard deviation (0 = 1) */
	uint64_t seed;
	/* out */
	uint8_t *label;         /* per request: 0 nominal, 1 = A1, 2 = A2 */
	double lo, hi;          /* the paper's I: [min, max] latency of affected requests */
	char desc[256];         /* "A1: getcart+getbrands (+50ms) A2: ..." */
};

/* Fills t (initialised, empty) with one session. 0 or -ENOMEM. */
int  pat_gen_session(struct pat_table *t, struct pat_gen *g);
/* The same session (same seed, same requests) as Zipkin v2 JSON spans, one
 * trace per request, entry span "gethome", asynchronous calls PRODUCER. */
int  pat_gen_zipkin(FILE *f, struct pat_gen *g);
void pat_gen_free(struct pat_gen *g);

struct pat_score { double precision, recall, f; };

/* §4.3: per degradation the cluster of best F, then recall |G|/|P|,
 * precision |G|/(|C1|+|C2|). members[c] are row indices of cluster c. */
void pat_score_clusters(const uint8_t *label, size_t n, size_t nclusters,
			size_t *const *members, const size_t *sizes, struct pat_score *out);
int  pat_score_result(const uint8_t *label, size_t n, const struct pat_result *r,
		      struct pat_score *out);
/* k-means (k = 2..6, k-means++ seeding) on the requests with L in [lo, hi],
 * best k by the score, as the paper ran its baselines. */
int  pat_kmeans_best(const struct pat_table *t, const uint8_t *label, double lo, double hi,
		     uint64_t seed, struct pat_score *out);

#endif
