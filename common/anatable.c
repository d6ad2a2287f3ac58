/* The analysis model: tables, series, sketches and findings, packed into
 * ANA_* records and loaded back from an .npa. See anatable.h for the bodies. */
#include "anatable.h"
#include "npmsg.h"
#include "records.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANA_VERSION 1
/* A row shorter than the column list is padded with nil; the padding is
 * bounded so a few bytes of input cannot make the reader allocate gigabytes. */
#define ANA_MAX_PADDING (1u << 20)
#define ANA_MAX_DEPTH 64

static char *xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

/* msgpack-c leaves ptr NULL for empty strings: never hand that to libc. */
static char *str_copy(const char *p, uint32_t n)
{
	return n ? strndup(p, n) : strdup("");
}

static char *strndup_obj(const msgpack_object *o)
{
	if (!o || o->type != MSGPACK_OBJECT_STR)
		return NULL;
	return str_copy(o->via.str.ptr, o->via.str.size);
}

/* Optional string key: a copy, or "" when missing or not a string. */
static char *get_str_or_empty(const msgpack_object *map, const char *key)
{
	char *s = strndup_obj(np_map_get(map, key));
	return s ? s : strdup("");
}

/* ---- building tables ---- */

struct np_table *np_table_new(const char *name, const char *title, size_t nkey)
{
	struct np_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->name = xstrdup(name);
	t->title = xstrdup(title);
	t->nkey = nkey;
	return t;
}

size_t np_table_col(struct np_table *t, const char *name, const char *unit, const char *desc)
{
	if (t->nrows > 0)
		return (size_t)-1;
	struct np_col *c = realloc(t->cols, (t->ncols + 1) * sizeof(*c));
	if (!c)
		return (size_t)-1;
	t->cols = c;
	c[t->ncols].name = xstrdup(name);
	c[t->ncols].unit = xstrdup(unit);
	c[t->ncols].desc = desc ? strdup(desc) : NULL;
	return t->ncols++;
}

void np_table_col_at(struct np_table *t, size_t id, const char *name, const char *unit,
		     const char *desc)
{
	size_t got = np_table_col(t, name, unit, desc);
	assert(got == id || got == (size_t)-1);     /* -1: out of memory */
	(void)got;
}

static int table_reserve(struct np_table *t, size_t rows)
{
	if (rows <= t->cap)
		return 0;
	size_t cap = t->cap ? t->cap * 2 : 16;
	while (cap < rows)
		cap *= 2;
	size_t ncells = cap * (t->ncols ? t->ncols : 1);
	struct np_cell *cells = realloc(t->cells, ncells * sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	t->cells = cells;
	t->cap = cap;
	return 0;
}

size_t np_table_row(struct np_table *t)
{
	if (table_reserve(t, t->nrows + 1) < 0)
		return (size_t)-1;
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(struct np_cell));
	return t->nrows++;
}

struct np_cell *np_table_cell(struct np_table *t, size_t row, size_t col)
{
	if (row >= t->nrows || col >= t->ncols)
		return NULL;
	return &t->cells[row * t->ncols + col];
}

const struct np_cell *np_table_cell_c(const struct np_table *t, size_t row, size_t col)
{
	if (row >= t->nrows || col >= t->ncols)
		return NULL;
	return &t->cells[row * t->ncols + col];
}

static void cell_clear(struct np_cell *c)
{
	if (c->kind == NP_CELL_STR)
		free(c->s);
	memset(c, 0, sizeof(*c));
}

/* The cell to overwrite, emptied; NULL when out of range. */
static struct np_cell *cell_for_set(struct np_table *t, size_t row, size_t col)
{
	struct np_cell *c = np_table_cell(t, row, col);
	if (c)
		cell_clear(c);
	return c;
}

void np_table_set_u64(struct np_table *t, size_t row, size_t col, uint64_t v)
{
	struct np_cell *c = cell_for_set(t, row, col);
	if (c) { c->kind = NP_CELL_UINT; c->u = v; }
}

void np_table_set_i64(struct np_table *t, size_t row, size_t col, int64_t v)
{
	struct np_cell *c = cell_for_set(t, row, col);
	if (c) { c->kind = NP_CELL_INT; c->i = v; }
}

