/* The request table and the option defaults of npanalyze patterns. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "patterns.h"

void pat_table_init(struct pat_table *t)
{
	memset(t, 0, sizeof(*t));
}

void pat_table_free(struct pat_table *t)
{
	for (size_t j = 0; j < t->nrpc; j++) { free(t->rpc[j]); free(t->col[j]); }
	for (size_t i = 0; i < t->nrows; i++) free(t->id[i]);
	free(t->rpc); free(t->col); free(t->lat); free(t->id);
	memset(t, 0, sizeof(*t));
}

int pat_table_rpc(struct pat_table *t, const char *name)
{
	for (size_t j = 0; j < t->nrpc; j++)
		if (!strcmp(t->rpc[j], name)) return (int)j;
	char **rpc = realloc(t->rpc, (t->nrpc + 1) * sizeof(*rpc));
	if (!rpc) return -1;
	t->rpc = rpc;
	double **col = realloc(t->col, (t->nrpc + 1) * sizeof(*col));
	if (!col) return -1;
	t->col = col;
	double *c = malloc((t->cap ? t->cap : 1) * sizeof(double));
	char *nm = strdup(name);
	if (!c || !nm) { free(c); free(nm); return -1; }
	for (size_t i = 0; i < t->cap; i++) c[i] = NAN;
	t->rpc[t->nrpc] = nm;
	t->col[t->nrpc] = c;
	return (int)t->nrpc++;
}

static int table_grow(struct pat_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	double *lat = realloc(t->lat, cap * sizeof(double));
	if (!lat) return -1;
	t->lat = lat;
	char **id = realloc(t->id, cap * sizeof(char *));
	if (!id) return -1;
	t->id = id;
	for (size_t j = 0; j < t->nrpc; j++) {
		double *c = realloc(t->col[j], cap * sizeof(double));
		if (!c) return -1;
		for (size_t i = t->cap; i < cap; i++) c[i] = NAN;
		t->col[j] = c;
	}
	t->cap = cap;
	return 0;
}

long pat_table_row(struct pat_table *t, const char *id, double latency_ms)
{
	if (t->nrows == t->cap && table_grow(t)) return -1;
	char buf[32];
	if (!id) { snprintf(buf, sizeof(buf), "%zu", t->nrows); id = buf; }
	char *s = strdup(id);
	if (!s) return -1;
	t->id[t->nrows] = s;
	t->lat[t->nrows] = latency_ms;
	for (size_t j = 0; j < t->nrpc; j++) t->col[j][t->nrows] = NAN;
	return (long)t->nrows++;
}

void pat_table_add(struct pat_table *t, size_t row, int rpc, double ms)
{
	double *v = &t->col[rpc][row];
	*v = isnan(*v) ? ms : *v + ms;
}

static const char *const mode_names[] = {
	[PAT_MODE_SET] = "set", [PAT_MODE_ICPE] = "icpe",
	[PAT_MODE_BEAM] = "beam", [PAT_MODE_GASET] = "gaset", [PAT_MODE_NSGA2] = "nsga2", [PAT_MODE_COVER] = "cover",
};

const char *pat_mode_name(int mode)
{
	if (mode < 0 || mode >= (int)(sizeof(mode_names) / sizeof(mode_names[0]))) return "?";
	return mode_names[mode];
}

int pat_mode_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(s, mode_names[i])) return (int)i;
	return -1;
}

void pat_opts_default(struct pat_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->min_cluster_frac = 0.05;
	o->mode = PAT_MODE_COVER;
	o->seed = 1;
	o->generations = 400;
	o->pop = 100;
	o->tournament = 20;
	o->pc = 0.8;
	o->pm = 0.2;
	o->beam = 16;
	o->threads = 0;
	o->max_split = 12;
}
