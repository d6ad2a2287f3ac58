/* The reader against hostile files (issue 17): one test per spec gap that
 * docs/FORMAT.md now closes, on the fixtures of tests/tools/mkhostile.c
 * (fixtures/hostile/, ground truth in fixtures/mkfixtures.md) and on files
 * built here; run from the repository root. */
#include "tap.h"
#include "anatable.h"
#include "container.h"
#include "npmsg.h"
#include "records.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

struct hw_log {
	char lines[256][512];
	unsigned n;            /* warnings received (all of them, lines keeps 256) */
};

static void hw_warn(void *ctx, const char *msg)
{
	struct hw_log *l = ctx;
	if (l->n < 256)
		snprintf(l->lines[l->n], sizeof(l->lines[0]), "%s", msg);
	l->n++;
}

static bool hw_any(const struct hw_log *l, const char *needle)
{
	for (unsigned i = 0; i < l->n && i < 256; i++)
		if (strstr(l->lines[i], needle))
			return true;
	return false;
}

/* Reads a whole file through the reader: its stats, records counted, the
 * chunk index of the last record. */
struct hw_read {
	struct np_reader_stats st;
	enum np_file_kind kind;
	uint64_t records, last_chunk;
	struct hw_log log;
};

static int hw_read_reader(struct np_reader *r, struct hw_read *out)
{
	struct np_record rec;
	while (np_reader_next(r, &rec) == 1) {
		out->records++;
		out->last_chunk = rec.chunk_index;
	}
	out->st = *np_reader_stats(r);
	out->kind = np_reader_kind(r);
	np_reader_close(r);
	return 0;
}

static int hw_read(const char *name, struct hw_read *out)
{
	char path[256];
	struct np_reader *r;
	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "fixtures/hostile/%s", name);
	if (np_reader_open(&r, path, hw_warn, &out->log) != 0)
		return -1;
	return hw_read_reader(r, out);
}

static int hw_read_mem(const void *d, size_t len, struct hw_read *out)
{
	struct np_reader *r;
	memset(out, 0, sizeof(*out));
	if (np_reader_open_mem(&r, d, len, hw_warn, &out->log) != 0)
		return -1;
	return hw_read_reader(r, out);
}

/* np_obj_print_json of one msgpack value (packed by fn) as a string. */
static char *hw_json(void (*fn)(msgpack_packer *, const void *), const void *arg)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_unpacked u;
	char *out = NULL;
	size_t n = 0;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	fn(&pk, arg);
	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, sb.data, sb.size, NULL) == MSGPACK_UNPACK_SUCCESS) {
		FILE *f = open_memstream(&out, &n);
		np_obj_print_json(f, &u.data);
		fclose(f);
	}
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
	return out;
}

static void hw_pack_str(msgpack_packer *pk, const void *s)
{
	np_pack_str(pk, s);
}

static void hw_pack_f64(msgpack_packer *pk, const void *v)
{
	msgpack_pack_double(pk, *(const double *)v);
}

#define CHECK_JSON(got, want) do { char *g_ = (got); \
	CHECK(g_ && strcmp(g_, want) == 0, "json %s, want %s", g_ ? g_ : "(null)", want); \
	free(g_); } while (0)

/* ---- FORMAT.md 8: strings ---- */

