/* The collector and writer of an analysis: the phases of analyze/pipeline.c
 * hand it tables, series, sketches and candidate findings; it keeps the
 * strongest findings, writes ANA_META and the .npa, and prints the short
 * summary. It runs no analysis. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ana.h"
#include "npmsg.h"
#include "records.h"

void ana_out_init(struct ana_out *o)
{
	memset(o, 0, sizeof(*o));
	np_recbuf_init(&o->rb);
}

void ana_out_free(struct ana_out *o)
{
	for (size_t i = 0; i < o->tables.n; i++)
		np_table_free(o->tables.v[i]);
	free(o->tables.v);
	for (size_t i = 0; i < o->findings.n; i++)
		free(o->findings.v[i]);
	free(o->findings.v);
	np_recbuf_free(&o->rb);
	memset(o, 0, sizeof(*o));
}

void ana_out_table(struct ana_out *o, struct np_table *t)
{
	if (!t)
		return;
	struct np_table **slot = ANA_PUSH(o->tables);
	if (slot)
		*slot = t;
	else
		np_table_free(t);
}

const struct np_table *ana_out_find(const struct ana_out *o, const char *name)
{
	for (size_t i = 0; i < o->tables.n; i++)
		if (!strcmp(o->tables.v[i]->name, name))
			return o->tables.v[i];
	return NULL;
}

void ana_out_candidate(struct ana_out *o, double score, int sev, const char *table,
		       const char *key, const char *metric, double value, const char *fmt, ...)
{
	size_t slot = o->ncand;
	/* one finding per (table, key, metric): the strongest occurrence */
	for (size_t i = 0; i < o->ncand; i++)
		if (!strcmp(o->cand[i].table, table ? table : "") && !strcmp(o->cand[i].key, key ? key : "") &&
		    !strcmp(o->cand[i].metric, metric ? metric : "")) {
			if (o->cand[i].score >= score)
				return;
			slot = i;
			goto fill;
		}
	if (slot >= sizeof(o->cand) / sizeof(o->cand[0])) {
		slot = 0;                       /* replace the weakest if this is stronger */
		for (size_t i = 1; i < o->ncand; i++)
			if (o->cand[i].score < o->cand[slot].score)
				slot = i;
		if (o->cand[slot].score >= score)
			return;
	} else
		o->ncand++;
fill:
	o->cand[slot].score = score;
	o->cand[slot].sev = sev;
	o->cand[slot].value = value;
	snprintf(o->cand[slot].table, sizeof(o->cand[slot].table), "%s", table ? table : "");
	snprintf(o->cand[slot].key, sizeof(o->cand[slot].key), "%s", key ? key : "");
	snprintf(o->cand[slot].metric, sizeof(o->cand[slot].metric), "%s", metric ? metric : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->cand[slot].text, sizeof(o->cand[slot].text), fmt, ap);
	va_end(ap);
}

/* First and last event of the aligned hosts on the reference timeline;
 * lo = INT64_MAX, hi = INT64_MIN when there is none. */
static void ana_out_span(const struct ana_model *m, int64_t *lo, int64_t *hi)
{
	*lo = INT64_MAX;
	*hi = INT64_MIN;
	for (size_t i = 0; i < m->hosts.n; i++) {
		if (!ana_host_aligned(m, (int)i) || !m->hosts.v[i].t_max)
			continue;
		int64_t a = ana_to_ref(m, (int)i, m->hosts.v[i].t_min);
		int64_t b = ana_to_ref(m, (int)i, m->hosts.v[i].t_max);
		if (a < *lo) *lo = a;
		if (b > *hi) *hi = b;
	}
}

