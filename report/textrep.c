#include "textrep.h"
#include "incident.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPT_TOP_FINDINGS 3

double rpt_analysis_t0(const struct np_analysis *a)
{
	double t0 = INFINITY;
	for (size_t i = 0; i < a->nseries; i++)
		for (size_t k = 0; k < a->series[i]->n; k++)
			if ((double)a->series[i]->t[k] < t0)
				t0 = (double)a->series[i]->t[k];
	for (size_t i = 0; i < a->ntables; i++) {
		const struct np_table *t = a->tables[i];
		for (size_t c = 0; c < t->ncols; c++) {
			if (rpt_ukind_of(t->cols[c].unit) != RPT_U_TIME)
				continue;
			for (size_t r = 0; r < t->nrows; r++) {
				double v = np_cell_f64(np_table_cell_c(t, r, c));
				if (!isnan(v) && v < t0)
					t0 = v;
			}
		}
	}
	return isinf(t0) ? 0 : t0;
}

const char *rpt_severity_name(int severity)
{
	switch (severity) {
	case 0:  return "info";
	case 1:  return "warn";
	default: return "bad";
	}
}

static const struct np_analysis *rpt_sort_a;
static int rpt_cmp_finding(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int si = rpt_sort_a->findings[i].severity, sj = rpt_sort_a->findings[j].severity;
	if (si != sj)
		return sj - si;
	return (i > j) - (i < j);
}

size_t *rpt_findings_order(const struct np_analysis *a)
{
	size_t *idx = malloc((a->nfindings + 1) * sizeof(size_t));
	if (!idx)
		return NULL;
	for (size_t i = 0; i < a->nfindings; i++)
		idx[i] = i;
	rpt_sort_a = a;
	qsort(idx, a->nfindings, sizeof(size_t), rpt_cmp_finding);
	return idx;
}

void rpt_obj_scalar(char *buf, size_t size, const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_STR:
		snprintf(buf, size, "%.*s", (int)o->via.str.size, o->via.str.ptr);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		snprintf(buf, size, "%llu", (unsigned long long)o->via.u64);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		snprintf(buf, size, "%lld", (long long)o->via.i64);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		snprintf(buf, size, "%g", o->via.f64);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		snprintf(buf, size, "%s", o->via.boolean ? "yes" : "no");
		break;
	case MSGPACK_OBJECT_NIL:
		snprintf(buf, size, "-");
		break;
	default:
		snprintf(buf, size, "(%s)", o->type == MSGPACK_OBJECT_MAP ? "map" : "data");
		break;
	}
}

static bool rpt_is_scalar(const msgpack_object *o)
{
	return o->type != MSGPACK_OBJECT_MAP && o->type != MSGPACK_OBJECT_ARRAY;
}

/* An array of maps becomes a table whose columns are the union of the keys. */
static struct np_table *rpt_maps_to_table(const char *name, const msgpack_object_array *arr)
{
	struct np_table *t = np_table_new(name, name, 0);
	if (!t)
		return NULL;
	for (uint32_t i = 0; i < arr->size; i++) {
		const msgpack_object *m = &arr->ptr[i];
		if (m->type != MSGPACK_OBJECT_MAP)
			continue;
		for (uint32_t k = 0; k < m->via.map.size; k++) {
			const msgpack_object *key = &m->via.map.ptr[k].key;
			char kbuf[128];
			if (key->type != MSGPACK_OBJECT_STR)
				continue;
			snprintf(kbuf, sizeof(kbuf), "%.*s", (int)key->via.str.size, key->via.str.ptr);
			if (np_table_find_col(t, kbuf) < 0)
				np_table_col(t, kbuf, "str", NULL);
		}
	}
	for (uint32_t i = 0; i < arr->size; i++) {
		const msgpack_object *m = &arr->ptr[i];
		if (m->type != MSGPACK_OBJECT_MAP)
			continue;
		size_t r = np_table_row(t);
		for (uint32_t k = 0; k < m->via.map.size; k++) {
			const msgpack_object *key = &m->via.map.ptr[k].key;
			char kbuf[128], vbuf[512];
			if (key->type != MSGPACK_OBJECT_STR)
				continue;
			snprintf(kbuf, sizeof(kbuf), "%.*s", (int)key->via.str.size, key->via.str.ptr);
			rpt_obj_scalar(vbuf, sizeof(vbuf), &m->via.map.ptr[k].val);
			int c = np_table_find_col(t, kbuf);
			if (c >= 0)
				np_table_set_str(t, r, (size_t)c, vbuf);
		}
	}
	return t;
}

struct np_table *rpt_meta_table(const struct np_analysis *a, const char *key)
{
	const msgpack_object *m = &a->meta;
	size_t kl = strlen(key);
	for (uint32_t i = 0; m->type == MSGPACK_OBJECT_MAP && i < m->via.map.size; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];
		if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == kl &&
		    !memcmp(kv->key.via.str.ptr, key, kl) && kv->val.type == MSGPACK_OBJECT_ARRAY)
			return rpt_maps_to_table(key, &kv->val.via.array);
	}
	return NULL;
}

