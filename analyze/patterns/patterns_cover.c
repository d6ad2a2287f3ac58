/* --mode cover (the default): a set of patterns over the whole degraded
 * interval I by sequential covering, as rule learners do it.
 *
 *   repeat: the best pattern (beam search, F-score) for the requests of I
 *           no earlier pattern explains, those requests neither positive
 *           nor negative; stop when it explains fewer than min_size of
 *           them or most of its matches lie outside I;
 *           if its cluster holds two causes (see two_causes) it is split
 *           into two more specific patterns, recursively;
 *           the requests of I it matches are now explained;
 *   then: merge clusters of one cause (merge_pass), order the list by
 *         confidence and check the clusters the order enlarged for two
 *         causes again (order_and_resplit), and cover what is left of I with
 *         weaker evidence (weak_rounds).
 *
 * Each cluster is the requests of I that its pattern matches and no earlier
 * pattern does, so the clusters are disjoint and the list reads as a
 * decision list. Deterministic: the beam search is. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "patterns_int.h"

#define CV_MAXPAT 12
#define CV_DEPTH 3

struct cover {
	const struct pat_model *m;
	const struct pat_opts *o;
	struct pat_result *r;
	size_t nw, min_size;
	int threads;                 /* for the beam searches (run one at a time) */
	uint64_t *imask;             /* requests with L in I */
	uint64_t *covered;           /* requests of I explained so far */
	uint64_t *tmp, *tmp2;
	uint16_t *strong;            /* per RPC: first threshold >= median + CV_STRONG_Z robust sigmas */
	uint16_t *strong_wide;       /* per RPC: first cluster whose median is */
	const double *rmed;          /* per RPC: median over all requests (the model's) */
	double *rsig;                /* per RPC: robust sigma, at least the quantum */
	const double *quantum;       /* per RPC: smallest step between two distinct times */
	struct pat_pattern pats[CV_MAXPAT];
	size_t npat;
};