static void ana_meta_pack(const struct ana_model *m, struct np_recbuf *rb)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_ANA_META, 1);
	msgpack_pack_map(pk, 7);
	np_pack_kv_str(pk, "producer", "npanalyze " NP_VERSION);
	np_pack_str(pk, "inputs");
	msgpack_pack_array(pk, m->inputs.n);
	for (size_t i = 0; i < m->inputs.n; i++)
		np_pack_str(pk, m->inputs.v[i]);
	np_pack_str(pk, "hosts");
	msgpack_pack_array(pk, m->hosts.n);
	for (size_t i = 0; i < m->hosts.n; i++) {
		const struct ana_host *h = &m->hosts.v[i];
		msgpack_pack_map(pk, 7);
		np_pack_kv_str(pk, "name", h->name);
		np_pack_kv_str(pk, "hostname", h->hostname);
		np_pack_kv_u64(pk, "files", h->nfiles);
		np_pack_kv_str(pk, "clock", ana_clock_quality_name(h->clk_quality));
		np_pack_kv_u64(pk, "pkt_events", h->pkt_events);
		np_pack_kv_u64(pk, "lost_events", h->lost_events);
		np_pack_kv_bool(pk, "header", h->has_header);
	}
	np_pack_kv_str(pk, "ref", m->ref >= 0 && (size_t)m->ref < m->hosts.n ? m->hosts.v[m->ref].name : NULL);
	np_pack_str(pk, "warnings");
	msgpack_pack_array(pk, m->warnings.n);
	for (size_t i = 0; i < m->warnings.n; i++)
		np_pack_str(pk, m->warnings.v[i]);
	int64_t lo, hi;
	ana_out_span(m, &lo, &hi);
	np_pack_kv_i64(pk, "t_first_ns", lo == INT64_MAX ? 0 : lo);
	np_pack_kv_i64(pk, "t_last_ns", hi == INT64_MIN ? 0 : hi);
}

static int ana_cand_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;   /* score is first */
	return x < y ? 1 : x > y ? -1 : 0;
}

void ana_out_findings(struct ana_out *o)
{
	qsort(o->cand, o->ncand, sizeof(o->cand[0]), ana_cand_cmp);
	size_t nf = o->ncand < 3 ? o->ncand : 3;
	for (size_t i = 0; i < nf; i++) {
		np_finding_pack(&o->rb, o->cand[i].sev, o->cand[i].text, o->cand[i].table,
				o->cand[i].key, o->cand[i].metric, o->cand[i].value);
		char **s = ANA_PUSH(o->findings);
		if (s)
			*s = strdup(o->cand[i].text);
	}
}

void ana_out_summary(const struct ana_model *m, const struct ana_out *o, FILE *f)
{
	if (!f)
		return;
	fprintf(f, "hosts: %zu (reference %s)\n", m->hosts.n,
		m->ref >= 0 && (size_t)m->ref < m->hosts.n ? m->hosts.v[m->ref].name : "-");
	for (size_t i = 0; i < m->hosts.n; i++) {
		const struct ana_host *h = &m->hosts.v[i];
		fprintf(f, "  %-24s %zu file(s), %llu packet events, clock %s", h->name, h->nfiles,
			(unsigned long long)h->pkt_events, ana_clock_quality_name(h->clk_quality));
		if (ana_host_aligned(m, (int)i) && (int)i != m->ref) {
			fprintf(f, ": offset %+.6f ms, drift %+.3f ppm", ((double)h->t0 - h->clk_b) / 1e6,
				(1.0 / h->clk_a - 1) * 1e6);
			if (!isnan(h->clk_err_ns))
				fprintf(f, " (+-%.1f us)", h->clk_err_ns / 1e3);
		}
		fputc('\n', f);
	}
	int64_t lo, hi;
	ana_out_span(m, &lo, &hi);
	if (lo != INT64_MAX)
		fprintf(f, "time span: %.3f s\n", (double)(hi - lo) / 1e9);
	fprintf(f, "tables: %zu\n", o->tables.n);
	for (size_t i = 0; i < o->findings.n; i++)
		fprintf(f, "finding %zu: %s\n", i + 1, o->findings.v[i]);
	for (size_t i = 0; i < m->warnings.n; i++)
		fprintf(f, "%s: %s\n", i < m->warn_minor.n && m->warn_minor.v[i] ? "note" : "warning",
			m->warnings.v[i]);
}

/* probes: each host's probe outcomes as its recordings left them, so a
 * report can say which hooks were missing without the recordings. */
