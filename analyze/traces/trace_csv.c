/* CSV request tables through libcsv. The input is fed one physical line at
 * a time so errors can name the line they are on. */
#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "trace.h"

#define TRACE_MAX_FILE (1ULL << 31)

int trace_read_file(const char *path, size_t max, char **data, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	int rc = buf ? 0 : -ENOMEM;
	while (!rc) {
		if (n == cap) {
			if (cap >= max) { snprintf(err, errlen, "%s: larger than %zu bytes", path, max); rc = -EFBIG; break; }
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) { rc = -ENOMEM; break; }
			buf = nb; cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR) continue;
			rc = -errno;
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		} else if (r == 0) {
			break;
		} else {
			n += (size_t)r;
		}
	}
	close(fd);
	if (rc) { free(buf); if (rc == -ENOMEM) snprintf(err, errlen, "out of memory reading %s", path); return rc; }
	buf[n] = 0;
	*data = buf;
	*len = n;
	return 0;
}

enum { COL_RPC = 0, COL_ID, COL_LAT };

struct csvst {
	struct pat_table *t;
	char *err;
	size_t errlen;
	int rc;
	size_t line, record;         /* physical line being fed, records seen */
	size_t ncols, cap, field;
	int *kind, *rpc;
	double *scale;
	char **cell;                  /* current row's fields (NULL = empty) */
	bool have_lat;
};

static void csv_fail(struct csvst *s, int rc, const char *fmt, const char *a, const char *b)
{
	if (s->rc) return;
	s->rc = rc;
	int n = snprintf(s->err, s->errlen, "line %zu: ", s->line);
	if (n >= 0 && (size_t)n < s->errlen) snprintf(s->err + n, s->errlen - (size_t)n, fmt, a, b);
}

/* "getCart_us" -> name "getCart", scale 1e-3 (to ms). */
static double split_unit(char *name)
{
	static const struct { const char *u; double scale; } units[] = {
		{ "ns", 1e-6 }, { "us", 1e-3 }, { "µs", 1e-3 }, { "ms", 1 }, { "s", 1e3 },
	};
	size_t n = strlen(name);
	while (n && isspace((unsigned char)name[n - 1])) name[--n] = 0;
	char close = n ? name[n - 1] : 0;
	for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
		size_t ul = strlen(units[k].u);
		if (close == ')' || close == ']') {
			char open = close == ')' ? '(' : '[';
			if (n >= ul + 2 && name[n - ul - 2] == open && !strncmp(name + n - ul - 1, units[k].u, ul)) {
				name[n - ul - 2] = 0;
				size_t m = strlen(name);
				while (m && isspace((unsigned char)name[m - 1])) name[--m] = 0;
				return units[k].scale;
			}
		} else if (n > ul + 1 && name[n - ul - 1] == '_' && !strcmp(name + n - ul, units[k].u)) {
			name[n - ul - 1] = 0;
			return units[k].scale;
		}
	}
	return 1;
}

static void header_field(struct csvst *s, char *f)
{
	if (s->ncols == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		int *k = realloc(s->kind, cap * sizeof(int)), *r = k ? realloc(s->rpc, cap * sizeof(int)) : NULL;
		if (k) s->kind = k;
		if (r) s->rpc = r;
		double *sc = r ? realloc(s->scale, cap * sizeof(double)) : NULL;
		if (sc) s->scale = sc;
		char **c = sc ? realloc(s->cell, cap * sizeof(char *)) : NULL;
		if (!c) { csv_fail(s, -ENOMEM, "out of memory%s%s", "", ""); return; }
		s->cell = c;
		s->cap = cap;
	}
	size_t i = s->ncols++;
	char *name = strdup(f ? f : "");
	if (!name) { csv_fail(s, -ENOMEM, "out of memory%s%s", "", ""); return; }
	s->scale[i] = split_unit(name);
	s->cell[i] = NULL;
	s->rpc[i] = -1;
	if (!strcasecmp(name, "id") || !strcasecmp(name, "request_id") || !strcasecmp(name, "trace_id")) {
		s->kind[i] = COL_ID;
	} else if (!strcasecmp(name, "latency") || !strcasecmp(name, "L") || !strcasecmp(name, "duration")) {
		if (s->have_lat) csv_fail(s, -EINVAL, "two latency columns ('%s')%s", name, "");
		s->kind[i] = COL_LAT;
		s->have_lat = true;
	} else if (!name[0]) {
		csv_fail(s, -EINVAL, "empty column name in the header (column %s)%s", "?", "");
	} else {
		s->kind[i] = COL_RPC;
		s->rpc[i] = pat_table_rpc(s->t, name);
		if (s->rpc[i] < 0) csv_fail(s, -ENOMEM, "out of memory%s%s", "", "");
	}
	free(name);
}

static void cb_field(void *f, size_t len, void *data)
{
	struct csvst *s = data;
	(void)len;
	if (s->rc) return;
	if (s->record == 0) { header_field(s, f); return; }
	if (s->field >= s->ncols) { s->field++; return; }
	free(s->cell[s->field]);
	s->cell[s->field++] = f ? strdup(f) : NULL;
}

/* Strict number: optional spaces, a finite value >= 0, nothing else. */
/* Plain decimals ("123", "12.345") of at most 15 digits: the integer of
 * their digits is exact in a double and so is 10^k (k <= 15), and IEEE
 * division rounds correctly, so m / 10^k is what strtod returns (Clinger's
 * fast path) at a fraction of its cost (strtod was ~13 % of importing
 * 100 000 requests). Anything else: false, strtod decides. */
