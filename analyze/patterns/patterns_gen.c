/* Session generator reproducing the ICPE 2020 methodology (§4.2-4.3) on an
 * E-Shopper-like home page request: 13 calls of 8 unique RPCs, 2 of them
 * asynchronous. Pure execution times are normal around per-RPC means, a
 * synchronous call adds its span plus a network hop to its caller's span,
 * asynchronous calls add nothing. Two degradations of different types
 * (1, 2 or 3 synchronous RPCs +50 ms) each hit ~10 % of the requests. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "patterns_eval.h"
#include "patterns_int.h"

enum { GEN_NRPC = 8, GEN_NCALL = 13, GEN_NSYNC = 6 };

static const char *const gen_rpc[GEN_NRPC] = {
	"gethome", "findfeaturesitems", "finditems", "getprofile",
	"getcart", "getcategories", "getbrands", "getrecommended",
};
static const double gen_mean[GEN_NRPC] = { 20, 25, 20, 6, 10, 5, 4, 15 };
static const double gen_sd[GEN_NRPC]   = { 5.0, 6.0, 5.0, 1.5, 2.5, 1.2, 1.0, 4.0 };
static const int gen_sync[GEN_NSYNC] = { 0, 3, 4, 5, 6, 7 };
static const int gen_async[2] = { 1, 2 };

/* Call tree, parents before children. */
static const struct { int rpc, parent; bool async; } gen_call[GEN_NCALL] = {
	{ 0, -1, false },
	{ 1, 0, true }, { 2, 0, true },
	{ 3, 0, false }, { 4, 0, false }, { 3, 4, false },
	{ 5, 0, false }, { 6, 0, false }, { 7, 0, false },
	{ 5, 8, false }, { 6, 8, false }, { 3, 8, false },
	{ 5, 0, false },
};

