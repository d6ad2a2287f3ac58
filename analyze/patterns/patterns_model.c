/* Precomputation of the ICPE paper §3.2: per RPC the mean-shift thresholds
 * and, per threshold, one bitset over all requests ("called and e >= t").
 * A condition [lo, hi) is B(lo) ANDNOT B(hi); a pattern is the AND of its
 * conditions; tp and matches are popcounts. Positives are a bitset too, so
 * one precomputation serves every sub-interval of the DP. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "patterns_int.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void rpc_stats(struct pat_model *m, size_t j, const double *sorted, size_t n)
{
	m->med[j] = sorted[n / 2];
	m->sig[j] = pat_ms_mad_sigma(sorted, n);
	double q = INFINITY;
	for (size_t i = 1; i < n; i++)
		if (sorted[i] > sorted[i - 1] && sorted[i] - sorted[i - 1] < q) q = sorted[i] - sorted[i - 1];
	m->quantum[j] = isinf(q) ? 0 : q;
}

/* Thresholds and bitsets of RPC j. */
static int model_rpc(struct pat_model *m, size_t j, double *buf, size_t min_size,
		     const struct pat_opts *o)
{
	const double *col = m->t->col[j];
	size_t nv = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!isnan(col[i])) buf[nv++] = col[i];
	if (nv == 0) return 0;
	qsort(buf, nv, sizeof(double), cmp_double);
	rpc_stats(m, j, buf, nv);
	double bw = o->bandwidth > 0 ? o->bandwidth : pat_ms_auto_bw(o, buf, nv);
	double *thr;
	enum pat_small small = o->mode == PAT_MODE_COVER ? PAT_SMALL_NEAREST : PAT_SMALL_BELOW;
	int nt = pat_ms_thresholds(buf, nv, bw, min_size, small, &thr);
	if (nt < 0) return nt;
	if (nt > 0xfff0) nt = 0xfff0;
	m->thr[j] = thr;
	m->nthr[j] = (uint16_t)nt;
	uint64_t *b = calloc((size_t)nt * m->nw, sizeof(uint64_t));
	if (!b) return -ENOMEM;
	m->bits[j] = b;
	/* interval index of every request, then one bit per threshold below it */
	size_t *count = calloc((size_t)nt, sizeof(size_t));
	if (!count) return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		double v = col[i];
		if (isnan(v)) continue;
		for (int k = 0; k < nt && v >= thr[k]; k++) {
			b[(size_t)k * m->nw + i / 64] |= 1ULL << (i % 64);
			if (k + 1 == nt || v < thr[k + 1]) count[k]++;
		}
	}
	size_t best = 0;
	for (int k = 1; k < nt; k++)
		if (count[k] > count[best]) best = k;
	m->main_iv[j] = (uint16_t)best;
	free(count);
	m->ivmed[j] = malloc((size_t)nt * sizeof(double));
	if (!m->ivmed[j]) return -ENOMEM;
	size_t a = 0;
	for (int k = 0; k < nt; k++) {
		size_t b = a;
		while (b < nv && (k + 1 == nt || buf[b] < thr[k + 1])) b++;
		m->ivmed[j][k] = b > a ? buf[(a + b) / 2] : NAN;
		a = b;
	}
	return 0;
}

static int model_candidates(struct pat_model *m)
{
	size_t n = 0;
	for (size_t j = 0; j < m->nrpc; j++)
		n += m->nthr[j] ? (size_t)m->nthr[j] * (m->nthr[j] - 1) / 2 : 0;
	m->cand = malloc((n ? n : 1) * sizeof(*m->cand));
	m->cand_first = malloc((m->nrpc + 1) * sizeof(size_t));
	if (!m->cand || !m->cand_first) return -ENOMEM;
	m->ncand = 0;
	for (size_t j = 0; j < m->nrpc; j++) {
		m->cand_first[j] = m->ncand;
		for (unsigned lo = 0; lo + 1 < m->nthr[j]; lo++)
			for (unsigned hi = lo + 1; hi < m->nthr[j]; hi++) {
				struct pat_cond c = { (uint16_t)j, (uint16_t)lo, (uint16_t)hi };
				if (!pat_cond_whole(m, &c)) m->cand[m->ncand++] = c;
			}
	}
	m->cand_first[m->nrpc] = m->ncand;
	return 0;
}

/* The RPCs are independent (sort, mean shift, bitsets: most of the time
 * of an analysis at 100k requests): built on a pool of --threads threads. */
