/* The driver of npanalyze patterns: degraded interval, split points, Theta
 * for every pair of split points (each pair searched once, in parallel),
 * the DP of eq. (8), and in set modes the merge of sub-interval patterns
 * that name the same deviating RPCs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "patterns_int.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Bitset of the requests with lo <= L < hi; returns their count. */
static size_t lat_mask(const struct pat_table *t, size_t nw, double lo, double hi, uint64_t *out)
{
	memset(out, 0, nw * sizeof(uint64_t));
	size_t n = 0;
	for (size_t i = 0; i < t->nrows; i++)
		if (t->lat[i] >= lo && t->lat[i] < hi) { out[i / 64] |= 1ULL << (i % 64); n++; }
	return n;
}

static bool set_mode(const struct pat_opts *o)
{
	return o->mode == PAT_MODE_SET || o->mode == PAT_MODE_GASET || o->mode == PAT_MODE_NSGA2;
}

/* Default I: from the first latency mode above the main (most populous)
 * mode to the maximum latency. */
static int auto_interval(const struct pat_table *t, const struct pat_opts *o, double *lo,
			 double *hi, char *err, size_t errlen)
{
	size_t n = t->nrows;
	double *x = malloc(n * sizeof(double));
	if (!x) return -ENOMEM;
	memcpy(x, t->lat, n * sizeof(double));
	qsort(x, n, sizeof(double), cmp_double);
	double bw = o->lat_bandwidth > 0 ? o->lat_bandwidth : pat_ms_auto_bw(o, x, n);
	size_t *start;
	int nc = pat_ms_cluster(x, n, bw, &start);
	if (nc < 0) { free(x); return nc; }
	int main = 0;
	for (int i = 1; i < nc; i++)
		if (start[i + 1] - start[i] > start[main + 1] - start[main]) main = i;
	size_t min_size = n / 100 > 5 ? n / 100 : 5;
	int rc = -ENOENT;
	for (int i = main + 1; i < nc; i++)
		if (start[i + 1] - start[i] >= min_size) {
			*lo = x[start[i]];
			*hi = x[n - 1] + 1.0;
			rc = 0;
			break;
		}
	if (rc) {
		/* modes too close for the bandwidth: the slow tail beyond median +
		 * 3 robust sigmas, when it holds at least min_size requests */
		double med = x[n / 2], s = pat_ms_mad_sigma(x, n), cut = med + 3 * s;
		size_t first = n;
		while (first > 0 && x[first - 1] >= cut) first--;
		if (s > 0 && n - first >= min_size) {
			*lo = x[first];
			*hi = x[n - 1] + 1.0;
			rc = 0;
		}
	}
	if (rc)
		snprintf(err, errlen, "no latency mode above the main one (%.3g ms .. %.3g ms) and no slow "
			 "tail: nothing looks degraded; give --interval LO:HI", x[start[main]],
			 x[start[main + 1] - 1]);
	free(start);
	free(x);
	return rc;
}

/* Bandwidth for the latencies in I (sorted x): the authors' rule looks at
 * them alone; the robust-sigma rule takes the spread of all requests, since
 * inside I the degraded modes themselves would inflate it. */
static double lat_bw(const struct pat_table *t, const struct pat_opts *o, const double *x, size_t n)
{
	int rule = o->bw_rule;
	if (rule == PAT_BW_MODE) rule = o->mode == PAT_MODE_ICPE ? PAT_BW_KNN : PAT_BW_MAD;
	if (rule != PAT_BW_MAD) return pat_ms_bandwidth(x, n, PAT_KNN_QUANTILE);
	double *all = malloc(t->nrows * sizeof(double));
	if (!all) return pat_ms_bandwidth(x, n, PAT_KNN_QUANTILE);
	memcpy(all, t->lat, t->nrows * sizeof(double));
	qsort(all, t->nrows, sizeof(double), cmp_double);
	double s = pat_ms_mad_sigma(all, t->nrows);
	free(all);
	return s > 0 ? s : pat_ms_bandwidth(x, n, PAT_KNN_QUANTILE);
}

/* Split points: lo, the mean-shift cluster borders of the latencies inside
 * I (clusters under min_cluster_frac of the positives dropped), hi. */
