/* npanalyze patterns: command line, printing, and the .npa tables. */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "anatable.h"
#include "container.h"
#include "npmsg.h"
#include "numarg.h"
#include "patterns.h"
#include "records.h"
#include "trace.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: npanalyze patterns [--csv F | --zipkin F | --jaeger F | REC.npr...] [options]\n"
"  --entry NAME|HOST:PORT[/PATH]  entry span (Zipkin/Jaeger) or server endpoint (recordings)\n"
"  --interval LO:HI    degraded latency interval in ms (default: automatic, see docs/PATTERNS.md)\n"
"  --bandwidth B       mean-shift bandwidth of the RPC times in ms (default: automatic)\n"
"  --lat-bandwidth B   mean-shift bandwidth of the latencies in ms (default: automatic)\n"
"  --mode M            cover (default), set, icpe (the paper's GA), beam, gaset, nsga2\n"
"  --seed S --generations N --pop N --tournament N --pc P --pm P   GA parameters\n"
"  --beam N            beam width (cover/set/beam)   --max-split N   cap on split points\n"
"  --threads N         worker threads (default: one per CPU)\n"
"  --ids N             request ids printed per pattern (default 10, 0 = all)\n"
"  --table-out F.csv   also write the request table read (any source) as CSV\n"
"  -o OUT.npa          write the tables \"patterns\" and \"pattern_requests\"\n");
}

struct cli {
	const char *csv, *zipkin, *jaeger, *entry, *out, *table_out;
	char **npr;
	size_t nnpr;
	size_t ids;
	struct pat_opts o;
};

static int parse_num(const char *opt, const char *v, double lo, double hi, double *out)
{
	if (np_parse_num(v, lo, hi, out, NULL) == 0)
		return 0;
	fprintf(stderr, "npanalyze patterns: %s needs a number in [%g, %g], got '%s'\n", opt, lo, hi, v ? v : "");
	return -1;
}

static int parse_interval(const char *v, struct pat_opts *o)
{
	char *end;
	o->lo = strtod(v, &end);
	if (end == v || *end != ':') goto bad;
	const char *h = end + 1;
	o->hi = strtod(h, &end);
	if (end == h || *end || !(o->hi > o->lo)) goto bad;
	o->have_interval = true;
	return 0;
bad:
	fprintf(stderr, "npanalyze patterns: --interval needs LO:HI in ms with LO < HI, got '%s'\n", v);
	return -1;
}

static int parse_args(int argc, char **argv, struct cli *c)
{
	pat_opts_default(&c->o);
	c->ids = 10;
	c->npr = calloc((size_t)argc + 1, sizeof(char *));
	if (!c->npr) return -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		double d;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
		if (a[0] != '-') { c->npr[c->nnpr++] = argv[i]; continue; }
		if (!v) { fprintf(stderr, "npanalyze patterns: %s needs a value\n", a); return -1; }
		i++;
		if (!strcmp(a, "--csv")) c->csv = v;
		else if (!strcmp(a, "--zipkin")) c->zipkin = v;
		else if (!strcmp(a, "--jaeger")) c->jaeger = v;
		else if (!strcmp(a, "--entry")) c->entry = v;
		else if (!strcmp(a, "-o")) c->out = v;
		else if (!strcmp(a, "--table-out")) c->table_out = v;
		else if (!strcmp(a, "--interval")) { if (parse_interval(v, &c->o)) return -1; }
		else if (!strcmp(a, "--mode")) {
			if ((c->o.mode = pat_mode_parse(v)) < 0) {
				fprintf(stderr, "npanalyze patterns: unknown --mode %s (cover, set, icpe, beam, gaset, nsga2)\n", v);
				return -1;
			}
		}
		else if (!strcmp(a, "--seed")) { if (parse_num(a, v, 0, 1e18, &d)) return -1; c->o.seed = (uint64_t)d; }
		else if (!strcmp(a, "--bandwidth")) { if (parse_num(a, v, 1e-9, 1e12, &c->o.bandwidth)) return -1; }
		else if (!strcmp(a, "--lat-bandwidth")) { if (parse_num(a, v, 1e-9, 1e12, &c->o.lat_bandwidth)) return -1; }
		else if (!strcmp(a, "--generations")) { if (parse_num(a, v, 0, 1e6, &d)) return -1; c->o.generations = (int)d; }
		else if (!strcmp(a, "--pop")) { if (parse_num(a, v, 2, 1e5, &d)) return -1; c->o.pop = (int)d; }
		else if (!strcmp(a, "--tournament")) { if (parse_num(a, v, 1, 1e4, &d)) return -1; c->o.tournament = (int)d; }
		else if (!strcmp(a, "--pc")) { if (parse_num(a, v, 0, 1, &c->o.pc)) return -1; }
		else if (!strcmp(a, "--pm")) { if (parse_num(a, v, 0, 1, &c->o.pm)) return -1; }
		else if (!strcmp(a, "--beam")) { if (parse_num(a, v, 1, 1e4, &d)) return -1; c->o.beam = (int)d; }
		else if (!strcmp(a, "--max-split")) { if (parse_num(a, v, 1, 200, &d)) return -1; c->o.max_split = (int)d; }
		else if (!strcmp(a, "--threads")) { if (parse_num(a, v, 0, 64, &d)) return -1; c->o.threads = (int)d; }
		else if (!strcmp(a, "--ids")) { if (parse_num(a, v, 0, 1e12, &d)) return -1; c->ids = (size_t)d; }
		else { fprintf(stderr, "npanalyze patterns: unknown option %s\n", a); usage(stderr); return -1; }
	}
	int nsrc = !!c->csv + !!c->zipkin + !!c->jaeger + (c->nnpr > 0);
	if (nsrc != 1) {
		fprintf(stderr, "npanalyze patterns: give exactly one source: --csv F, --zipkin F, --jaeger F or recordings\n");
		usage(stderr);
		return -1;
	}
	if (c->o.pc + c->o.pm > 1.0 + 1e-9) {
		fprintf(stderr, "npanalyze patterns: --pc + --pm must not exceed 1\n");
		return -1;
	}
	return 0;
}

