/* Internals of npanalyze patterns shared by its modules (not for callers). */
#ifndef NP_PATTERNS_INT_H
#define NP_PATTERNS_INT_H

#include <stdint.h>
#include <stddef.h>
#include "patterns.h"

/* ---- random numbers: splitmix64, one state per search so runs are
 * deterministic whatever the thread count ---- */
static inline uint64_t pat_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}
static inline uint32_t pat_rng_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(((pat_rng(s) >> 32) * (uint64_t)n) >> 32) : 0;
}
static inline double pat_rng_unit(uint64_t *s)
{
	return (double)(pat_rng(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- 1-D mean shift (patterns_meanshift.c) ---- */

/* sklearn-like estimate: mean over points of the distance to their
 * (quantile*n)-th nearest neighbour. sorted ascending, no NAN. */
/* The authors' code builds sklearn's MeanShift without a bandwidth, which
 * then calls estimate_bandwidth with its default quantile, 0.3. */
#define PAT_KNN_QUANTILE 0.3
double pat_ms_bandwidth(const double *sorted, size_t n, double quantile);
/* Robust spread: 1.4826 * MAD of sorted values (0 if none). */
double pat_ms_mad_sigma(const double *sorted, size_t n);
/* The automatic bandwidth of the rule o selects (never <= 0). */
double pat_ms_auto_bw(const struct pat_opts *o, const double *sorted, size_t n);
/* Flat-kernel mean shift with bin seeding on sorted values; cluster i is
 * sorted[start[i] .. start[i+1]). Returns the number of clusters (>= 1 when
 * n > 0) and a malloc'ed start[] of nclusters+1 entries, or -ENOMEM. */
int pat_ms_cluster(const double *sorted, size_t n, double bw, size_t **start);
/* Clusters smaller than min_size: join the one below (the authors' code
 * has no such rule; our other modes), or the nearer neighbour (cover). */
enum pat_small { PAT_SMALL_BELOW, PAT_SMALL_NEAREST };
/* Thresholds of one attribute: the minimum of every cluster with at least
 * min_size members (the first always the global minimum) plus max + 1.
 * Returns the count (>= 2 when n > 0) or -ENOMEM; *thr malloc'ed. */
int pat_ms_thresholds(const double *sorted, size_t n, double bw, size_t min_size, enum pat_small small,
		      double **thr);

struct pat_search;

/* ---- a pool of threads over independent jobs (patterns_pool.c) ---- */
/* job k with a scratch buffer of the size pat_pool_run was given (or NULL) */
typedef int (*pat_job_fn)(void *ctx, size_t k, void *scratch);
/* Runs fn for k = 0 .. njobs-1 on nthreads threads (the caller's among
 * them); returns the first error. */
int pat_pool_run(size_t njobs, int nthreads, size_t scratch, pat_job_fn fn, void *ctx);
/* --threads (0: one per CPU), at most njobs, at least 1. */
int pat_threads(const struct pat_opts *o, size_t njobs);

/* ---- the precomputed model (patterns_model.c) ---- */

struct pat_model {
	const struct pat_table *t;
	size_t n, nw;                /* requests, 64-bit words per bitset */
	uint64_t lastmask;           /* valid bits of the last word */
	size_t nrpc;
	uint16_t *nthr;              /* thresholds per RPC (0: RPC never called) */
	double **thr;                /* ascending; last = max + 1 */
	uint64_t **bits;             /* bits[j] + k*nw: called && e_j >= thr[j][k] */
	uint16_t *main_iv;           /* interval k holding most requests of RPC j */
	size_t ncand;                /* every condition but whole ranges */
	struct pat_cond *cand;
	size_t *cand_first;          /* nrpc+1: cand of RPC j are [first[j], first[j+1]) */
	size_t nthr_total;
	/* per RPC over the requests that called it (for cover's strong rule):
	 * median, robust sigma (1.4826 MAD), smallest step between two
	 * distinct times, and the median of every interval [thr[k], thr[k+1]) */
	double *med, *sig, *quantum;
	double **ivmed;
};

int  pat_model_build(struct pat_model *m, const struct pat_table *t, size_t npos,
		     const struct pat_opts *o, char *err, size_t errlen);
void pat_model_free(struct pat_model *m);

/* Counts requests matching p: cnt over all, tp over those in pos. */
void pat_eval(const struct pat_model *m, const struct pat_pattern *p, const uint64_t *pos,
	      size_t *tp, size_t *cnt);
/* F-score of eq. (5); 0 for a pattern holding a whole-range condition. */
double pat_fitness(const struct pat_model *m, const struct pat_pattern *p,
		   const uint64_t *pos, size_t npos);
/* Bitset of the requests matching p (nw words). */
void pat_match(const struct pat_model *m, const struct pat_pattern *p, uint64_t *out);
bool pat_cond_whole(const struct pat_model *m, const struct pat_cond *c);
/* Whether some condition leaves out its RPC's main interval, i.e. the
 * pattern names an RPC that is slower (or faster) than usual. */
bool pat_deviates(const struct pat_model *m, const struct pat_pattern *p);
/* Fitness as the searches see it: modes other than icpe only accept
 * patterns that deviate (a pattern of usual times describes no degradation). */
double pat_search_fitness(const struct pat_search *s, const struct pat_pattern *p);
void pat_canon(struct pat_pattern *p);       /* conditions sorted by RPC */
uint64_t pat_hash(const struct pat_pattern *p);
int  pat_find_rpc(const struct pat_pattern *p, unsigned rpc);   /* index or -1 */
/* (f, fewer conditions) ordering: > 0 when a is better. */
static inline int pat_better(double fa, int na, double fb, int nb)
{
	if (fa > fb + 1e-12) return 1;
	if (fb > fa + 1e-12) return -1;
	return nb - na;
}

/* Bits set in x: the POPCNT instruction when the build targets it, else
 * an inline SWAR count (__builtin_popcountll becomes a libgcc call there,
 * ~11 % of the CPU time of a TrainTicket analysis). */
static inline unsigned pat_pop64(uint64_t x)
{
#ifdef __POPCNT__
	return (unsigned)__builtin_popcountll(x);
#else
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
#endif
}

static inline size_t pat_popcount(const uint64_t *b, size_t nw)
{
	size_t c = 0;
	for (size_t i = 0; i < nw; i++) c += (size_t)pat_pop64(b[i]);
	return c;
}

/* ---- memo of fitness values (open addressing on the pattern hash) ---- */
struct pat_memo {
	size_t cap, used;
	uint64_t *key;
	double *val;
};
int  pat_memo_init(struct pat_memo *mm, size_t cap);
void pat_memo_free(struct pat_memo *mm);
/* Returns the cached value or NAN. */
double pat_memo_get(const struct pat_memo *mm, uint64_t h);
void pat_memo_put(struct pat_memo *mm, uint64_t h, double v);

/* ---- searches for Theta: the best pattern for one set of positives ---- */
struct pat_search {
	const struct pat_model *m;
	const struct pat_opts *o;
	const uint64_t *pos;
	size_t npos;
	/* requests neither positive nor negative (already explained by an
	 * earlier pattern of a cover), or NULL */
	const uint64_t *ignore;
	/* per RPC the first threshold index that counts as a strong deviation
	 * (cover mode: a pattern needs a condition starting there), or NULL */
	const uint16_t *strong;
	int threads;                 /* beam: evaluate a round's candidates on this many threads */
	uint64_t seed;
	struct pat_pattern best;     /* out */
	double f;                    /* out */
	size_t nevals;               /* out: memo misses */
};
int pat_ga_run(struct pat_search *s);       /* patterns_ga.c (ICPE) */
int pat_beam_run(struct pat_search *s);     /* patterns_beam.c */
/* patterns_nsga2.c: the best set (*nout <= 4 patterns) for the positives pos;
 * sigma = latency scale of the dissimilarity objective. */
/* patterns_cover.c: --mode cover, sequential covering of I (fills r->items). */
int pat_cover_items(const struct pat_model *m, const struct pat_opts *o, struct pat_result *r);
int pat_nsga2_run(const struct pat_model *m, const struct pat_opts *o, const uint64_t *pos, size_t npos,
		  double sigma, uint64_t seed, struct pat_pattern *out, int *nout, size_t *nevals);

#endif