void np_table_set_f64(struct np_table *t, size_t row, size_t col, double v)
{
	struct np_cell *c = cell_for_set(t, row, col);
	if (c) { c->kind = NP_CELL_F64; c->f = v; }
}

void np_table_set_str(struct np_table *t, size_t row, size_t col, const char *s)
{
	struct np_cell *c = cell_for_set(t, row, col);
	if (!c || !s)
		return;
	c->s = strdup(s);
	if (c->s)
		c->kind = NP_CELL_STR;
}

int np_table_find_col(const struct np_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Formats a cell for keys; returns the number of chars written (as snprintf). */
static int cell_format(char *buf, size_t size, const struct np_cell *c)
{
	switch (c->kind) {
	case NP_CELL_INT:  return snprintf(buf, size, "%" PRId64, c->i);
	case NP_CELL_UINT: return snprintf(buf, size, "%" PRIu64, c->u);
	case NP_CELL_F64:  return snprintf(buf, size, "%.10g", c->f);
	case NP_CELL_STR:  return snprintf(buf, size, "%s", c->s);
	default:           return snprintf(buf, size, "%s", "");
	}
}

char *np_table_row_key(const struct np_table *t, size_t row)
{
	size_t nkey = t->nkey < t->ncols ? t->nkey : t->ncols;
	size_t len = 1;
	char tmp[64];
	for (size_t i = 0; i < nkey && row < t->nrows; i++) {
		const struct np_cell *c = np_table_cell_c(t, row, i);
		len += (size_t)cell_format(tmp, sizeof(tmp), c) + 1;
	}
	char *key = malloc(len);
	if (!key)
		return NULL;
	size_t off = 0;
	key[0] = '\0';
	for (size_t i = 0; i < nkey && row < t->nrows; i++) {
		if (i > 0)
			key[off++] = '|';
		off += (size_t)cell_format(key + off, len - off, np_table_cell_c(t, row, i));
	}
	return key;
}

double np_cell_f64(const struct np_cell *c)
{
	if (!c)
		return NAN;
	switch (c->kind) {
	case NP_CELL_INT:  return (double)c->i;
	case NP_CELL_UINT: return (double)c->u;
	case NP_CELL_F64:  return c->f;
	default:           return NAN;
	}
}

void np_table_free(struct np_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		cell_clear(&t->cells[i]);
	for (size_t i = 0; i < t->ncols; i++) {
		free(t->cols[i].name);
		free(t->cols[i].unit);
		free(t->cols[i].desc);
	}
	free(t->cols);
	free(t->cells);
	free(t->name);
	free(t->title);
	free(t);
}

/* ---- table records ---- */

static void pack_cell(msgpack_packer *pk, const struct np_cell *c)
{
	switch (c->kind) {
	case NP_CELL_INT:  msgpack_pack_int64(pk, c->i); break;
	case NP_CELL_UINT: msgpack_pack_uint64(pk, c->u); break;
	case NP_CELL_F64:  msgpack_pack_double(pk, c->f); break;
	case NP_CELL_STR:  np_pack_str(pk, c->s); break;
	default:           msgpack_pack_nil(pk); break;
	}
}

static void pack_col(msgpack_packer *pk, const struct np_col *c)
{
	msgpack_pack_map(pk, c->desc ? 3 : 2);
	np_pack_kv_str(pk, "name", c->name);
	np_pack_kv_str(pk, "unit", c->unit);
	if (c->desc)
		np_pack_kv_str(pk, "desc", c->desc);
}

void np_table_pack(struct np_recbuf *rb, const struct np_table *t)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_ANA_TABLE, ANA_VERSION);
	msgpack_pack_map(pk, 5);
	np_pack_kv_str(pk, "name", t->name);
	np_pack_kv_str(pk, "title", t->title);
	np_pack_kv_u64(pk, "nkey", t->nkey);
	np_pack_str(pk, "cols");
	msgpack_pack_array(pk, t->ncols);
	for (size_t i = 0; i < t->ncols; i++)
		pack_col(pk, &t->cols[i]);
	np_pack_str(pk, "rows");
	msgpack_pack_array(pk, t->nrows);
	for (size_t r = 0; r < t->nrows; r++) {
		msgpack_pack_array(pk, t->ncols);
		for (size_t c = 0; c < t->ncols; c++)
			pack_cell(pk, np_table_cell_c(t, r, c));
	}
}