static size_t and_count(const uint64_t *a, const uint64_t *b, size_t nw)
{
	size_t c = 0;
	for (size_t i = 0; i < nw; i++) c += (size_t)pat_pop64(a[i] & b[i]);
	return c;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median over the requests of set of the latency (rpc < 0) or of RPC rpc
 * (those that called it). */
static double median_of(const struct pat_model *m, const uint64_t *set, int rpc, double *buf)
{
	size_t k = 0;
	for (size_t w = 0; w < m->nw; w++)
		for (uint64_t x = set[w]; x; x &= x - 1) {
			size_t i = w * 64 + (size_t)__builtin_ctzll(x);
			double v = rpc < 0 ? m->t->lat[i] : m->t->col[rpc][i];
			if (!isnan(v)) buf[k++] = v;
		}
	if (!k) return NAN;
	qsort(buf, k, sizeof(double), cmp_double);
	return k % 2 ? buf[k / 2] : (buf[k / 2 - 1] + buf[k / 2]) / 2;
}

/* Whether the latencies of A are higher than those of B beyond chance:
 * the difference of the medians more than 3 standard errors (robust sigma
 * of each group, the median's error 1.2533 sigma / sqrt(n)). *diff: the
 * difference. Noise on an asynchronous RPC leaves it at about 0. */
static bool slower_latency(const struct pat_model *m, const uint64_t *A, const uint64_t *B, double *buf,
			   double *diff)
{
	double med[2], var[2];
	const uint64_t *set[2] = { A, B };
	for (int g = 0; g < 2; g++) {
		size_t k = 0;
		for (size_t w = 0; w < m->nw; w++)
			for (uint64_t x = set[g][w]; x; x &= x - 1)
				buf[k++] = m->t->lat[w * 64 + (size_t)__builtin_ctzll(x)];
		if (k < 2) return false;
		qsort(buf, k, sizeof(double), cmp_double);
		med[g] = k % 2 ? buf[k / 2] : (buf[k / 2 - 1] + buf[k / 2]) / 2;
		double s = 1.2533 * pat_ms_mad_sigma(buf, k);
		var[g] = s * s / (double)k;
	}
	*diff = med[0] - med[1];
	return *diff > 3 * sqrt(var[0] + var[1]);
}

/* Median and robust sigma of RPC rpc over the requests of set that called it. */
static void spread_of(const struct pat_model *m, const uint64_t *set, int rpc, double *buf, double *med,
		      double *sig)
{
	size_t k = 0;
	for (size_t w = 0; w < m->nw; w++)
		for (uint64_t x = set[w]; x; x &= x - 1) {
			double v = m->t->col[rpc][w * 64 + (size_t)__builtin_ctzll(x)];
			if (!isnan(v)) buf[k++] = v;
		}
	*med = NAN; *sig = NAN;
	if (!k) return;
	qsort(buf, k, sizeof(double), cmp_double);
	*med = k % 2 ? buf[k / 2] : (buf[k / 2 - 1] + buf[k / 2]) / 2;
	*sig = pat_ms_mad_sigma(buf, k);
}

static double usual_cut(const struct cover *cv, size_t j);

/* Two levels of one RPC are two causes only when one slows it at least
 * CV_LEVEL_RATIO times as much as the other (shifts from the RPC's median):
 * the ICPE'20 noise model varies one cause by 20 % (+60 ms instead of +50
 * on an RPC in half of its requests) and calls that one pattern; DeLag's
 * problems of different size on one RPC differ about twofold. */
#define CV_LEVEL_RATIO 1.5
static double shift_ratio(const struct cover *cv, size_t j, double ma, double mb)
{
	double da = ma - cv->rmed[j], db = mb - cv->rmed[j];
	double lo = fmin(da, db), hi = fmax(da, db);
	return lo > 0 ? hi / lo : INFINITY;
}

/* Whether A and B are both strongly slow on RPC j (or on some RPC, j < 0)
 * at two levels: medians more than 3 robust sigmas (of the wider group, at
 * least the RPC's overall sigma and the resolution of its times) apart. One RPC slowed by two causes of different size; the halves of one
 * cause's spread cut by a threshold are closer than that. */
static bool two_levels(const struct cover *cv, const uint64_t *A, const uint64_t *B, int j, double *buf)
{
	const struct pat_model *m = cv->m;
	for (size_t k = j < 0 ? 0 : (size_t)j; k < (j < 0 ? m->nrpc : (size_t)j + 1); k++) {
		if (cv->strong[k] >= m->nthr[k]) continue;
		double cut = m->thr[k][cv->strong[k]], ma, sa, mb, sb;
		spread_of(m, A, (int)k, buf, &ma, &sa);
		if (!(ma >= cut)) continue;
		spread_of(m, B, (int)k, buf, &mb, &sb);
		if (mb >= cut && fabs(ma - mb) > 3 * fmax(fmax(sa, sb), fmax(cv->rsig[k], cv->quantum[k])) &&
		    shift_ratio(cv, k, ma, mb) >= CV_LEVEL_RATIO)
			return true;
	}
	return false;
}

/* Deviating candidate conditions (leaving out the RPC's main interval)
 * that point at degraded requests: most requests meeting them lie in I. A
 * cause of a degradation slows requests into I; an RPC that is merely
 * bimodal (request types) is as common outside. */
static bool cause_cond(const struct cover *cv, const struct pat_cond *c, uint64_t *match)
{
	const struct pat_model *m = cv->m;
	uint16_t mi = m->main_iv[c->rpc];
	if (c->lo <= mi && c->hi > mi) return false;
	struct pat_pattern q = { .n = 1, .c = { *c } };
	pat_match(m, &q, match);
	size_t all = pat_popcount(match, cv->nw);
	return all && 2 * and_count(match, cv->imask, cv->nw) > all;
}

/* Requests not slow on c's RPC at c's level: not (called and e >= its
 * lower threshold). */
static inline uint64_t not_slow(const struct pat_model *m, const struct pat_cond *c, size_t w)
{
	return ~m->bits[c->rpc][(size_t)c->lo * m->nw + w];
}

/* Rule (c) of two_causes: one RPC strongly slow in most of C at two levels.
 * The cut is a threshold t between the strong level and the top: above it
 * A, between the strong level and t B; both large, together most of C,
 * medians more than 3 robust sigmas (of the wider group) apart; the cut
 * that separates them most (Otsu's criterion, in robust form) wins.
 * part: scratch of 2 bitsets. */
static void two_level_cut(struct cover *cv, const struct pat_pattern *p, const uint64_t *C, size_t nc,
			  uint64_t *part, double *buf, struct pat_cond *a, struct pat_cond *b, bool *found)
{
	const struct pat_model *m = cv->m;
	size_t nw = cv->nw;
	uint64_t *A = part, *B = part + nw;
	double best = 3;
	for (size_t j = 0; j < m->nrpc; j++) {
		uint16_t s0 = cv->strong[j], top = (uint16_t)(m->nthr[j] - 1);
		int at = pat_find_rpc(p, (unsigned)j);
		uint16_t plo = at >= 0 ? p->c[at].lo : 0, phi = at >= 0 ? p->c[at].hi : top;
		for (uint16_t t = (uint16_t)(s0 + 1); t < top && s0 < top; t++) {
			const uint64_t *bs = m->bits[j] + (size_t)s0 * nw, *bt = m->bits[j] + (size_t)t * nw;
			size_t na = 0, nb = 0;
			for (size_t w = 0; w < nw; w++) {
				A[w] = C[w] & bt[w];
				B[w] = C[w] & bs[w] & ~bt[w];
				na += (size_t)pat_pop64(A[w]);
				nb += (size_t)pat_pop64(B[w]);
			}
			if (na < cv->min_size || nb < cv->min_size || 2 * (na + nb) <= nc) continue;
			double ma, sa, mb, sb;
			spread_of(m, A, (int)j, buf, &ma, &sa);
			spread_of(m, B, (int)j, buf, &mb, &sb);
			double sep = (ma - mb) / fmax(fmax(sa, sb), fmax(cv->rsig[j], fmax(cv->quantum[j], 1e-9)));
			if (!(sep > best) || shift_ratio(cv, j, ma, mb) < CV_LEVEL_RATIO) continue;
			best = sep;
			*a = (struct pat_cond){ (uint16_t)j, t > plo ? t : plo, phi };
			*b = (struct pat_cond){ (uint16_t)j, s0 > plo ? s0 : plo, t < phi ? t : phi };
			*found = a->lo < a->hi && b->lo < b->hi;
		}
	}
}

/* Whether c can join p: its RPC is not in p, or c lies within p's
 * condition on it (then it replaces that condition). */
static bool narrows(const struct pat_pattern *p, const struct pat_cond *c)
{
	int at = pat_find_rpc(p, c->rpc);
	return at < 0 || (c->lo >= p->c[at].lo && c->hi <= p->c[at].hi);
}

/* Adds c to p, or narrows p's condition on c's RPC to it. */
static void add_or_narrow(struct pat_pattern *p, const struct pat_cond *c)
{
	int at = pat_find_rpc(p, c->rpc);
	if (at >= 0) p->c[at] = *c;
	else p->c[p->n++] = *c;
	pat_canon(p);
}

/* Two causes in cluster C (bitset, |C| = nc) of p, as evidence for a split:
 *  (a) two groups, each slow on an RPC p does not name and not slow on the
 *      other group's: A = slow on j1 and not on j2, B = slow on j2 and not
 *      on j1, both large (>= min_size), together most of C (DeLag's
 *      overlapping problems in one latency range). Exclusion on both sides
 *      is what tells two causes from one cause whose RPCs a threshold
 *      happens to cut (one cause slows all its RPCs together);
 *  (c) else one RPC at two strong levels (two_level_cut);
 *  (b) else one slow RPC in a large part of C, the rest also large, whose
 *      median latency is more than 1.5 robust sigmas above the rest's: a
 *      degradation that adds a slow RPC to another.
 * On success the two conditions to add go to *a and *b. */
static int two_causes(struct cover *cv, const struct pat_pattern *p, const uint64_t *C, size_t nc,
		      struct pat_cond *a, struct pat_cond *b, bool *found)
{
	const struct pat_model *m = cv->m;
	size_t nw = cv->nw, nk = m->ncand ? m->ncand : 1;
	*found = false;
	if (p->n + 1 >= PAT_MAXCOND) return 0;
	uint64_t *part = malloc(nk * nw * sizeof(uint64_t));
	size_t *cnt = malloc(nk * sizeof(size_t)), *idx = malloc(nk * sizeof(size_t));
	double *buf = malloc((m->n + 1) * sizeof(double));
	if (!part || !cnt || !idx || !buf) { free(part); free(cnt); free(idx); free(buf); return -ENOMEM; }
	size_t k = 0;
	for (size_t c = 0; c < m->ncand; c++) {
		uint64_t *x = part + k * nw;
		if (m->cand[c].lo < cv->strong[m->cand[c].rpc]) continue;   /* strong slow deviations only */
		if (!cause_cond(cv, &m->cand[c], x)) continue;
		for (size_t i = 0; i < nw; i++) x[i] &= C[i];
		size_t n = pat_popcount(x, nw);
		if (n < cv->min_size || nc - n < cv->min_size) continue;
		cnt[k] = n; idx[k] = c; k++;
	}
	size_t best = nc / 2;
	for (size_t i = 0; i < k; i++)
		for (size_t j = i + 1; j < k; j++) {
			const struct pat_cond *ci = &m->cand[idx[i]], *cj = &m->cand[idx[j]];
			if (cnt[i] + cnt[j] <= best) continue;
			if (!narrows(p, ci) || !narrows(p, cj)) continue;
			if (ci->rpc == cj->rpc) continue;
			size_t na = 0, nb = 0;
			for (size_t w = 0; w < nw; w++) {
				na += (size_t)pat_pop64(part[i * nw + w] & not_slow(m, cj, w));
				nb += (size_t)pat_pop64(part[j * nw + w] & not_slow(m, ci, w));
			}
			if (na < cv->min_size || nb < cv->min_size || na + nb <= best) continue;
			best = na + nb; *a = *ci; *b = *cj; *found = true;
		}
	if (!*found) two_level_cut(cv, p, C, nc, part, buf, a, b, found);
	if (!*found) {
		double best_diff = 0;
		for (size_t i = 0; i < k; i++) {
			uint64_t *x = part + i * nw;
			const struct pat_cond *c = &m->cand[idx[i]];
			for (size_t w = 0; w < nw; w++) cv->tmp2[w] = C[w] & ~x[w];
			double diff;
			if (!slower_latency(m, x, cv->tmp2, buf, &diff) || diff <= best_diff) continue;
			/* the RPC explains the difference (their sizes within a
			 * factor 2: a slow asynchronous RPC adds nothing), and the
			 * rest is at its usual level on it (usual_cut) */
			double rs = median_of(m, x, c->rpc, buf), rr = median_of(m, cv->tmp2, c->rpc, buf);
			if (!(rs - rr >= diff / 2 && diff >= (rs - rr) / 2) || rr >= usual_cut(cv, c->rpc))
				continue;
			best_diff = diff;
			*a = *c;
			uint16_t mi = m->main_iv[c->rpc];
			*b = (struct pat_cond){ c->rpc, 0, (uint16_t)(mi + 1) };   /* usual or faster */
			*found = true;
		}
	}
	free(part); free(cnt); free(idx); free(buf);
	return 0;
}

/* F of p for the positives pos, requests already explained ignored. */
static double fit(const struct cover *cv, const struct pat_pattern *p, const uint64_t *pos, size_t npos)
{
	struct pat_search s = { .m = cv->m, .o = cv->o, .pos = pos, .npos = npos, .ignore = cv->covered,
				.strong = cv->strong };
	return pat_search_fitness(&s, p);
}

/* Occam: drop conditions of p while its F for pos does not fall. */
static void simplify(const struct cover *cv, struct pat_pattern *p, const uint64_t *pos, size_t npos)
{
	double f = fit(cv, p, pos, npos);
	for (bool changed = true; changed && p->n > 1;) {
		changed = false;
		for (int k = 0; k < p->n && !changed; k++) {
			struct pat_pattern q = *p;
			q.c[k] = q.c[--q.n];
			double g = fit(cv, &q, pos, npos);
			if (g >= f - 1e-12) { pat_canon(&q); *p = q; f = g; changed = true; }
		}
	}
}

/* Adds p to the cover, or its two parts when its cluster holds two causes. */
static int emit(struct cover *cv, struct pat_pattern p, int depth)
{
	const struct pat_model *m = cv->m;
	size_t nw = cv->nw;
	uint64_t *C = malloc(3 * (nw + 1) * sizeof(uint64_t));
	if (!C) return -ENOMEM;
	uint64_t *pa = C + nw + 1, *pb = C + 2 * (nw + 1);
	pat_match(m, &p, C);
	for (size_t i = 0; i < nw; i++) C[i] &= cv->imask[i] & ~cv->covered[i];
	size_t nc = pat_popcount(C, nw);
	struct pat_cond a, b;
	bool found = false;
	int rc = depth < CV_DEPTH ? two_causes(cv, &p, C, nc, &a, &b, &found) : 0;
	if (!rc && found) {
		struct pat_pattern qa = p, qb = p;
		add_or_narrow(&qa, &a);
		add_or_narrow(&qb, &b);
		pat_match(m, &qa, pa);
		pat_match(m, &qb, pb);
		for (size_t i = 0; i < nw; i++) { pa[i] &= C[i]; pb[i] &= C[i] & ~pa[i]; }
		simplify(cv, &qa, pa, pat_popcount(pa, nw));
		simplify(cv, &qb, pb, pat_popcount(pb, nw));
		free(C);
		rc = emit(cv, qa, depth + 1);
		return rc ? rc : emit(cv, qb, depth + 1);
	}
	free(C);
	if (rc || nc < cv->min_size || cv->npat == CV_MAXPAT) return rc;
	cv->pats[cv->npat++] = p;
	pat_match(m, &p, cv->tmp);
	for (size_t i = 0; i < nw; i++) cv->covered[i] |= cv->tmp[i] & cv->imask[i];
	return 0;
}

static int cover_loop(struct cover *cv, size_t *nevals)
{
	const struct pat_model *m = cv->m;
	size_t nw = cv->nw;
	uint64_t *rem = malloc((nw + 1) * sizeof(uint64_t));
	if (!rem) return -ENOMEM;
	int rc = 0;
	for (int round = 0; round < CV_MAXPAT && cv->npat < CV_MAXPAT && !rc; round++) {
		for (size_t i = 0; i < nw; i++) rem[i] = cv->imask[i] & ~cv->covered[i];
		size_t nrem = pat_popcount(rem, nw);
		if (nrem < cv->min_size) break;
		struct pat_search s = { .m = m, .o = cv->o, .pos = rem, .npos = nrem, .ignore = cv->covered,
					.strong = cv->strong, .threads = cv->threads, .seed = cv->o->seed };
		rc = pat_beam_run(&s);
		*nevals += s.nevals;
		if (rc || s.f <= 0) break;
		pat_match(m, &s.best, cv->tmp);
		size_t all = 0, in = 0;
		for (size_t i = 0; i < nw; i++) {
			uint64_t x = cv->tmp[i] & ~cv->covered[i];
			all += (size_t)pat_pop64(x);
			in += (size_t)pat_pop64(x & rem[i]);
		}
		if (in < cv->min_size || 2 * in <= all) break;    /* mostly outside I: no degradation */
		size_t before = cv->npat;
		rc = emit(cv, s.best, 0);
		if (cv->npat == before) break;
	}
	free(rem);
	return rc;
}

/* The clusters of the patterns in list order (decision list): cl + k*nw. */
static void clusters(const struct cover *cv, uint64_t *cl, size_t *cnt)
{
	size_t nw = cv->nw;
	memset(cv->tmp2, 0, nw * sizeof(uint64_t));
	for (size_t k = 0; k < cv->npat; k++) {
		uint64_t *c = cl + k * nw;
		pat_match(cv->m, &cv->pats[k], c);
		cnt[k] = 0;
		for (size_t i = 0; i < nw; i++) {
			c[i] &= cv->imask[i] & ~cv->tmp2[i];
			cv->tmp2[i] |= c[i];
			cnt[k] += (size_t)pat_pop64(c[i]);
		}
	}
}

/* RPCs (bit j of the returned mask words in rpcs) that most of A meets
 * with a strong deviation and most of B does not reach. */
static void exclusive_rpcs(const struct cover *cv, const uint64_t *A, size_t na, const uint64_t *B,
			   size_t nb, uint8_t *rpcs)
{
	const struct pat_model *m = cv->m;
	memset(rpcs, 0, m->nrpc);
	for (size_t c = 0; c < m->ncand; c++) {
		const struct pat_cond *q = &m->cand[c];
		if (q->lo < cv->strong[q->rpc] || rpcs[q->rpc]) continue;
		const uint64_t *lo = m->bits[q->rpc] + (size_t)q->lo * m->nw, *hi = m->bits[q->rpc] + (size_t)q->hi * m->nw;
		size_t ia = 0, ob = 0;
		for (size_t w = 0; w < m->nw; w++) {
			ia += (size_t)pat_pop64(A[w] & lo[w] & ~hi[w]);
			ob += (size_t)pat_pop64(B[w] & ~lo[w]);
		}
		if (2 * ia > na && 2 * ob > nb) rpcs[q->rpc] = 1;
	}
}

/* Whether A is slower than B (beyond chance, slower_latency) by as much as
 * its exclusive slow RPCs are slower (the sum of their median differences
 * at least half the latency difference, which is at least half the largest
 * of them: a slow asynchronous RPC adds nothing; RPCs B is raised on too,
 * beyond usual_cut, are two levels of one RPC or one cause's spread, not
 * evidence here): rule (b) of two_causes, read backwards. */
static bool slower_by(const struct cover *cv, const uint64_t *A, const uint64_t *B, const uint8_t *ra,
		      double *buf)
{
	const struct pat_model *m = cv->m;
	double diff;
	if (!slower_latency(m, A, B, buf, &diff)) return false;
	double more = 0, most = 0;
	for (size_t j = 0; j < m->nrpc; j++) {
		if (!ra[j]) continue;
		double mb = median_of(m, B, (int)j, buf);
		if (mb >= usual_cut(cv, j)) continue;  /* B is raised on it too: two levels, not here */
		double d = fmax(0, median_of(m, A, (int)j, buf) - mb);
		more += d;
		most = fmax(most, d);
	}
	return more >= diff / 2 && diff >= most / 2;
}

/* Two clusters hold two causes when each is strongly slow on an RPC (not
 * the same one) the other is not slow on, or when one is slower by an RPC
 * the other is not slow on: the rules that split, read backwards. */
static bool distinct(const struct cover *cv, const uint64_t *A, size_t na, const uint64_t *B, size_t nb,
		     uint8_t *ra, uint8_t *rb, double *buf)
{
	exclusive_rpcs(cv, A, na, B, nb, ra);
	exclusive_rpcs(cv, B, nb, A, na, rb);
	for (size_t i = 0; i < cv->m->nrpc; i++)
		for (size_t j = 0; j < cv->m->nrpc; j++)
			if (i != j && ra[i] && rb[j]) return true;
	return slower_by(cv, A, B, ra, buf) || slower_by(cv, B, A, rb, buf) || two_levels(cv, A, B, -1, buf);
}

/* Whether most of A and most of B are strongly slow on one RPC: a cause
 * they may share. A cluster of generally slow requests shares none with a
 * cause's cluster and is never merged into it. */
static bool share_cause(const struct cover *cv, const uint64_t *A, size_t na, const uint64_t *B, size_t nb)
{
	const struct pat_model *m = cv->m;
	for (size_t j = 0; j < m->nrpc; j++) {
		if (cv->strong[j] >= m->nthr[j]) continue;
		const uint64_t *b = m->bits[j] + (size_t)cv->strong[j] * m->nw;
		if (2 * and_count(A, b, m->nw) > na && 2 * and_count(B, b, m->nw) > nb) return true;
	}
	return false;
}

/* F of p for the positives pos, the requests of ign ignored. */
static double fit_ign(const struct cover *cv, const struct pat_pattern *p, const uint64_t *pos, size_t npos,
		      const uint64_t *ign)
{
	struct pat_search s = { .m = cv->m, .o = cv->o, .pos = pos, .npos = npos, .ignore = ign,
				.strong = cv->strong };
	return pat_search_fitness(&s, p);
}

/* Merges two clusters that share a strong slow RPC and show no evidence of
 * two causes (a cause seen twice:
 * a threshold cut through its times, an asynchronous RPC slow in part of
 * it) when one pattern describes their union about as well as the two
 * patterns describe their parts (F within 0.05 of their weighted mean). */
static int merge_pass(struct cover *cv, size_t *nevals, bool *merged)
{
	const struct pat_model *m = cv->m;
	size_t nw = cv->nw, np = cv->npat;
	*merged = false;
	uint64_t *cl = malloc((np + 2) * (nw + 1) * sizeof(uint64_t));
	size_t *cnt = malloc((np + 1) * sizeof(size_t));
	uint8_t *ra = malloc(2 * m->nrpc + 2);
	double *buf = malloc((m->n + 1) * sizeof(double));
	if (!cl || !cnt || !ra || !buf) { free(cl); free(cnt); free(ra); free(buf); return -ENOMEM; }
	uint64_t *uni = cl + np * nw, *ign = uni + nw;
	clusters(cv, cl, cnt);
	int rc = 0;
	for (size_t a = 0; a < np && !*merged && !rc; a++)
		for (size_t b = a + 1; b < np && !*merged && !rc; b++) {
			const uint64_t *A = cl + a * nw, *B = cl + b * nw;
			if (!cnt[a] || !cnt[b] || !share_cause(cv, A, cnt[a], B, cnt[b]) || distinct(cv, A, cnt[a], B, cnt[b], ra, ra + m->nrpc + 1, buf))
				continue;
			for (size_t i = 0; i < nw; i++) { uni[i] = A[i] | B[i]; ign[i] = cv->tmp2[i] & ~uni[i]; }
			double fa = fit_ign(cv, &cv->pats[a], A, cnt[a], ign), fb = fit_ign(cv, &cv->pats[b], B, cnt[b], ign);
			struct pat_search s = { .m = m, .o = cv->o, .pos = uni, .npos = cnt[a] + cnt[b], .ignore = ign,
						.strong = cv->strong, .threads = cv->threads, .seed = cv->o->seed };
			rc = pat_beam_run(&s);
			*nevals += s.nevals;
			double want = (fa * (double)cnt[a] + fb * (double)cnt[b]) / (double)(cnt[a] + cnt[b]) - 0.05;
			if (rc || s.f < want) continue;
			cv->pats[a] = s.best;
			memmove(&cv->pats[b], &cv->pats[b + 1], (np - b - 1) * sizeof(cv->pats[0]));
			cv->npat--;
			*merged = true;
		}
	free(cl); free(cnt); free(ra); free(buf);
	return rc;
}

/* Decision-list order, as rule learners order association rules: the most
 * confident pattern (largest share of its matches inside I) first, so a
 * pattern of generally slow requests (small shifts that normal requests
 * show too) does not claim the requests a sharper cause explains. Stable:
 * ties keep the order found. */
static void order_patterns(struct cover *cv)
{
	double conf[CV_MAXPAT];
	for (size_t k = 0; k < cv->npat; k++) {
		pat_match(cv->m, &cv->pats[k], cv->tmp);
		size_t all = pat_popcount(cv->tmp, cv->nw);
		conf[k] = all ? (double)and_count(cv->tmp, cv->imask, cv->nw) / (double)all : 0;
	}
	for (size_t a = 1; a < cv->npat; a++)
		for (size_t b = a; b > 0 && conf[b - 1] < conf[b] - 1e-9; b--) {
			double t = conf[b]; conf[b] = conf[b - 1]; conf[b - 1] = t;
			struct pat_pattern q = cv->pats[b]; cv->pats[b] = cv->pats[b - 1]; cv->pats[b - 1] = q;
		}
}

static bool same_pattern(const struct pat_pattern *a, const struct pat_pattern *b)
{
	return a->n == b->n && !memcmp(a->c, b->c, (size_t)a->n * sizeof(a->c[0]));
}

/* The decision-list order can hand a pattern requests that an earlier
 * (now later) pattern explained while it was searched: a condition found
 * for the rest of I, [17, 43) where only [30, 43) was left, now reaches
 * the other cause's level too. Each pattern's cluster in the final order is
 * checked for two causes again; on evidence the pattern is replaced by its
 * two parts. *changed: whether one was. */
static int resplit_pass(struct cover *cv, const uint64_t *home, const struct pat_pattern *hp, size_t nh,
			bool *changed)
{
	const struct pat_model *m = cv->m;
	size_t nw = cv->nw, np = cv->npat;
	*changed = false;
	if (np + 1 > CV_MAXPAT) return 0;
	uint64_t *cl = malloc((np + 3) * (nw + 1) * sizeof(uint64_t));
	size_t *cnt = malloc((np + 1) * sizeof(size_t));
	if (!cl || !cnt) { free(cl); free(cnt); return -ENOMEM; }
	uint64_t *pa = cl + np * nw, *pb = pa + nw;
	clusters(cv, cl, cnt);
	memset(cv->covered, 0, nw * sizeof(uint64_t));
	int rc = 0;
	for (size_t k = 0; k < np && !rc && !*changed; k++) {
		const uint64_t *C = cl + k * nw;
		struct pat_cond a, b;
		bool found = false;
		size_t h = 0;
		while (h < nh && !same_pattern(&hp[h], &cv->pats[k])) h++;
		size_t gained = 0;
		for (size_t i = 0; i < nw; i++)
			gained += (size_t)pat_pop64(C[i] & ~(h < nh ? home[h * nw + i] : 0));
		if (gained >= cv->min_size && cnt[k] >= 2 * cv->min_size) rc = two_causes(cv, &cv->pats[k], C, cnt[k], &a, &b, &found);
		if (!rc && found) {
			struct pat_pattern qa = cv->pats[k], qb = cv->pats[k];
			add_or_narrow(&qa, &a);
			add_or_narrow(&qb, &b);
			pat_match(m, &qa, pa);
			pat_match(m, &qb, pb);
			for (size_t i = 0; i < nw; i++) { pa[i] &= C[i]; pb[i] &= C[i] & ~pa[i]; }
			size_t na = pat_popcount(pa, nw), nb = pat_popcount(pb, nw);
			if (na >= cv->min_size && nb >= cv->min_size) {
				simplify(cv, &qa, pa, na);
				simplify(cv, &qb, pb, nb);
				memmove(&cv->pats[k + 2], &cv->pats[k + 1], (np - k - 1) * sizeof(cv->pats[0]));
				cv->pats[k] = qa;
				cv->pats[k + 1] = qb;
				cv->npat++;
				*changed = true;
			}
		}
		for (size_t i = 0; i < nw; i++) cv->covered[i] |= C[i];
	}
	free(cl); free(cnt);
	return rc;
}

/* Orders the patterns as a decision list, then resplits the clusters the
 * order enlarged (resplit_pass), up to 4 times. */
static int order_and_resplit(struct cover *cv)
{
	size_t nw = cv->nw, nh = cv->npat, hcnt[CV_MAXPAT];
	struct pat_pattern hp[CV_MAXPAT];
	uint64_t *home = malloc((nh + 1) * (nw + 1) * sizeof(uint64_t));
	if (!home) return -ENOMEM;
	clusters(cv, home, hcnt);
	memcpy(hp, cv->pats, nh * sizeof(hp[0]));
	order_patterns(cv);
	int rc = 0;
	for (int it = 0; it < 4 && !rc; it++) {
		bool changed;
		rc = resplit_pass(cv, home, hp, nh, &changed);
		if (!changed) break;
		order_patterns(cv);
	}
	free(home);
	return rc;
}

/* After the strong patterns, more rounds on the requests of I none of them
 * matches, with the weaker evidence of strong_wide (a slow cluster whose
 * median, not its border, is beyond the cut): a cause whose slow times
 * overlap the RPC's nominal tail (patgen --spread 2.5: +50 ms on an RPC of
 * sigma 15 ms). Appended, not reordered nor merged, so they only take
 * requests no strong pattern explains. */
static int weak_rounds(struct cover *cv, size_t *nevals)
{
	uint16_t *t = cv->strong;
	cv->strong = cv->strong_wide;
	cv->strong_wide = t;
	memset(cv->covered, 0, cv->nw * sizeof(uint64_t));
	for (size_t k = 0; k < cv->npat; k++) {
		pat_match(cv->m, &cv->pats[k], cv->tmp);
		for (size_t i = 0; i < cv->nw; i++) cv->covered[i] |= cv->tmp[i] & cv->imask[i];
	}
	return cover_loop(cv, nevals);
}

/* One item per pattern; its cluster: the requests of I it matches that no
 * earlier pattern does. precision: share of its matches inside I; recall:
 * share of I its cluster holds. */
static int fill_items(struct cover *cv)
{
	const struct pat_model *m = cv->m;
	struct pat_result *r = cv->r;
	size_t nw = cv->nw;
	r->items = calloc(cv->npat + 1, sizeof(*r->items));
	if (!r->items) return -ENOMEM;
	memset(cv->covered, 0, nw * sizeof(uint64_t));
	for (size_t k = 0; k < cv->npat; k++) {
		const struct pat_pattern *p = &cv->pats[k];
		struct pat_item *it = &r->items[r->nitems];
		pat_match(m, p, cv->tmp);
		size_t all = pat_popcount(cv->tmp, nw), in = and_count(cv->tmp, cv->imask, nw), nmem = 0;
		for (size_t i = 0; i < nw; i++) {
			cv->tmp[i] &= cv->imask[i] & ~cv->covered[i];
			cv->covered[i] |= cv->tmp[i];
			nmem += (size_t)pat_pop64(cv->tmp[i]);
		}
		if (!nmem || 2 * in <= all) continue;   /* a duplicate of earlier ones; no degradation */
		it->members = malloc(nmem * sizeof(size_t));
		if (!it->members) return -ENOMEM;
		for (size_t w = 0; w < nw; w++)
			for (uint64_t x = cv->tmp[w]; x; x &= x - 1)
				it->members[it->nmembers++] = w * 64 + (size_t)__builtin_ctzll(x);
		it->nseg = 1;
		it->seg_lo[0] = r->lo;
		it->seg_hi[0] = r->hi;
		it->ncond = p->n;
		for (int c = 0; c < p->n; c++) {
			it->c[c].rpc = p->c[c].rpc;
			it->c[c].lo = m->thr[p->c[c].rpc][p->c[c].lo];
			it->c[c].hi = m->thr[p->c[c].rpc][p->c[c].hi];
		}
		it->npos = r->npos;
		it->tp = in;
		it->fp = all - in;
		it->precision = all ? (double)in / (double)all : 0;
		it->recall = r->npos ? (double)nmem / (double)r->npos : 0;
		it->f = it->precision + it->recall > 0 ?
			2 * it->precision * it->recall / (it->precision + it->recall) : 0;
		r->nitems++;
	}
	return 0;
}

/* A strong deviation: an RPC time at least CV_STRONG_Z robust sigmas above
 * the RPC's median over all requests: the median-absolute-deviation outlier
 * rule with the threshold Leys et al. recommend by default (2.5, "moderately
 * conservative"; J. Exp. Soc. Psych. 49(4), 2013). Small shifts of many RPCs
 * are how a generally slow request looks (contention); a cause slows its
 * RPCs by more than their own spread. */
#define CV_STRONG_Z 2.5
/* Mean-shift borders lie between cluster centres, at the resolution of the
 * bandwidth (the RPC's sigma): a cluster centred far beyond the cut (its
 * median >= median + CV_CLEAR_Z sigmas) whose border falls just short of
 * it (38.807 ms against a cut of 38.846 ms, patgen --spread 2.5) is strong
 * too. Chosen on the generator among 4, 5, 6 (--spread 2.5: 4 lifts F
 * 0.872 / 0.894 to 0.906 / 0.926, 6 changes nothing), neutral on the
 * tuning half of the DeLag files. */
#define CV_CLEAR_Z 4.0

/* The top of an RPC's usual times, median + CV_USUAL_Z robust sigmas, as a
 * value (not a threshold index): a group whose median on the RPC reaches it
 * is raised there, not at its usual level. Rule (b) and its reading
 * backwards ask the rest to be at its usual level on the RPC that explains
 * the slower group; one cause whose times on that RPC straddle a mean-shift
 * threshold (TrainTicket 080: seat-service 50-68 ms, nominal 37 ms,
 * threshold 53 ms) leaves its lower part raised, and is no second cause.
 * 2: Leys et al.'s least conservative outlier cut; between it and
 * CV_STRONG_Z a time is neither usual nor strongly slow. */
#define CV_USUAL_Z 2.0
static double usual_cut(const struct cover *cv, size_t j)
{
	return cv->rmed[j] + CV_USUAL_Z * cv->rsig[j];
}

static int strong_thresholds(struct cover *cv)
{
	const struct pat_model *m = cv->m;
	cv->strong = malloc((m->nrpc + 1) * sizeof(uint16_t));
	cv->strong_wide = malloc((m->nrpc + 1) * sizeof(uint16_t));
	cv->rsig = calloc(m->nrpc + 1, sizeof(double));
	if (!cv->strong || !cv->strong_wide || !cv->rsig) return -ENOMEM;
	cv->rmed = m->med;
	cv->quantum = m->quantum;
	for (size_t j = 0; j < m->nrpc; j++) {
		cv->strong[j] = cv->strong_wide[j] = m->nthr[j];
		if (!m->nthr[j]) continue;
		/* times recorded in whole ms: a sigma below the step means "too
		 * tight to measure", not "any step is an outlier" */
		cv->rsig[j] = fmax(m->sig[j], m->quantum[j]);
		double cut = m->med[j] + CV_STRONG_Z * cv->rsig[j], clear = m->med[j] + CV_CLEAR_Z * cv->rsig[j];
		for (uint16_t k = (uint16_t)(m->main_iv[j] + 1); k + 1 < m->nthr[j]; k++) {
			if (!(m->thr[j][k] > m->med[j])) continue;
			double mid = m->ivmed[j][k];
			if (cv->strong[j] == m->nthr[j] && (m->thr[j][k] >= cut || mid >= clear)) cv->strong[j] = k;
			if (cv->strong_wide[j] == m->nthr[j] && mid >= cut) cv->strong_wide[j] = k;
		}
	}
	return 0;
}

int pat_cover_items(const struct pat_model *m, const struct pat_opts *o, struct pat_result *r)
{
	size_t nw = m->nw;
	long nt = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);
	struct cover cv = { .m = m, .o = o, .r = r, .nw = nw, .threads = nt < 1 ? 1 : nt > 16 ? 16 : (int)nt };
	uint64_t *b = calloc(4 * (nw + 1), sizeof(uint64_t));
	r->split = malloc(2 * sizeof(double));
	int rc = b && r->split ? 0 : -ENOMEM;
	if (!rc) {
		cv.imask = b; cv.covered = b + nw + 1; cv.tmp = b + 2 * (nw + 1); cv.tmp2 = b + 3 * (nw + 1);
		r->nsplit = 2;
		r->split[0] = r->lo;
		r->split[1] = r->hi;
		for (size_t i = 0; i < m->n; i++)
			if (m->t->lat[i] >= r->lo && m->t->lat[i] < r->hi) b[i / 64] |= 1ULL << (i % 64);
		cv.min_size = (size_t)ceil(o->min_cluster_frac * (double)r->npos);
		if (cv.min_size < 2) cv.min_size = 2;
		rc = strong_thresholds(&cv);
		if (!rc) rc = cover_loop(&cv, &r->nevals);
		for (bool merged = true; merged && !rc;) rc = merge_pass(&cv, &r->nevals, &merged);
		if (!rc) rc = order_and_resplit(&cv);
		if (!rc) rc = weak_rounds(&cv, &r->nevals);
	}
	if (!rc) rc = fill_items(&cv);
	free(b); free(cv.strong); free(cv.strong_wide); free(cv.rsig);
	return rc;
}
