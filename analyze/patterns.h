/* npanalyze patterns: latency degradation patterns (Cortellessa & Traini,
 * ICPE 2020) over a table of requests x RPC execution times.
 *
 *   request table -> per-RPC thresholds (1-D mean shift) -> one bitset per
 *   threshold -> split points of the degraded interval I (mean shift on the
 *   latencies) -> Theta(s_i, s_j) per pair of split points (GA or beam
 *   search) -> DP of eq. (8) -> (set mode) merge of the sub-interval
 *   patterns that describe the same deviating RPCs.
 *
 * Every symbol starts with pat_ (analysis) or trace_ (importers, trace.h).
 * docs/PATTERNS.md describes the design and the .npa tables. */
#ifndef NP_PATTERNS_H
#define NP_PATTERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int patterns_main(int argc, char **argv);

/* ---- the request table ------------------------------------------------ */

/* Column-major so importers can discover RPCs while reading. A value of NAN
 * means "the request did not call this RPC" (never 0 ms). Times in ms. */
struct pat_table {
	size_t nrows, nrpc, cap;
	char **rpc;          /* nrpc names */
	double **col;        /* nrpc columns of cap values */
	double *lat;         /* request latency L (ms) */
	char **id;           /* request ids */
};

void pat_table_init(struct pat_table *t);
void pat_table_free(struct pat_table *t);
/* Index of the RPC column called name, created (all NAN) if absent; -1 on ENOMEM. */
int  pat_table_rpc(struct pat_table *t, const char *name);
/* Appends a request with all RPCs missing; returns its row or -1 on ENOMEM. */
long pat_table_row(struct pat_table *t, const char *id, double latency_ms);
/* Adds ms to (row, rpc): a repeated RPC sums its calls' execution times. */
void pat_table_add(struct pat_table *t, size_t row, int rpc, double ms);
static inline double pat_table_get(const struct pat_table *t, size_t row, size_t rpc)
{
	return t->col[rpc][row];
}

/* ---- options and results ---------------------------------------------- */

enum pat_mode {
	PAT_MODE_SET = 0,   /* beam Theta + DP + merge into a pattern set */
	PAT_MODE_ICPE,      /* the paper: (mu+lambda) GA Theta + DP */
	PAT_MODE_BEAM,      /* beam Theta + DP, no merge (ablation) */
	PAT_MODE_GASET,     /* GA Theta + DP + merge (ablation) */
	PAT_MODE_NSGA2,     /* DeLag-style NSGA-II over sets of patterns on all of I */
	PAT_MODE_COVER,     /* default: sequential covering of I + two-cause splits */
};
const char *pat_mode_name(int mode);
int pat_mode_parse(const char *s);    /* -1 if unknown */

struct pat_opts {
	bool   have_interval;
	double lo, hi;              /* degraded interval I = [lo, hi) in ms */
	double bandwidth;           /* RPC mean-shift bandwidth (ms); 0 = auto */
	double lat_bandwidth;       /* latency mean-shift bandwidth (ms); 0 = auto */
	int    bw_rule;             /* auto bandwidth: PAT_BW_* (0 = by mode) */
	double min_cluster_frac;    /* clusters < frac * |Rpos| dropped (0.05) */
	int    mode;
	uint64_t seed;
	int    generations, pop, tournament;   /* 400, 100, 20 */
	double pc, pm;                          /* 0.8, 0.2 */
	int    beam;                /* beam width of the beam search (16) */
	int    threads;             /* 0 = one per CPU */
	int    max_split;           /* cap on split points (keeps DP small) */
};
void pat_opts_default(struct pat_opts *o);

enum pat_bw_rule {
	PAT_BW_MODE = 0,    /* knn for icpe, mad for the others */
	PAT_BW_KNN,         /* the authors': mean distance to the 0.1*n-th neighbour */
	PAT_BW_MAD,         /* robust sigma: 1.4826 * median absolute deviation */
};

#define PAT_MAXCOND 16

/* [thr[lo], thr[hi]) of RPC rpc: threshold indices, lo < hi. */
struct pat_cond { uint16_t rpc, lo, hi; };
struct pat_pattern { int n; struct pat_cond c[PAT_MAXCOND]; };


/* A condition resolved to ms, for printing and storing. */
struct pat_rcond { int rpc; double lo, hi; };

#define PAT_MAXSEG 16

struct pat_item {
	size_t nseg;                /* latency sub-intervals it explains */
	double seg_lo[PAT_MAXSEG], seg_hi[PAT_MAXSEG];
	int ncond;
	struct pat_rcond c[PAT_MAXCOND];
	size_t npos, tp, fp;        /* w.r.t. its sub-intervals, over all requests */
	double precision, recall, f;
	size_t nmembers;            /* the cluster: matching requests in I (set modes) or in its sub-intervals */
	size_t *members;            /* row indices, ascending */
};

struct pat_result {
	double lo, hi;              /* I actually used */
	bool auto_interval;
	size_t nrows, npos;         /* requests, requests with L in I */
	size_t nsplit;
	double *split;              /* split points s_0..s_k (ms) */
	double lat_bw;              /* bandwidth used on the latencies (ms) */
	double dp_score;            /* sum of Theta over the chosen sub-intervals */
	size_t nitems;
	struct pat_item *items;     /* ordered by first sub-interval */
	size_t nthr_total;          /* thresholds over all RPCs */
	size_t nevals;              /* fitness evaluations (memo misses) */
	double seconds;             /* wall time of pat_analyze */
};

/* Runs the whole analysis. Returns 0, or -errno with a message in err. */
int  pat_analyze(const struct pat_table *t, const struct pat_opts *o,
		 struct pat_result *res, char *err, size_t errlen);
void pat_result_free(struct pat_result *r);

/* "getCart ∈ [80 ms, 102 ms) ∧ getRecommended ∈ [70 ms, 120 ms)" into buf. */
void pat_item_format(const struct pat_table *t, const struct pat_item *it, char *buf, size_t len);

#endif