/* Word-wraps text to width; continuation lines indented by indent. */
void rpt_wrap(FILE *f, const char *text, size_t first_col, size_t indent, size_t width)
{
	size_t col = first_col;
	bool fresh = true;
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		size_t wl = strcspn(p, " ");
		if (!wl)
			break;
		char word[1024];
		snprintf(word, sizeof(word), "%.*s", (int)(wl < sizeof(word) ? wl : sizeof(word) - 1), p);
		size_t ww = rpt_strwidth(word);
		if (!fresh && col + 1 + ww > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			fresh = true;
		}
		if (!fresh) {
			fputc(' ', f);
			col++;
		}
		fputs(word, f);
		col += ww;
		fresh = false;
		p += wl;
	}
	fputc('\n', f);
}

static void rpt_meta_value(FILE *f, const char *key, const msgpack_object *v,
			   const struct rpt_textopt *o, int depth)
{
	char buf[1024];
	if (rpt_is_scalar(v)) {
		rpt_obj_scalar(buf, sizeof(buf), v);
		fprintf(f, "  %-18s %s\n", key, buf);
		return;
	}
	if (v->type == MSGPACK_OBJECT_MAP && depth < 3) {
		for (uint32_t i = 0; i < v->via.map.size; i++) {
			const msgpack_object_kv *kv = &v->via.map.ptr[i];
			char sub[256];
			if (kv->key.type != MSGPACK_OBJECT_STR)
				continue;
			snprintf(sub, sizeof(sub), "%s%s%.*s", key, *key ? "." : "",
				 (int)kv->key.via.str.size, kv->key.via.str.ptr);
			rpt_meta_value(f, sub, &kv->val, o, depth + 1);
		}
		return;
	}
	if (v->type != MSGPACK_OBJECT_ARRAY)
		return;
	const msgpack_object_array *arr = &v->via.array;
	bool all_scalar = true;
	for (uint32_t i = 0; i < arr->size; i++)
		if (!rpt_is_scalar(&arr->ptr[i]))
			all_scalar = false;
	if (all_scalar) {
		size_t total = 21, width = o->width >= 40 ? (size_t)o->width : 80;
		for (uint32_t i = 0; i < arr->size; i++) {
			rpt_obj_scalar(buf, sizeof(buf), &arr->ptr[i]);
			total += rpt_strwidth(buf) + 2;
		}
		fprintf(f, "  %-18s", key);
		if (total <= width) {
			for (uint32_t i = 0; i < arr->size; i++) {
				rpt_obj_scalar(buf, sizeof(buf), &arr->ptr[i]);
				fprintf(f, "%s%s", i ? ", " : " ", buf);
			}
			fputc('\n', f);
			return;
		}
		for (uint32_t i = 0; i < arr->size; i++) {   /* one wrapped item per line */
			rpt_obj_scalar(buf, sizeof(buf), &arr->ptr[i]);
			if (i)
				fprintf(f, "  %-18s", "");
			fputs(" - ", f);
			rpt_wrap(f, buf, 23, 23, width);
		}
		return;
	}
	struct np_table *t = rpt_maps_to_table(key, arr);
	if (t) {
		struct rpt_textopt so = *o;
		so.heading = key;
		fputc('\n', f);
		rpt_text_table(f, t, &so);
		np_table_free(t);
	}
}

static void rpt_part_summary(FILE *f, const struct np_analysis *a, const struct rpt_textopt *o)
{
	fprintf(f, "  %-18s %zu tables, %zu series, %zu sketches, %zu findings\n", "content",
		a->ntables, a->nseries, a->nsketches, a->nfindings);
	if (a->meta.type == MSGPACK_OBJECT_MAP)
		rpt_meta_value(f, "", &a->meta, o, 0);
	const struct np_reader_stats *st = &a->stats;
	if (st->chunks_bad || st->bytes_skipped || st->records_bad || st->truncated ||
	    st->bad_file_header)
		fprintf(f, "  WARNING: damaged analysis file: %llu bad chunks, %llu bytes skipped, "
			"%llu bad records%s%s\n", (unsigned long long)st->chunks_bad,
			(unsigned long long)st->bytes_skipped, (unsigned long long)st->records_bad,
			st->truncated ? ", truncated" : "",
			st->bad_file_header ? ", bad file header" : "");
}

/* One block per file: what it holds, its meta, damage. */
static void rpt_summary(FILE *f, const struct rpt_inputs *in, const struct rpt_textopt *o)
{
	fputs("Analysis files\n", f);
	for (size_t i = 0; i < in->n; i++) {
		if (in->n > 1)
			fprintf(f, "%s[%s]\n", i ? "\n" : "", in->paths[i]);
		rpt_part_summary(f, &in->parts[i], o);
	}
	fputc('\n', f);
}