static int split_points(const struct pat_table *t, const struct pat_opts *o, struct pat_result *r)
{
	double *x = malloc((r->npos + 1) * sizeof(double));
	if (!x) return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < t->nrows; i++)
		if (t->lat[i] >= r->lo && t->lat[i] < r->hi) x[n++] = t->lat[i];
	qsort(x, n, sizeof(double), cmp_double);
	double bw = o->lat_bandwidth > 0 ? o->lat_bandwidth : lat_bw(t, o, x, n);
	r->lat_bw = bw;
	size_t *start = NULL;
	int nc = n ? pat_ms_cluster(x, n, bw, &start) : 0;
	if (nc < 0) { free(x); return nc; }
	size_t min_size = (size_t)ceil(o->min_cluster_frac * (double)r->npos);
	if (min_size < 1) min_size = 1;
	int maxs = o->max_split > 0 ? o->max_split : 1;
	r->split = malloc(((size_t)nc + 2) * sizeof(double));
	if (!r->split) { free(x); free(start); return -ENOMEM; }
	for (;;) {      /* raise the size floor until at most max_split inner points */
		r->nsplit = 0;
		r->split[r->nsplit++] = r->lo;
		for (int i = 1; i < nc; i++)
			if (start[i + 1] - start[i] >= min_size && x[start[i]] > r->split[r->nsplit - 1])
				r->split[r->nsplit++] = x[start[i]];
		if ((int)r->nsplit - 1 <= maxs) break;
		min_size += min_size / 4 + 1;
	}
	r->split[r->nsplit++] = r->hi;
	free(x);
	free(start);
	return 0;
}

/* ---- Theta for every pair of split points, on a pool of threads ---- */

struct theta_job {
	size_t i, j;
	struct pat_pattern best;
	double f;
	size_t npos, nevals;
};

struct theta_pool {
	const struct pat_model *m;
	const struct pat_opts *o;
	const struct pat_result *r;
	struct theta_job *jobs;
	size_t njobs;
	bool use_ga;
};

static int run_search(const struct pat_model *m, const struct pat_opts *o, bool use_ga,
		      const uint64_t *pos, size_t npos, uint64_t seed, struct pat_search *s)
{
	memset(s, 0, sizeof(*s));
	s->m = m; s->o = o; s->pos = pos; s->npos = npos; s->seed = seed;
	return use_ga ? pat_ga_run(s) : pat_beam_run(s);
}

static int theta_job(void *ctx, size_t k, void *pos)
{
	struct theta_pool *p = ctx;
	struct theta_job *jb = &p->jobs[k];
	jb->npos = lat_mask(p->m->t, p->m->nw, p->r->split[jb->i], p->r->split[jb->j], pos);
	uint64_t seed = p->o->seed * 0x9e3779b97f4a7c15ULL ^ (jb->i << 20 | jb->j);
	struct pat_search s;
	int rc = run_search(p->m, p->o, p->use_ga, pos, jb->npos, seed, &s);
	jb->best = s.best; jb->f = s.f; jb->nevals = s.nevals;
	return rc;
}

static int theta_all(struct theta_pool *p)
{
	size_t k = p->r->nsplit;
	p->njobs = k * (k - 1) / 2;
	p->jobs = calloc(p->njobs ? p->njobs : 1, sizeof(*p->jobs));
	if (!p->jobs) return -ENOMEM;
	size_t q = 0;
	for (size_t i = 0; i < k; i++)
		for (size_t j = i + 1; j < k; j++) { p->jobs[q].i = i; p->jobs[q].j = j; q++; }
	return pat_pool_run(p->njobs, pat_threads(p->o, p->njobs), (p->m->nw + 1) * sizeof(uint64_t), theta_job, p);
}

