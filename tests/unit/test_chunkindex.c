/* The chunk index (FORMAT.md 2.6): the time range of a chunk computed from
 * hand-made records; the INDEX written at close against the offsets and
 * times the test wrote; a window read through the index, by scanning the
 * same file without it, with a damaged or lying index, and on the old
 * fixture (format version 1) all returning the chunks the test knows
 * overlap the window; the same window read with chunks decoded ahead on
 * threads (ana_read.c) returning the same records and warnings, also with
 * a damaged chunk inside it; hostile INDEX bodies refused. */
#include "tap.h"
#include "tfile.h"
#include "chunkindex.h"
#include "container.h"
#include "npmsg.h"
#include "records.h"
#include "ana_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T0   1000000000000ull      /* first interval starts at 1000 s */
#define SEC  1000000000ull
#define NIV  20                    /* timed interval chunks */
#define UNTIMED_AT 7               /* an extra chunk without a time after interval 6 */

static char tmpdir[] = "/tmp/np_test_chunkindex.XXXXXX";

/* Two paths are alive at once: one buffer each, by slot. */
static char *tpath2(const char *name, int slot)
{
	static char buf[2][256];
	snprintf(buf[slot], sizeof(buf[slot]), "%s/%s", tmpdir, name);
	return buf[slot];
}
#define tpath(name) tpath2(name, 0)

/* ---- np_chunk_time on hand-made records ---- */