struct build_ctx {
	struct pat_model *m;
	const struct pat_opts *o;
	size_t min_size;
};

static int build_job(void *ctx, size_t j, void *buf)
{
	struct build_ctx *c = ctx;
	return model_rpc(c->m, j, buf, c->min_size, c->o);
}

int pat_model_build(struct pat_model *m, const struct pat_table *t, size_t npos,
		    const struct pat_opts *o, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->t = t;
	m->n = t->nrows;
	m->nw = (t->nrows + 63) / 64;
	m->lastmask = t->nrows % 64 ? (1ULL << (t->nrows % 64)) - 1 : ~0ULL;
	m->nrpc = t->nrpc;
	if (t->nrpc > 0xfff0) {
		snprintf(err, errlen, "too many RPC columns (%zu)", t->nrpc);
		return -EINVAL;
	}
	m->nthr = calloc(t->nrpc + 1, sizeof(*m->nthr));
	m->thr = calloc(t->nrpc + 1, sizeof(*m->thr));
	m->bits = calloc(t->nrpc + 1, sizeof(*m->bits));
	m->main_iv = calloc(t->nrpc + 1, sizeof(*m->main_iv));
	m->med = calloc(t->nrpc + 1, sizeof(double));
	m->sig = calloc(t->nrpc + 1, sizeof(double));
	m->quantum = calloc(t->nrpc + 1, sizeof(double));
	m->ivmed = calloc(t->nrpc + 1, sizeof(*m->ivmed));
	int rc = 0;
	if (!m->nthr || !m->thr || !m->bits || !m->main_iv || !m->med || !m->sig || !m->quantum || !m->ivmed)
		rc = -ENOMEM;
	size_t min_size = (size_t)ceil(o->min_cluster_frac * (double)npos);
	if (min_size < 1) min_size = 1;
	struct build_ctx bc = { .m = m, .o = o, .min_size = min_size };
	if (!rc) rc = pat_pool_run(m->nrpc, pat_threads(o, m->nrpc), (m->n + 1) * sizeof(double), build_job, &bc);
	for (size_t j = 0; j < t->nrpc && !rc; j++) m->nthr_total += m->nthr[j];
	if (!rc) rc = model_candidates(m);
	if (rc) {
		snprintf(err, errlen, "out of memory building the threshold bitsets");
		pat_model_free(m);
	}
	return rc;
}

void pat_model_free(struct pat_model *m)
{
	for (size_t j = 0; j < m->nrpc; j++) {
		if (m->thr) free(m->thr[j]);
		if (m->bits) free(m->bits[j]);
	}
	for (size_t j = 0; m->ivmed && j < m->nrpc; j++) free(m->ivmed[j]);
	free(m->nthr); free(m->thr); free(m->bits); free(m->main_iv);
	free(m->med); free(m->sig); free(m->quantum); free(m->ivmed);
	free(m->cand); free(m->cand_first);
	memset(m, 0, sizeof(*m));
}

bool pat_cond_whole(const struct pat_model *m, const struct pat_cond *c)
{
	return c->lo == 0 && c->hi + 1 == m->nthr[c->rpc];
}

bool pat_deviates(const struct pat_model *m, const struct pat_pattern *p)
{
	for (int k = 0; k < p->n; k++) {
		uint16_t mi = m->main_iv[p->c[k].rpc];
		if (!(p->c[k].lo <= mi && p->c[k].hi > mi)) return true;
	}
	return false;
}

static inline uint64_t match_word(const struct pat_model *m, const struct pat_pattern *p, size_t w);

double pat_search_fitness(const struct pat_search *s, const struct pat_pattern *p)
{
	if (s->strong) {
		bool strong = false;
		for (int k = 0; k < p->n && !strong; k++) strong = p->c[k].lo >= s->strong[p->c[k].rpc];
		if (!strong) return 0;
	} else if (s->o->mode != PAT_MODE_ICPE && !pat_deviates(s->m, p)) {
		return 0;
	}
	if (!s->ignore) return pat_fitness(s->m, p, s->pos, s->npos);
	if (p->n == 0) return 0;
	for (int k = 0; k < p->n; k++)
		if (pat_cond_whole(s->m, &p->c[k])) return 0;
	size_t tp = 0, cnt = 0;
	for (size_t w = 0; w < s->m->nw; w++) {
		uint64_t x = match_word(s->m, p, w) & ~s->ignore[w];
		cnt += (size_t)pat_pop64(x);
		tp += (size_t)pat_pop64(x & s->pos[w]);
	}
	return tp ? 2.0 * (double)tp / (double)(s->npos + cnt) : 0;
}

