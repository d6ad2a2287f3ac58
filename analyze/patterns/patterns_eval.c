/* Scoring of clusters against injected degradations (ICPE 2020 §4.3) and
 * the k-means baseline (RQ1). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "patterns_eval.h"
#include "patterns_int.h"

void pat_score_clusters(const uint8_t *label, size_t n, size_t nc, size_t *const *members,
			const size_t *sizes, struct pat_score *out)
{
	size_t npos[3] = { 0, 0, 0 };
	for (size_t i = 0; i < n; i++) npos[label[i] <= 2 ? label[i] : 0]++;
	size_t G = 0, C = 0;
	for (int a = 1; a <= 2; a++) {
		double bestf = -1;
		size_t bg = 0, bc = 0;
		for (size_t c = 0; c < nc; c++) {
			size_t g = 0;
			for (size_t k = 0; k < sizes[c]; k++) g += label[members[c][k]] == a;
			double f = sizes[c] + npos[a] ? 2.0 * (double)g / (double)(sizes[c] + npos[a]) : 0;
			if (f > bestf) { bestf = f; bg = g; bc = sizes[c]; }
		}
		G += bg; C += bc;
	}
	size_t P = npos[1] + npos[2];
	out->recall = P ? (double)G / (double)P : 0;
	out->precision = C ? (double)G / (double)C : 0;
	out->f = out->recall + out->precision > 0 ?
		2 * out->precision * out->recall / (out->precision + out->recall) : 0;
}

int pat_score_result(const uint8_t *label, size_t n, const struct pat_result *r, struct pat_score *out)
{
	size_t **mem = malloc((r->nitems + 1) * sizeof(*mem));
	size_t *sz = malloc((r->nitems + 1) * sizeof(*sz));
	if (!mem || !sz) { free(mem); free(sz); return -ENOMEM; }
	for (size_t k = 0; k < r->nitems; k++) { mem[k] = r->items[k].members; sz[k] = r->items[k].nmembers; }
	pat_score_clusters(label, n, r->nitems, mem, sz, out);
	free(mem); free(sz);
	return 0;
}

/* Lloyd's k-means with k-means++ seeding; assign[] gets cluster ids. */
static void kmeans(const double *x, size_t n, size_t d, int k, uint64_t *rng, int *assign)
{
	double *cent = malloc((size_t)k * d * sizeof(double));
	double *dist = malloc(n * sizeof(double));
	size_t *cnt = malloc((size_t)k * sizeof(size_t));
	if (!cent || !dist || !cnt) { free(cent); free(dist); free(cnt); memset(assign, 0, n * sizeof(int)); return; }
	size_t first = pat_rng_below(rng, (uint32_t)n);
	memcpy(cent, x + first * d, d * sizeof(double));
	for (int c = 1; c < k; c++) {
		double sum = 0;
		for (size_t i = 0; i < n; i++) {
			double best = INFINITY;
			for (int q = 0; q < c; q++) {
				double s = 0;
				for (size_t j = 0; j < d; j++) { double v = x[i * d + j] - cent[q * d + j]; s += v * v; }
				if (s < best) best = s;
			}
			dist[i] = best; sum += best;
		}
		double r = pat_rng_unit(rng) * sum;
		size_t pick = n - 1;
		for (size_t i = 0; i < n; i++) { r -= dist[i]; if (r <= 0) { pick = i; break; } }
		memcpy(cent + (size_t)c * d, x + pick * d, d * sizeof(double));
	}
	for (int it = 0; it < 100; it++) {
		bool changed = false;
		for (size_t i = 0; i < n; i++) {
			double best = INFINITY; int bc = 0;
			for (int q = 0; q < k; q++) {
				double s = 0;
				for (size_t j = 0; j < d; j++) { double v = x[i * d + j] - cent[q * d + j]; s += v * v; }
				if (s < best) { best = s; bc = q; }
			}
			if (it == 0 || assign[i] != bc) changed = true;
			assign[i] = bc;
		}
		if (!changed) break;
		memset(cent, 0, (size_t)k * d * sizeof(double));
		memset(cnt, 0, (size_t)k * sizeof(size_t));
		for (size_t i = 0; i < n; i++) {
			cnt[assign[i]]++;
			for (size_t j = 0; j < d; j++) cent[(size_t)assign[i] * d + j] += x[i * d + j];
		}
		for (int q = 0; q < k; q++)
			for (size_t j = 0; j < d; j++) cent[(size_t)q * d + j] /= cnt[q] ? (double)cnt[q] : 1;
	}
	free(cent); free(dist); free(cnt);
}

int pat_kmeans_best(const struct pat_table *t, const uint8_t *label, double lo, double hi,
		    uint64_t seed, struct pat_score *out)
{
	size_t d = t->nrpc, n = 0;
	size_t *rows = malloc((t->nrows + 1) * sizeof(size_t));
	double *x = malloc((t->nrows * d + 1) * sizeof(double));
	int *assign = malloc((t->nrows + 1) * sizeof(int));
	size_t **mem = malloc(6 * sizeof(*mem)), sz[6];
	size_t *memrows = malloc((t->nrows + 1) * 6 * sizeof(size_t));
	int rc = rows && x && assign && mem && memrows ? 0 : -ENOMEM;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < t->nrows && !rc; i++) {
		if (!(t->lat[i] >= lo && t->lat[i] < hi)) continue;
		for (size_t j = 0; j < d; j++) {
			double v = t->col[j][i];
			x[n * d + j] = isnan(v) ? 0 : v;
		}
		rows[n++] = i;
	}
	uint64_t rng = seed ^ 0x5eed;
	for (int k = 2; k <= 6 && !rc && n >= (size_t)k; k++) {
		kmeans(x, n, d, k, &rng, assign);
		for (int c = 0; c < k; c++) { mem[c] = memrows + (size_t)c * (t->nrows + 1); sz[c] = 0; }
		for (size_t i = 0; i < n; i++) mem[assign[i]][sz[assign[i]]++] = rows[i];
		struct pat_score s;
		pat_score_clusters(label, t->nrows, (size_t)k, mem, sz, &s);
		if (s.f > out->f) *out = s;
	}
	free(rows); free(x); free(assign); free(mem); free(memrows);
	return rc;
}
