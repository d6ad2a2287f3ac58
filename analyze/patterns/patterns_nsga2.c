/* --mode nsga2: a DeLag-style multi-objective search (Traini & Cortellessa,
 * TSE 2022) over *sets* of up to NS_K patterns on the whole interval I, no
 * split points and no DP. Objectives, all maximised: precision and recall
 * of the union of the patterns' matches w.r.t. the requests of I, and the
 * latency dissimilarity of the clusters (over pairs of patterns, the
 * smallest distance between the median latencies of their clusters, in
 * robust sigmas of all latencies, capped at 3, times the share of the
 * smaller cluster that is not in the other; 0 for a single pattern). NSGA-II: fast
 * non-dominated sorting, crowding distance, binary tournaments. The answer
 * is the first-front set of best union F (ties within 0.01: more
 * dissimilar, then fewer patterns). Our own reading of the idea, not the
 * authors' code. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "patterns_int.h"

#define NS_K 4
#define NS_NOBJ 3

struct ns_ind {
	int np;
	struct pat_pattern p[NS_K];
	double obj[NS_NOBJ];      /* precision, recall, dissimilarity */
	double f;                 /* F of the union */
	int rank;
	double crowd;
};

struct ns {
	const struct pat_model *m;
	const struct pat_opts *o;
	const uint64_t *pos;
	size_t npos;
	double sigma;
	uint64_t rng;
	struct pat_memo med;      /* pattern hash -> median latency of its cluster */
	uint64_t *u, *b;          /* b: NS_K match bitsets of nw words */
	double *buf;
	size_t ndev;
	struct pat_cond *dev;     /* conditions leaving out their RPC's main interval */
	size_t nevals;
};

