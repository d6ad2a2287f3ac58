/* Analysis model tests: tables, series, sketches, findings and meta written to
 * an .npa and loaded back; malformed records skipped; recordings refused. */
#include "tap.h"
#include "tabcols.h"
#include "anatable.h"
#include "npmsg.h"
#include "records.h"

#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char path[] = "/tmp/np_test_anatable.XXXXXX";
static int nwarn;
static void count_warn(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
	nwarn++;
}

static struct np_table *make_table(void)
{
	struct np_table *t = TABLE("decomp", "Latency decomposition", 2,
		{ "flow", "str", "sender>receiver" }, { "segment", "str", NULL },
		{ "p99_ns", "ns", "99th percentile" }, { "delta", "ns", NULL },
		{ "share", "ratio", NULL }, { "note", "str", NULL });
	for (int r = 0; r < 100; r++) {
		size_t row = np_table_row(t);
		char buf[32];
		snprintf(buf, sizeof(buf), "10.0.0.%d:80", r);
		np_table_set_str(t, row, 0, buf);
		np_table_set_str(t, row, 1, r % 2 ? "wire" : "qdisc");
		np_table_set_u64(t, row, 2, 1000000ull * r + 7);
		np_table_set_i64(t, row, 3, -1000 * r - 1);
		np_table_set_f64(t, row, 4, r / 100.0);
		if (r % 10 == 0)
			np_table_set_str(t, row, 5, "odd \"quote\" | pipe");
		/* overwriting frees the old string (ASan checks the leak) */
		np_table_set_str(t, row, 5, r % 10 ? NULL : "x|y");
	}
	return t;
}

static void test_table_api(void)
{
	struct np_table *t = make_table();
	CHECK_EQ_U(t->ncols, 6);
	CHECK_EQ_U(t->nrows, 100);
	CHECK(np_table_find_col(t, "share") == 4, "find_col");
	CHECK(np_table_find_col(t, "nope") == -1, "find_col missing");
	char *k = np_table_row_key(t, 3);
	CHECK(k && strcmp(k, "10.0.0.3:80|wire") == 0, "row key %s", k);
	free(k);
	CHECK_NEAR(np_cell_f64(np_table_cell_c(t, 5, 3)), -5001, 0);
	CHECK(isnan(np_cell_f64(np_table_cell_c(t, 5, 0))), "str cell is NaN");
	CHECK(isnan(np_cell_f64(np_table_cell_c(t, 5, 5))), "nil cell is NaN");
	CHECK(np_table_cell(t, 100, 0) == NULL && np_table_cell(t, 0, 6) == NULL, "bounds");
	CHECK(np_table_col(t, "late", "ns", NULL) == (size_t)-1, "no column after rows");
	np_table_free(t);
}

static bool same_cell(const struct np_cell *a, const struct np_cell *b)
{
	if (a->kind != b->kind) {
		/* non-negative ints come back as UINT: msgpack has one positive int */
		if (a->kind == NP_CELL_INT && b->kind == NP_CELL_UINT && a->i >= 0)
			return (uint64_t)a->i == b->u;
		return false;
	}
	switch (a->kind) {
	case NP_CELL_INT:  return a->i == b->i;
	case NP_CELL_UINT: return a->u == b->u;
	case NP_CELL_F64:  return a->f == b->f;
	case NP_CELL_STR:  return strcmp(a->s, b->s) == 0;
	default:           return true;
	}
}

static int write_analysis(const char *p)
{
	struct np_writer *w;
	struct np_recbuf rb;
	int err = np_writer_open(&w, p, NP_KIND_ANALYSIS, NULL);
	if (err)
		return err;
	np_recbuf_init(&rb);
	msgpack_packer *pk = np_recbuf_begin(&rb, NP_REC_ANA_META, 1);
	msgpack_pack_map(pk, 2);
	np_pack_kv_str(pk, "reference_host", "host-a");
	np_pack_str(pk, "inputs");
	msgpack_pack_array(pk, 2);
	np_pack_str(pk, "a.npr");
	np_pack_str(pk, "b.npr");
	struct np_table *t = make_table();
	np_table_pack(&rb, t);
	np_table_free(t);
	np_writer_commit(w, &rb);

	/* An empty table and a malformed table (no cols) between good records. */
	t = np_table_new("empty", "Nothing", 0);
	np_table_pack(&rb, t);
	np_table_free(t);
	pk = np_recbuf_begin(&rb, NP_REC_ANA_TABLE, 1);
	msgpack_pack_map(pk, 1);
	np_pack_kv_str(pk, "name", "broken");
	uint64_t ts[4] = { 1000000000, 2000000000, 3000000000, 4000000000 };
	double vs[4] = { 1.5, 0, -3, 1e12 };
	np_series_pack(&rb, "decomp", "10.0.0.1:80|wire", "p99_ns", "ns", ts, vs, 4);
	np_series_pack(&rb, "decomp", "", "empty", "ns", NULL, NULL, 0);
	struct np_sketch s;
	np_sketch_init(&s);
	for (uint64_t i = 1; i <= 1000; i++)
		np_sketch_add(&s, i * 1000, 1);
	np_sketchrec_pack(&rb, "decomp", "all", "wire_ns", "ns", &s);
	np_sketch_free(&s);
	np_finding_pack(&rb, 2, "loss 5 % between veth and eth0", "loss", "a|b", "loss", 0.05);
	np_finding_pack(&rb, 0, "clock offset estimated", NULL, NULL, NULL, NAN);
	np_writer_commit(w, &rb);
	np_recbuf_free(&rb);
	return np_writer_close(w);
}