/* D(j) = max_{i<j} D(i) + Theta(s_i, s_j); returns the chosen jobs in order. */
static size_t dp_choose(const struct theta_pool *p, size_t *chosen, double *score)
{
	size_t k = p->r->nsplit;
	double *D = malloc(k * sizeof(double));
	size_t *from = malloc(k * sizeof(size_t)), *jobof = malloc(k * sizeof(size_t));
	size_t nch = 0;
	if (!D || !from || !jobof) goto out;
	D[0] = 0;
	for (size_t j = 1; j < k; j++) D[j] = -1;
	for (size_t j = 1; j < k; j++)
		for (size_t q = 0; q < p->njobs; q++) {
			const struct theta_job *jb = &p->jobs[q];
			if (jb->j != j) continue;
			double v = D[jb->i] + jb->f;
			if (v > D[j] + 1e-12) { D[j] = v; from[j] = jb->i; jobof[j] = q; }
		}
	*score = D[k - 1];
	size_t tmp[256], nt = 0;
	for (size_t j = k - 1; j > 0 && nt < 256; j = from[j]) tmp[nt++] = jobof[j];
	while (nt) chosen[nch++] = tmp[--nt];
out:
	free(D); free(from); free(jobof);
	return nch;
}

/* ---- items: one per chosen sub-interval, merged in set modes ---- */

struct work_item {
	size_t nseg;
	size_t seg[PAT_MAXSEG];            /* jobs (sub-intervals) it covers */
	struct pat_pattern p;
	double f;
	size_t npos;
	bool dead;
};

/* RPCs whose condition leaves out the RPC's main interval: the RPCs the
 * pattern says are slower (or faster) than usual. */
static int signature(const struct pat_model *m, const struct pat_pattern *p, uint16_t *sig)
{
	int n = 0;
	for (int k = 0; k < p->n; k++) {
		const struct pat_cond *c = &p->c[k];
		uint16_t mi = m->main_iv[c->rpc];
		if (!(c->lo <= mi && c->hi > mi)) sig[n++] = c->rpc;
	}
	for (int a = 1; a < n; a++)                /* insertion sort */
		for (int b = a; b > 0 && sig[b - 1] > sig[b]; b--) {
			uint16_t t = sig[b]; sig[b] = sig[b - 1]; sig[b - 1] = t;
		}
	return n;
}

static void seg_mask(const struct theta_pool *p, const struct work_item *w, uint64_t *pos,
		     uint64_t *tmp, size_t *npos)
{
	size_t nw = p->m->nw;
	memset(pos, 0, nw * sizeof(uint64_t));
	*npos = 0;
	for (size_t s = 0; s < w->nseg; s++) {
		const struct theta_job *jb = &p->jobs[w->seg[s]];
		*npos += lat_mask(p->m->t, nw, p->r->split[jb->i], p->r->split[jb->j], tmp);
		for (size_t i = 0; i < nw; i++) pos[i] |= tmp[i];
	}
}

static int merge_items(const struct theta_pool *p, struct work_item *it, size_t n, size_t *nevals)
{
	const struct pat_model *m = p->m;
	uint64_t *pos = malloc((m->nw + 1) * sizeof(uint64_t));
	uint64_t *tmp = malloc((m->nw + 1) * sizeof(uint64_t));
	int rc = pos && tmp ? 0 : -ENOMEM;
	uint16_t sa[PAT_MAXCOND], sb[PAT_MAXCOND];
	for (size_t a = 0; a < n && !rc; a++) {
		if (it[a].dead || it[a].f <= 0) continue;
		int na = signature(m, &it[a].p, sa);
		if (na == 0) continue;
		struct work_item g = it[a];
		double wsum = it[a].f * (double)it[a].npos;
		size_t members[PAT_MAXSEG], nm = 0;
		for (size_t b = a + 1; b < n; b++) {
			if (it[b].dead || it[b].f <= 0 || g.nseg + it[b].nseg > PAT_MAXSEG) continue;
			if (signature(m, &it[b].p, sb) != na || memcmp(sa, sb, (size_t)na * sizeof(sa[0])))
				continue;
			for (size_t s = 0; s < it[b].nseg; s++) g.seg[g.nseg++] = it[b].seg[s];
			wsum += it[b].f * (double)it[b].npos;
			members[nm++] = b;
		}
		if (nm == 0) continue;
		size_t npos;
		seg_mask(p, &g, pos, tmp, &npos);
		struct pat_search s;
		rc = run_search(m, p->o, p->use_ga, pos, npos, p->o->seed ^ (0xabcdefULL + a), &s);
		*nevals += s.nevals;
		if (rc || s.f < wsum / (double)npos - 0.05) continue;
		g.p = s.best; g.f = s.f; g.npos = npos;
		it[a] = g;
		for (size_t k = 0; k < nm; k++) it[members[k]].dead = true;
	}
	free(pos); free(tmp);
	return rc;
}

