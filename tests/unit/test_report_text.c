/* npreport rendering: unit choice, shortening, 80-column fit of any table,
 * section order, and CSV written then parsed back with libcsv, cell by cell
 * against the table. */
#include <csv.h>
#include <stdlib.h>

#include "tap.h"
#include "tabcols.h"
#include "anatable.h"
#include "container.h"
#include "csvout.h"
#include "sections.h"
#include "texttab.h"
#include "units.h"

static void check_fmt(double v, const char *unit, const char *want)
{
	char buf[64];
	rpt_fmt_auto(buf, sizeof(buf), v, unit);
	CHECK(!strcmp(buf, want), "%g %s -> '%s', want '%s'", v, unit, buf, want);
}

static void test_units(void)
{
	check_fmt(1500, "ns", "1.50 µs");
	check_fmt(2.5e6, "ns", "2.50 ms");
	check_fmt(42, "ns", "42 ns");
	check_fmt(3.2e9, "ns", "3.20 s");
	check_fmt(1e6, "bytes", "1.00 MB");
	check_fmt(512, "bytes", "512 B");
	check_fmt(8e6, "bps", "8.00 Mbps");
	check_fmt(0.0205, "ratio", "2.05%");
	check_fmt(12, "count", "12");
	check_fmt(NAN, "ns", "-");
	CHECK_EQ_U(rpt_strwidth("µs"), 2);
	char buf[64];
	rpt_shorten(buf, sizeof(buf), "abcdefghij", 5);
	CHECK(!strcmp(buf, "ab…ij"), "shorten: %s", buf);
	CHECK_EQ_U(rpt_strwidth(buf), 5);
	rpt_shorten(buf, sizeof(buf), "abc", 5);
	CHECK(!strcmp(buf, "abc"), "short strings kept: %s", buf);
}

static struct np_table *wide_table(void)
{
	struct np_table *t = np_table_new("zz_wide", "Wide", 1);
	np_table_col(t, "flow", "str", NULL);
	for (int c = 0; c < 14; c++) {
		char name[32];
		snprintf(name, sizeof(name), "metric_%02d", c);
		np_table_col(t, name, c % 2 ? "ns" : "bytes", NULL);
	}
	np_table_col(t, "note", "str", NULL);
	for (int r = 0; r < 4; r++) {
		size_t row = np_table_row(t);
		np_table_set_str(t, row, 0, r == 3 ? "tcp [2001:db8::1]:40000>[2001:db8::2]:8080 with a very long name"
						   : "tcp 10.0.0.1:40000>10.0.0.2:8080");
		for (int c = 0; c < 14; c++)
			np_table_set_u64(t, row, (size_t)c + 1, (uint64_t)(r + 1) * 1234567ULL * (uint64_t)(c + 1));
		np_table_set_str(t, row, 15, "x, \"y\"\nz");
	}
	return t;
}

/* t as rpt_text_table writes it with o (malloc'd). */
static char *render(const struct np_table *t, const struct rpt_textopt *o)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	rpt_text_table(f, t, o);
	fclose(f);
	return out;
}

static void test_fit(void)
{
	struct np_table *t = wide_table();
	struct rpt_textopt o = { .width = 80 };
	char *out = render(t, &o);
	size_t maxw = 0, lines = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		size_t w = rpt_strwidth(line);
		maxw = w > maxw ? w : maxw;
		lines++;
	}
	CHECK(maxw <= 80, "widest line %zu > 80", maxw);
	CHECK(lines >= 8, "header, label, rule, 4 rows, omitted columns (%zu lines)", lines);
	free(out);
	out = render(t, &o);
	CHECK(!strstr(out, "(part"), "a row is never split into parts");
	CHECK(strstr(out, "(not shown:") != NULL, "left-out columns are named:\n%s", out);
	free(out);

	/* --wide: every column on one row, whatever the width. */
	o.wide = true;
	out = render(t, &o);
	CHECK(strstr(out, "metric_13") && strstr(out, "metric_00") && !strstr(out, "(not shown"),
	      "wide shows all columns");
	o.wide = false;
	free(out);

	/* Every column name appears; at 300 columns nothing is split. */
	o.width = 300;
	out = render(t, &o);
	CHECK(strstr(out, "metric_13") && strstr(out, "metric_00"), "all columns shown");
	CHECK(!strstr(out, "(part"), "no split at 300 columns");
	CHECK(strstr(out, "with a very long name"), "long key kept when it fits");
	free(out);
	np_table_free(t);
}