static void check_loaded(const struct np_analysis *a)
{
	CHECK_EQ_U(a->ntables, 2);
	const struct np_table *t = np_analysis_table(a, "decomp");
	struct np_table *want = make_table();
	CHECK(t != NULL, "decomp table");
	if (t) {
		CHECK(strcmp(t->title, "Latency decomposition") == 0, "title");
		CHECK_EQ_U(t->nkey, 2);
		CHECK_EQ_U(t->ncols, 6);
		CHECK_EQ_U(t->nrows, 100);
		CHECK(strcmp(t->cols[2].name, "p99_ns") == 0 && strcmp(t->cols[2].unit, "ns") == 0 &&
		      strcmp(t->cols[2].desc, "99th percentile") == 0, "col");
		CHECK(t->cols[1].desc == NULL, "absent desc stays absent");
		size_t diff = 0;
		for (size_t r = 0; r < t->nrows && r < want->nrows; r++)
			for (size_t c = 0; c < t->ncols; c++)
				diff += !same_cell(np_table_cell_c(want, r, c), np_table_cell_c(t, r, c));
		CHECK_EQ_U(diff, 0);
		CHECK(np_table_cell_c(t, 7, 3)->kind == NP_CELL_INT, "negative int");
		CHECK(np_table_cell_c(t, 7, 5)->kind == NP_CELL_NIL, "nil");
	}
	np_table_free(want);
	const struct np_table *e = np_analysis_table(a, "empty");
	CHECK(e && e->ncols == 0 && e->nrows == 0, "empty table");
	CHECK(np_analysis_table(a, "broken") == NULL, "malformed table skipped");

	CHECK_EQ_U(a->nseries, 2);
	if (a->nseries >= 2) {
		const struct np_series *s = a->series[0];
		CHECK(strcmp(s->key, "10.0.0.1:80|wire") == 0 && strcmp(s->metric, "p99_ns") == 0, "series id");
		CHECK_EQ_U(s->n, 4);
		CHECK(s->n == 4 && s->t[3] == 4000000000ull && s->v[2] == -3 && s->v[3] == 1e12, "series values");
		CHECK_EQ_U(a->series[1]->n, 0);
	}
	CHECK_EQ_U(a->nsketches, 1);
	if (a->nsketches) {
		const struct np_sketchrec *k = &a->sketches[0];
		CHECK(strcmp(k->metric, "wire_ns") == 0, "sketch metric");
		CHECK_EQ_U(k->sk.n, 1000);
		CHECK_NEAR(np_sketch_quantile(&k->sk, 0.5), 500000, 500000 * 0.008);
		CHECK_EQ_U(k->sk.max, 1000000);
	}
	CHECK_EQ_U(a->nfindings, 2);
	if (a->nfindings == 2) {
		CHECK(a->findings[0].severity == 2 && strcmp(a->findings[0].key, "a|b") == 0 &&
		      a->findings[0].value == 0.05, "finding 0");
		CHECK(a->findings[1].severity == 0 && a->findings[1].table == NULL &&
		      isnan(a->findings[1].value), "finding 1 without optional fields");
	}
	char ref[32] = "";
	CHECK(a->meta.type == MSGPACK_OBJECT_MAP && np_get_strbuf(&a->meta, "reference_host", ref, sizeof(ref)) == 0 &&
	      strcmp(ref, "host-a") == 0, "meta outlives the reader");
	const msgpack_object_array *in = np_get_array(&a->meta, "inputs");
	CHECK(in && in->size == 2 && in->ptr[1].via.str.size == 5 && !memcmp(in->ptr[1].via.str.ptr, "b.npr", 5), "meta inputs");
	CHECK_EQ_U(a->stats.chunks_ok, 2);
}

