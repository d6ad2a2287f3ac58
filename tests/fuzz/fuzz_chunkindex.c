/* libFuzzer target: the chunk index (FORMAT.md 2.6). Mutated bytes rarely
 * keep a CRC-32 right, so the first byte chooses what the rest is:
 *   0: the body of an INDEX record, put in a valid INDEX chunk at the end of
 *      a valid three-chunk file (fuzz_ci_base), which is then read through
 *      a window: parsing, every bound and the chain check against the file;
 *   1: a whole file, read through a window (finding the index from the end,
 *      the fallback to scanning);
 *   2: a decompressed chunk payload for np_chunk_time.
 * Invariants: what the reader returns lies inside the file, and a time
 * range is empty or ordered. */
#include "chunkindex.h"
#include "container.h"
#include "npmsg.h"
#include "records.h"

#include <stdlib.h>
#include <string.h>

/* A file of three chunks: a HEADER, two intervals [10, 20] and [20, 30]. */
static struct np_chunk ci_chunk(int k)
{
	struct np_recbuf rb;
	struct np_chunk c;
	np_recbuf_init(&rb);
	msgpack_packer *pk = np_recbuf_begin(&rb, k ? NP_REC_INTERVAL : NP_REC_HEADER, 1);
	msgpack_pack_map(pk, k ? 2 : 1);
	if (k) {
		np_pack_kv_u64(pk, "t0_ns", 10 * (uint64_t)k);
		np_pack_kv_u64(pk, "t1_ns", 10 * (uint64_t)k + 10);
	} else {
		np_pack_kv_str(pk, "kind", "recording");
	}
	if (np_chunk_build(&c, &rb, 1))
		abort();
	np_recbuf_free(&rb);
	return c;
}

static uint8_t *fuzz_ci_base(size_t *len)
{
	static uint8_t *base;
	static size_t blen;
	if (!base) {
		struct np_chunk c[3] = { ci_chunk(0), ci_chunk(1), ci_chunk(2) };
		blen = NP_FILE_HDR_LEN + c[0].len + c[1].len + c[2].len;
		base = calloc(1, blen);
		memcpy(base, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
		base[8] = NP_FORMAT_VERSION;
		base[10] = NP_KIND_RECORDING;
		size_t off = NP_FILE_HDR_LEN;
		for (int k = 0; k < 3; k++) {
			memcpy(base + off, c[k].data, c[k].len);
			off += c[k].len;
			np_chunk_free(&c[k]);
		}
	}
	*len = blen;
	return base;
}

static void ci_read(const uint8_t *data, size_t size, int64_t lo, int64_t hi, bool rel)
{
	struct np_reader *r;
	struct np_record rec;
	if (np_reader_open_mem(&r, data, size, NULL, NULL) != 0)
		return;
	np_reader_set_window(r, lo, hi, rel);
	while (np_reader_next(r, &rec) == 1)
		if (rec.file_offset + NP_CHUNK_MIN_LEN > size)
			abort();
	uint64_t t;
	if (np_reader_first_time(r, &t) && !t)
		abort();
	np_reader_close(r);
}

/* The body as the record of an INDEX chunk appended to the base file. */
static void ci_index_body(const uint8_t *body, size_t n)
{
	size_t blen;
	const uint8_t *base = fuzz_ci_base(&blen);
	struct np_recbuf rb;
	struct np_chunk c;
	np_recbuf_init(&rb);
	np_recbuf_begin(&rb, NP_REC_INDEX, 1);
	msgpack_sbuffer_write(&rb.sbuf, (const char *)body, n);
	if (np_chunk_build(&c, &rb, 1) == 0) {
		size_t size = blen + c.len;
		uint8_t *f = malloc(size);
		memcpy(f, base, blen);
		memcpy(f + blen, c.data, c.len);
		ci_read(f, size, 15, 25, false);
		ci_read(f, size, 0, 5, true);
		free(f);
		np_chunk_free(&c);
	}
	np_recbuf_free(&rb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	uint64_t lo, hi;
	switch (data[0] % 3) {
	case 0:
		ci_index_body(p, n);
		break;
	case 1: {
		uint8_t *copy = malloc(n ? n : 1);   /* exact size: ASan sees overreads */
		memcpy(copy, p, n);
		ci_read(copy, n, 0, INT64_MAX, false);
		ci_read(copy, n, 1000, 2000, true);
		free(copy);
		break;
	}
	default:
		np_chunk_time(p, n, &lo, &hi);
		if ((lo == 0) != (hi == 0) || lo > hi)
			abort();
	}
	return 0;
}