static int load(const struct cli *c, struct pat_table *t, char *err, size_t errlen)
{
	if (c->csv) return trace_csv_load(c->csv, t, err, errlen);
	if (c->zipkin) return trace_zipkin_load(c->zipkin, c->entry, t, err, errlen);
	if (c->jaeger) return trace_jaeger_load(c->jaeger, c->entry, t, err, errlen);
	return trace_npr_load(c->npr, c->nnpr, c->entry, t, err, errlen);
}

/* The request table as CSV (RFC 4180 quoting through libcsv), times in ms,
 * an empty cell for an RPC the request did not call: --csv reads it back. */
static int write_table(const char *path, const struct pat_table *t)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "npanalyze patterns: cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	fputs("id", f);
	for (size_t j = 0; j < t->nrpc; j++) {
		fputc(',', f);
		csv_fwrite(f, t->rpc[j], strlen(t->rpc[j]));
	}
	fputs(",latency\n", f);
	for (size_t i = 0; i < t->nrows; i++) {
		csv_fwrite(f, t->id[i], strlen(t->id[i]));
		for (size_t j = 0; j < t->nrpc; j++) {
			if (isnan(t->col[j][i])) fputc(',', f);
			else fprintf(f, ",%.6f", t->col[j][i]);
		}
		fprintf(f, ",%.6f\n", t->lat[i]);
	}
	if (fclose(f)) {
		fprintf(stderr, "npanalyze patterns: writing %s failed: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void print_result(const struct cli *c, const struct pat_table *t, const struct pat_result *r)
{
	printf("patterns: %zu requests, %zu RPCs, %zu thresholds; I = [%.3f ms, %.3f ms) (%s) holds %zu requests\n",
	       r->nrows, t->nrpc, r->nthr_total, r->lo, r->hi, r->auto_interval ? "automatic" : "given", r->npos);
	printf("split points (ms):");
	for (size_t k = 0; k < r->nsplit; k++) printf(" %.3f", r->split[k]);
	printf("\nmode %s, %zu fitness evaluations, %.4f s\n", pat_mode_name(c->o.mode), r->nevals, r->seconds);
	if (r->nitems == 0) printf("no pattern found\n");
	for (size_t k = 0; k < r->nitems; k++) {
		const struct pat_item *it = &r->items[k];
		char buf[4096];
		pat_item_format(t, it, buf, sizeof(buf));
		printf("\npattern %zu: latency", k + 1);
		for (size_t s = 0; s < it->nseg; s++) printf("%s [%.3f ms, %.3f ms)", s ? " ∪" : "", it->seg_lo[s], it->seg_hi[s]);
		printf("\n  %s\n", buf);
		printf("  precision %.3f  recall %.3f  F %.3f  support %zu (positives %zu, false positives %zu)\n",
		       it->precision, it->recall, it->f, it->nmembers, it->npos, it->fp);
		size_t show = c->ids && c->ids < it->nmembers ? c->ids : it->nmembers;
		printf("  requests:");
		for (size_t i = 0; i < show; i++) printf(" %s", t->id[it->members[i]]);
		if (show < it->nmembers) printf(" ... (+%zu more)", it->nmembers - show);
		printf("\n");
	}
}

static void seg_str(const struct pat_item *it, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t s = 0; s < it->nseg && o < len; s++) {
		int w = snprintf(buf + o, len - o, "%s[%.3f, %.3f)", s ? " " : "", it->seg_lo[s], it->seg_hi[s]);
		if (w < 0) break;
		o += (size_t)w;
	}
}

static struct np_table *patterns_table(const struct pat_table *t, const struct pat_result *r)
{
	struct np_table *tb = np_table_new("patterns", "Latency degradation patterns", 1);
	if (!tb) return NULL;
	np_table_col(tb, "pattern", "id", "pattern number");
	np_table_col(tb, "lo_ns", "ns", "lowest latency of its sub-intervals");
	np_table_col(tb, "hi_ns", "ns", "highest latency of its sub-intervals (exclusive)");
	np_table_col(tb, "intervals", "str", "latency sub-intervals in ms it explains");
	np_table_col(tb, "conditions", "str", "the pattern: RPC execution-time conditions joined by ∧");
	np_table_col(tb, "nconditions", "count", "conditions in the pattern");
	np_table_col(tb, "precision", "ratio", "matching requests that are in its sub-intervals");
	np_table_col(tb, "recall", "ratio", "requests of its sub-intervals that match");
	np_table_col(tb, "fscore", "ratio", "harmonic mean of precision and recall");
	np_table_col(tb, "support", "count", "requests in the cluster: matching, in I (set modes) or in its sub-intervals");
	np_table_col(tb, "positives", "count", "requests in its sub-intervals");
	np_table_col(tb, "false_positives", "count", "matching requests outside its sub-intervals");
	for (size_t k = 0; k < r->nitems; k++) {
		const struct pat_item *it = &r->items[k];
		char buf[4096], seg[1024];
		size_t row = np_table_row(tb);
		np_table_set_u64(tb, row, 0, k + 1);
		np_table_set_u64(tb, row, 1, (uint64_t)llround(it->seg_lo[0] * 1e6));
		np_table_set_u64(tb, row, 2, (uint64_t)llround(it->seg_hi[it->nseg - 1] * 1e6));
		seg_str(it, seg, sizeof(seg));
		np_table_set_str(tb, row, 3, seg);
		pat_item_format(t, it, buf, sizeof(buf));
		np_table_set_str(tb, row, 4, buf);
		np_table_set_u64(tb, row, 5, (uint64_t)it->ncond);
		np_table_set_f64(tb, row, 6, it->precision);
		np_table_set_f64(tb, row, 7, it->recall);
		np_table_set_f64(tb, row, 8, it->f);
		np_table_set_u64(tb, row, 9, it->nmembers);
		np_table_set_u64(tb, row, 10, it->npos);
		np_table_set_u64(tb, row, 11, it->fp);
	}
	return tb;
}

static struct np_table *requests_table(const struct pat_table *t, const struct pat_result *r)
{
	struct np_table *tb = np_table_new("pattern_requests", "Requests of each degradation pattern", 2);
	if (!tb) return NULL;
	np_table_col(tb, "pattern", "id", "pattern number (table patterns)");
	np_table_col(tb, "request", "str", "request id");
	np_table_col(tb, "latency_ns", "ns", "request latency");
	for (size_t k = 0; k < r->nitems; k++)
		for (size_t i = 0; i < r->items[k].nmembers; i++) {
			size_t m = r->items[k].members[i], row = np_table_row(tb);
			np_table_set_u64(tb, row, 0, k + 1);
			np_table_set_str(tb, row, 1, t->id[m]);
			np_table_set_u64(tb, row, 2, (uint64_t)llround(t->lat[m] * 1e6));
		}
	return tb;
}

static void pack_meta(struct np_recbuf *rb, const struct cli *c, const struct pat_result *r)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_ANA_META, 1);
	msgpack_pack_map(pk, 7);
	np_pack_kv_str(pk, "analysis", "patterns");
	np_pack_kv_str(pk, "source", c->csv ? c->csv : c->zipkin ? c->zipkin : c->jaeger ? c->jaeger : c->npr[0]);
	np_pack_kv_str(pk, "mode", pat_mode_name(c->o.mode));
	np_pack_kv_f64(pk, "interval_lo_ms", r->lo);
	np_pack_kv_f64(pk, "interval_hi_ms", r->hi);
	np_pack_kv_u64(pk, "requests", r->nrows);
	np_pack_kv_u64(pk, "seed", c->o.seed);
}