static void test_utf8(void)
{
	static const struct { const char *in, *out; } c[] = {
		{ "\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"" },                 /* surrogate */
		{ "\xed\xbf\xbf", "\"\\u00ed\\u00bf\\u00bf\"" },                 /* surrogate, last */
		{ "\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"" },      /* > U+10FFFF */
		{ "\xe0\x80\x80", "\"\\u00e0\\u0080\\u0080\"" },                 /* overlong 3 */
		{ "\xe0\x9f\xbf", "\"\\u00e0\\u009f\\u00bf\"" },                 /* overlong 3, top */
		{ "\xf0\x80\x80\x80", "\"\\u00f0\\u0080\\u0080\\u0080\"" },      /* overlong 4 */
		{ "\xf0\x8f\xbf\xbf", "\"\\u00f0\\u008f\\u00bf\\u00bf\"" },      /* overlong 4, top */
		{ "\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"" },
		{ "\xf8\x88\x80\x80\x80", "\"\\u00f8\\u0088\\u0080\\u0080\\u0080\"" },
		{ "\xfd\xbf", "\"\\u00fd\\u00bf\"" },
		{ "\xfe\xff", "\"\\u00fe\\u00ff\"" },
		{ "\xc0\x80", "\"\\u00c0\\u0080\"" },
		{ "\xc1\xbf", "\"\\u00c1\\u00bf\"" },
		{ "a\xe2\x82", "\"a\\u00e2\\u0082\"" },                           /* cut short */
		{ "\xe2\x82x", "\"\\u00e2\\u0082x\"" },
		{ "\xc3\xa9\xe2\x82\xac", "\"\xc3\xa9\xe2\x82\xac\"" },           /* valid: copied */
		{ "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"" },
		{ "\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"" },                   /* U+10FFFF */
		{ "\xed\x9f\xbf\xee\x80\x80", "\"\xed\x9f\xbf\xee\x80\x80\"" },   /* U+D7FF U+E000 */
		{ "\xe0\xa0\x80\xf0\x90\x80\x80", "\"\xe0\xa0\x80\xf0\x90\x80\x80\"" }, /* smallest 3/4 */
		{ "q\"\\\x01\x7f", "\"q\\\"\\\\\\u0001\\u007f\"" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK_JSON(hw_json(hw_pack_str, c[i].in), c[i].out);
}

/* ---- FORMAT.md 8: numbers and keys ---- */

static void hw_pack_keys(msgpack_packer *pk, const void *arg)
{
	(void)arg;
	msgpack_pack_map(pk, 6);
	msgpack_pack_double(pk, 0.1);  msgpack_pack_uint8(pk, 1);
	msgpack_pack_uint8(pk, 1);     msgpack_pack_uint8(pk, 2);
	np_pack_str(pk, "1");          msgpack_pack_uint8(pk, 3);
	msgpack_pack_double(pk, 1.0);  msgpack_pack_uint8(pk, 4);
	msgpack_pack_nil(pk);          msgpack_pack_uint8(pk, 5);
	np_pack_str(pk, "\xed\xa0\x80"); msgpack_pack_uint8(pk, 6);
}

static void hw_pack_f32(msgpack_packer *pk, const void *arg)
{
	(void)arg;
	msgpack_pack_float(pk, 0.1f);
}

static void test_numbers(void)
{
	static const struct { double v; const char *out; } c[] = {
		{ 1.0, "1.0" }, { -0.0, "-0.0" }, { 0.0, "0.0" }, { 0.1, "0.1" },
		{ 1e16, "1e+16" }, { 1e15, "1e+15" }, { 123456.75, "123456.75" },
		{ 0.30000000000000004, "0.30000000000000004" }, { -2.5, "-2.5" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ NAN, "null" }, { INFINITY, "null" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		CHECK_JSON(hw_json(hw_pack_f64, &c[i].v), c[i].out);
	CHECK_JSON(hw_json(hw_pack_f32, NULL), "0.10000000149011612");
	/* every pair printed; keys as their JSON text, quoted */
	CHECK_JSON(hw_json(hw_pack_keys, NULL),
		   "{\"0.1\":1,\"1\":2,\"1\":3,\"1.0\":4,\"null\":5,\"\\u00ed\\u00a0\\u0080\":6}");
}

/* FORMAT.md 3.1: a repeated key, the first counts; non-string keys are not found. */
static void test_repeated_key(void)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_unpacked u;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	msgpack_pack_uint8(&pk, 7);    msgpack_pack_uint8(&pk, 70);
	np_pack_kv_u64(&pk, "x", 1);
	np_pack_kv_u64(&pk, "x", 2);
	msgpack_unpacked_init(&u);
	CHECK(msgpack_unpack_next(&u, sb.data, sb.size, NULL) == MSGPACK_UNPACK_SUCCESS, "unpack");
	uint64_t v = 0;
	CHECK(np_get_u64(&u.data, "x", &v) == 0 && v == 1, "first x: %llu", (unsigned long long)v);
	CHECK(np_get_u64(&u.data, "7", &v) < 0, "an integer key is not the string \"7\"");
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

/* The fixtures' dump text (npreport dump prints record bodies with np_obj_print_json). */
static void test_fixture_json(void)
{
	struct np_reader *r;
	struct np_record rec;
	char *out = NULL;
	size_t n = 0;
	CHECK(np_reader_open(&r, "fixtures/hostile/numbers.npr", NULL, NULL) == 0,
	      "fixtures/hostile/numbers.npr readable from the repository root");
	if (np_reader_next(r, &rec) == 1) {
		FILE *f = open_memstream(&out, &n);
		np_obj_print_json(f, rec.body);
		fclose(f);
	}
	np_reader_close(r);
	CHECK(out && strcmp(out, "{\"f\":[1.0,-0.0,0.1,1e+16,1e+15,4.94065645841247e-324,"
		"1.7976931348623157e+308,0.30000000000000004,123456.75,0.10000000149011612,null,null],"
		"\"i\":[0,-1,18446744073709551615,-9223372036854775808],"
		"\"k\":{\"0.1\":\"a\",\"1\":\"b\",\"1\":\"c\",\"null\":\"d\",\"[1,2]\":\"e\",\"true\":\"f\","
		"\"\\\"ab\\\"\":\"g\"},\"dup\":{\"x\":1,\"x\":2}}") == 0, "numbers.npr: %s", out);
	free(out);
}

/* ---- FORMAT.md 1: version 0, unknown kind, newer version ---- */

static void test_file_header(void)
{
	struct hw_read h;
	CHECK(hw_read("version0.npr", &h) == 0, "version0.npr");
	CHECK(h.st.bad_file_header && h.records == 1 && h.st.chunks_ok == 1,
	      "version 0: header damaged, chunk still read (%d, %llu)", h.st.bad_file_header,
	      (unsigned long long)h.records);
	CHECK(hw_any(&h.log, "format version 0"), "version 0 warned");
	CHECK(hw_read_mem("NPFILE\r\n\0\0\1\0\0\0\0\0", 16, &h) == 0 && h.st.last_good_offset == 0,
	      "version 0 header alone: last good offset 0 (%llu)", (unsigned long long)h.st.last_good_offset);
	CHECK(hw_read("kind7.npr", &h) == 0, "kind7.npr");
	CHECK(!h.st.bad_file_header && h.kind == 0 && h.records == 1, "kind 7: unknown, read, not damage");
	CHECK(hw_any(&h.log, "unknown file kind 7"), "kind 7 warned");
	/* a newer version: warned, read, not damage */
	uint8_t d[NP_FILE_HDR_LEN];
	memcpy(d, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
	d[8] = NP_FORMAT_VERSION + 1; d[9] = 0; d[10] = NP_KIND_ANALYSIS; d[11] = 0;
	memset(d + 12, 0, 4);
	CHECK(hw_read_mem(d, sizeof(d), &h) == 0, "newer version header");
	CHECK(!h.st.bad_file_header && h.kind == NP_KIND_ANALYSIS && hw_any(&h.log, "newer"),
	      "newer version: warned, kind kept");
}

/* ---- FORMAT.md 4.2: last good offset, truncated tail vs garbage ---- */

static void test_offsets_and_tails(void)
{
	struct hw_read h;
	CHECK(hw_read("header-only.npr", &h) == 0, "header-only.npr");
	CHECK_EQ_U(h.st.last_good_offset, 16);
	CHECK(!h.st.truncated && !h.st.bytes_skipped && !h.st.bad_file_header, "header alone is valid");
	CHECK(hw_read_mem("NPFILE", 6, &h) == 0, "6 bytes");
	CHECK(h.st.bad_file_header && h.st.last_good_offset == 0, "bad header: last good offset 0");
	for (int g = 23; g <= 24; g++) {
		char name[32];
		snprintf(name, sizeof(name), "garbage-%d.npr", g);
		CHECK(hw_read(name, &h) == 0, "%s", name);
		CHECK(!h.st.truncated && h.st.bytes_skipped == (uint64_t)g && h.st.last_good_offset == 68 &&
		      h.records == 1, "%d garbage bytes: skipped, not truncated", g);
	}
	CHECK(hw_read("tail-magic.npr", &h) == 0, "tail-magic.npr");
	CHECK(h.st.truncated && h.st.bytes_skipped == 10 && h.st.last_good_offset == 68,
	      "NPCK + 6 bytes at the end: truncated tail");
	CHECK(hw_read("tail-np.npr", &h) == 0, "tail-np.npr");
	CHECK(h.st.truncated && h.st.bytes_skipped == 2, "\"NP\" at the end: truncated tail");
}

/* ---- FORMAT.md 2.2: exactly one plain zstd frame ---- */

static void test_zstd_frames(void)
{
	static const char *const bad[] = { "zstd-trailing.npr", "zstd-two-frames.npr",
		"zstd-skippable-before.npr", "zstd-skippable-after.npr", "zstd-dict.npr" };
	struct hw_read h;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(hw_read(bad[i], &h) == 0, "%s", bad[i]);
		CHECK(h.st.chunks_bad == 1 && h.st.chunks_ok == 0 && h.records == 0 &&
		      h.st.last_good_offset == 16, "%s: bad chunk", bad[i]);
	}
	/* the same END record in a plain frame is good (the fixtures differ only there) */
	CHECK(hw_read("kind7.npr", &h) == 0 && h.st.chunks_ok == 1, "plain frame: good");
}

/* ---- FORMAT.md 4.2/4.3: numbering and warning caps ---- */

/* The records of chunk c: an END record, then `bad` nils (bad records). */
static size_t hw_bad;
static void hw_end_and_nils(struct np_recbuf *rb, size_t c)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_END, 1);
	msgpack_pack_map(pk, 1);
	np_pack_kv_u64(pk, "t_ns", c);
	for (size_t i = 0; i < hw_bad; i++)
		msgpack_pack_nil(&rb->pk);
}

/* 1000 ANA_TABLE records without name, cols or rows (malformed tables). */
static void hw_bad_tables(struct np_recbuf *rb, size_t c)
{
	(void)c;
	for (int i = 0; i < 1000; i++)
		msgpack_pack_map(np_recbuf_begin(rb, NP_REC_ANA_TABLE, 1), 0);
}

/* File header + nchunks chunks of fill's records; 8 bytes of garbage after
 * chunk `garbage_after` (-1: none). */
static uint8_t *hw_file_of(size_t nchunks, void (*fill)(struct np_recbuf *, size_t),
			   long garbage_after, enum np_file_kind kind, size_t *len)
{
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	uint8_t *d = calloc(1, NP_FILE_HDR_LEN);
	memcpy(d, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
	d[8] = NP_FORMAT_VERSION;
	d[10] = (uint8_t)kind;
	*len = NP_FILE_HDR_LEN;
	for (size_t c = 0; c < nchunks; c++) {
		fill(&rb, c);
		struct np_chunk ch;
		if (np_chunk_build(&ch, &rb, 1) == 0) {
			d = realloc(d, *len + ch.len + 8);
			memcpy(d + *len, ch.data, ch.len);
			*len += ch.len;
			np_chunk_free(&ch);
		}
		if ((long)c == garbage_after) {
			memcpy(d + *len, "garbage!", 8);
			*len += 8;
		}
		np_recbuf_reset(&rb);
	}
	np_recbuf_free(&rb);
	return d;
}

static uint8_t *hw_file(size_t nchunks, size_t bad_per_chunk, long garbage_after, size_t *len)
{
	hw_bad = bad_per_chunk;
	return hw_file_of(nchunks, hw_end_and_nils, garbage_after, NP_KIND_RECORDING, len);
}

static void test_numbering(void)
{
	struct hw_read h;
	size_t len;
	uint8_t *d = hw_file(3, 0, 1, &len);
	CHECK(hw_read_mem(d, len, &h) == 0, "3 chunks, garbage after the second");
	CHECK(h.records == 3 && h.last_chunk == 2, "dump numbers the chunks 0, 1, 2 (%llu)",
	      (unsigned long long)h.last_chunk);
	CHECK(h.log.n == 1 && strstr(h.log.lines[0], "(after chunk 1)"),
	      "garbage after the chunk dump numbers 1: %s", h.log.lines[0]);
	free(d);
	CHECK(hw_read("zstd-dict.npr", &h) == 0 && hw_any(&h.log, "(before the first good chunk)"),
	      "damage before any good chunk");
}

static void test_warning_caps(void)
{
	struct hw_read h;
	size_t len;
	/* one chunk, 1000 bad records: 10 warnings and a summary */
	uint8_t *d = hw_file(1, 1000, -1, &len);
	CHECK(hw_read_mem(d, len, &h) == 0, "1000 nils");
	CHECK(h.st.records_bad == 1000 && h.records == 1, "every bad record counted (%llu)",
	      (unsigned long long)h.st.records_bad);
	CHECK_EQ_U(h.log.n, NP_WARN_CHUNK_MAX + 1);
	CHECK(strstr(h.log.lines[NP_WARN_CHUNK_MAX], "... and 990 more like it in chunk 0 (offset 16)"),
	      "chunk summary: %s", h.log.lines[NP_WARN_CHUNK_MAX]);
	free(d);
	/* 150 chunks with 3 bad records each: 450 problems, 100 lines + a summary */
	d = hw_file(150, 3, -1, &len);
	CHECK(hw_read_mem(d, len, &h) == 0, "150 chunks");
	CHECK_EQ_U(h.st.records_bad, 450);
	CHECK_EQ_U(h.log.n, NP_WARN_FILE_MAX + 1);
	CHECK(strstr(h.log.lines[NP_WARN_FILE_MAX], "... and 350 more like it (warnings stop after 100 per file)"),
	      "file summary: %s", h.log.lines[NP_WARN_FILE_MAX]);
	free(d);
	/* the analysis loader's own warnings (malformed tables) share the caps */
	d = hw_file_of(1, hw_bad_tables, -1, NP_KIND_ANALYSIS, &len);
	struct np_analysis a;
	memset(&h, 0, sizeof(h));
	CHECK(np_analysis_load_mem(&a, d, len, hw_warn, &h.log) == 0, "1000 malformed tables");
	CHECK(a.ntables == 0 && a.stats.records == 1000, "none kept (%zu)", a.ntables);
	CHECK_EQ_U(h.log.n, NP_WARN_CHUNK_MAX + 1);
	CHECK(strstr(h.log.lines[0], "malformed ana_table record in chunk 0 (offset 16) skipped") &&
	      strstr(h.log.lines[NP_WARN_CHUNK_MAX], "... and 990 more like it in chunk 0"),
	      "table warnings: %s / %s", h.log.lines[0], h.log.lines[NP_WARN_CHUNK_MAX]);
	np_analysis_free(&a);
	free(d);
	/* the 8 246-byte file of 256 MiB of nil */
	CHECK(hw_read("nil-bomb.npr", &h) == 0, "nil-bomb.npr");
	CHECK_EQ_U(h.st.records_bad, 268435456);
	CHECK_EQ_U(h.log.n, NP_WARN_CHUNK_MAX + 1);
	CHECK(hw_any(&h.log, "... and 268435446 more like it in chunk 0 (offset 16)"), "bomb summary");
}

int main(void)
{
	test_utf8();
	test_numbers();
	test_repeated_key();
	test_fixture_json();
	test_file_header();
	test_offsets_and_tails();
	test_zstd_frames();
	test_numbering();
	test_warning_caps();
	return tap_done();
}