/* Cells of a type this reader does not know (bin, array, map, ext) read as
 * nil: a newer writer's richer cells must not make the table unreadable. */
static int unpack_cell(struct np_cell *c, const msgpack_object *o)
{
	memset(c, 0, sizeof(*c));
	switch (o->type) {
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		c->kind = NP_CELL_UINT; c->u = o->via.u64; break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		c->kind = NP_CELL_INT; c->i = o->via.i64; break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		c->kind = NP_CELL_F64; c->f = o->via.f64; break;
	case MSGPACK_OBJECT_BOOLEAN:
		c->kind = NP_CELL_UINT; c->u = o->via.boolean ? 1 : 0; break;
	case MSGPACK_OBJECT_STR:
		c->s = str_copy(o->via.str.ptr, o->via.str.size);
		if (!c->s)
			return -ENOMEM;
		c->kind = NP_CELL_STR;
		break;
	default:
		break;
	}
	return 0;
}

static int unpack_cols(struct np_table *t, const msgpack_object_array *cols)
{
	t->cols = calloc(cols->size ? cols->size : 1, sizeof(*t->cols));
	if (!t->cols)
		return -ENOMEM;
	for (uint32_t i = 0; i < cols->size; i++) {
		const msgpack_object *m = &cols->ptr[i];
		if (m->type != MSGPACK_OBJECT_MAP)
			return -EINVAL;
		struct np_col *c = &t->cols[t->ncols];
		c->name = strndup_obj(np_map_get(m, "name"));
		if (!c->name)
			return -EINVAL;
		t->ncols++;
		c->unit = get_str_or_empty(m, "unit");
		c->desc = strndup_obj(np_map_get(m, "desc"));
		if (!c->unit)
			return -ENOMEM;
	}
	return 0;
}

static int unpack_rows(struct np_table *t, const msgpack_object_array *rows)
{
	uint64_t padding = 0;
	for (uint32_t r = 0; r < rows->size; r++) {
		const msgpack_object *row = &rows->ptr[r];
		if (row->type != MSGPACK_OBJECT_ARRAY)
			return -EINVAL;
		if (row->via.array.size < t->ncols) {
			padding += t->ncols - row->via.array.size;
			if (padding > ANA_MAX_PADDING)
				return -EINVAL;
		}
	}
	if (t->ncols == 0)
		return 0;   /* rows of a table without columns hold nothing */
	if (table_reserve(t, rows->size) < 0)
		return -ENOMEM;
	for (uint32_t r = 0; r < rows->size; r++) {
		const msgpack_object_array *row = &rows->ptr[r].via.array;
		size_t idx = np_table_row(t);
		for (size_t c = 0; c < t->ncols && c < row->size; c++)
			if (unpack_cell(np_table_cell(t, idx, c), &row->ptr[c]) < 0)
				return -ENOMEM;
	}
	return 0;
}

struct np_table *np_table_unpack(const msgpack_object *body)
{
	if (!body || body->type != MSGPACK_OBJECT_MAP)
		return NULL;
	const msgpack_object_array *cols = np_get_array(body, "cols");
	const msgpack_object_array *rows = np_get_array(body, "rows");
	char *name = strndup_obj(np_map_get(body, "name"));
	if (!cols || !rows || !name) {
		free(name);
		return NULL;
	}
	struct np_table *t = calloc(1, sizeof(*t));
	if (!t) {
		free(name);
		return NULL;
	}
	t->name = name;
	t->title = get_str_or_empty(body, "title");
	uint64_t nkey = 0;
	np_get_u64(body, "nkey", &nkey);
	if (!t->title || unpack_cols(t, cols) < 0 || unpack_rows(t, rows) < 0) {
		np_table_free(t);
		return NULL;
	}
	t->nkey = nkey < t->ncols ? (size_t)nkey : t->ncols;
	return t;
}

/* ---- series, sketches, findings ---- */

static void pack_ident(msgpack_packer *pk, const char *table, const char *key,
		       const char *metric, const char *unit)
{
	np_pack_kv_str(pk, "table", table ? table : "");
	np_pack_kv_str(pk, "key", key ? key : "");
	np_pack_kv_str(pk, "metric", metric ? metric : "");
	np_pack_kv_str(pk, "unit", unit ? unit : "");
}