/* Median latency of the requests in set. */
static double median_lat(const struct pat_table *t, const uint64_t *set, size_t nw, double *buf)
{
	size_t k = 0;
	for (size_t w = 0; w < nw; w++)
		for (uint64_t x = set[w]; x; x &= x - 1)
			buf[k++] = t->lat[w * 64 + (size_t)__builtin_ctzll(x)];
	qsort(buf, k, sizeof(double), cmp_double);
	return k ? (k % 2 ? buf[k / 2] : (buf[k / 2 - 1] + buf[k / 2]) / 2) : NAN;
}

/* Splits a cluster in two when an RPC its pattern does not mention is slow
 * in a large part of it and that part's latency is a distinct mode (median
 * more than 1.5 latency bandwidths higher): two degradations sharing RPCs
 * whose latency modes the split points did not separate. Noise on an RPC
 * that does not change the latency (asynchronous calls) never splits. */
static int split_one(const struct theta_pool *p, struct work_item *w, struct work_item *out,
		     double sigma, uint64_t *pos, uint64_t *memb, uint64_t *part, uint64_t *tmp, double *buf)
{
	const struct pat_model *m = p->m;
	size_t nw = m->nw, npos;
	if (w->p.n >= PAT_MAXCOND) return 0;
	seg_mask(p, w, pos, tmp, &npos);
	pat_match(m, &w->p, memb);
	for (size_t i = 0; i < nw; i++) memb[i] &= pos[i];
	size_t min_size = (size_t)ceil(p->o->min_cluster_frac * (double)p->r->npos);
	if (min_size < 5) min_size = 5;
	double best = 1.5 * sigma;
	int bj = -1;
	for (size_t j = 0; j < m->nrpc; j++) {
		uint16_t mi = m->main_iv[j];
		if (pat_find_rpc(&w->p, (unsigned)j) >= 0 || m->nthr[j] < 3 || mi + 2 >= m->nthr[j]) continue;
		struct pat_pattern slow = { .n = 1, .c = { { (uint16_t)j, (uint16_t)(mi + 1), (uint16_t)(m->nthr[j] - 1) } } };
		struct pat_pattern usual = { .n = 1, .c = { { (uint16_t)j, 0, (uint16_t)(mi + 1) } } };
		pat_match(m, &slow, part);
		size_t ns = 0, nu = 0;
		for (size_t i = 0; i < nw; i++) { part[i] &= memb[i]; ns += (size_t)pat_pop64(part[i]); }
		if (ns < min_size) continue;
		double ms = median_lat(m->t, part, nw, buf);
		pat_match(m, &usual, part);
		for (size_t i = 0; i < nw; i++) { part[i] &= memb[i]; nu += (size_t)pat_pop64(part[i]); }
		if (nu < min_size) continue;
		double mu = median_lat(m->t, part, nw, buf);
		if (ms - mu > best) { best = ms - mu; bj = (int)j; }
	}
	if (bj < 0) return 0;
	uint16_t mi = m->main_iv[bj];
	*out = *w;
	w->p.c[w->p.n++] = (struct pat_cond){ (uint16_t)bj, 0, (uint16_t)(mi + 1) };
	out->p.c[out->p.n++] = (struct pat_cond){ (uint16_t)bj, (uint16_t)(mi + 1), (uint16_t)(m->nthr[bj] - 1) };
	pat_canon(&w->p);
	pat_canon(&out->p);
	return 1;
}

/* Counts of the requests matching q: over all, inside I, and inside I but
 * also in another item's cluster (others). */
static void prune_counts(const struct pat_model *m, const struct pat_pattern *q, const uint64_t *imask,
			 const uint64_t *others, uint64_t *buf, size_t *all, size_t *in, size_t *shared)
{
	pat_match(m, q, buf);
	*all = *in = *shared = 0;
	for (size_t i = 0; i < m->nw; i++) {
		*all += (size_t)pat_pop64(buf[i]);
		*in += (size_t)pat_pop64(buf[i] & imask[i]);
		*shared += (size_t)pat_pop64(buf[i] & imask[i] & others[i]);
	}
}

