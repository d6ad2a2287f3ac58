/* The (mu+lambda) genetic algorithm of ICPE 2020 §3.1: patterns as sets of
 * conditions, add/remove/modify mutation, union-then-partition crossover,
 * tournament selection, F-score fitness memoised by pattern hash. Offspring
 * are made as DEAP's varOr does (crossover with pc, else mutation with pm,
 * else reproduction), survivors picked by tournaments over mu+lambda. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "patterns_int.h"

struct ga_ind { struct pat_pattern p; double f; };

struct ga {
	struct pat_search *s;
	struct pat_memo memo;
	uint64_t rng;
	struct ga_ind best;
};

static void ga_eval(struct ga *g, struct ga_ind *x)
{
	pat_canon(&x->p);
	uint64_t h = pat_hash(&x->p);
	double f = pat_memo_get(&g->memo, h);
	if (isnan(f)) {
		f = pat_search_fitness(g->s, &x->p);
		pat_memo_put(&g->memo, h, f);
		g->s->nevals++;
	}
	x->f = f;
	if (pat_better(f, x->p.n, g->best.f, g->best.p.n) > 0) g->best = *x;
}

static struct pat_cond random_cond(struct ga *g)
{
	const struct pat_model *m = g->s->m;
	return m->cand[pat_rng_below(&g->rng, (uint32_t)m->ncand)];
}

static void add_cond(struct pat_pattern *p, struct pat_cond c)
{
	if (p->n < PAT_MAXCOND && pat_find_rpc(p, c.rpc) < 0) p->c[p->n++] = c;
}

static void random_ind(struct ga *g, struct ga_ind *x)
{
	x->p.n = 0;
	int want = 1 + (int)pat_rng_below(&g->rng, 2);
	for (int k = 0; k < want; k++) add_cond(&x->p, random_cond(g));
}

static void mutate(struct ga *g, struct pat_pattern *p)
{
	const struct pat_model *m = g->s->m;
	switch (pat_rng_below(&g->rng, 3)) {
	case 0:
		add_cond(p, random_cond(g));
		break;
	case 1:
		if (p->n > 0) {
			int k = (int)pat_rng_below(&g->rng, (uint32_t)p->n);
			p->c[k] = p->c[--p->n];
		}
		break;
	default:
		if (p->n > 0) {
			struct pat_cond *c = &p->c[pat_rng_below(&g->rng, (uint32_t)p->n)];
			uint16_t v = (uint16_t)pat_rng_below(&g->rng, m->nthr[c->rpc]);
			uint16_t lo = c->lo, hi = c->hi;
			if (pat_rng_below(&g->rng, 2)) lo = v; else hi = v;
			if (lo > hi) { uint16_t t = lo; lo = hi; hi = t; }
			if (lo != hi) { c->lo = lo; c->hi = hi; }
		}
	}
}

static bool same_cond(const struct pat_cond *a, const struct pat_cond *b)
{
	return a->rpc == b->rpc && a->lo == b->lo && a->hi == b->hi;
}

/* Union of both condition sets, randomly partitioned into two patterns (at
 * most one condition per RPC in each). */
static void crossover(struct ga *g, struct pat_pattern *a, struct pat_pattern *b)
{
	struct pat_cond u[2 * PAT_MAXCOND];
	int nu = 0;
	for (int k = 0; k < a->n; k++) u[nu++] = a->c[k];
	for (int k = 0; k < b->n; k++) {
		bool dup = false;
		for (int i = 0; i < a->n && !dup; i++) dup = same_cond(&a->c[i], &b->c[k]);
		if (!dup) u[nu++] = b->c[k];
	}
	for (int k = nu - 1; k > 0; k--) {      /* shuffle */
		int r = (int)pat_rng_below(&g->rng, (uint32_t)k + 1);
		struct pat_cond t = u[k]; u[k] = u[r]; u[r] = t;
	}
	a->n = b->n = 0;
	for (int k = 0; k < nu; k++) {
		struct pat_pattern *first = pat_rng_below(&g->rng, 2) ? a : b;
		struct pat_pattern *other = first == a ? b : a;
		if (first->n < PAT_MAXCOND && pat_find_rpc(first, u[k].rpc) < 0)
			first->c[first->n++] = u[k];
		else if (other->n < PAT_MAXCOND && pat_find_rpc(other, u[k].rpc) < 0)
			other->c[other->n++] = u[k];
	}
}

static const struct ga_ind *tournament(struct ga *g, const struct ga_ind *pool, size_t n, int size)
{
	const struct ga_ind *best = &pool[pat_rng_below(&g->rng, (uint32_t)n)];
	for (int k = 1; k < size; k++) {
		const struct ga_ind *x = &pool[pat_rng_below(&g->rng, (uint32_t)n)];
		if (pat_better(x->f, x->p.n, best->f, best->p.n) > 0) best = x;
	}
	return best;
}

int pat_ga_run(struct pat_search *s)
{
	const struct pat_opts *o = s->o;
	size_t mu = o->pop > 1 ? (size_t)o->pop : 2, lambda = mu;
	struct ga g = { .s = s, .rng = s->seed };
	memset(&g.best, 0, sizeof(g.best));
	s->nevals = 0;
	s->best.n = 0;
	s->f = 0;
	if (s->m->ncand == 0 || s->npos == 0) return 0;
	struct ga_ind *pool = malloc((mu + lambda) * sizeof(*pool));
	struct ga_ind *next = malloc(mu * sizeof(*next));
	if (!pool || !next || pat_memo_init(&g.memo, 4096)) {
		free(pool); free(next); pat_memo_free(&g.memo);
		return -ENOMEM;
	}
	for (size_t i = 0; i < mu; i++) { random_ind(&g, &pool[i]); ga_eval(&g, &pool[i]); }
	for (int gen = 0; gen < o->generations; gen++) {
		for (size_t i = 0; i < lambda; i++) {
			struct ga_ind *child = &pool[mu + i];
			double r = pat_rng_unit(&g.rng);
			if (r < o->pc) {
				size_t a = pat_rng_below(&g.rng, (uint32_t)mu);
				size_t b = pat_rng_below(&g.rng, (uint32_t)mu - 1);
				if (b >= a) b++;
				struct pat_pattern pa = pool[a].p, pb = pool[b].p;
				crossover(&g, &pa, &pb);
				child->p = pa;
			} else if (r < o->pc + o->pm) {
				child->p = pool[pat_rng_below(&g.rng, (uint32_t)mu)].p;
				mutate(&g, &child->p);
			} else {
				child->p = pool[pat_rng_below(&g.rng, (uint32_t)mu)].p;
			}
			ga_eval(&g, child);
		}
		for (size_t i = 0; i < mu; i++)
			next[i] = *tournament(&g, pool, mu + lambda, o->tournament > 0 ? o->tournament : 1);
		memcpy(pool, next, mu * sizeof(*next));
	}
	s->best = g.best.p;
	s->f = g.best.f;
	free(pool); free(next); pat_memo_free(&g.memo);
	return 0;
}
