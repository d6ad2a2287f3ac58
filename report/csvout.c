#include "csvout.h"
#include "outfile.h"
#include "incident.h"
#include "textrep.h"

#include <csv.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void rpt_csv_str(FILE *f, const char *s)
{
	if (strpbrk(s, ",\"\r\n") || (*s && (s[0] == ' ' || s[strlen(s) - 1] == ' ')))
		csv_fwrite(f, s, strlen(s));
	else
		fputs(s, f);
}

/* Shortest text that reads back as the same double. */
void rpt_csv_f64(FILE *f, double v)
{
	char buf[40];
	if (isnan(v))
		return;
	if (isinf(v)) {
		fputs(v > 0 ? "inf" : "-inf", f);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

static void rpt_csv_cell(FILE *f, const struct np_cell *c)
{
	switch (c->kind) {
	case NP_CELL_INT:  fprintf(f, "%" PRId64, c->i); break;
	case NP_CELL_UINT: fprintf(f, "%" PRIu64, c->u); break;
	case NP_CELL_F64:  rpt_csv_f64(f, c->f); break;
	case NP_CELL_STR:  rpt_csv_str(f, c->s); break;
	default:           break;   /* nil: empty field */
	}
}

static void rpt_csv_sep(FILE *f, size_t i) { if (i) fputc(',', f); }
static void rpt_csv_eol(FILE *f) { fputs("\r\n", f); }

static bool rpt_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

void rpt_csv_colname(char *buf, size_t size, const struct np_col *c)
{
	static const char *const measured[] = { "ns", "time_ns", "bytes", "bps", "rate",
						"ratio", "pct", "ppm", NULL };
	const char *unit = c->unit ? c->unit : "";
	bool add = false;
	for (const char *const *m = measured; *m; m++)
		if (!strcmp(unit, *m))
			add = true;
	/* timestamps (time_ns) read as "_ns" too: "time" -> "time_ns"; a rate
	 * is per second: "rate" -> "rate_per_s" */
	const char *shown = !strcmp(unit, "time_ns") ? "ns" : !strcmp(unit, "rate") ? "per_s" : unit;
	char suffix[64];
	snprintf(suffix, sizeof(suffix), "_%s", shown);
	if ((strcmp(unit, "rate") && !strcmp(c->name, unit)) || !strcmp(c->name, shown) ||
	    rpt_ends_with(c->name, suffix))
		add = false;
	snprintf(buf, size, add ? "%s_%s" : "%s", c->name, shown);
}

int rpt_csv_table(FILE *f, const struct np_table *t)
{
	char name[256];
	for (size_t c = 0; c < t->ncols; c++) {
		rpt_csv_sep(f, c);
		rpt_csv_colname(name, sizeof(name), &t->cols[c]);
		rpt_csv_str(f, name);
	}
	rpt_csv_eol(f);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			rpt_csv_sep(f, c);
			rpt_csv_cell(f, np_table_cell_c(t, r, c));
		}
		rpt_csv_eol(f);
	}
	return ferror(f) ? -1 : 0;
}

static void rpt_csv_opt(FILE *f, const char *s)
{
	fputc(',', f);
	if (s)
		rpt_csv_str(f, s);
}

int rpt_csv_findings(FILE *f, const struct np_analysis *a)
{
	size_t *idx = rpt_findings_order(a);
	fputs("rank,severity,text,table,key,metric,value", f);
	rpt_csv_eol(f);
	for (size_t i = 0; idx && i < a->nfindings; i++) {
		const struct np_finding *fd = &a->findings[idx[i]];
		fprintf(f, "%zu,%s", i + 1, rpt_severity_name(fd->severity));
		rpt_csv_opt(f, fd->text ? fd->text : "");
		rpt_csv_opt(f, fd->table);
		rpt_csv_opt(f, fd->key);
		rpt_csv_opt(f, fd->metric);
		fputc(',', f);
		rpt_csv_f64(f, fd->value);
		rpt_csv_eol(f);
	}
	free(idx);
	return ferror(f) ? -1 : 0;
}

static void rpt_csv_meta_obj(FILE *f, const char *key, const msgpack_object *v, int depth)
{
	char buf[1024];
	if (v->type == MSGPACK_OBJECT_MAP && depth < 4) {
		for (uint32_t i = 0; i < v->via.map.size; i++) {
			const msgpack_object_kv *kv = &v->via.map.ptr[i];
			char sub[256];
			if (kv->key.type != MSGPACK_OBJECT_STR)
				continue;
			snprintf(sub, sizeof(sub), "%s%s%.*s", key, *key ? "." : "",
				 (int)kv->key.via.str.size, kv->key.via.str.ptr);
			rpt_csv_meta_obj(f, sub, &kv->val, depth + 1);
		}
		return;
	}
	if (v->type == MSGPACK_OBJECT_ARRAY && depth < 4) {
		for (uint32_t i = 0; i < v->via.array.size; i++) {
			char sub[256];
			snprintf(sub, sizeof(sub), "%s[%u]", key, i);
			rpt_csv_meta_obj(f, sub, &v->via.array.ptr[i], depth + 1);
		}
		return;
	}
	rpt_obj_scalar(buf, sizeof(buf), v);
	rpt_csv_str(f, key);
	fputc(',', f);
	rpt_csv_str(f, buf);
	rpt_csv_eol(f);
}

int rpt_csv_meta(FILE *f, const struct np_analysis *a)
{
	fputs("key,value", f);
	rpt_csv_eol(f);
	if (a->meta.type == MSGPACK_OBJECT_MAP)
		rpt_csv_meta_obj(f, "", &a->meta, 0);
	return ferror(f) ? -1 : 0;
}