void np_series_pack(struct np_recbuf *rb, const char *table, const char *key,
		    const char *metric, const char *unit,
		    const uint64_t *t, const double *v, size_t n)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_ANA_SERIES, ANA_VERSION);
	msgpack_pack_map(pk, 6);
	pack_ident(pk, table, key, metric, unit);
	np_pack_kv_u64_delta(pk, "t_d", t, n);
	np_pack_str(pk, "v");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_double(pk, v[i]);
}

void np_series_free(struct np_series *s)
{
	if (!s)
		return;
	free(s->table);
	free(s->key);
	free(s->metric);
	free(s->unit);
	free(s->t);
	free(s->v);
	free(s);
}

/* Reads the four identifying strings shared by series and sketch records. */
static int unpack_ident(const msgpack_object *body, char **table, char **key,
			char **metric, char **unit)
{
	*table = strndup_obj(np_map_get(body, "table"));
	*key = get_str_or_empty(body, "key");
	*metric = strndup_obj(np_map_get(body, "metric"));
	*unit = get_str_or_empty(body, "unit");
	return (*table && *key && *metric && *unit) ? 0 : -EINVAL;
}

struct np_series *np_series_unpack(const msgpack_object *body)
{
	if (!body || body->type != MSGPACK_OBJECT_MAP)
		return NULL;
	struct np_series *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	const msgpack_object_array *t = np_get_array(body, "t_d");
	const msgpack_object_array *v = np_get_array(body, "v");
	if (unpack_ident(body, &s->table, &s->key, &s->metric, &s->unit) < 0 ||
	    !t || !v || t->size != v->size)
		goto bad;
	s->n = v->size;
	if (s->n == 0)
		return s;
	size_t nt = 0;
	s->t = np_get_u64_delta(body, "t_d", &nt);
	s->v = malloc(s->n * sizeof(*s->v));
	if (!s->t || nt != s->n || !s->v)
		goto bad;
	for (size_t i = 0; i < s->n; i++)
		if (np_obj_f64(&v->ptr[i], &s->v[i]) < 0)
			s->v[i] = NAN;   /* nil or unknown: no value for this interval */
	return s;
bad:
	np_series_free(s);
	return NULL;
}

void np_sketchrec_pack(struct np_recbuf *rb, const char *table, const char *key,
		       const char *metric, const char *unit, const struct np_sketch *s)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_ANA_SKETCH, ANA_VERSION);
	msgpack_pack_map(pk, 5);
	pack_ident(pk, table, key, metric, unit);
	np_pack_str(pk, "sketch");
	np_sketch_pack(pk, s);
}

void np_finding_pack(struct np_recbuf *rb, int severity, const char *text,
		     const char *table, const char *key, const char *metric, double value)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_ANA_FINDING, ANA_VERSION);
	uint32_t n = 2 + (table != NULL) + (key != NULL) + (metric != NULL) + !isnan(value);
	msgpack_pack_map(pk, n);
	np_pack_kv_u64(pk, "severity", severity < 0 ? 0 : (uint64_t)severity);
	np_pack_kv_str(pk, "text", text ? text : "");
	if (table)
		np_pack_kv_str(pk, "table", table);
	if (key)
		np_pack_kv_str(pk, "key", key);
	if (metric)
		np_pack_kv_str(pk, "metric", metric);
	if (!isnan(value))
		np_pack_kv_f64(pk, "value", value);
}

/* ---- loading an analysis ---- */

struct loader {
	struct np_analysis *a;
};