static int cmp_lat(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double cluster_median(struct ns *s, const struct pat_pattern *p, const uint64_t *match)
{
	uint64_t h = pat_hash(p);
	double v = pat_memo_get(&s->med, h);
	if (!isnan(v)) return v;
	size_t k = 0;
	for (size_t w = 0; w < s->m->nw; w++)
		for (uint64_t x = match[w] & s->pos[w]; x; x &= x - 1)
			s->buf[k++] = s->m->t->lat[w * 64 + (size_t)__builtin_ctzll(x)];
	if (k == 0) { pat_memo_put(&s->med, h, -1); return -1; }
	qsort(s->buf, k, sizeof(double), cmp_lat);
	v = s->buf[k / 2];
	pat_memo_put(&s->med, h, v);
	return v;
}

static bool valid_pattern(const struct pat_model *m, const struct pat_pattern *p)
{
	if (p->n == 0 || !pat_deviates(m, p)) return false;
	for (int k = 0; k < p->n; k++)
		if (pat_cond_whole(m, &p->c[k])) return false;
	return true;
}

static void ns_eval(struct ns *s, struct ns_ind *x)
{
	const struct pat_model *m = s->m;
	double med[NS_K];
	memset(s->u, 0, m->nw * sizeof(uint64_t));
	memset(x->obj, 0, sizeof(x->obj));
	x->f = 0;
	s->nevals++;
	size_t size[NS_K];
	for (int k = 0; k < x->np; k++) {
		uint64_t *bk = s->b + (size_t)k * m->nw;
		pat_canon(&x->p[k]);
		if (!valid_pattern(m, &x->p[k])) return;
		pat_match(m, &x->p[k], bk);
		size[k] = 0;
		for (size_t w = 0; w < m->nw; w++) {
			s->u[w] |= bk[w];
			size[k] += (size_t)pat_pop64(bk[w] & s->pos[w]);
		}
		med[k] = cluster_median(s, &x->p[k], bk);
		if (med[k] < 0) return;              /* a pattern with no request of I */
	}
	size_t tp = 0, cnt = 0;
	for (size_t w = 0; w < m->nw; w++) {
		cnt += (size_t)pat_pop64(s->u[w]);
		tp += (size_t)pat_pop64(s->u[w] & s->pos[w]);
	}
	if (!tp) return;
	/* distinct latency behaviour AND distinct requests: a cluster nested in
	 * another one is no second pattern */
	double dis = x->np > 1 ? 3 : 0;
	for (int a = 0; a < x->np; a++)
		for (int b = a + 1; b < x->np; b++) {
			size_t both = 0;
			const uint64_t *ba = s->b + (size_t)a * m->nw, *bb = s->b + (size_t)b * m->nw;
			for (size_t w = 0; w < m->nw; w++)
				both += (size_t)pat_pop64(ba[w] & bb[w] & s->pos[w]);
			size_t small = size[a] < size[b] ? size[a] : size[b];
			double apart = 1 - (small ? (double)both / (double)small : 1);
			dis = fmin(dis, fmin(3, fabs(med[a] - med[b]) / s->sigma) * apart);
		}
	x->obj[0] = (double)tp / (double)cnt;
	x->obj[1] = (double)tp / (double)s->npos;
	x->obj[2] = dis;
	x->f = 2.0 * (double)tp / (double)(s->npos + cnt);
}

static struct pat_pattern random_pattern(struct ns *s)
{
	struct pat_pattern p = { .n = 1 };
	p.c[0] = s->dev[pat_rng_below(&s->rng, (uint32_t)s->ndev)];
	if (pat_rng_below(&s->rng, 2)) {
		struct pat_cond c = s->m->cand[pat_rng_below(&s->rng, (uint32_t)s->m->ncand)];
		if (pat_find_rpc(&p, c.rpc) < 0) p.c[p.n++] = c;
	}
	return p;
}

/* The ICPE mutation on one pattern: add, remove or move an endpoint. */
static void mutate_pattern(struct ns *s, struct pat_pattern *p)
{
	const struct pat_model *m = s->m;
	switch (pat_rng_below(&s->rng, 3)) {
	case 0: {
		struct pat_cond c = m->cand[pat_rng_below(&s->rng, (uint32_t)m->ncand)];
		if (p->n < PAT_MAXCOND && pat_find_rpc(p, c.rpc) < 0) p->c[p->n++] = c;
		break;
	}
	case 1:
		if (p->n > 1) { int k = (int)pat_rng_below(&s->rng, (uint32_t)p->n); p->c[k] = p->c[--p->n]; }
		break;
	default: {
		struct pat_cond *c = &p->c[pat_rng_below(&s->rng, (uint32_t)p->n)];
		uint16_t v = (uint16_t)pat_rng_below(&s->rng, m->nthr[c->rpc]), lo = c->lo, hi = c->hi;
		if (pat_rng_below(&s->rng, 2)) lo = v; else hi = v;
		if (lo > hi) { uint16_t t = lo; lo = hi; hi = t; }
		if (lo != hi) { c->lo = lo; c->hi = hi; }
	}
	}
}

static void mutate(struct ns *s, struct ns_ind *x)
{
	switch (pat_rng_below(&s->rng, 3)) {
	case 0:
		mutate_pattern(s, &x->p[pat_rng_below(&s->rng, (uint32_t)x->np)]);
		break;
	case 1:
		if (x->np < NS_K) x->p[x->np++] = random_pattern(s);
		else mutate_pattern(s, &x->p[pat_rng_below(&s->rng, (uint32_t)x->np)]);
		break;
	default:
		if (x->np > 1) { int k = (int)pat_rng_below(&s->rng, (uint32_t)x->np); x->p[k] = x->p[--x->np]; }
	}
}

/* Child of a and b: a's patterns, each of b's taken in with probability 1/2
 * (appended while there is room, else replacing a random one). */
static void crossover(struct ns *s, const struct ns_ind *a, const struct ns_ind *b, struct ns_ind *c)
{
	*c = *a;
	for (int k = 0; k < b->np; k++) {
		if (!pat_rng_below(&s->rng, 2)) continue;
		if (c->np < NS_K) c->p[c->np++] = b->p[k];
		else c->p[pat_rng_below(&s->rng, NS_K)] = b->p[k];
	}
}

static bool dominates(const struct ns_ind *a, const struct ns_ind *b)
{
	bool better = false;
	for (int k = 0; k < NS_NOBJ; k++) {
		if (a->obj[k] < b->obj[k]) return false;
		if (a->obj[k] > b->obj[k]) better = true;
	}
	return better;
}

static const struct ns_ind *ns_obj_ctx;
static int ns_obj_k;
static int cmp_obj(const void *a, const void *b)
{
	double x = ns_obj_ctx[*(const size_t *)a].obj[ns_obj_k], y = ns_obj_ctx[*(const size_t *)b].obj[ns_obj_k];
	return (x > y) - (x < y);
}

/* Ranks (fronts) and crowding distances of pop[0..n); idx/cnt/dom are scratch. */
static void nondominated_sort(struct ns_ind *pop, size_t n, size_t *idx, size_t *cnt, unsigned char *dom)
{
	for (size_t i = 0; i < n; i++) {
		cnt[i] = 0;
		for (size_t j = 0; j < n; j++) {
			dom[i * n + j] = dominates(&pop[i], &pop[j]);
		}
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) cnt[i] += dom[j * n + i];
	size_t done = 0;
	for (int rank = 0; done < n; rank++) {
		size_t nf = 0;
		for (size_t i = 0; i < n; i++)
			if (cnt[i] == 0 && pop[i].rank < 0) idx[nf++] = i;
		if (nf == 0) break;
		for (size_t q = 0; q < nf; q++) { pop[idx[q]].rank = rank; pop[idx[q]].crowd = 0; }
		for (size_t q = 0; q < nf; q++)
			for (size_t j = 0; j < n; j++)
				if (dom[idx[q] * n + j]) cnt[j]--;
		for (int k = 0; k < NS_NOBJ; k++) {       /* crowding within the front */
			ns_obj_ctx = pop; ns_obj_k = k;
			qsort(idx, nf, sizeof(size_t), cmp_obj);
			double span = pop[idx[nf - 1]].obj[k] - pop[idx[0]].obj[k];
			pop[idx[0]].crowd = pop[idx[nf - 1]].crowd = INFINITY;
			for (size_t q = 1; q + 1 < nf && span > 0; q++)
				pop[idx[q]].crowd += (pop[idx[q + 1]].obj[k] - pop[idx[q - 1]].obj[k]) / span;
		}
		done += nf;
	}
}

static bool better_ind(const struct ns_ind *a, const struct ns_ind *b)
{
	if (a->rank != b->rank) return a->rank < b->rank;
	return a->crowd > b->crowd;
}

static const struct ns_ind *tournament(struct ns *s, const struct ns_ind *pop, size_t n)
{
	const struct ns_ind *a = &pop[pat_rng_below(&s->rng, (uint32_t)n)];
	const struct ns_ind *b = &pop[pat_rng_below(&s->rng, (uint32_t)n)];
	return better_ind(a, b) ? a : b;
}

static int cmp_survivor(const void *a, const void *b)
{
	const struct ns_ind *x = a, *y = b;
	if (better_ind(x, y)) return -1;
	if (better_ind(y, x)) return 1;
	return 0;
}

static bool better_answer(const struct ns_ind *a, const struct ns_ind *b)
{
	if (a->f > b->f + 0.01) return true;
	if (b->f > a->f + 0.01) return false;
	if (fabs(a->obj[2] - b->obj[2]) > 1e-9) return a->obj[2] > b->obj[2];
	if (a->np != b->np) return a->np < b->np;
	return a->f > b->f;
}

int pat_nsga2_run(const struct pat_model *m, const struct pat_opts *o, const uint64_t *pos, size_t npos,
		  double sigma, uint64_t seed, struct pat_pattern *out, int *nout, size_t *nevals)
{
	*nout = 0;
	size_t n = o->pop > 1 ? (size_t)o->pop : 2;
	struct ns s = { .m = m, .o = o, .pos = pos, .npos = npos, .sigma = sigma > 0 ? sigma : 1, .rng = seed };
	s.u = malloc((m->nw + 1) * sizeof(uint64_t));
	s.b = malloc((NS_K * m->nw + 1) * sizeof(uint64_t));
	s.buf = malloc((m->n + 1) * sizeof(double));
	s.dev = malloc((m->ncand + 1) * sizeof(*s.dev));
	struct ns_ind *pop = malloc(2 * n * sizeof(*pop));
	size_t *idx = malloc(2 * n * sizeof(size_t)), *cnt = malloc(2 * n * sizeof(size_t));
	unsigned char *dom = malloc(4 * n * n);
	int rc = s.u && s.b && s.buf && s.dev && pop && idx && cnt && dom && !pat_memo_init(&s.med, 4096) ? 0 : -ENOMEM;
	for (size_t c = 0; !rc && c < m->ncand; c++) {
		uint16_t mi = m->main_iv[m->cand[c].rpc];
		if (!(m->cand[c].lo <= mi && m->cand[c].hi > mi)) s.dev[s.ndev++] = m->cand[c];
	}
	if (rc || s.ndev == 0 || npos == 0) goto out;
	for (size_t i = 0; i < n; i++) {
		pop[i].np = 1 + (int)pat_rng_below(&s.rng, 2);
		for (int k = 0; k < pop[i].np; k++) pop[i].p[k] = random_pattern(&s);
		ns_eval(&s, &pop[i]);
	}
	for (size_t i = 0; i < n; i++) pop[i].rank = -1;
	nondominated_sort(pop, n, idx, cnt, dom);
	for (int gen = 0; gen < o->generations; gen++) {
		for (size_t i = 0; i < n; i++) {
			struct ns_ind *c = &pop[n + i];
			const struct ns_ind *a = tournament(&s, pop, n);
			if (pat_rng_unit(&s.rng) < o->pc) crossover(&s, a, tournament(&s, pop, n), c);
			else *c = *a;
			if (pat_rng_unit(&s.rng) < o->pm || c->np == 0) mutate(&s, c);
			if (c->np == 0) c->p[c->np++] = random_pattern(&s);
			ns_eval(&s, c);
		}
		for (size_t i = 0; i < 2 * n; i++) pop[i].rank = -1;
		nondominated_sort(pop, 2 * n, idx, cnt, dom);
		qsort(pop, 2 * n, sizeof(*pop), cmp_survivor);
		for (size_t i = 0; i < n; i++) pop[i].rank = -1;
		nondominated_sort(pop, n, idx, cnt, dom);
	}
	const struct ns_ind *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (pop[i].rank == 0 && pop[i].f > 0 && (!best || better_answer(&pop[i], best))) best = &pop[i];
	if (best) {
		for (int k = 0; k < best->np; k++) out[k] = best->p[k];
		*nout = best->np;
	}
out:
	*nevals = s.nevals;
	free(s.u); free(s.b); free(s.buf); free(s.dev); free(pop); free(idx); free(cnt); free(dom);
	pat_memo_free(&s.med);
	return rc;
}
