/* Beam search for Theta: from the empty pattern, every round expands each
 * pattern of the beam by all single-step moves the GA's mutation can make
 * (add a condition, move an interval of a condition, drop a condition) and
 * keeps the best `beam` distinct patterns. Deterministic, and because the
 * thresholds are few per RPC the neighbourhood is small enough to try
 * whole, which is why it beats random sampling on the same budget. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "patterns_int.h"

struct bm_ind { struct pat_pattern p; double f; uint64_t h; };

struct bm {
	struct pat_search *s;
	struct pat_memo memo;
	struct bm_ind *next;
	size_t nnext, capnext;
	size_t evaluated;            /* next[evaluated..nnext) await their fitness */
	struct bm_ind best;
};

static int bm_cmp(const void *a, const void *b)
{
	const struct bm_ind *x = a, *y = b;
	int c = pat_better(x->f, x->p.n, y->f, y->p.n);
	if (c) return -c;
	return (x->h > y->h) - (x->h < y->h);   /* total order: deterministic */
}

/* Adds p to the candidates of the next beam if new this search; its
 * fitness is computed later, for all candidates of a round at once. */
static int bm_offer(struct bm *b, struct pat_pattern *p)
{
	pat_canon(p);
	uint64_t h = pat_hash(p);
	if (!isnan(pat_memo_get(&b->memo, h))) return 0;   /* seen this search */
	pat_memo_put(&b->memo, h, -1);                      /* pending */
	if (b->nnext == b->capnext) {
		size_t cap = b->capnext ? b->capnext * 2 : 1024;
		struct bm_ind *n = realloc(b->next, cap * sizeof(*n));
		if (!n) return -ENOMEM;
		b->next = n; b->capnext = cap;
	}
	struct bm_ind *x = &b->next[b->nnext++];
	x->p = *p; x->h = h;
	return 0;
}

struct bm_job {
	struct bm *b;
	size_t lo, hi;
};

static void *bm_eval_range(void *arg)
{
	struct bm_job *j = arg;
	for (size_t i = j->lo; i < j->hi; i++)
		j->b->next[i].f = pat_search_fitness(j->b->s, &j->b->next[i].p);
	return NULL;
}

/* Fitness of the pending candidates, split over s->threads threads (a
 * pure function of each pattern, so the result does not depend on the
 * split), then memo and best in the order the candidates were made. */
static void bm_evaluate(struct bm *b)
{
	size_t lo = b->evaluated, n = b->nnext - lo;
	int nt = b->s->threads > 1 && n >= 64 ? b->s->threads : 1;
	if (nt > 16) nt = 16;
	struct bm_job jobs[16];
	pthread_t th[16];
	bool spawned[16] = { false };
	for (int t = 0; t < nt; t++)
		jobs[t] = (struct bm_job){ b, lo + n * (size_t)t / (size_t)nt, lo + n * (size_t)(t + 1) / (size_t)nt };
	for (int t = 1; t < nt; t++) spawned[t] = pthread_create(&th[t], NULL, bm_eval_range, &jobs[t]) == 0;
	bm_eval_range(&jobs[0]);
	for (int t = 1; t < nt; t++) {
		if (spawned[t]) pthread_join(th[t], NULL);
		else bm_eval_range(&jobs[t]);
	}
	for (size_t i = lo; i < b->nnext; i++) {
		struct bm_ind *x = &b->next[i];
		pat_memo_put(&b->memo, x->h, x->f);
		b->s->nevals++;
		if (pat_better(x->f, x->p.n, b->best.f, b->best.p.n) > 0) b->best = *x;
	}
	b->evaluated = b->nnext;
}

static int bm_expand(struct bm *b, const struct pat_pattern *p)
{
	const struct pat_model *m = b->s->m;
	struct pat_pattern q;
	int rc = 0;
	for (size_t j = 0; j < m->nrpc && !rc; j++) {
		int at = pat_find_rpc(p, (unsigned)j);
		if (at < 0 && p->n >= PAT_MAXCOND) continue;
		for (size_t c = m->cand_first[j]; c < m->cand_first[j + 1] && !rc; c++) {
			q = *p;
			if (at < 0) q.c[q.n++] = m->cand[c];              /* add */
			else if (memcmp(&q.c[at], &m->cand[c], sizeof(q.c[0])))
				q.c[at] = m->cand[c];                      /* modify */
			else continue;
			rc = bm_offer(b, &q);
		}
	}
	for (int k = 0; k < p->n && !rc; k++) {                    /* remove */
		q = *p;
		q.c[k] = q.c[--q.n];
		if (q.n) rc = bm_offer(b, &q);
	}
	return rc;
}

int pat_beam_run(struct pat_search *s)
{
	size_t width = s->o->beam > 0 ? (size_t)s->o->beam : 1;
	struct bm b = { .s = s };
	s->nevals = 0;
	s->best.n = 0;
	s->f = 0;
	if (s->m->ncand == 0 || s->npos == 0) return 0;
	struct bm_ind *beam = calloc(width, sizeof(*beam));
	if (!beam || pat_memo_init(&b.memo, 8192)) { free(beam); pat_memo_free(&b.memo); return -ENOMEM; }
	size_t nbeam = 1;                 /* the empty pattern */
	int rc = 0, stall = 0;
	for (int round = 0; round < 4 * PAT_MAXCOND && stall < 2 && !rc; round++) {
		double before = b.best.f;
		int before_n = b.best.p.n;
		b.nnext = 0;
		b.evaluated = 0;
		for (size_t i = 0; i < nbeam && !rc; i++) rc = bm_expand(&b, &beam[i].p);
		if (!rc) bm_evaluate(&b);
		if (rc || b.nnext == 0) break;
		qsort(b.next, b.nnext, sizeof(*b.next), bm_cmp);
		nbeam = b.nnext < width ? b.nnext : width;
		memcpy(beam, b.next, nbeam * sizeof(*beam));
		stall = pat_better(b.best.f, b.best.p.n, before, before_n) > 0 ? 0 : stall + 1;
	}
	s->best = b.best.p;
	s->f = b.best.f;
	free(beam); free(b.next); pat_memo_free(&b.memo);
	return rc;
}
