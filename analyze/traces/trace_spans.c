/* Spans -> request table: per entry span, the pure execution time of every
 * span of its subtree (duration minus the union of its synchronous
 * children, §4.2 of the ICPE paper), summed per span name. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace_spans.h"

int trace_spans_add(struct trace_spans *s, const char *trace, const char *id, const char *parent,
		    const char *name, const char *svc, double start, double dur, bool async,
		    bool server, bool client)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct trace_span *v = realloc(s->v, cap * sizeof(*v));
		if (!v) return -ENOMEM;
		s->v = v; s->cap = cap;
	}
	struct trace_span *x = &s->v[s->n];
	memset(x, 0, sizeof(*x));
	x->trace = strdup(trace);
	x->id = strdup(id);
	x->parent = parent && parent[0] ? strdup(parent) : NULL;
	x->name = strdup(name ? name : "");
	x->svc = svc ? strdup(svc) : NULL;
	if (!x->trace || !x->id || !x->name || (parent && parent[0] && !x->parent) || (svc && !x->svc)) {
		free(x->trace); free(x->id); free(x->parent); free(x->name); free(x->svc);
		return -ENOMEM;
	}
	x->start = start; x->dur = dur; x->async = async; x->server = server; x->client = client;
	s->n++;
	return 0;
}

void trace_spans_free(struct trace_spans *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct trace_span *x = &s->v[i];
		free(x->trace); free(x->id); free(x->parent); free(x->name); free(x->svc);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int cmp_span(const void *a, const void *b)
{
	const struct trace_span *x = a, *y = b;
	int c = strcmp(x->trace, y->trace);
	if (c) return c;
	c = strcmp(x->id, y->id);
	if (c) return c;
	return (int)x->server - (int)y->server;   /* client before server of a shared id */
}

/* Zipkin shares one id between the client and the server side of an RPC:
 * the server span becomes a child of the client span. */
static int unshare_ids(struct trace_spans *s)
{
	for (size_t i = 1; i < s->n; i++) {
		struct trace_span *a = &s->v[i - 1], *b = &s->v[i];
		if (strcmp(a->trace, b->trace) || strcmp(a->id, b->id) || !b->server || a->server) continue;
		size_t l = strlen(b->id);
		char *nid = malloc(l + 3);
		if (!nid) return -ENOMEM;
		memcpy(nid, b->id, l);
		memcpy(nid + l, "#s", 3);
		free(b->parent);
		b->parent = b->id;
		b->id = nid;
	}
	if (s->n) qsort(s->v, s->n, sizeof(*s->v), cmp_span);
	return 0;
}

static long find_span(const struct trace_span *v, size_t a, size_t b, const char *id)
{
	while (a < b) {
		size_t m = a + (b - a) / 2;
		int c = strcmp(v[m].id, id);
		if (!c) return (long)m;
		if (c < 0) a = m + 1; else b = m;
	}
	return -1;
}

static bool is_entry(const struct trace_span *x, const char *entry)
{
	if (!strcmp(x->name, entry)) return true;
	if (!x->svc) return false;
	size_t l = strlen(x->svc);
	return !strncmp(entry, x->svc, l) && entry[l] == ':' && !strcmp(entry + l + 1, x->name);
}

struct group {
	const struct trace_span *v;   /* spans of one trace: v[0..n) */
	size_t n;
	long *parent;                 /* index of the parent or -1 */
	size_t *cstart, *child;       /* children of k: child[cstart[k] .. cstart[k+1]) */
	unsigned char *seen;
};

/* Union length of the synchronous children's intervals inside k. */
static double waited(const struct group *g, size_t k, double *buf)
{
	const struct trace_span *p = &g->v[k];
	double pe = p->start + p->dur;
	size_t m = 0;
	for (size_t c = g->cstart[k]; c < g->cstart[k + 1]; c++) {
		const struct trace_span *x = &g->v[g->child[c]];
		double xs = x->start, xe = x->start + x->dur;
		if (x->async || xe > pe + 1.0) continue;     /* not waited for */
		if (xs < p->start) xs = p->start;
		if (xe > pe) xe = pe;
		if (xe > xs) { buf[2 * m] = xs; buf[2 * m + 1] = xe; m++; }
	}
	/* sort intervals by start (insertion: children lists are short) */
	for (size_t i = 1; i < m; i++)
		for (size_t j = i; j > 0 && buf[2 * (j - 1)] > buf[2 * j]; j--) {
			double a = buf[2 * j], b = buf[2 * j + 1];
			buf[2 * j] = buf[2 * (j - 1)]; buf[2 * j + 1] = buf[2 * (j - 1) + 1];
			buf[2 * (j - 1)] = a; buf[2 * (j - 1) + 1] = b;
		}
	double total = 0, cs = 0, ce = -INFINITY;
	for (size_t i = 0; i < m; i++) {
		if (buf[2 * i] > ce) { if (ce > cs) total += ce - cs; cs = buf[2 * i]; ce = buf[2 * i + 1]; }
		else if (buf[2 * i + 1] > ce) ce = buf[2 * i + 1];
	}
	if (ce > cs) total += ce - cs;
	return total;
}