static int grow(void **arr, size_t n, size_t elem)
{
	/* Grow at powers of two: n is the count before adding one. */
	if (n & (n - 1))
		return 0;
	void *p = realloc(*arr, (n ? n * 2 : 1) * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

/* Deep copy of a decoded object into zone, so ANA_META outlives the reader. */
static int obj_copy(msgpack_zone *z, msgpack_object *dst, const msgpack_object *src, int depth)
{
	*dst = *src;
	if (depth > ANA_MAX_DEPTH)
		return -EINVAL;
	switch (src->type) {
	case MSGPACK_OBJECT_STR:
	case MSGPACK_OBJECT_BIN:
	case MSGPACK_OBJECT_EXT: {
		uint32_t size = src->type == MSGPACK_OBJECT_STR ? src->via.str.size :
				src->type == MSGPACK_OBJECT_BIN ? src->via.bin.size : src->via.ext.size;
		const char *from = src->type == MSGPACK_OBJECT_STR ? src->via.str.ptr :
				   src->type == MSGPACK_OBJECT_BIN ? src->via.bin.ptr : src->via.ext.ptr;
		char *p = msgpack_zone_malloc(z, size ? size : 1);
		if (!p)
			return -ENOMEM;
		if (size)   /* an empty str may have a NULL ptr */
			memcpy(p, from, size);
		if (src->type == MSGPACK_OBJECT_STR)
			dst->via.str.ptr = p;
		else if (src->type == MSGPACK_OBJECT_BIN)
			dst->via.bin.ptr = p;
		else
			dst->via.ext.ptr = p;
		return 0;
	}
	case MSGPACK_OBJECT_ARRAY: {
		uint32_t n = src->via.array.size;
		msgpack_object *p = msgpack_zone_malloc(z, (n ? n : 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		dst->via.array.ptr = p;
		for (uint32_t i = 0; i < n; i++)
			if (obj_copy(z, &p[i], &src->via.array.ptr[i], depth + 1) < 0)
				return -EINVAL;
		return 0;
	}
	case MSGPACK_OBJECT_MAP: {
		uint32_t n = src->via.map.size;
		msgpack_object_kv *p = msgpack_zone_malloc(z, (n ? n : 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		dst->via.map.ptr = p;
		for (uint32_t i = 0; i < n; i++)
			if (obj_copy(z, &p[i].key, &src->via.map.ptr[i].key, depth + 1) < 0 ||
			    obj_copy(z, &p[i].val, &src->via.map.ptr[i].val, depth + 1) < 0)
				return -EINVAL;
		return 0;
	}
	default:
		return 0;
	}
}

static int load_meta(struct loader *l, const msgpack_object *body)
{
	struct np_analysis *a = l->a;
	msgpack_zone *z = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
	msgpack_object copy;
	if (!z)
		return -ENOMEM;
	if (obj_copy(z, &copy, body, 0) < 0) {
		msgpack_zone_free(z);
		return -EINVAL;
	}
	/* A later meta record replaces an earlier one. */
	if (a->meta_zone)
		msgpack_zone_free(a->meta_zone);
	a->meta_zone = z;
	a->meta = copy;
	return 0;
}

static int load_table(struct loader *l, const msgpack_object *body)
{
	struct np_analysis *a = l->a;
	struct np_table *t = np_table_unpack(body);
	if (!t)
		return -EINVAL;
	if (grow((void **)&a->tables, a->ntables, sizeof(*a->tables)) < 0) {
		np_table_free(t);
		return -ENOMEM;
	}
	a->tables[a->ntables++] = t;
	return 0;
}

static int load_series(struct loader *l, const msgpack_object *body)
{
	struct np_analysis *a = l->a;
	struct np_series *s = np_series_unpack(body);
	if (!s)
		return -EINVAL;
	if (grow((void **)&a->series, a->nseries, sizeof(*a->series)) < 0) {
		np_series_free(s);
		return -ENOMEM;
	}
	a->series[a->nseries++] = s;
	return 0;
}

static void sketchrec_clear(struct np_sketchrec *s)
{
	free(s->table);
	free(s->key);
	free(s->metric);
	free(s->unit);
	np_sketch_free(&s->sk);
}

static int load_sketch(struct loader *l, const msgpack_object *body)
{
	struct np_analysis *a = l->a;
	struct np_sketchrec s = { 0 };
	np_sketch_init(&s.sk);
	const msgpack_object *sk = np_map_get(body, "sketch");
	if (unpack_ident(body, &s.table, &s.key, &s.metric, &s.unit) < 0 || !sk ||
	    np_sketch_unpack(&s.sk, sk) < 0 ||
	    grow((void **)&a->sketches, a->nsketches, sizeof(*a->sketches)) < 0) {
		sketchrec_clear(&s);
		return -EINVAL;
	}
	a->sketches[a->nsketches++] = s;
	return 0;
}

static void finding_clear(struct np_finding *f)
{
	free(f->text);
	free(f->table);
	free(f->key);
	free(f->metric);
}

static int load_finding(struct loader *l, const msgpack_object *body)
{
	struct np_analysis *a = l->a;
	struct np_finding f = { 0 };
	uint64_t sev = 0;
	f.text = strndup_obj(np_map_get(body, "text"));
	f.table = strndup_obj(np_map_get(body, "table"));
	f.key = strndup_obj(np_map_get(body, "key"));
	f.metric = strndup_obj(np_map_get(body, "metric"));
	if (np_get_f64(body, "value", &f.value) < 0)
		f.value = NAN;
	np_get_u64(body, "severity", &sev);
	f.severity = sev > 2 ? 2 : (int)sev;
	if (!f.text || grow((void **)&a->findings, a->nfindings, sizeof(*a->findings)) < 0) {
		finding_clear(&f);
		return -EINVAL;
	}
	a->findings[a->nfindings++] = f;
	return 0;
}

static int load_record(struct loader *l, const struct np_record *rec)
{
	if (!rec->body || rec->body->type != MSGPACK_OBJECT_MAP)
		return -EINVAL;
	switch (rec->type) {
	case NP_REC_ANA_META:    return load_meta(l, rec->body);
	case NP_REC_ANA_TABLE:   return load_table(l, rec->body);
	case NP_REC_ANA_SERIES:  return load_series(l, rec->body);
	case NP_REC_ANA_SKETCH:  return load_sketch(l, rec->body);
	case NP_REC_ANA_FINDING: return load_finding(l, rec->body);
	default:                 return 0;   /* not part of the model: skipped */
	}
}

static int load_from(struct np_analysis *a, struct np_reader *r, np_warn_fn warn, void *ctx)
{
	struct loader l = { .a = a };
	(void)warn;   /* the reader has it (np_reader_warn_rec) */
	(void)ctx;
	enum np_file_kind kind = np_reader_kind(r);
	if (kind != NP_KIND_ANALYSIS && kind != 0) {
		np_reader_close(r);
		return -EINVAL;
	}
	struct np_record rec;
	while (np_reader_next(r, &rec) == 1) {
		int err = load_record(&l, &rec);
		if (err == -ENOMEM) {
			np_reader_close(r);
			np_analysis_free(a);
			return err;
		}
		if (err < 0)   /* capped with the reader's warnings (FORMAT.md 4.3) */
			np_reader_warn_rec(r, "malformed %s record in chunk %" PRIu64 " (offset %" PRIu64 ") skipped",
					   np_rec_type_name(rec.type), rec.chunk_index, rec.file_offset);
	}
	a->stats = *np_reader_stats(r);
	np_reader_close(r);
	return 0;
}

static void analysis_init(struct np_analysis *a)
{
	memset(a, 0, sizeof(*a));
	a->meta.type = MSGPACK_OBJECT_NIL;
}

int np_analysis_load(struct np_analysis *a, const char *path, np_warn_fn warn, void *ctx)
{
	struct np_reader *r;
	analysis_init(a);
	int err = np_reader_open(&r, path, warn, ctx);
	if (err < 0)
		return err;
	return load_from(a, r, warn, ctx);
}

int np_analysis_load_mem(struct np_analysis *a, const void *data, size_t len,
			 np_warn_fn warn, void *ctx)
{
	struct np_reader *r;
	analysis_init(a);
	int err = np_reader_open_mem(&r, data, len, warn, ctx);
	if (err < 0)
		return err;
	return load_from(a, r, warn, ctx);
}

const struct np_table *np_analysis_table(const struct np_analysis *a, const char *name)
{
	for (size_t i = 0; i < a->ntables; i++)
		if (strcmp(a->tables[i]->name, name) == 0)
			return a->tables[i];
	return NULL;
}

void np_analysis_free(struct np_analysis *a)
{
	for (size_t i = 0; i < a->ntables; i++)
		np_table_free(a->tables[i]);
	for (size_t i = 0; i < a->nseries; i++)
		np_series_free(a->series[i]);
	for (size_t i = 0; i < a->nsketches; i++)
		sketchrec_clear(&a->sketches[i]);
	for (size_t i = 0; i < a->nfindings; i++)
		finding_clear(&a->findings[i]);
	free(a->tables);
	free(a->series);
	free(a->sketches);
	free(a->findings);
	if (a->meta_zone)
		msgpack_zone_free(a->meta_zone);
	analysis_init(a);
}