static bool plain_decimal(const char *f, double *out)
{
	static const double p10[16] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
					1e11, 1e12, 1e13, 1e14, 1e15 };
	uint64_t m = 0;
	int digits = 0, frac = -1;
	for (const char *c = f; *c; c++) {
		if (*c == '.' && frac < 0) { frac = 0; continue; }
		if (*c < '0' || *c > '9' || ++digits > 15) return false;
		m = m * 10 + (uint64_t)(*c - '0');
		if (frac >= 0) frac++;
	}
	if (!digits) return false;
	*out = (double)m / p10[frac > 0 ? frac : 0];
	return true;
}

static int parse_ms(const char *f, double scale, double *out)
{
	double v;
	if (plain_decimal(f, &v)) {
		*out = v * scale;
		return 0;
	}
	char *end;
	errno = 0;
	v = strtod(f, &end);
	while (isspace((unsigned char)*end)) end++;
	if (end == f || *end || errno || !isfinite(v) || v < 0) return -1;
	*out = v * scale;
	return 0;
}

static void data_row(struct csvst *s)
{
	char nb[32];
	if (s->field != s->ncols) {
		snprintf(nb, sizeof(nb), "%zu", s->field);
		char hb[32];
		snprintf(hb, sizeof(hb), "%zu", s->ncols);
		csv_fail(s, -EINVAL, "%s fields, the header has %s", nb, hb);
		return;
	}
	const char *id = NULL;
	double lat = NAN;
	for (size_t i = 0; i < s->ncols; i++) {
		if (s->kind[i] == COL_ID) id = s->cell[i];
		if (s->kind[i] == COL_LAT) {
			if (!s->cell[i] || parse_ms(s->cell[i], s->scale[i], &lat)) {
				csv_fail(s, -EINVAL, "latency is not a duration: '%s'%s", s->cell[i] ? s->cell[i] : "", "");
				return;
			}
		}
	}
	long row = pat_table_row(s->t, id, lat);
	if (row < 0) { csv_fail(s, -ENOMEM, "out of memory%s%s", "", ""); return; }
	for (size_t i = 0; i < s->ncols; i++) {
		if (s->kind[i] != COL_RPC || !s->cell[i]) continue;
		double v;
		if (parse_ms(s->cell[i], s->scale[i], &v)) {
			csv_fail(s, -EINVAL, "column %s: not a duration: '%s'", s->t->rpc[s->rpc[i]], s->cell[i]);
			return;
		}
		pat_table_add(s->t, (size_t)row, s->rpc[i], v);
	}
}

static void cb_row(int c, void *data)
{
	struct csvst *s = data;
	(void)c;
	if (s->rc) return;
	if (s->record++ == 0) {
		if (!s->have_lat) csv_fail(s, -EINVAL, "the header has no latency column (id,<rpc...>,latency)%s%s", "", "");
	} else {
		data_row(s);
	}
	for (size_t i = 0; i < s->ncols; i++) { free(s->cell[i]); s->cell[i] = NULL; }
	s->field = 0;
}

int trace_csv_load_mem(const char *data, size_t len, struct pat_table *t, char *err, size_t errlen)
{
	struct csv_parser p;
	if (csv_init(&p, CSV_STRICT | CSV_EMPTY_IS_NULL | CSV_APPEND_NULL)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	struct csvst s = { .t = t, .err = err, .errlen = errlen, .line = 1 };
	size_t off = 0;
	while (off < len && !s.rc) {
		const char *nl = memchr(data + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (data + off)) + 1 : len - off;
		if (csv_parse(&p, data + off, n, cb_field, cb_row, &s) != n && !s.rc) {
			csv_fail(&s, -EINVAL, "malformed CSV: %s%s", csv_strerror(csv_error(&p)), "");
		}
		off += n;
		if (nl && !s.rc) s.line++;
	}
	if (!s.rc && csv_fini(&p, cb_field, cb_row, &s) != 0)
		csv_fail(&s, -EINVAL, "malformed CSV at the end: %s%s", csv_strerror(csv_error(&p)), "");
	if (!s.rc && s.record == 0) csv_fail(&s, -EINVAL, "empty file: no header%s%s", "", "");
	csv_free(&p);
	for (size_t i = 0; i < s.ncols; i++) free(s.cell[i]);
	free(s.kind); free(s.rpc); free(s.scale); free(s.cell);
	return s.rc;
}

int trace_load_file(const char *path, trace_mem_loader fn, const char *entry,
		    struct pat_table *t, char *err, size_t errlen)
{
	char *data, sub[512];
	size_t len;
	int rc = trace_read_file(path, TRACE_MAX_FILE, &data, &len, err, errlen);
	if (rc) return rc;
	rc = fn(data, len, entry, t, sub, sizeof(sub));
	if (rc) snprintf(err, errlen, "%s: %s", path, sub);
	free(data);
	return rc;
}

static int csv_mem_loader(const char *data, size_t len, const char *entry, struct pat_table *t,
			  char *err, size_t errlen)
{
	(void)entry;   /* a CSV table has no entry span */
	return trace_csv_load_mem(data, len, t, err, errlen);
}

int trace_csv_load(const char *path, struct pat_table *t, char *err, size_t errlen)
{
	return trace_load_file(path, csv_mem_loader, NULL, t, err, errlen);
}