/* Keys wider than 2/3 of the width: keys shortened in the middle, every
 * line within the width, no parts, the values in one unit. */
static void test_wide_keys(void)
{
	struct np_table *t = TABLE("transactions", "Tx", 3,
		{ "level", "str", NULL }, { "key", "str", NULL }, { "host", "str", NULL });
	for (int c = 0; c < 6; c++) {
		char name[16];
		snprintf(name, sizeof(name), "p%d", 50 + c);
		np_table_col(t, name, "ns", NULL);
	}
	for (int r = 0; r < 3; r++) {
		size_t row = np_table_row(t);
		char key[64];
		snprintf(key, sizeof(key), "10.78.2.2:9002 GET /orders/checkout/%d", r);
		np_table_set_str(t, row, 0, "endpoint");
		np_table_set_str(t, row, 1, key);
		np_table_set_str(t, row, 2, "vm/dm-back-with-a-long-name");
		for (int c = 0; c < 6; c++)
			np_table_set_u64(t, row, 3 + (size_t)c, 1000000ULL * (uint64_t)(r + 1) + (uint64_t)c * 1000);
	}
	struct rpt_textopt o = { .width = 80 };
	char *out = render(t, &o);
	CHECK(!strstr(out, "(part"), "no parts:\n%s", out);
	CHECK(strstr(out, "endpoint  10.78.2.2…heckout/2  vm/dm-bac…-long-name  3.00  3.00  3.00") != NULL,
	      "keys shortened (both ends kept), values in one unit:\n%s", out);
	size_t maxw = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		maxw = rpt_strwidth(line) > maxw ? rpt_strwidth(line) : maxw;
	CHECK(maxw <= 80, "widest line %zu", maxw);
	free(out);
	np_table_free(t);
}

static void test_order(void)
{
	const char *names[] = { "zz", "patterns", "flows", "clock_pairs", "summary", "decomp_seg" };
	struct np_analysis a = { 0 };
	struct np_table *tabs[6];
	for (int i = 0; i < 6; i++)
		tabs[i] = np_table_new(names[i], names[i], 0);
	a.tables = tabs;
	a.ntables = 6;
	const struct np_table **ord;
	size_t n = rpt_tables_ordered(&a, &ord);
	const char *want[] = { "summary", "clock_pairs", "flows", "decomp_seg", "patterns", "zz" };
	CHECK_EQ_U(n, 6);
	for (size_t i = 0; i < n && i < 6; i++)
		CHECK(!strcmp(ord[i]->name, want[i]), "order %zu: %s want %s", i, ord[i]->name, want[i]);
	CHECK(rpt_selector_matches("clock", tabs[3]), "section name selects its tables");
	CHECK(!rpt_selector_matches("clock", tabs[2]), "and not others");
	free(ord);
	for (int i = 0; i < 6; i++)
		np_table_free(tabs[i]);
}

/* ---- CSV parsed back ---- */

struct parsed {
	char *cells[16][24];
	size_t row, col, nrows;
};

static void on_field(void *s, size_t len, void *data)
{
	struct parsed *p = data;
	if (p->row < 16 && p->col < 24)
		p->cells[p->row][p->col] = strndup(s ? s : "", len);
	p->col++;
}

static void on_row(int c, void *data)
{
	(void)c;
	struct parsed *p = data;
	p->row++;
	p->col = 0;
	p->nrows = p->row;
}