static void pack_rec(struct np_recbuf *rb, uint16_t type, const char *const *keys,
		     const uint64_t *vals, size_t n)
{
	msgpack_packer *pk = np_recbuf_begin(rb, type, 1);
	msgpack_pack_map(pk, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		np_pack_kv_u64(pk, keys[i], vals[i]);
}

static void test_chunk_time(void)
{
	struct np_recbuf rb;
	uint64_t lo, hi;
	np_recbuf_init(&rb);
	np_chunk_time(rb.sbuf.data, rb.sbuf.size, &lo, &hi);
	CHECK(lo == 0 && hi == 0, "empty chunk: no time");

	static const char *const k1[] = { "t0_ns", "t1_ns", "n" };
	static const uint64_t v1[] = { 5000, 9000, 123456789 };
	static const char *const k2[] = { "t_ns", "duration_ns" };
	static const uint64_t v2[] = { 4000, 1 };
	pack_rec(&rb, NP_REC_INTERVAL, k1, v1, 3);
	pack_rec(&rb, NP_REC_END, k2, v2, 2);
	np_chunk_time(rb.sbuf.data, rb.sbuf.size, &lo, &hi);
	CHECK(lo == 4000 && hi == 9000, "t0/t1/t_ns of two records: %llu..%llu",
	      (unsigned long long)lo, (unsigned long long)hi);

	/* 0 is no time; only the first of a repeated key counts; a float,
	 * a string, a negative value and a key in a nested map do not count */
	np_recbuf_reset(&rb);
	msgpack_packer *pk = np_recbuf_begin(&rb, NP_REC_FLOWS, 1);
	msgpack_pack_map(pk, 6);
	np_pack_kv_u64(pk, "t0_ns", 0);
	np_pack_kv_u64(pk, "t1_ns", 7000);
	np_pack_kv_u64(pk, "t1_ns", 1);
	np_pack_kv_f64(pk, "t_ns", 2.0);
	np_pack_str(pk, "inner");
	msgpack_pack_map(pk, 1);
	np_pack_kv_u64(pk, "t_ns", 3);
	np_pack_kv_i64(pk, "x", -5);
	np_chunk_time(rb.sbuf.data, rb.sbuf.size, &lo, &hi);
	CHECK(lo == 7000 && hi == 7000, "first t1_ns only: %llu..%llu", (unsigned long long)lo,
	      (unsigned long long)hi);

	/* not records: a scalar and an array of two are skipped, a record
	 * after them counts; a cut-short object ends the chunk */
	np_recbuf_reset(&rb);
	msgpack_pack_nil(&rb.pk);
	msgpack_pack_array(&rb.pk, 2);
	msgpack_pack_uint64(&rb.pk, 3);
	msgpack_pack_uint64(&rb.pk, 1);
	static const char *const k3[] = { "t_ns" };
	static const uint64_t v3[] = { 42 };
	pack_rec(&rb, NP_REC_END, k3, v3, 1);
	size_t whole = rb.sbuf.size;
	static const uint64_t v4[] = { 1 };
	pack_rec(&rb, NP_REC_END, k3, v4, 1);
	np_chunk_time(rb.sbuf.data, rb.sbuf.size - 1, &lo, &hi);
	CHECK(lo == 42 && hi == 42, "non-records skipped, cut record ignored: %llu..%llu",
	      (unsigned long long)lo, (unsigned long long)hi);
	np_chunk_time(rb.sbuf.data, whole, &lo, &hi);
	CHECK(lo == 42 && hi == 42, "same without the cut record");
	np_recbuf_free(&rb);
}

/* ---- a recording with known chunk times ---- */

struct layout {
	size_t nchunks;                 /* chunks before the INDEX chunk */
	uint64_t off[64], lo[64], hi[64];
};

/* Chunk 0: a HEADER (no time). Then interval i in [T0 + i s, T0 + (i+1) s]
 * as INTERVAL + a batch record, one chunk each; after interval UNTIMED_AT-1
 * one chunk of CGROUPS (no time); last an END chunk (t_ns = the end). */
static int write_rec(const char *path, bool index, struct layout *L)
{
	struct np_writer *w;
	struct np_recbuf rb;
	struct np_writer_opts o = { .index = index };
	int err = np_writer_open(&w, path, NP_KIND_RECORDING, &o);
	if (err)
		return err;
	np_recbuf_init(&rb);
	L->nchunks = 0;
	for (int k = -1; k <= NIV + 1 && !err; k++) {
		uint64_t lo = 0, hi = 0;
		msgpack_packer *pk;
		if (k == -1) {
			pk = np_recbuf_begin(&rb, NP_REC_HEADER, 1);
			msgpack_pack_map(pk, 1);
			np_pack_kv_str(pk, "kind", "recording");
		} else if (k == NIV + 1) {
			static const char *const ke[] = { "t_ns", "duration_ns" };
			uint64_t ve[] = { T0 + NIV * SEC, NIV * SEC };
			pack_rec(&rb, NP_REC_END, ke, ve, 2);
			lo = hi = T0 + NIV * SEC;
		} else if (k == NIV) {
			pk = np_recbuf_begin(&rb, NP_REC_CGROUPS, 1);
			msgpack_pack_map(pk, 1);
			np_pack_kv_str(pk, "path", "/");
		} else {
			static const char *const ki[] = { "seq", "t0_ns", "t1_ns" };
			uint64_t vi[] = { (uint64_t)k, T0 + (uint64_t)k * SEC, T0 + (uint64_t)(k + 1) * SEC };
			pack_rec(&rb, NP_REC_INTERVAL, ki, vi, 3);
			uint64_t vb[] = { 100 + (uint64_t)k, T0 + (uint64_t)k * SEC + 5, T0 + (uint64_t)k * SEC + 9 };
			static const char *const kb[] = { "n", "t0_ns", "t1_ns" };
			pack_rec(&rb, NP_REC_FLOWS, kb, vb, 3);
			lo = vi[1];
			hi = vi[2];
		}
		L->off[L->nchunks] = np_writer_bytes(w);
		L->lo[L->nchunks] = lo;
		L->hi[L->nchunks] = hi;
		L->nchunks++;
		err = np_writer_commit(w, &rb);
		/* the untimed chunk goes in the middle of the file */
		if (k == UNTIMED_AT - 1 && !err) {
			L->off[L->nchunks] = np_writer_bytes(w);
			L->lo[L->nchunks] = L->hi[L->nchunks] = 0;
			L->nchunks++;
			pk = np_recbuf_begin(&rb, NP_REC_CGROUPS, 1);
			msgpack_pack_map(pk, 1);
			np_pack_kv_str(pk, "path", "/a");
			err = np_writer_commit(w, &rb);
		}
	}
	np_recbuf_free(&rb);
	int cerr = np_writer_close(w);
	return err ? err : cerr;
}

/* The chunk numbers a window read returns, as a bit set, and the reader's
 * mode. Also checks each chunk's offset against the layout. */
struct wread {
	uint64_t chunks;                /* bit per chunk number */
	size_t records;
	enum np_seek_mode mode;
	bool offsets_ok;
	int rc;
};

static struct wread read_window(const char *path, int64_t lo, int64_t hi, bool rel,
				const struct layout *L)
{
	struct wread out = { .offsets_ok = true };
	struct np_reader *r;
	struct np_record rec;
	if (np_reader_open(&r, path, count_warn, NULL))
		return out;
	out.rc = np_reader_set_window(r, lo, hi, rel);
	while (np_reader_next(r, &rec) == 1) {
		out.records++;
		if (rec.chunk_index < 64)
			out.chunks |= 1ull << rec.chunk_index;
		if (L && (rec.chunk_index >= L->nchunks || L->off[rec.chunk_index] != rec.file_offset))
			out.offsets_ok = false;
	}
	out.mode = np_reader_seek_mode(r);
	np_reader_close(r);
	return out;
}

/* What a window must return, from the layout the test wrote. */
static uint64_t expected_chunks(const struct layout *L, uint64_t lo, uint64_t hi)
{
	uint64_t set = 1;               /* chunk 0 always */
	for (size_t i = 1; i < L->nchunks; i++)
		if ((L->lo[i] == 0 && L->hi[i] == 0) || (L->hi[i] >= lo && L->lo[i] <= hi))
			set |= 1ull << i;
	return set;
}

static void test_written_index(void)
{
	struct layout L;
	const char *p = tpath("ix.npr");
	CHECK(write_rec(p, true, &L) == 0, "write with index");
	struct np_reader *r;
	struct np_record rec;
	CHECK(np_reader_open(&r, p, count_warn, NULL) == 0, "open");
	struct np_index ix = { 0 };
	uint64_t last_off = 0;
	int last_type = -1;
	while (np_reader_next(r, &rec) == 1) {
		last_type = rec.type;
		last_off = rec.file_offset;
		if (rec.type == NP_REC_INDEX) {
			np_index_free(&ix);
			CHECK(np_index_from_body(rec.body, rec.file_offset, &ix) == 0, "index body parses");
		}
	}
	CHECK(last_type == NP_REC_INDEX, "last record is the INDEX (%d)", last_type);
	CHECK(np_reader_stats(r)->chunks_ok == L.nchunks + 1, "one chunk more than written");
	np_reader_close(r);
	CHECK_EQ_U(ix.n, L.nchunks);
	CHECK_EQ_U(ix.end, last_off);
	bool same = ix.n == L.nchunks;
	for (size_t i = 0; same && i < ix.n; i++)
		same = ix.v[i].off == L.off[i] && ix.v[i].t_lo == L.lo[i] && ix.v[i].t_hi == L.hi[i];
	CHECK(same, "every entry: the offset and time range the test wrote");
	np_index_free(&ix);
}

static void test_window_index_and_scan(void)
{
	struct layout L, L2;
	const char *p = tpath("w.npr"), *q = tpath2("w-noindex.npr", 1);
	CHECK(write_rec(p, true, &L) == 0 && write_rec(q, false, &L2) == 0, "written");
	uint64_t lo = T0 + 3 * SEC + SEC / 2, hi = T0 + 5 * SEC + SEC / 5;
	uint64_t want = expected_chunks(&L, lo, hi);
	/* header, intervals 3, 4, 5 (chunks 4, 5, 6) and the untimed chunks 8, 22 */
	CHECK(want == (1ull | 1ull << 4 | 1ull << 5 | 1ull << 6 | 1ull << 8 | 1ull << 22), "expected set %#llx",
	      (unsigned long long)want);
	struct wread a = read_window(p, (int64_t)lo, (int64_t)hi, false, &L);
	CHECK(a.rc == 0 && a.mode == NP_SEEK_INDEX, "through the index (mode %d)", a.mode);
	CHECK(a.chunks == want, "index: chunks %#llx, want %#llx", (unsigned long long)a.chunks,
	      (unsigned long long)want);
	CHECK(a.offsets_ok, "index: chunk numbers and offsets as written");
	struct wread b = read_window(q, (int64_t)lo, (int64_t)hi, false, &L2);
	CHECK(b.mode == NP_SEEK_SCAN && b.chunks == want && b.offsets_ok,
	      "no index: scanned, same chunks (%#llx)", (unsigned long long)b.chunks);
	CHECK_EQ_U(a.records, b.records);
	/* the index itself, for readers that split chunks among threads */
	struct np_reader *ri;
	np_reader_open(&ri, p, NULL, NULL);
	const struct np_index *ix = np_reader_index(ri);
	bool same = ix && ix->n == L.nchunks;
	for (size_t i = 0; same && i < ix->n; i++)
		same = ix->v[i].off == L.off[i] && ix->v[i].t_lo == L.lo[i] && ix->v[i].t_hi == L.hi[i];
	CHECK(same, "np_reader_index: the chunks written");
	np_reader_close(ri);
	np_reader_open(&ri, q, NULL, NULL);
	CHECK(np_reader_index(ri) == NULL, "np_reader_index: NULL without an index");
	np_reader_close(ri);
	/* relative: from the first chunk with a time (interval 0 at T0) */
	struct wread c = read_window(p, (int64_t)(3 * SEC + SEC / 2), (int64_t)(5 * SEC + SEC / 5), true, &L);
	struct wread d = read_window(q, (int64_t)(3 * SEC + SEC / 2), (int64_t)(5 * SEC + SEC / 5), true, &L2);
	CHECK(c.chunks == want && d.chunks == want, "relative window, index %#llx scan %#llx",
	      (unsigned long long)c.chunks, (unsigned long long)d.chunks);
	/* a window before everything: the header and the untimed chunk */
	struct wread e = read_window(p, 1, 2, false, &L);
	CHECK(e.chunks == (1ull | 1ull << 8 | 1ull << 22), "empty window: header + untimed (%#llx)",
	      (unsigned long long)e.chunks);
	/* the END chunk at the end time */
	struct wread f = read_window(p, (int64_t)(T0 + NIV * SEC), INT64_MAX, false, &L);
	CHECK(f.chunks == expected_chunks(&L, T0 + NIV * SEC, UINT64_MAX), "open end (%#llx)",
	      (unsigned long long)f.chunks);
	/* set after the second chunk: refused */
	struct np_reader *r;
	struct np_record rec;
	np_reader_open(&r, p, NULL, NULL);
	int n = 0;
	while (n < 3 && np_reader_next(r, &rec) == 1)
		n++;
	CHECK(np_reader_set_window(r, 0, 1, false) == -EBUSY, "too late: EBUSY");
	np_reader_close(r);
	/* set after the first record (HEADER): still through the index */
	np_reader_open(&r, p, NULL, NULL);
	uint64_t set = 0;
	if (np_reader_next(r, &rec) == 1) {
		set |= 1ull << rec.chunk_index;
		CHECK(np_reader_set_window(r, (int64_t)lo, (int64_t)hi, false) == 0, "after the header");
	}
	while (np_reader_next(r, &rec) == 1)
		set |= 1ull << rec.chunk_index;
	CHECK(np_reader_seek_mode(r) == NP_SEEK_INDEX && set == want, "after the header: %#llx",
	      (unsigned long long)set);
	uint64_t ft = 0;
	CHECK(np_reader_first_time(r, &ft) && ft == T0, "first time from the index");
	np_reader_close(r);
}

/* ---- damaged and lying indexes ---- */


static void spit(const char *path, const uint8_t *d, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(d, 1, n, f);
		fclose(f);
	}
}

