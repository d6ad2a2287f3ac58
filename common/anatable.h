/* The analysis model shared by npanalyze (writer) and npreport (reader): an
 * .npa holds named tables of typed columns, per-interval series of single
 * metrics, latency sketches and findings. npreport renders any table it does
 * not know generically, so new analyses need no report change to be seen.
 *
 * NP_REC_ANA_TABLE body:
 *   name   str   machine name, e.g. "flows", "decomp", "clock"
 *   title  str   human title
 *   nkey   uint  the first nkey columns identify a row (used by compare)
 *   cols   [ {name:str, unit:str, desc:str?} ... ]
 *   rows   [ [cell ...] ... ]   cell: int, float, str or nil (no value)
 * Units: "ns" (duration), "time_ns" (timestamp on the reference timeline),
 *   "bytes", "bps" (bits/s), "count", "rate" (per second), "ratio" (0..1),
 *   "pct" (0..100), "ppm", "str", "id", "bool".
 * Column "better" hints for compare: a column whose name starts with one of
 *   p50 p90 p99 p999 mean max jitter loss lost drop retrans cpu is
 *   lower-is-better; throughput/bps/rate/count/fscore/precision/recall are
 *   higher-is-better or neutral (see report/compare.c).
 *
 * NP_REC_ANA_SERIES body (per-interval samples for compare and plots):
 *   table str, key str (row key cells joined with '|'), metric str, unit str,
 *   t_d [interval start, delta-encoded ns], v [float or int values]
 * NP_REC_ANA_SKETCH body: table, key, metric, unit, sketch (np_sketch map)
 * NP_REC_ANA_FINDING body: severity uint (0 info, 1 warn, 2 bad), text str,
 *   table str?, key str?, metric str?, value float?
 */
#ifndef NP_ANATABLE_H
#define NP_ANATABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "container.h"
#include "sketch.h"

enum np_cell_kind { NP_CELL_NIL = 0, NP_CELL_INT, NP_CELL_UINT, NP_CELL_F64, NP_CELL_STR };

struct np_cell {
	enum np_cell_kind kind;
	union { int64_t i; uint64_t u; double f; char *s; };
};

struct np_col {
	char *name, *unit, *desc;
};

struct np_table {
	char *name, *title;
	size_t nkey;
	size_t ncols;
	struct np_col *cols;
	size_t nrows, cap;
	struct np_cell *cells;      /* nrows * ncols, row-major */
};

/* Building (npanalyze). Strings are copied. */
struct np_table *np_table_new(const char *name, const char *title, size_t nkey);
/* Adds a column; only before the first row. Returns its index. */
size_t np_table_col(struct np_table *t, const char *name, const char *unit, const char *desc);
/* np_table_col for a table with a column enum: the column must land at index
 * id, else the build is wrong (a column added out of enum order) and it
 * asserts on the first run instead of silently shifting the columns after it. */
void np_table_col_at(struct np_table *t, size_t id, const char *name, const char *unit,
		     const char *desc);
/* Appends an empty (all nil) row, returns its index. */
size_t np_table_row(struct np_table *t);
void np_table_set_u64(struct np_table *t, size_t row, size_t col, uint64_t v);
void np_table_set_i64(struct np_table *t, size_t row, size_t col, int64_t v);
void np_table_set_f64(struct np_table *t, size_t row, size_t col, double v);
void np_table_set_str(struct np_table *t, size_t row, size_t col, const char *s);
struct np_cell *np_table_cell(struct np_table *t, size_t row, size_t col);
const struct np_cell *np_table_cell_c(const struct np_table *t, size_t row, size_t col);
/* Column index by name or -1. */
int  np_table_find_col(const struct np_table *t, const char *name);
/* "k1|k2" key of a row (caller frees). */
char *np_table_row_key(const struct np_table *t, size_t row);
double np_cell_f64(const struct np_cell *c);   /* NAN for nil/str */
void np_table_free(struct np_table *t);

/* (De)serialisation into an ANA_TABLE record. */
void np_table_pack(struct np_recbuf *rb, const struct np_table *t);
/* Returns a new table or NULL when the body is malformed. */
struct np_table *np_table_unpack(const msgpack_object *body);

/* Series / sketch / finding records. */
void np_series_pack(struct np_recbuf *rb, const char *table, const char *key,
		    const char *metric, const char *unit,
		    const uint64_t *t, const double *v, size_t n);
struct np_series {
	char *table, *key, *metric, *unit;
	size_t n;
	uint64_t *t;
	double *v;
};
struct np_series *np_series_unpack(const msgpack_object *body);
void np_series_free(struct np_series *s);

void np_sketchrec_pack(struct np_recbuf *rb, const char *table, const char *key,
		       const char *metric, const char *unit, const struct np_sketch *s);
void np_finding_pack(struct np_recbuf *rb, int severity, const char *text,
		     const char *table, const char *key, const char *metric, double value);

/* Everything of an analysis file, loaded (npreport). */
struct np_sketchrec { char *table, *key, *metric, *unit; struct np_sketch sk; };
struct np_finding { int severity; char *text, *table, *key, *metric; double value; };
struct np_analysis {
	size_t ntables;   struct np_table **tables;
	size_t nseries;   struct np_series **series;
	size_t nsketches; struct np_sketchrec *sketches;
	size_t nfindings; struct np_finding *findings;
	msgpack_zone *meta_zone;          /* keeps meta alive */
	msgpack_object meta;              /* ANA_META body (nil if absent) */
	struct np_reader_stats stats;     /* of the read */
};
/* Loads path; returns 0 or -errno (also -EINVAL for a non-analysis file).
 * Damage is reported through warn and skipped. */
int  np_analysis_load(struct np_analysis *a, const char *path, np_warn_fn warn, void *ctx);
int  np_analysis_load_mem(struct np_analysis *a, const void *data, size_t len,
			  np_warn_fn warn, void *ctx);
const struct np_table *np_analysis_table(const struct np_analysis *a, const char *name);
void np_analysis_free(struct np_analysis *a);

#endif