/* A cluster is every request of I its pattern matches. Conditions that only
 * say "usual time" were picked by the sub-interval search to keep out
 * requests of the same degradation that fall into a neighbouring
 * sub-interval; over all of I they cost recall. Such a condition is dropped
 * when the pattern stays as precise over I (within 0.01) and does not take
 * requests of other clusters (within 1 %). */
static int prune_items(const struct theta_pool *p, struct work_item *it, size_t n)
{
	const struct pat_model *m = p->m;
	size_t nw = m->nw;
	uint64_t *b = malloc(3 * (nw + 1) * sizeof(uint64_t));
	if (!b) return -ENOMEM;
	uint64_t *imask = b, *others = b + nw + 1, *buf = b + 2 * (nw + 1);
	lat_mask(m->t, nw, p->r->lo, p->r->hi, imask);
	for (size_t a = 0; a < n; a++) {
		if (it[a].dead || it[a].f <= 0) continue;
		memset(others, 0, nw * sizeof(uint64_t));
		for (size_t o = 0; o < n; o++) {
			if (o == a || it[o].dead || it[o].f <= 0) continue;
			pat_match(m, &it[o].p, buf);
			for (size_t i = 0; i < nw; i++) others[i] |= buf[i] & imask[i];
		}
		bool changed = true;
		while (changed && it[a].p.n > 1) {
			changed = false;
			size_t all, in, sh;
			prune_counts(m, &it[a].p, imask, others, buf, &all, &in, &sh);
			double prec = all ? (double)in / (double)all : 0;
			for (int k = 0; k < it[a].p.n && !changed; k++) {
				const struct pat_cond *c = &it[a].p.c[k];
				uint16_t mi = m->main_iv[c->rpc];
				if (!(c->lo <= mi && c->hi > mi)) continue;       /* deviating: keep */
				struct pat_pattern q = it[a].p;
				q.c[k] = q.c[--q.n];
				if (!pat_deviates(m, &q)) continue;
				size_t all2, in2, sh2;
				prune_counts(m, &q, imask, others, buf, &all2, &in2, &sh2);
				double prec2 = all2 ? (double)in2 / (double)all2 : 0;
				if (prec2 >= prec - 0.01 && (double)sh2 <= (double)sh + 0.01 * (double)in2) {
					pat_canon(&q);
					it[a].p = q;
					changed = true;
				}
			}
		}
	}
	free(b);
	return 0;
}