int rpt_csv_series(FILE *f, const struct np_analysis *a)
{
	fputs("table,key,metric,unit,t_ns,value", f);
	rpt_csv_eol(f);
	for (size_t i = 0; i < a->nseries; i++) {
		const struct np_series *s = a->series[i];
		for (size_t k = 0; k < s->n; k++) {
			rpt_csv_str(f, s->table);
			rpt_csv_opt(f, s->key);
			rpt_csv_opt(f, s->metric);
			rpt_csv_opt(f, s->unit);
			fprintf(f, ",%" PRIu64 ",", s->t[k]);
			rpt_csv_f64(f, s->v[k]);
			rpt_csv_eol(f);
		}
	}
	return ferror(f) ? -1 : 0;
}

int rpt_csv_sketches(FILE *f, const struct np_analysis *a)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	fputs("table,key,metric,unit,n,min,p50,p90,p99,p999,max,mean", f);
	rpt_csv_eol(f);
	for (size_t i = 0; i < a->nsketches; i++) {
		const struct np_sketchrec *s = &a->sketches[i];
		rpt_csv_str(f, s->table);
		rpt_csv_opt(f, s->key);
		rpt_csv_opt(f, s->metric);
		rpt_csv_opt(f, s->unit);
		fprintf(f, ",%" PRIu64 ",%" PRIu64, s->sk.n, s->sk.min);
		for (size_t q = 0; q < sizeof(qs) / sizeof(qs[0]); q++)
			fprintf(f, ",%" PRIu64, np_sketch_quantile(&s->sk, qs[q]));
		fprintf(f, ",%" PRIu64 ",", s->sk.max);
		rpt_csv_f64(f, np_sketch_mean(&s->sk));
		rpt_csv_eol(f);
	}
	return ferror(f) ? -1 : 0;
}

static int rpt_csv_to_file(const char *dir, const char *name, const struct np_analysis *a,
			   const struct np_table *t, int (*fn)(FILE *, const struct np_analysis *))
{
	char path[4096], clean[256];
	snprintf(clean, sizeof(clean), "%s", name);
	for (char *p = clean; *p; p++)
		if (!(((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == '-' || *p == '.'))
			*p = '_';
	snprintf(path, sizeof(path), "%s/%s.csv", dir, clean);
	FILE *f = rpt_create(path);
	if (!f) {
		fprintf(stderr, "npreport: cannot create %s: %s\n", path, strerror(errno));
		return -1;
	}
	int err = t ? rpt_csv_table(f, t) : fn(f, a);
	if (fclose(f) != 0 || err) {
		fprintf(stderr, "npreport: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int rpt_csv_dir(const char *dir, const struct np_analysis *a, const struct rpt_selection *sel)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "npreport: cannot create directory %s: %s\n", dir, strerror(errno));
		return -1;
	}
	int err = 0;
	if (rpt_selected_name(sel, RPT_SEC_SUMMARY, true))
		err |= rpt_csv_to_file(dir, "meta", a, NULL, rpt_csv_meta);
	if (rpt_selected_name(sel, RPT_SEC_FINDINGS, true) || rpt_selected_name(sel, RPT_SEC_SUMMARY, false))
		err |= rpt_csv_to_file(dir, "findings", a, NULL, rpt_csv_findings);
	if (rpt_selected_name(sel, RPT_SEC_INCIDENT, true) || rpt_selected_name(sel, RPT_SEC_SUMMARY, false))
		err |= rpt_csv_to_file(dir, "incident", a, NULL, rpt_incident_csv);
	if (rpt_selected_name(sel, RPT_SEC_SERIES, true))
		err |= rpt_csv_to_file(dir, "series", a, NULL, rpt_csv_series);
	if (rpt_selected_name(sel, RPT_SEC_SKETCHES, true))
		err |= rpt_csv_to_file(dir, "sketches", a, NULL, rpt_csv_sketches);
	for (size_t i = 0; i < a->ntables; i++)
		if (rpt_selected_table(sel, a->tables[i]))
			err |= rpt_csv_to_file(dir, a->tables[i]->name, a, a->tables[i], NULL);
	return err ? -1 : 0;
}

int rpt_csv_one(FILE *f, const struct np_analysis *a, const struct rpt_selection *sel)
{
	static const struct { const char *name; int (*fn)(FILE *, const struct np_analysis *); } pseudo[] = {
		{ RPT_SEC_SUMMARY, rpt_csv_meta }, { RPT_SEC_FINDINGS, rpt_csv_findings },
		{ RPT_SEC_SERIES, rpt_csv_series }, { RPT_SEC_SKETCHES, rpt_csv_sketches },
		{ RPT_SEC_INCIDENT, rpt_incident_csv },
	};
	const struct np_table *only = NULL;
	size_t nmatch = 0;
	if (sel->n == 1)
		for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
			if (!strcmp(sel->names[0], pseudo[i].name) && !np_analysis_table(a, pseudo[i].name))
				return pseudo[i].fn(f, a);
	for (size_t i = 0; sel->n == 1 && i < a->ntables; i++)
		if (rpt_selected_table(sel, a->tables[i])) {
			only = a->tables[i];
			nmatch++;
		}
	if (sel->n != 1 || nmatch != 1) {
		fprintf(stderr, "npreport: CSV to stdout takes exactly one table (--section NAME, "
			"%zu matched); use -o DIR for several\n", nmatch);
		return -1;
	}
	return rpt_csv_table(f, only);
}