/* The file without its last chunk plus an INDEX chunk of this body. */
static void with_index(const struct blob *b, uint64_t end, const struct np_index *ix,
		       const char *path)
{
	struct np_recbuf rb;
	struct np_chunk c;
	np_recbuf_init(&rb);
	np_index_pack(np_recbuf_begin(&rb, NP_REC_INDEX, 1), ix);
	np_chunk_build(&c, &rb, 1);
	uint8_t *d = malloc(end + c.len);
	memcpy(d, b->data, end);
	memcpy(d + end, c.data, c.len);
	spit(path, d, end + c.len);
	free(d);
	np_chunk_free(&c);
	np_recbuf_free(&rb);
}

static void test_damaged_index(void)
{
	struct layout L;
	const char *p = tpath("d.npr"), *q = tpath2("d2.npr", 1);
	write_rec(p, true, &L);
	struct blob b = slurp(p);
	uint64_t lo = T0 + 10 * SEC, hi = T0 + 11 * SEC;
	uint64_t want = expected_chunks(&L, lo, hi);
	uint64_t end = L.off[L.nchunks - 1] + 0;
	/* the end of the last indexed chunk = where the INDEX chunk starts */
	uint32_t tl;
	memcpy(&tl, b.data + b.len - 4, 4);
	end = b.len - tl;

	/* a flipped payload byte of the INDEX chunk: its CRC fails */
	b.data[b.len - 6] ^= 0x40;
	spit(q, b.data, b.len);
	b.data[b.len - 6] ^= 0x40;
	nwarn = 0;
	struct wread a = read_window(q, (int64_t)lo, (int64_t)hi, false, &L);
	CHECK(a.mode == NP_SEEK_SCAN && a.chunks == want, "damaged index: scanned (%d, %#llx)", a.mode,
	      (unsigned long long)a.chunks);
	CHECK(nwarn >= 1 && strstr(lastwarn, "index"), "damaged index warned: %s", lastwarn);

	/* an index whose offsets are off by one: the chain check refuses it */
	struct np_index ix = { 0 };
	for (size_t i = 0; i < L.nchunks; i++)
		np_index_add(&ix, L.off[i] + (i == 3), L.lo[i], L.hi[i]);
	ix.end = end;
	with_index(&b, end, &ix, q);
	struct wread c = read_window(q, (int64_t)lo, (int64_t)hi, false, &L);
	CHECK(c.mode == NP_SEEK_SCAN && c.chunks == want, "offset off by one: scanned (%d, %#llx, want %#llx)",
	      c.mode, (unsigned long long)c.chunks, (unsigned long long)want);
	/* one that leaves a chunk out */
	ix.v[3] = ix.v[4];
	ix.v[3].off = L.off[3];
	memmove(ix.v + 4, ix.v + 5, (ix.n - 5) * sizeof(*ix.v));
	ix.n--;
	with_index(&b, end, &ix, q);
	c = read_window(q, (int64_t)lo, (int64_t)hi, false, &L);
	CHECK(c.mode == NP_SEEK_SCAN, "a chunk left out: scanned");
	/* one that lies about times (chain good, ranges inverted) */
	np_index_free(&ix);
	for (size_t i = 0; i < L.nchunks; i++)
		np_index_add(&ix, L.off[i], L.hi[i], L.lo[i] ? L.lo[i] - (L.lo[i] != L.hi[i]) : 0);
	ix.end = end;
	with_index(&b, end, &ix, q);
	c = read_window(q, (int64_t)lo, (int64_t)hi, false, &L);
	CHECK(c.mode == NP_SEEK_SCAN, "t_lo > t_hi: scanned");
	/* a true index rebuilt by hand is used: the check is not too strict */
	np_index_free(&ix);
	for (size_t i = 0; i < L.nchunks; i++)
		np_index_add(&ix, L.off[i], L.lo[i], L.hi[i]);
	ix.end = end;
	with_index(&b, end, &ix, q);
	c = read_window(q, (int64_t)lo, (int64_t)hi, false, &L);
	CHECK(c.mode == NP_SEEK_INDEX && c.chunks == want, "hand-made true index used");
	/* garbage after the index: no index at the end any more */
	uint8_t *g = malloc(b.len + 3);
	memcpy(g, b.data, b.len);
	memcpy(g + b.len, "xyz", 3);
	spit(q, g, b.len + 3);
	free(g);
	c = read_window(q, (int64_t)lo, (int64_t)hi, false, &L);
	CHECK(c.mode == NP_SEEK_SCAN && c.chunks == want, "garbage after the index: scanned (%d, %#llx)",
	      c.mode, (unsigned long long)c.chunks);
	np_index_free(&ix);
	free(b.data);
}