static void test_csv_roundtrip(void)
{
	struct np_table *t = TABLE("mixed", "Mixed", 1,
		{ "name", "str", NULL }, { "lat", "ns", NULL }, { "delta_ns", "ns", NULL },
		{ "bytes", "bytes", NULL }, { "share", "ratio", NULL });
	const char *names[] = { "plain", "comma, inside", "quote \"q\"", "new\nline", " lead" };
	for (int r = 0; r < 5; r++) {
		size_t row = np_table_row(t);
		np_table_set_str(t, row, 0, names[r]);
		np_table_set_f64(t, row, 1, 0.1 * (r + 1) + 1234567.891);
		np_table_set_i64(t, row, 2, -5000123 * (r + 1));
		if (r != 2)
			np_table_set_u64(t, row, 3, 18446744073709551615ULL - (uint64_t)r);
		np_table_set_f64(t, row, 4, 1.0 / 3.0 * r);
	}
	/* Through the file format: .npa written, loaded, CSV files written. */
	char dir[] = "/tmp/test_report_csv_XXXXXX", npa[300], csvpath[400];
	CHECK(mkdtemp(dir) != NULL, "tmp dir");
	snprintf(npa, sizeof(npa), "%s/a.npa", dir);
	struct np_writer *w;
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	np_table_pack(&rb, t);
	CHECK(np_writer_open(&w, npa, NP_KIND_ANALYSIS, NULL) == 0, "open npa");
	CHECK(np_writer_commit(w, &rb) == 0 && np_writer_close(w) == 0, "write npa");
	np_recbuf_free(&rb);
	struct np_analysis a;
	CHECK(np_analysis_load(&a, npa, NULL, NULL) == 0, "load npa");
	char csvdir[300];
	snprintf(csvdir, sizeof(csvdir), "%s/csv", dir);
	struct rpt_selection all = { NULL, 0 };
	CHECK(rpt_csv_dir(csvdir, &a, &all) == 0, "csv dir written");
	np_analysis_free(&a);
	snprintf(csvpath, sizeof(csvpath), "%s/mixed.csv", csvdir);
	char *out = calloc(1, 1 << 16);
	FILE *f = fopen(csvpath, "r");
	size_t len = f ? fread(out, 1, (1 << 16) - 1, f) : 0;
	if (f)
		fclose(f);
	CHECK(len > 0, "mixed.csv read");
	struct csv_parser cp;
	struct parsed p = { 0 };
	csv_init(&cp, CSV_STRICT | CSV_STRICT_FINI);
	CHECK(csv_parse(&cp, out, len, on_field, on_row, &p) == len, "strict RFC 4180 parse");
	CHECK(csv_fini(&cp, on_field, on_row, &p) == 0, "complete");
	csv_free(&cp);
	CHECK_EQ_U(p.nrows, 6);
	CHECK(p.cells[0][1] && !strcmp(p.cells[0][1], "lat_ns"), "unit in header: %s", p.cells[0][1]);
	CHECK(p.cells[0][2] && !strcmp(p.cells[0][2], "delta_ns"), "no double suffix: %s", p.cells[0][2]);
	CHECK(p.cells[0][4] && !strcmp(p.cells[0][4], "share_ratio"), "ratio: %s", p.cells[0][4]);
	for (size_t r = 0; r < 5 && r + 1 < p.nrows; r++) {
		char **row = p.cells[r + 1];
		CHECK(row[0] && !strcmp(row[0], names[r]), "string %zu: '%s'", r, row[0]);
		CHECK(row[1] && strtod(row[1], NULL) == np_table_cell_c(t, r, 1)->f, "float %zu exact", r);
		CHECK(row[2] && strtoll(row[2], NULL, 10) == np_table_cell_c(t, r, 2)->i, "int %zu", r);
		if (r == 2)
			CHECK(row[3] && !*row[3], "nil -> empty field");
		else
			CHECK(row[3] && strtoull(row[3], NULL, 10) == np_table_cell_c(t, r, 3)->u, "u64 %zu", r);
		CHECK(row[4] && strtod(row[4], NULL) == np_table_cell_c(t, r, 4)->f, "ratio %zu exact", r);
	}
	CHECK(strstr(out, "\r\n") != NULL, "CRLF line ends");
	for (size_t r = 0; r < 16; r++)
		for (size_t c = 0; c < 24; c++)
			free(p.cells[r][c]);
	free(out);
	np_table_free(t);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "cleanup");
}

int main(void)
{
	test_units();
	test_fit();
	test_wide_keys();
	test_order();
	test_csv_roundtrip();
	return tap_done();
}