static int split_items(const struct theta_pool *p, struct work_item **itp, size_t *np)
{
	const struct pat_model *m = p->m;
	size_t n = *np, cap = 2 * n + 1;
	struct work_item *it = realloc(*itp, cap * sizeof(*it));
	if (!it) return -ENOMEM;
	*itp = it;
	uint64_t *b = malloc(4 * (m->nw + 1) * sizeof(uint64_t));
	double *buf = malloc((m->n + 1) * sizeof(double));
	if (!b || !buf) { free(b); free(buf); return -ENOMEM; }
	/* the scale of "a distinct latency mode": the robust spread of all
	 * requests (the latency bandwidth of the set modes unless overridden) */
	memcpy(buf, m->t->lat, m->n * sizeof(double));
	qsort(buf, m->n, sizeof(double), cmp_double);
	double sigma = pat_ms_mad_sigma(buf, m->n);
	if (!(sigma > 0)) sigma = p->r->lat_bw;
	for (size_t a = 0; a < n; a++) {     /* one split per cluster of the DP/merge */
		if (it[a].dead || it[a].f <= 0) continue;
		struct work_item extra;
		if (split_one(p, &it[a], &extra, sigma, b, b + m->nw + 1, b + 2 * (m->nw + 1),
			      b + 3 * (m->nw + 1), buf))
			it[(*np)++] = extra;
	}
	free(b); free(buf);
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

static int fill_item(const struct theta_pool *p, const struct work_item *w, struct pat_item *out)
{
	const struct pat_model *m = p->m;
	memset(out, 0, sizeof(*out));
	size_t order[PAT_MAXSEG];
	for (size_t s = 0; s < w->nseg; s++) order[s] = w->seg[s];
	qsort(order, w->nseg, sizeof(size_t), cmp_size);
	out->nseg = w->nseg;
	for (size_t s = 0; s < w->nseg; s++) {
		out->seg_lo[s] = p->r->split[p->jobs[order[s]].i];
		out->seg_hi[s] = p->r->split[p->jobs[order[s]].j];
	}
	out->ncond = w->p.n;
	for (int k = 0; k < w->p.n; k++) {
		const struct pat_cond *c = &w->p.c[k];
		out->c[k].rpc = c->rpc;
		out->c[k].lo = m->thr[c->rpc][c->lo];
		out->c[k].hi = m->thr[c->rpc][c->hi];
	}
	uint64_t *pos = malloc((m->nw + 1) * sizeof(uint64_t));
	uint64_t *tmp = malloc((m->nw + 1) * sizeof(uint64_t));
	if (!pos || !tmp) { free(pos); free(tmp); return -ENOMEM; }
	seg_mask(p, w, pos, tmp, &out->npos);
	size_t cnt;
	pat_eval(m, &w->p, pos, &out->tp, &cnt);
	out->fp = cnt - out->tp;
	out->precision = cnt ? (double)out->tp / (double)cnt : 0;
	out->recall = out->npos ? (double)out->tp / (double)out->npos : 0;
	out->f = w->p.n ? pat_fitness(m, &w->p, pos, out->npos) : 0;
	pat_match(m, &w->p, tmp);
	if (set_mode(p->o)) lat_mask(m->t, m->nw, p->r->lo, p->r->hi, pos);   /* cluster: all of I */
	size_t nmem = 0;
	for (size_t i = 0; i < m->nw; i++) nmem += (size_t)pat_pop64(tmp[i] & pos[i]);
	out->members = malloc((nmem ? nmem : 1) * sizeof(size_t));
	if (!out->members) { free(pos); free(tmp); return -ENOMEM; }
	for (size_t i = 0; i < m->n; i++)
		if (w->p.n && (tmp[i / 64] & pos[i / 64]) >> (i % 64) & 1)
			out->members[out->nmembers++] = i;
	free(pos); free(tmp);
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	const struct pat_item *x = a, *y = b;
	return (x->seg_lo[0] > y->seg_lo[0]) - (x->seg_lo[0] < y->seg_lo[0]);
}

static int build_items(struct theta_pool *p, struct pat_result *r, size_t *nevals)
{
	size_t chosen[256];
	size_t nch = dp_choose(p, chosen, &r->dp_score);
	struct work_item *it = calloc(nch ? nch : 1, sizeof(*it));
	if (!it) return -ENOMEM;
	for (size_t k = 0; k < nch; k++) {
		const struct theta_job *jb = &p->jobs[chosen[k]];
		it[k].nseg = 1; it[k].seg[0] = chosen[k];
		it[k].p = jb->best; it[k].f = jb->f; it[k].npos = jb->npos;
	}
	int rc = 0;
	bool merge = p->o->mode == PAT_MODE_SET || p->o->mode == PAT_MODE_GASET;
	if (merge) rc = merge_items(p, it, nch, nevals);
	if (merge && !rc) rc = split_items(p, &it, &nch);
	if (merge && !rc) rc = prune_items(p, it, nch);
	r->items = calloc(nch ? nch : 1, sizeof(*r->items));
	if (!r->items) rc = -ENOMEM;
	for (size_t k = 0; k < nch && !rc; k++) {
		if (it[k].dead || it[k].npos == 0) continue;
		rc = fill_item(p, &it[k], &r->items[r->nitems]);
		if (!rc) r->nitems++;
	}
	qsort(r->items, r->nitems, sizeof(*r->items), cmp_item);
	free(it);
	return rc;
}

/* --mode nsga2: one search over all of I; each pattern of the answer is an
 * item whose sub-interval is I. */
static int nsga2_items(const struct pat_table *t, const struct pat_opts *o, const struct pat_model *m,
		       struct pat_result *r)
{
	r->split = malloc(2 * sizeof(double));
	uint64_t *pos = malloc((m->nw + 1) * sizeof(uint64_t));
	double *buf = malloc((t->nrows + 1) * sizeof(double));
	struct theta_job job = { .i = 0, .j = 1 };
	struct theta_pool p = { .m = m, .o = o, .r = r, .jobs = &job, .njobs = 1 };
	int rc = r->split && pos && buf ? 0 : -ENOMEM;
	if (!rc) {
		r->nsplit = 2;
		r->split[0] = r->lo;
		r->split[1] = r->hi;
		size_t npos = lat_mask(t, m->nw, r->lo, r->hi, pos);
		memcpy(buf, t->lat, t->nrows * sizeof(double));
		qsort(buf, t->nrows, sizeof(double), cmp_double);
		double sigma = pat_ms_mad_sigma(buf, t->nrows);
		struct pat_pattern best[4];
		int nb = 0;
		rc = pat_nsga2_run(m, o, pos, npos, sigma, o->seed * 0x9e3779b97f4a7c15ULL + 7, best, &nb,
				   &r->nevals);
		r->items = calloc((size_t)nb + 1, sizeof(*r->items));
		if (!rc && !r->items) rc = -ENOMEM;
		for (int k = 0; k < nb && !rc; k++) {
			struct work_item w = { .nseg = 1, .seg = { 0 }, .p = best[k] };
			rc = fill_item(&p, &w, &r->items[r->nitems]);
			if (!rc) r->nitems++;
		}
	}
	free(pos); free(buf);
	return rc;
}

static int analyze_once(const struct pat_table *t, const struct pat_opts *o, struct pat_result *r,
			char *err, size_t errlen)
{
	size_t nw = (t->nrows + 63) / 64;
	uint64_t *pos = malloc(nw * sizeof(uint64_t));
	if (!pos) return -ENOMEM;
	r->npos = lat_mask(t, nw, r->lo, r->hi, pos);
	free(pos);
	if (r->npos == 0) {
		snprintf(err, errlen, "no request has a latency in [%g ms, %g ms)", r->lo, r->hi);
		return -ENOENT;
	}
	struct pat_model m;
	int rc = pat_model_build(&m, t, r->npos, o, err, errlen);
	if (rc) return rc;
	r->nthr_total = m.nthr_total;
	if (o->mode == PAT_MODE_NSGA2 || o->mode == PAT_MODE_COVER) {
		rc = o->mode == PAT_MODE_NSGA2 ? nsga2_items(t, o, &m, r) : pat_cover_items(&m, o, r);
		if (rc) snprintf(err, errlen, "pattern search failed: %s", strerror(-rc));
		pat_model_free(&m);
		return rc;
	}
	rc = split_points(t, o, r);
	struct theta_pool p = { .m = &m, .o = o, .r = r,
		.use_ga = o->mode == PAT_MODE_ICPE || o->mode == PAT_MODE_GASET };
	if (!rc) rc = theta_all(&p);
	for (size_t k = 0; k < p.njobs; k++) r->nevals += p.jobs[k].nevals;
	if (!rc) rc = build_items(&p, r, &r->nevals);
	if (rc) snprintf(err, errlen, "pattern search failed: %s", strerror(-rc));
	free(p.jobs);
	pat_model_free(&m);
	return rc;
}

static bool item_matches(const struct pat_table *t, const struct pat_item *it, size_t row)
{
	for (int k = 0; k < it->ncond; k++) {
		double v = t->col[it->c[k].rpc][row];
		if (isnan(v) || v < it->c[k].lo || v >= it->c[k].hi) return false;
	}
	return it->ncond > 0;
}

/* The automatic I starts at a latency mode, which cuts off the fast end of
 * a degraded mode that overlaps the main one. Where the patterns found
 * show up is better evidence: the 2nd percentile of the latencies of the
 * requests matching a good pattern (F >= 0.5), but never below the main
 * mode's median + 1 robust sigma. Returns the new lower bound or NAN. */
static double refined_lo(const struct pat_table *t, const struct pat_result *r)
{
	double *x = malloc((t->nrows + 1) * sizeof(double));
	if (!x) return NAN;
	memcpy(x, t->lat, t->nrows * sizeof(double));
	qsort(x, t->nrows, sizeof(double), cmp_double);
	double floor_lo = x[t->nrows / 2] + pat_ms_mad_sigma(x, t->nrows), lo = r->lo;
	for (size_t k = 0; k < r->nitems; k++) {
		if (r->items[k].f < 0.5) continue;
		size_t n = 0;
		for (size_t i = 0; i < t->nrows; i++)
			if (item_matches(t, &r->items[k], i)) x[n++] = t->lat[i];
		if (n < 10) continue;
		qsort(x, n, sizeof(double), cmp_double);
		double q = x[n / 50];
		if (q < lo) lo = q;
	}
	free(x);
	if (lo < floor_lo) lo = floor_lo;
	return lo < r->lo - 1e-9 ? lo : NAN;
}

/* The lowest automatic lower bound: the median latency + 1 robust sigma. */
static double latency_floor(const struct pat_table *t)
{
	double *x = malloc((t->nrows + 1) * sizeof(double));
	if (!x) return NAN;
	memcpy(x, t->lat, t->nrows * sizeof(double));
	qsort(x, t->nrows, sizeof(double), cmp_double);
	double v = x[t->nrows / 2] + pat_ms_mad_sigma(x, t->nrows);
	free(x);
	return v;
}

int pat_analyze(const struct pat_table *t, const struct pat_opts *o, struct pat_result *r,
		char *err, size_t errlen)
{
	double t0 = now_s();
	memset(r, 0, sizeof(*r));
	r->nrows = t->nrows;
	if (t->nrows < 2) { snprintf(err, errlen, "need at least 2 requests, have %zu", t->nrows); return -EINVAL; }
	int rc;
	if (o->have_interval) {
		r->lo = o->lo; r->hi = o->hi;
	} else {
		rc = auto_interval(t, o, &r->lo, &r->hi, err, errlen);
		if (rc) return rc;
		r->auto_interval = true;
		/* cover: every request slower than median + 1 robust sigma. Its
		 * patterns need a strong deviation and mostly matches inside I,
		 * so the nominal requests a wide I takes in cost it little, and
		 * the lower end of a degraded mode that overlaps the main one is
		 * not cut off (the other modes refine I from their patterns) */
		double fl = o->mode == PAT_MODE_COVER ? latency_floor(t) : NAN;
		if (fl < r->lo) r->lo = fl;
	}
	rc = analyze_once(t, o, r, err, errlen);
	if (!rc && r->auto_interval && o->mode != PAT_MODE_ICPE && o->mode != PAT_MODE_COVER) {
		double lo = refined_lo(t, r);
		if (!isnan(lo)) {
			struct pat_result again;
			memset(&again, 0, sizeof(again));
			again.nrows = t->nrows; again.lo = lo; again.hi = r->hi; again.auto_interval = true;
			again.nevals = r->nevals;
			if (analyze_once(t, o, &again, err, errlen) == 0) {
				pat_result_free(r);
				*r = again;
			} else {
				pat_result_free(&again);
				err[0] = 0;
			}
		}
	}
	r->seconds = now_s() - t0;
	return rc;
}

void pat_result_free(struct pat_result *r)
{
	for (size_t k = 0; k < r->nitems; k++) free(r->items[k].members);
	free(r->items);
	free(r->split);
	memset(r, 0, sizeof(*r));
}

static void fmt_ms(char *b, size_t n, double v)
{
	if (fabs(v) >= 100) snprintf(b, n, "%.0f ms", v);
	else if (fabs(v) >= 1) snprintf(b, n, "%.3g ms", v);
	else snprintf(b, n, "%.3g µs", v * 1000);
}

void pat_item_format(const struct pat_table *t, const struct pat_item *it, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	if (it->ncond == 0) { snprintf(buf, len, "(no pattern)"); return; }
	for (int k = 0; k < it->ncond && o < len; k++) {
		char a[32], b[32];
		fmt_ms(a, sizeof(a), it->c[k].lo);
		fmt_ms(b, sizeof(b), it->c[k].hi);
		int w = snprintf(buf + o, len - o, "%s%s ∈ [%s, %s)", k ? " ∧ " : "",
				 t->rpc[it->c[k].rpc], a, b);
		if (w < 0) break;
		o += (size_t)w;
	}
}