static void rpt_findings(FILE *f, const struct np_analysis *a, size_t limit, size_t width)
{
	size_t *idx = rpt_findings_order(a);
	size_t n = a->nfindings;
	if (limit && n > limit)
		n = limit;
	if (limit)
		fprintf(f, "Findings (%s%zu of %zu)\n", n < a->nfindings ? "worst " : "", n, a->nfindings);
	else
		fprintf(f, "All findings (%zu)\n", a->nfindings);
	if (a->nfindings == 0)
		fputs("  none recorded\n", f);
	for (size_t i = 0; idx && i < n; i++) {
		const struct np_finding *fd = &a->findings[idx[i]];
		char head[32];
		int hl = snprintf(head, sizeof(head), "  %zu. [%s] ", i + 1, rpt_severity_name(fd->severity));
		fputs(head, f);
		rpt_wrap(f, fd->text ? fd->text : "", (size_t)hl, 5, width);
	}
	if (limit && n < a->nfindings)
		fprintf(f, "  (%zu more: --section findings)\n", a->nfindings - n);
	fputc('\n', f);
	free(idx);
}

/* The "X/" prefix every host name of the meta shares (hosts named
 * "hostname/netns"), when there are at least two hosts: it says nothing. */
static void rpt_host_prefix(char *buf, size_t size, const struct np_analysis *a)
{
	buf[0] = '\0';
	const msgpack_object *m = &a->meta, *hosts = NULL;
	for (uint32_t i = 0; m->type == MSGPACK_OBJECT_MAP && i < m->via.map.size; i++)
		if (m->via.map.ptr[i].key.type == MSGPACK_OBJECT_STR && m->via.map.ptr[i].key.via.str.size == 5 &&
		    !memcmp(m->via.map.ptr[i].key.via.str.ptr, "hosts", 5))
			hosts = &m->via.map.ptr[i].val;
	if (!hosts || hosts->type != MSGPACK_OBJECT_ARRAY || hosts->via.array.size < 2)
		return;
	for (uint32_t i = 0; i < hosts->via.array.size; i++) {
		char name[256] = "";
		const msgpack_object *h = &hosts->via.array.ptr[i];
		for (uint32_t k = 0; h->type == MSGPACK_OBJECT_MAP && k < h->via.map.size; k++)
			if (h->via.map.ptr[k].key.type == MSGPACK_OBJECT_STR && h->via.map.ptr[k].key.via.str.size == 4 &&
			    !memcmp(h->via.map.ptr[k].key.via.str.ptr, "name", 4))
				rpt_obj_scalar(name, sizeof(name), &h->via.map.ptr[k].val);
		const char *slash = strchr(name, '/');
		if (!slash || !slash[1] || (i && (strlen(buf) != (size_t)(slash + 1 - name) ||
						  strncmp(buf, name, strlen(buf))))) {
			buf[0] = '\0';
			return;
		}
		if (!i)
			snprintf(buf, size, "%.*s", (int)(slash + 1 - name), name);
	}
}

void rpt_text_report(FILE *f, const struct np_analysis *a, const struct rpt_inputs *in,
		     const struct rpt_selection *sel, const struct rpt_textopt *oin)
{
	char prefix[64];
	struct rpt_textopt ocopy = *oin;
	const struct rpt_textopt *o = &ocopy;
	rpt_host_prefix(prefix, sizeof(prefix), a);
	ocopy.strip = prefix;
	ocopy.fold = true;
	size_t width = o->width >= 40 ? (size_t)o->width : 80;
	bool all = rpt_selected_name(sel, RPT_SEC_SUMMARY, true);
	if (all)
		fprintf(f, "np analysis report: %s%s\n%s%s%s\n", in->paths[0], in->n > 1 ? " + ..." : "",
			*prefix ? "(in the tables, host names without their common prefix '" : "", prefix,
			*prefix ? "')\n" : "");
	if (all || rpt_selected_name(sel, RPT_SEC_INCIDENT, false)) {
		struct rpt_incident inc;
		rpt_incident_build(a, &inc);
		rpt_incident_text(f, &inc, width);
	}
	if (all) {
		rpt_findings(f, a, RPT_TOP_FINDINGS, width);
		rpt_summary(f, in, o);
	}
	if (sel->n && rpt_selected_name(sel, RPT_SEC_FINDINGS, false))
		rpt_findings(f, a, 0, o->width >= 40 ? (size_t)o->width : 80);
	const struct np_table **tabs;
	size_t n = rpt_tables_ordered(a, &tabs), last = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		if (!rpt_selected_table(sel, tabs[i]))
			continue;
		size_t sec = rpt_section_of(tabs[i]->name);
		if (sec != last)             /* a banner per section */
			fprintf(f, "=== %s ===\n\n", sec < rpt_nsections ? rpt_sections[sec].title
									 : "Other tables");
		last = sec;
		rpt_text_table(f, tabs[i], o);
	}
	free(tabs);
}
