/* libFuzzer target: the container reader and everything that decodes what it
 * returns (JSON printing, the analysis loader) on arbitrary bytes. The input
 * is also tried with a valid file header in front, and as the decompressed
 * payload of a valid chunk: mutations rarely keep a CRC-32 right, so without
 * that the fuzzer would never get past the checksums to the record decoding.
 * Each is read serially and with chunks decoded ahead (npanalyze --threads),
 * which must return the same records. */
#include "anatable.h"
#include "container.h"
#include "npmsg.h"
#include "pktcols.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *devnull;

/* npanalyze --threads: chunks decoded ahead (np_reader_decode_at), here
 * synchronously, the one the reader asks for. */
struct fz_ahead { const struct np_reader *r; struct np_chunkbuf cb; };
static int fz_take(void *ctx, uint64_t off, struct np_chunkbuf *cb)
{
	struct fz_ahead *a = ctx;
	if (np_reader_decode_at(a->r, off, &a->cb))
		return 0;
	struct np_chunkbuf t = *cb;
	*cb = a->cb;
	a->cb = t;
	return 1;
}

static uint64_t fz_mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

/* Every type raw: bodies as bytes that walk to exactly their length
 * (inputs are too small for the object cap), pairs as a walk of the body
 * finds them. A digest of the records (0 if the reader cannot open). */
static uint64_t fz_raw_pass(const uint8_t *data, size_t size, bool ahead, struct np_reader_stats *st)
{
	struct np_reader *r;
	struct np_record rec;
	struct fz_ahead fa = { 0 };
	uint64_t h = 1;
	if (np_reader_open_mem(&r, data, size, NULL, NULL) != 0)
		return 0;
	for (unsigned t = 0; t < 256; t++)
		np_reader_set_raw(r, (uint16_t)t);
	fa.r = r;
	if (ahead)
		np_reader_set_prefetch(r, fz_take, &fa);
	while (np_reader_next(r, &rec) == 1) {
		if ((rec.type < 256) == !!rec.body || !rec.raw ||
		    np_mp_walk(rec.raw, rec.raw_len, NULL) != rec.raw_len)
			abort();
		/* the pairs the reader found = the pairs a walk of the body finds */
		struct pktcols_raw a, b;
		if (pktcols_raw_from_record(&a, &rec) || pktcols_raw_open(&b, rec.raw, rec.raw_len) ||
		    a.n + a.more != b.n + b.more)
			abort();
		for (uint32_t i = 0; i < a.n && i < b.n; i++)
			if (a.kv[i].key != b.kv[i].key || a.kv[i].klen != b.kv[i].klen ||
			    a.kv[i].val != b.kv[i].val || a.kv[i].vlen != b.kv[i].vlen)
				abort();
		h = fz_mix(h, rec.type);
		h = fz_mix(h, rec.chunk_index);
		h = fz_mix(h, rec.file_offset);
		h = fz_mix(h, rec.raw_len);
		h = fz_mix(h, np_crc32(rec.raw, rec.raw_len));
		h = fz_mix(h, rec.raw_pairs ? rec.raw_npairs : 999);
	}
	*st = *np_reader_stats(r);
	np_reader_close(r);
	np_chunkbuf_free(&fa.cb);
	return h;
}

static bool fz_same_stats(const struct np_reader_stats *a, const struct np_reader_stats *b)
{
	return a->chunks_ok == b->chunks_ok && a->chunks_bad == b->chunks_bad &&
	       a->bytes_skipped == b->bytes_skipped && a->records == b->records &&
	       a->records_bad == b->records_bad && a->truncated == b->truncated &&
	       a->last_good_offset == b->last_good_offset && a->bad_file_header == b->bad_file_header;
}

static void fz_read(const uint8_t *data, size_t size)
{
	struct np_reader *r;
	if (np_reader_open_mem(&r, data, size, NULL, NULL) != 0)
		return;
	struct np_record rec;
	while (np_reader_next(r, &rec) == 1) {
		np_obj_print_json(devnull, rec.body);
		if (rec.type == 65) {
			struct np_table *t = np_table_unpack(rec.body);
			if (t && t->nrows)
				free(np_table_row_key(t, 0));
			np_table_free(t);
		}
	}
	const struct np_reader_stats *st = np_reader_stats(r);
	if (st->last_good_offset > size)
		abort();   /* the reader must never claim bytes it did not have */
	struct np_reader_stats tree = *st;
	np_reader_close(r);

	/* every type raw: the same counters; with chunks decoded ahead, the
	 * same records too */
	struct np_reader_stats serial, ahead;
	uint64_t h = fz_raw_pass(data, size, false, &serial);
	if (h && (!fz_same_stats(&serial, &tree) || fz_raw_pass(data, size, true, &ahead) != h ||
		  !fz_same_stats(&ahead, &serial)))
		abort();

	struct np_analysis a;
	if (np_analysis_load_mem(&a, data, size, NULL, NULL) == 0)
		np_analysis_free(&a);
}

static void fz_file_header(uint8_t *buf)
{
	memset(buf, 0, NP_FILE_HDR_LEN);
	memcpy(buf, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
	buf[8] = NP_FORMAT_VERSION;
	buf[10] = NP_KIND_ANALYSIS;
}

/* data as the records of one good chunk, between two good empty chunks. */
static void fz_as_payload(const uint8_t *data, size_t size)
{
	struct np_recbuf rb, empty;
	struct np_chunk c, e;
	np_recbuf_init(&rb);
	np_recbuf_init(&empty);
	if (size)   /* msgpack-c adds 0 to a NULL buffer on empty writes (UB) */
		msgpack_sbuffer_write(&rb.sbuf, (const char *)data, size);
	rb.nrecords = 1;
	if (np_chunk_build(&c, &rb, 1) == 0) {
		if (np_chunk_build(&e, &empty, 1) == 0) {
			size_t len = NP_FILE_HDR_LEN + 2 * e.len + c.len;
			uint8_t *buf = malloc(len);
			if (buf) {
				fz_file_header(buf);
				memcpy(buf + NP_FILE_HDR_LEN, e.data, e.len);
				memcpy(buf + NP_FILE_HDR_LEN + e.len, c.data, c.len);
				memcpy(buf + NP_FILE_HDR_LEN + e.len + c.len, e.data, e.len);
				fz_read(buf, len);
				free(buf);
			}
			np_chunk_free(&e);
		}
		np_chunk_free(&c);
	}
	np_recbuf_free(&rb);
	np_recbuf_free(&empty);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	fz_read(data, size);
	fz_as_payload(data, size);
	if (size >= NP_FILE_MAGIC_LEN && memcmp(data, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN) == 0)
		return 0;
	uint8_t *buf = malloc(size + NP_FILE_HDR_LEN);
	if (!buf)
		return 0;
	fz_file_header(buf);
	memcpy(buf + NP_FILE_HDR_LEN, data, size);
	fz_read(buf, size + NP_FILE_HDR_LEN);
	free(buf);
	return 0;
}