/* The latency distribution of every request read, so npreport can draw the
 * patterns' members over it. */
static void pack_latency_sketch(struct np_recbuf *rb, const struct pat_table *t)
{
	struct np_sketch sk;
	np_sketch_init(&sk);
	for (size_t i = 0; i < t->nrows; i++)
		if (t->lat[i] >= 0) np_sketch_add(&sk, (uint64_t)llround(t->lat[i] * 1e6), 1);
	np_sketchrec_pack(rb, "patterns", "all", "latency", "ns", &sk);
	np_sketchrec_pack(rb, "pattern_requests", "all", "latency", "ns", &sk);
	np_sketch_free(&sk);
}

/* One finding per pattern, so the report's summary names them. */
static void pack_findings(struct np_recbuf *rb, const struct pat_table *t, const struct pat_result *r)
{
	for (size_t k = 0; k < r->nitems; k++) {
		const struct pat_item *it = &r->items[k];
		char cond[2048], text[2600], key[24];
		pat_item_format(t, it, cond, sizeof(cond));
		snprintf(text, sizeof(text), "requests with latency %.1f-%.1f ms: %s (F %.2f, %zu requests)",
			 it->seg_lo[0], it->seg_hi[it->nseg - 1], cond, it->f, it->nmembers);
		snprintf(key, sizeof(key), "%zu", k + 1);
		np_finding_pack(rb, it->f >= 0.8 ? 1 : 0, text, "patterns", key, "fscore", it->f);
	}
}