static double gauss(uint64_t *s)
{
	double u1 = pat_rng_unit(s), u2 = pat_rng_unit(s);
	if (u1 < 1e-300) u1 = 1e-300;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

struct gen_deg {
	int type, rpc[3];
	int noisy_rpc;          /* noise 1: +60 instead of +50 on this one */
	int async_rpc;          /* noise 2: +100 on this asynchronous RPC */
};

static void pick_degradations(uint64_t *rng, struct gen_deg d[2])
{
	int t1 = 1 + (int)pat_rng_below(rng, 3);
	int t2 = 1 + (int)pat_rng_below(rng, 2);
	if (t2 >= t1) t2++;
	d[0].type = t1; d[1].type = t2;
	for (int k = 0; k < 2; k++) {
		int pool[GEN_NSYNC];
		memcpy(pool, gen_sync, sizeof(pool));
		for (int i = 0; i < d[k].type; i++) {
			int r = i + (int)pat_rng_below(rng, (uint32_t)(GEN_NSYNC - i));
			int t = pool[i]; pool[i] = pool[r]; pool[r] = t;
			d[k].rpc[i] = pool[i];
		}
		d[k].noisy_rpc = d[k].rpc[pat_rng_below(rng, (uint32_t)d[k].type)];
		d[k].async_rpc = gen_async[pat_rng_below(rng, 2)];
	}
}

/* One request: pure times per call, then spans bottom-up. */
struct gen_req { double pure[GEN_NCALL], span[GEN_NCALL], hop[GEN_NCALL]; };

static double gen_request(uint64_t *rng, const struct gen_deg *d, bool noise, double spread, double *col,
			  struct gen_req *rq)
{
	double *pure = rq->pure, *span = rq->span;
	for (int c = 0; c < GEN_NCALL; c++) {
		int r = gen_call[c].rpc;
		/* log-normal with the given mean and sd: right-skewed like real RPCs */
		double cv = spread * gen_sd[r] / gen_mean[r], s2 = log(1 + cv * cv);
		pure[c] = gen_mean[r] * exp(sqrt(s2) * gauss(rng) - s2 / 2);
	}
	/* rare nominal hiccups (GC, cache miss) so the nominal tail is not clean */
	if (pat_rng_unit(rng) < 0.01) {
		int c = 3 + (int)pat_rng_below(rng, GEN_NCALL - 3);
		pure[c] += -8.0 * log(1 - pat_rng_unit(rng));
	}
	if (d) {
		bool half = pat_rng_below(rng, 2);
		for (int i = 0; i < d->type; i++) {
			int c = 0;
			while (gen_call[c].rpc != d->rpc[i]) c++;     /* first call of the RPC */
			pure[c] += noise && half && d->rpc[i] == d->noisy_rpc ? 60 : 50;
		}
		if (noise && pat_rng_below(rng, 2)) {
			int c = 0;
			while (gen_call[c].rpc != d->async_rpc) c++;
			pure[c] += 100;
		}
	}
	for (int c = 0; c < GEN_NCALL; c++) span[c] = pure[c];
	for (int c = GEN_NCALL - 1; c > 0; c--) {
		if (gen_call[c].async) continue;
		double hop = 0.8 + 0.15 * gauss(rng);
		rq->hop[c] = hop > 0.1 ? hop : 0.1;
		span[gen_call[c].parent] += span[c] + rq->hop[c];
	}
	/* what a tracer sees as pure time: the span minus its synchronous
	 * children's spans, so the network hops count to the caller */
	for (int r = 0; r < GEN_NRPC; r++) col[r] = 0;
	for (int c = 0; c < GEN_NCALL; c++) {
		col[gen_call[c].rpc] += pure[c];
		if (c > 0 && !gen_call[c].async) col[gen_call[gen_call[c].parent].rpc] += rq->hop[c];
	}
	return span[0];
}

static void describe(struct pat_gen *g, const struct gen_deg d[2])
{
	size_t o = 0;
	for (int k = 0; k < 2 && o < sizeof(g->desc); k++) {
		o += (size_t)snprintf(g->desc + o, sizeof(g->desc) - o, "%sA%d:", k ? "  " : "", k + 1);
		for (int i = 0; i < d[k].type && o < sizeof(g->desc); i++)
			o += (size_t)snprintf(g->desc + o, sizeof(g->desc) - o, "%s%s", i ? "+" : " ",
					      gen_rpc[d[k].rpc[i]]);
		if (g->noise && o < sizeof(g->desc))
			o += (size_t)snprintf(g->desc + o, sizeof(g->desc) - o, " (60ms on %s, 100ms on %s)",
					      gen_rpc[d[k].noisy_rpc], gen_rpc[d[k].async_rpc]);
	}
}

/* Span layout of one request (µs): a call does half its own work, then its
 * synchronous children one after the other (a network hop around each),
 * then the other half; asynchronous children start 100 µs after it. */
static void zipkin_request(FILE *f, size_t i, const struct gen_req *rq, bool first)
{
	double start[GEN_NCALL], cursor[GEN_NCALL];
	start[0] = 1e6 + (double)i * 1e5;
	for (int c = 0; c < GEN_NCALL; c++) {
		if (c > 0) {
			int p = gen_call[c].parent;
			if (gen_call[c].async) {
				start[c] = start[p] + 100;
			} else {
				cursor[p] += rq->hop[c] * 500;
				start[c] = cursor[p];
				cursor[p] += (rq->span[c] + rq->hop[c] / 2) * 1000;
			}
		}
		cursor[c] = start[c] + rq->pure[c] * 500;
	}
	for (int c = 0; c < GEN_NCALL; c++) {
		fprintf(f, "%s {\"traceId\":\"%016zx\",\"id\":\"%016zx\",", first && c == 0 ? "" : ",\n",
			i + 1, (i + 1) * 16 + (size_t)c);
		if (c) fprintf(f, "\"parentId\":\"%016zx\",", (i + 1) * 16 + (size_t)gen_call[c].parent);
		fprintf(f, "\"name\":\"%s\",\"kind\":\"%s\",\"timestamp\":%.0f,\"duration\":%.0f,"
			"\"localEndpoint\":{\"serviceName\":\"svc-%s\"}}", gen_rpc[gen_call[c].rpc],
			gen_call[c].async ? "PRODUCER" : "SERVER", start[c], rq->span[c] * 1000,
			gen_rpc[gen_call[c].rpc]);
	}
}

/* One session into the table t and/or as Zipkin v2 JSON into f; the same
 * seed gives the same requests either way. */
static int gen_run(struct pat_table *t, FILE *f, struct pat_gen *g)
{
	uint64_t rng = g->seed * 0x2545f4914f6cdd1dULL + 12345;
	struct gen_deg d[2];
	pick_degradations(&rng, d);
	describe(g, d);
	int idx[GEN_NRPC];
	for (int r = 0; r < GEN_NRPC && t; r++)
		if ((idx[r] = pat_table_rpc(t, gen_rpc[r])) < 0) return -ENOMEM;
	g->label = malloc(g->n ? g->n : 1);
	if (!g->label) return -ENOMEM;
	g->lo = INFINITY; g->hi = -INFINITY;
	if (f) fprintf(f, "[\n");
	for (size_t i = 0; i < g->n; i++) {
		double u = pat_rng_unit(&rng), col[GEN_NRPC];
		int lab = u < 0.1 ? 1 : u < 0.2 ? 2 : 0;
		struct gen_req rq;
		double lat = gen_request(&rng, lab ? &d[lab - 1] : NULL, g->noise,
					 g->spread > 0 ? g->spread : 1.0, col, &rq);
		if (t) {
			char id[24];
			snprintf(id, sizeof(id), "r%zu", i);
			long row = pat_table_row(t, id, lat);
			if (row < 0) return -ENOMEM;
			for (int r = 0; r < GEN_NRPC; r++) pat_table_add(t, (size_t)row, idx[r], col[r]);
		}
		if (f) zipkin_request(f, i, &rq, i == 0);
		g->label[i] = (uint8_t)lab;
		if (lab) { g->lo = fmin(g->lo, lat); g->hi = fmax(g->hi, lat); }
	}
	if (f) fprintf(f, "\n]\n");
	g->hi = nextafter(g->hi, INFINITY);     /* [lo, hi) holds the maximum */
	return 0;
}

int pat_gen_session(struct pat_table *t, struct pat_gen *g)
{
	return gen_run(t, NULL, g);
}

int pat_gen_zipkin(FILE *f, struct pat_gen *g)
{
	return gen_run(NULL, f, g);
}

void pat_gen_free(struct pat_gen *g)
{
	free(g->label);
	g->label = NULL;
}