static int add_request(struct group *g, size_t e, struct pat_table *t, size_t *stack, double *buf,
		       bool many)
{
	const struct trace_span *x = &g->v[e];
	char id[512];
	snprintf(id, sizeof(id), many ? "%s/%s" : "%s", x->trace, x->id);
	long row = pat_table_row(t, id, x->dur / 1000.0);
	if (row < 0) return -ENOMEM;
	size_t sp = 0;
	stack[sp++] = e;
	g->seen[e] = 1;
	while (sp) {
		size_t k = stack[--sp];
		double pure = g->v[k].dur - waited(g, k, buf);
		int col = pat_table_rpc(t, g->v[k].name[0] ? g->v[k].name : "(unnamed)");
		if (col < 0) return -ENOMEM;
		pat_table_add(t, (size_t)row, col, (pure > 0 ? pure : 0) / 1000.0);
		for (size_t c = g->cstart[k]; c < g->cstart[k + 1]; c++)
			if (!g->seen[g->child[c]]) { g->seen[g->child[c]] = 1; stack[sp++] = g->child[c]; }
	}
	return 0;
}

static int do_group(struct group *g, const char *entry, struct pat_table *t)
{
	size_t n = g->n;
	g->parent = malloc(n * sizeof(long));
	g->cstart = calloc(n + 1, sizeof(size_t));
	g->child = malloc(n * sizeof(size_t));
	g->seen = calloc(n, 1);
	size_t *stack = malloc(n * sizeof(size_t)), *fill = calloc(n + 1, sizeof(size_t));
	double *buf = malloc(2 * n * sizeof(double) + 16);
	int rc = g->parent && g->cstart && g->child && g->seen && stack && fill && buf ? 0 : -ENOMEM;
	for (size_t k = 0; k < n && !rc; k++) {
		long p = g->v[k].parent ? find_span(g->v, 0, n, g->v[k].parent) : -1;
		g->parent[k] = p == (long)k ? -1 : p;
		if (g->parent[k] >= 0) g->cstart[g->parent[k] + 1]++;
	}
	for (size_t k = 0; k < n && !rc; k++) g->cstart[k + 1] += g->cstart[k];
	for (size_t k = 0; k < n && !rc; k++)
		if (g->parent[k] >= 0) {
			size_t p = (size_t)g->parent[k];
			g->child[g->cstart[p] + fill[p]++] = k;
		}
	/* entries: matching spans without a matching ancestor (or roots) */
	size_t nent = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		bool ok = entry ? is_entry(&g->v[k], entry) : g->parent[k] < 0;
		if (ok && entry) {
			long a = g->parent[k];
			for (size_t steps = 0; a >= 0 && steps < n; steps++, a = g->parent[a])
				if (is_entry(&g->v[a], entry)) { ok = false; break; }
		}
		if (ok) stack[nent++] = k;     /* park the entries at the start of fill */
	}
	size_t *ent = fill;
	for (size_t i = 0; i < nent; i++) ent[i] = stack[i];
	for (size_t i = 0; i < nent && !rc; i++) rc = add_request(g, ent[i], t, stack, buf, nent > 1);
	free(g->parent); free(g->cstart); free(g->child); free(g->seen);
	free(stack); free(fill); free(buf);
	return rc;
}

int trace_spans_to_table(struct trace_spans *s, const char *entry, struct pat_table *t,
			 char *err, size_t errlen)
{
	if (s->n) qsort(s->v, s->n, sizeof(*s->v), cmp_span);
	int rc = unshare_ids(s);
	for (size_t a = 0; a < s->n && !rc;) {
		size_t b = a + 1;
		while (b < s->n && !strcmp(s->v[a].trace, s->v[b].trace)) b++;
		struct group g = { .v = s->v + a, .n = b - a };
		rc = do_group(&g, entry, t);
		a = b;
	}
	if (rc) { snprintf(err, errlen, "out of memory building the request table"); return rc; }
	if (t->nrows == 0) {
		if (entry) snprintf(err, errlen, "no span named '%s' (give --entry NAME or SERVICE:NAME)", entry);
		else snprintf(err, errlen, "no root span found");
		return -ENOENT;
	}
	return 0;
}