static void test_file(void)
{
	CHECK(write_analysis(path) == 0, "write");
	struct np_analysis a;
	nwarn = 0;
	CHECK(np_analysis_load(&a, path, count_warn, NULL) == 0, "load");
	CHECK_EQ_U(nwarn, 1);   /* the broken table */
	check_loaded(&a);
	np_analysis_free(&a);

	/* The same from memory, and a truncated copy loads what is complete. */
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 20];
	size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	CHECK(np_analysis_load_mem(&a, buf, len, NULL, NULL) == 0, "load mem");
	check_loaded(&a);
	np_analysis_free(&a);
	CHECK(np_analysis_load_mem(&a, buf, len - 10, NULL, NULL) == 0, "load truncated");
	CHECK(a.ntables == 1 && a.nseries == 0 && a.stats.truncated, "first chunk only");
	np_analysis_free(&a);
}

static void test_refuse_recording(void)
{
	struct np_writer *w;
	struct np_recbuf rb;
	CHECK(np_writer_open(&w, path, NP_KIND_RECORDING, NULL) == 0, "open");
	np_recbuf_init(&rb);
	np_finding_pack(&rb, 1, "x", NULL, NULL, NULL, 1);
	np_writer_commit(w, &rb);
	np_recbuf_free(&rb);
	np_writer_close(w);
	struct np_analysis a;
	CHECK(np_analysis_load(&a, path, NULL, NULL) == -EINVAL, "recording refused");
	CHECK(np_analysis_load(&a, "/nonexistent.npa", NULL, NULL) == -ENOENT, "ENOENT");
}

/* Rows shorter than the column list are padded with nil; a table whose
 * padding would be huge (a few bytes claiming millions of cells) is refused. */
static void test_padding(void)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (int round = 0; round < 2; round++) {
		size_t ncols = round ? 2000 : 3, nrows = round ? 1000 : 2;
		msgpack_sbuffer_clear(&sb);
		msgpack_pack_map(&pk, 3);
		np_pack_kv_str(&pk, "name", "p");
		np_pack_str(&pk, "cols");
		msgpack_pack_array(&pk, ncols);
		for (size_t c = 0; c < ncols; c++) {
			msgpack_pack_map(&pk, 1);
			np_pack_kv_str(&pk, "name", "c");
		}
		np_pack_str(&pk, "rows");
		msgpack_pack_array(&pk, nrows);
		for (size_t r = 0; r < nrows; r++) {
			msgpack_pack_array(&pk, 1);
			msgpack_pack_uint8(&pk, 9);
		}
		msgpack_unpacked u;
		msgpack_unpacked_init(&u);
		size_t off = 0;
		msgpack_unpack_next(&u, sb.data, sb.size, &off);
		struct np_table *t = np_table_unpack(&u.data);
		if (round == 0) {
			CHECK(t && t->nrows == 2 && t->cells[0].u == 9 && t->cells[1].kind == NP_CELL_NIL, "padded");
			CHECK(t && t->nkey == 0 && strcmp(t->title, "") == 0 && strcmp(t->cols[0].unit, "") == 0, "defaults");
		} else {
			CHECK(t == NULL, "2M padding cells refused");
		}
		np_table_free(t);
		msgpack_unpacked_destroy(&u);
	}
	msgpack_sbuffer_destroy(&sb);
}

/* np_table_col_at: columns at their enum index pass; one added out of
 * order aborts (in a child, so the abort is observed, not suffered). */
static void test_col_at(void)
{
	enum { C_FLOW, C_BYTES, C_NCOLS };
	struct np_table *t = np_table_new("x", "x", 1);
	np_table_col_at(t, C_FLOW, "flow", "str", NULL);
	np_table_col_at(t, C_BYTES, "bytes", "bytes", NULL);
	CHECK(t->ncols == C_NCOLS && !strcmp(t->cols[C_BYTES].name, "bytes"), "columns at their enum index");
	pid_t pid = fork();
	if (pid == 0) {
		np_table_col_at(t, C_FLOW, "late", "str", NULL);   /* lands at 2, not 0 */
		_exit(0);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
	      "a column off its enum index aborts (status %d)", st);
	np_table_free(t);
}

int main(void)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	test_table_api();
	test_file();
	test_refuse_recording();
	test_padding();
	test_col_at();
	unlink(path);
	return tap_done();
}