static inline uint64_t match_word(const struct pat_model *m, const struct pat_pattern *p, size_t w)
{
	uint64_t x = w + 1 == m->nw ? m->lastmask : ~0ULL;
	for (int k = 0; k < p->n; k++) {
		const struct pat_cond *c = &p->c[k];
		const uint64_t *b = m->bits[c->rpc];
		x &= b[(size_t)c->lo * m->nw + w] & ~b[(size_t)c->hi * m->nw + w];
	}
	return x;
}

void pat_eval(const struct pat_model *m, const struct pat_pattern *p, const uint64_t *pos,
	      size_t *tp, size_t *cnt)
{
	size_t a = 0, c = 0;
	for (size_t w = 0; w < m->nw; w++) {
		uint64_t x = match_word(m, p, w);
		c += (size_t)pat_pop64(x);
		a += (size_t)pat_pop64(x & pos[w]);
	}
	*tp = a;
	*cnt = c;
}

void pat_match(const struct pat_model *m, const struct pat_pattern *p, uint64_t *out)
{
	for (size_t w = 0; w < m->nw; w++) out[w] = match_word(m, p, w);
}

double pat_fitness(const struct pat_model *m, const struct pat_pattern *p,
		   const uint64_t *pos, size_t npos)
{
	if (p->n == 0) return 0;     /* "every request" explains nothing */
	for (int k = 0; k < p->n; k++)
		if (pat_cond_whole(m, &p->c[k])) return 0;
	size_t tp, cnt;
	pat_eval(m, p, pos, &tp, &cnt);
	if (tp == 0) return 0;
	/* 2PR/(P+R) with P = tp/cnt, R = tp/npos */
	return 2.0 * (double)tp / (double)(npos + cnt);
}

static int cmp_cond(const void *a, const void *b)
{
	const struct pat_cond *x = a, *y = b;
	return (int)x->rpc - (int)y->rpc;
}

void pat_canon(struct pat_pattern *p)
{
	if (p->n > 1) qsort(p->c, (size_t)p->n, sizeof(p->c[0]), cmp_cond);
}

uint64_t pat_hash(const struct pat_pattern *p)
{
	uint64_t h = 0x84222325cbf29ce4ULL ^ (uint64_t)p->n;
	for (int k = 0; k < p->n; k++) {
		uint64_t v = ((uint64_t)p->c[k].rpc << 32) | ((uint64_t)p->c[k].lo << 16) | p->c[k].hi;
		h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}

int pat_find_rpc(const struct pat_pattern *p, unsigned rpc)
{
	for (int k = 0; k < p->n; k++)
		if (p->c[k].rpc == rpc) return k;
	return -1;
}

int pat_memo_init(struct pat_memo *mm, size_t cap)
{
	size_t c = 1024;
	while (c < cap) c <<= 1;
	mm->cap = c; mm->used = 0;
	mm->key = calloc(c, sizeof(uint64_t));
	mm->val = malloc(c * sizeof(double));
	return mm->key && mm->val ? 0 : -ENOMEM;
}

void pat_memo_free(struct pat_memo *mm)
{
	free(mm->key); free(mm->val);
	memset(mm, 0, sizeof(*mm));
}

double pat_memo_get(const struct pat_memo *mm, uint64_t h)
{
	for (size_t i = h & (mm->cap - 1);; i = (i + 1) & (mm->cap - 1)) {
		if (mm->key[i] == h) return mm->val[i];
		if (mm->key[i] == 0) return NAN;
	}
}

static void memo_grow(struct pat_memo *mm)
{
	struct pat_memo n;
	if (pat_memo_init(&n, mm->cap * 2)) { pat_memo_free(&n); return; }
	for (size_t i = 0; i < mm->cap; i++)
		if (mm->key[i]) pat_memo_put(&n, mm->key[i], mm->val[i]);
	pat_memo_free(mm);
	*mm = n;
}

void pat_memo_put(struct pat_memo *mm, uint64_t h, double v)
{
	if ((mm->used + 1) * 2 > mm->cap) memo_grow(mm);
	if ((mm->used + 1) * 10 > mm->cap * 9) return;   /* grow failed: stop caching */
	size_t i = h & (mm->cap - 1);
	while (mm->key[i] && mm->key[i] != h) i = (i + 1) & (mm->cap - 1);
	if (!mm->key[i]) mm->used++;
	mm->key[i] = h;
	mm->val[i] = v;
}