/* np_index_from_body against bodies no writer makes. */
static void test_hostile_bodies(void)
{
	struct np_index ix;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_unpacked u;
	uint64_t off[3] = { 16, 100, 200 }, lo[3] = { 0, 5, 9 }, hi[3] = { 0, 6, 9 };
	struct { uint64_t n, end, first, lo1; size_t len; int want; const char *what; } cases[] = {
		{ 3, 300, 16, 5, 3, 0, "good" },
		{ 3, 301, 16, 5, 3, -EINVAL, "end is not where the index is" },
		{ 4, 300, 16, 5, 3, -EINVAL, "n larger than the columns" },
		{ 1ull << 40, 300, 16, 5, 3, -EINVAL, "n beyond any bound" },
		{ 3, 300, 17, 5, 3, -EINVAL, "first chunk not at 16" },
		{ 3, 300, 16, 7, 3, -EINVAL, "t_lo > t_hi" },
		{ 3, 220, 16, 5, 3, -EINVAL, "last chunk shorter than a chunk" },
		{ 3, 16, 16, 5, 3, -EINVAL, "end at the file header" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		off[0] = cases[c].first;
		lo[1] = cases[c].lo1;
		msgpack_pack_map(&pk, 5);
		np_pack_kv_u64(&pk, "n", cases[c].n);
		np_pack_kv_u64(&pk, "end", cases[c].end);
		np_pack_kv_u64_delta(&pk, "off_d", off, cases[c].len);
		np_pack_kv_u64_delta(&pk, "lo_d", lo, cases[c].len);
		np_pack_kv_u64_delta(&pk, "hi_d", hi, cases[c].len);
		msgpack_unpacked_init(&u);
		msgpack_unpack_next(&u, sb.data, sb.size, NULL);
		int rc = np_index_from_body(&u.data, 300, &ix);
		CHECK(rc == cases[c].want && (rc || ix.n == 3), "%s: %d", cases[c].what, rc);
		np_index_free(&ix);
		msgpack_unpacked_destroy(&u);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_object nil = { .type = MSGPACK_OBJECT_NIL };
	CHECK(np_index_from_body(&nil, 300, &ix) == -EINVAL, "not a map");
}

/* The old fixture (format version 1, no index): chunk k >= 1 holds the
 * interval [1000 + k - 1, 1000 + k] s (fixtures/mkfixtures.md). */
static void test_old_fixture(void)
{
	const char *f = "fixtures/rec-basic.npr";
	if (access(f, R_OK) != 0) {
		CHECK(0, "%s missing", f);
		return;
	}
	struct wread a = read_window(f, (int64_t)(T0 + 2 * SEC + SEC / 2), (int64_t)(T0 + 3 * SEC + SEC / 2),
				     false, NULL);
	CHECK(a.mode == NP_SEEK_SCAN, "version 1 file: scanned");
	CHECK(a.chunks == (1ull | 1ull << 3 | 1ull << 4), "chunks 0, 3, 4 (%#llx)",
	      (unsigned long long)a.chunks);
}

/* Records (chunk, offset, type) and warnings of a window read, serially
 * (workers 0) or with chunks decoded ahead through the index. */
static void ahead_warn(void *ctx, const char *msg)
{
	char *log = ctx;
	size_t n = strlen(log);
	snprintf(log + n, 8192 - n, "W %s\n", msg);
}

static void read_ahead_log(const char *path, int64_t lo, int64_t hi, unsigned workers, char *log,
			   enum np_seek_mode *mode)
{
	struct np_reader *r;
	struct np_record rec;
	log[0] = 0;
	if (np_reader_open(&r, path, ahead_warn, log))
		return;
	np_reader_set_window(r, lo, hi, false);
	*mode = np_reader_seek_mode(r);
	struct ana_read *a = workers ? ana_read_new(r, workers, false) : NULL;
	while (np_reader_next(r, &rec) == 1) {
		size_t n = strlen(log);
		snprintf(log + n, 8192 - n, "R %llu %llu %u\n", (unsigned long long)rec.chunk_index,
			 (unsigned long long)rec.file_offset, rec.type);
	}
	const struct np_reader_stats *st = np_reader_stats(r);
	size_t n = strlen(log);
	snprintf(log + n, 8192 - n, "S %llu %llu\n", (unsigned long long)st->chunks_ok,
		 (unsigned long long)st->chunks_bad);
	ana_read_free(a);
	np_reader_close(r);
}

static void test_window_read_ahead(void)
{
	struct layout L;
	const char *p = tpath("ahead.npr");
	CHECK(write_rec(p, true, &L) == 0, "write with index");
	static char ref[8192], got[8192];
	enum np_seek_mode mode = NP_SEEK_NONE;
	int same = 0, tries = 0;
	for (int dmg = 0; dmg < 2; dmg++) {
		if (dmg) {              /* a payload byte of interval 9's chunk */
			FILE *f = fopen(p, "r+b");
			size_t c = 0;
			while (c < L.nchunks && L.lo[c] != T0 + 9 * SEC)
				c++;
			CHECK(f && c < L.nchunks, "chunk of interval 9 (%zu)", c);
			if (f) {
				fseek(f, (long)(L.off[c] + NP_CHUNK_HDR_LEN + 3), SEEK_SET);
				int b = fgetc(f);
				fseek(f, (long)(L.off[c] + NP_CHUNK_HDR_LEN + 3), SEEK_SET);
				fputc(b ^ 0x40, f);
				fclose(f);
			}
		}
		for (int w = 0; w < 4; w++) {
			uint64_t lo = T0 + (uint64_t)(3 + 2 * w) * SEC, hi = lo + (uint64_t)(2 + 3 * w) * SEC;
			read_ahead_log(p, (int64_t)lo, (int64_t)hi, 0, ref, &mode);
			CHECK(mode == NP_SEEK_INDEX, "window read through the index");
			for (unsigned k = 1; k <= 3; k += 2) {
				read_ahead_log(p, (int64_t)lo, (int64_t)hi, k, got, &mode);
				same += strcmp(ref, got) == 0;
				tries++;
			}
			if (dmg && w == 2)
				CHECK(strstr(ref, "W ") && strstr(ref, "checksum"), "damaged chunk in the window warned");
		}
	}
	CHECK_EQ_U(same, tries);
	/* the chunk after one, through the index: the window's next only */
	struct np_reader *r;
	CHECK(np_reader_open(&r, p, NULL, NULL) == 0, "open");
	np_reader_set_window(r, (int64_t)(T0 + 3 * SEC + SEC / 2), (int64_t)(T0 + 4 * SEC + SEC / 2), false);
	uint64_t exp = expected_chunks(&L, T0 + 3 * SEC + SEC / 2, T0 + 4 * SEC + SEC / 2);
	size_t first = 1;
	while (first < L.nchunks && !(exp >> first & 1))
		first++;
	uint64_t at = L.off[first], n = 1;
	while ((at = np_reader_next_chunk(r, at)) != 0)
		n++;
	CHECK(n == (uint64_t)__builtin_popcountll(exp) - 1, "next_chunk walks the window's %llu chunks",
	      (unsigned long long)n);
	np_reader_close(r);
}

int main(void)
{
	static void (*const tests[])(void) = {
		test_chunk_time, test_written_index, test_window_index_and_scan, test_damaged_index,
		test_hostile_bodies, test_old_fixture, test_window_read_ahead, NULL
	};
	return tap_run_in(tmpdir, tests);
}