static void ana_out_probes(const struct ana_model *m, struct ana_out *o)
{
	if (!m->probes.n || ana_out_find(o, "probes"))
		return;
	struct np_table *t = np_table_new("probes", "Probes of the recorders (attached, skipped, failed)", 3);
	if (!t)
		return;
	np_table_col(t, "host", "str", "recording host");
	np_table_col(t, "family", "str", "recorder family (nprec --families)");
	np_table_col(t, "probe", "str", "hook or program, \"(family)\" for the whole family");
	np_table_col(t, "state", "str", "attached, skipped or failed (last HEADER/PROBES record)");
	np_table_col(t, "reason", "str", "the recorder's reason or detail");
	for (size_t i = 0; i < m->probes.n; i++) {
		const struct ana_probe *p = &m->probes.v[i];
		size_t r = np_table_row(t);
		np_table_set_str(t, r, 0, p->host < m->hosts.n ? m->hosts.v[p->host].name : "?");
		np_table_set_str(t, r, 1, p->family);
		np_table_set_str(t, r, 2, p->probe);
		np_table_set_str(t, r, 3, p->state);
		np_table_set_str(t, r, 4, p->reason);
	}
	ana_out_table(o, t);
}

#define ANA_RETRANS_POINTS 600

/* flows|HOST|FLOW retrans series: retransmissions per recorder interval of
 * every flow that retransmitted, for the report's retransmissions-over-time
 * plot. Same intervals as the flows table's retrans column (--flow filter,
 * --from/--to window), so a series sums to its row; more than 600 intervals
 * are summed in groups of consecutive ones (a point at the first's start).
 * Relies on m->fstats being sorted by host, flow key, time (ana_flows_run
 * sorts it). */
static void ana_out_retrans_series(const struct ana_model *m, struct ana_out *o)
{
	const char *flt = m->opt ? m->opt->flow_filter : NULL;
	const struct ana_flowstat *v = m->fstats.v;
	uint64_t *ts = malloc(ANA_RETRANS_POINTS * sizeof(*ts));
	double *val = malloc(ANA_RETRANS_POINTS * sizeof(*val));
	for (size_t a = 0, b; ts && val && a < m->fstats.n; a = b) {
		size_t nin = 0, k = 0;
		uint64_t re = 0;
		bool keep = !flt || !*flt || strstr(v[a].key, flt);
		for (b = a; b < m->fstats.n && v[b].host == v[a].host && !strcmp(v[b].key, v[a].key); b++)
			if (keep && ana_interval_in_window(m, v[b].host, v[b].t, v[b].dur_ns)) {
				nin++;
				re += v[b].retrans;
			}
		if (!re)
			continue;
		size_t step = (nin + ANA_RETRANS_POINTS - 1) / ANA_RETRANS_POINTS, j = 0;
		for (size_t i = a; i < b; i++) {
			if (!ana_interval_in_window(m, v[i].host, v[i].t, v[i].dur_ns))
				continue;
			if (j++ % step == 0) {
				ts[k] = ana_host_aligned(m, v[i].host) ? (uint64_t)ana_to_ref(m, v[i].host, v[i].t) : v[i].t;
				val[k++] = 0;
			}
			val[k - 1] += (double)v[i].retrans;
		}
		char key[400];
		snprintf(key, sizeof(key), "%s|%s", m->hosts.v[v[a].host].name, v[a].key);
		np_series_pack(&o->rb, "flows", key, "retrans", "count", ts, val, k);
	}
	free(ts);
	free(val);
}

int ana_out_write(const struct ana_model *m, struct ana_out *o, const char *path)
{
	struct np_writer *w = NULL;
	int rc = np_writer_open(&w, path, NP_KIND_ANALYSIS, NULL);
	if (rc == -EEXIST) {
		if (unlink(path) == 0)
			rc = np_writer_open(&w, path, NP_KIND_ANALYSIS, NULL);
	}
	if (rc)
		return rc;
	ana_out_probes(m, o);
	ana_out_retrans_series(m, o);
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	ana_meta_pack(m, &rb);
	rc = np_writer_commit(w, &rb);
	for (size_t i = 0; !rc && i < o->tables.n; i++) {
		np_table_pack(&rb, o->tables.v[i]);
		if (rb.sbuf.size > (8u << 20) || i + 1 == o->tables.n)
			rc = np_writer_commit(w, &rb);
	}
	if (!rc && !np_recbuf_empty(&o->rb))
		rc = np_writer_commit(w, &o->rb);
	np_recbuf_free(&rb);
	int rc2 = np_writer_close(w);
	return rc ? rc : rc2;
}