static int write_npa(const struct cli *c, const struct pat_table *t, const struct pat_result *r)
{
	struct np_writer *w;
	int rc = np_writer_open(&w, c->out, NP_KIND_ANALYSIS, NULL);
	if (rc) {
		fprintf(stderr, "npanalyze patterns: cannot create %s: %s\n", c->out, strerror(-rc));
		return rc;
	}
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	pack_meta(&rb, c, r);
	struct np_table *tp = patterns_table(t, r), *tr = requests_table(t, r);
	if (!tp || !tr) rc = -ENOMEM;
	if (!rc) {
		np_table_pack(&rb, tp);
		np_table_pack(&rb, tr);
		pack_findings(&rb, t, r);
		pack_latency_sketch(&rb, t);
		rc = np_writer_commit(w, &rb);
	}
	int rc2 = np_writer_close(w);
	if (!rc) rc = rc2;
	if (rc) fprintf(stderr, "npanalyze patterns: writing %s failed: %s\n", c->out, strerror(-rc));
	np_table_free(tp); np_table_free(tr);
	np_recbuf_free(&rb);
	return rc;
}

int patterns_main(int argc, char **argv)
{
	struct cli c;
	memset(&c, 0, sizeof(c));
	if (parse_args(argc, argv, &c)) { free(c.npr); return 2; }
	struct pat_table t;
	pat_table_init(&t);
	char err[1024];
	int rc = load(&c, &t, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "npanalyze patterns: %s\n", err);
		pat_table_free(&t); free(c.npr);
		return 1;
	}
	if (c.table_out && write_table(c.table_out, &t)) {
		pat_table_free(&t); free(c.npr);
		return 1;
	}
	struct pat_result r;
	rc = pat_analyze(&t, &c.o, &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "npanalyze patterns: %s\n", err);
	} else {
		print_result(&c, &t, &r);
		if (c.out) rc = write_npa(&c, &t, &r);
		pat_result_free(&r);
	}
	pat_table_free(&t);
	free(c.npr);
	return rc ? 1 : 0;
}
