/* mkhostile DIR: writes the hostile-file fixtures of issue 17 into
 * DIR/hostile/ (ground truth: fixtures/mkfixtures.md, "hostile/"). Each file
 * is one question FORMAT.md answers: invalid UTF-8 in strings, float and key
 * formatting in dump, a chunk of 256 MiB of nil, version 0, an unknown kind,
 * trailing garbage of 23 and 24 bytes, tails cut after a chunk magic, and
 * payloads that are not exactly one plain zstd frame. The zstd frames are
 * built by hand (raw and RLE blocks), so the bytes do not depend on the zstd
 * library's version. */
#include "container.h"
#include "npmsg.h"
#include "records.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct hx_buf {
	uint8_t *d;
	size_t len, cap;
};

static void hx_put(struct hx_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *d = realloc(b->d, cap);
		if (!d) {
			fprintf(stderr, "mkhostile: out of memory\n");
			exit(1);
		}
		b->d = d;
		b->cap = cap;
	}
	memcpy(b->d + b->len, p, n);
	b->len += n;
}

static void hx_le(struct hx_buf *b, uint64_t v, size_t n)
{
	uint8_t x[8];
	for (size_t i = 0; i < n; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	hx_put(b, x, n);
}

static void hx_file_header(struct hx_buf *b, uint16_t version, uint16_t kind)
{
	hx_put(b, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
	hx_le(b, version, 2);
	hx_le(b, kind, 2);
	hx_le(b, 0, 4);
}

/* A single-segment zstd frame of one raw block holding data; did != 0
 * adds a 4-byte Dictionary_ID field. */
static void hx_frame(struct hx_buf *b, const void *data, size_t n, uint32_t did)
{
	static const uint8_t magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	hx_put(b, magic, 4);
	hx_le(b, 0x80 | 0x20 | (did ? 3 : 0), 1);   /* FCS 4 bytes, single segment */
	if (did)
		hx_le(b, did, 4);
	hx_le(b, n, 4);
	hx_le(b, (uint64_t)n << 3 | 1, 3);          /* last raw block */
	hx_put(b, data, n);
}

/* A chunk around payload (CRCs and trailer right). */
static void hx_chunk(struct hx_buf *b, uint16_t type, const struct hx_buf *payload, uint32_t ulen)
{
	struct hx_buf h = { 0 };
	hx_put(&h, NP_CHUNK_MAGIC, 4);
	hx_le(&h, type, 2);
	hx_le(&h, 0, 2);
	hx_le(&h, payload->len, 4);
	hx_le(&h, ulen, 4);
	hx_le(&h, np_crc32(payload->d, payload->len), 4);
	hx_le(&h, np_crc32(h.d, 20), 4);
	hx_put(b, h.d, h.len);
	hx_put(b, payload->d, payload->len);
	hx_le(b, NP_CHUNK_HDR_LEN + payload->len + NP_CHUNK_TRL_LEN, 4);
	free(h.d);
}

/* A chunk holding records (msgpack bytes) in a plain frame. */
static void hx_record_chunk(struct hx_buf *b, const msgpack_sbuffer *rec)
{
	struct hx_buf p = { 0 };
	hx_frame(&p, rec->data, rec->size, 0);
	hx_chunk(b, 0, &p, (uint32_t)rec->size);
	free(p.d);
}

static int hx_write(const char *dir, const char *name, const struct hx_buf *b)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b->d, 1, b->len, f) != b->len) {
		fprintf(stderr, "mkhostile: cannot write %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* ---- records ---- */

static const char *const hx_bad_utf8[] = {
	"\xed\xa0\x80",             /* surrogate U+D800 */
	"\xf4\x90\x80\x80",         /* U+110000, above U+10FFFF */
	"\xe0\x80\x80",             /* overlong 3-byte NUL */
	"\xf0\x80\x80\x80",         /* overlong 4-byte NUL */
	"\xf5\x80\x80\x80",         /* lead F5 */
	"\xf8\x88\x80\x80\x80",     /* 5-byte form, lead F8 */
	"\xfc\x84\x80\x80\x80\x80", /* 6-byte form, lead FC */
	"\xfd",                     /* lead FD alone */
	"\xc0\x80",                 /* overlong 2-byte NUL */
	"\x80",                     /* stray continuation byte */
	"a\xe2\x82",                /* cut short */
};
static const char *const hx_good_utf8[] = {
	"\xc3\xa9",                 /* U+00E9 */
	"\xe2\x82\xac",             /* U+20AC */
	"\xf0\x9f\x98\x80",         /* U+1F600 */
	"\xf4\x8f\xbf\xbf",         /* U+10FFFF, the last code point */
	"\xed\x9f\xbf",             /* U+D7FF, just below the surrogates */
	"\xee\x80\x80",             /* U+E000, just above */
	"q\"b\\\x01\x7f",           /* escapes */
};
#define HX_N(a) (sizeof(a) / sizeof((a)[0]))

/* [1, 1, {"kind": "recording", "bad": [...], "good": [...], "keys": {bad[0]: 1}}] */
static void hx_utf8_record(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint16(pk, NP_REC_HEADER);
	msgpack_pack_uint16(pk, 1);
	msgpack_pack_map(pk, 4);
	np_pack_kv_str(pk, "kind", "recording");
	np_pack_str(pk, "bad");
	msgpack_pack_array(pk, HX_N(hx_bad_utf8));
	for (size_t i = 0; i < HX_N(hx_bad_utf8); i++)
		np_pack_str(pk, hx_bad_utf8[i]);
	np_pack_str(pk, "good");
	msgpack_pack_array(pk, HX_N(hx_good_utf8));
	for (size_t i = 0; i < HX_N(hx_good_utf8); i++)
		np_pack_str(pk, hx_good_utf8[i]);
	np_pack_str(pk, "keys");
	msgpack_pack_map(pk, 1);
	np_pack_str(pk, hx_bad_utf8[0]);
	msgpack_pack_uint8(pk, 1);
}

/* [3, 1, {"f": floats, "i": ints, "k": non-string keys, "dup": repeated key}] */
static void hx_numbers_record(msgpack_packer *pk)
{
	static const double f[] = { 1.0, -0.0, 0.1, 1e16, 1e15, 5e-324, 1.7976931348623157e308,
				    0.30000000000000004, 123456.75 };
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint16(pk, NP_REC_INTERVAL);
	msgpack_pack_uint16(pk, 1);
	msgpack_pack_map(pk, 4);
	np_pack_str(pk, "f");
	msgpack_pack_array(pk, HX_N(f) + 3);
	for (size_t i = 0; i < HX_N(f); i++)
		msgpack_pack_double(pk, f[i]);
	msgpack_pack_float(pk, 0.1f);
	msgpack_pack_double(pk, NAN);
	msgpack_pack_double(pk, -INFINITY);
	np_pack_str(pk, "i");
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint64(pk, 0);
	msgpack_pack_int64(pk, -1);
	msgpack_pack_uint64(pk, UINT64_MAX);
	msgpack_pack_int64(pk, INT64_MIN);
	np_pack_str(pk, "k");
	msgpack_pack_map(pk, 7);
	msgpack_pack_double(pk, 0.1);  np_pack_str(pk, "a");
	msgpack_pack_uint8(pk, 1);     np_pack_str(pk, "b");
	np_pack_str(pk, "1");          np_pack_str(pk, "c");
	msgpack_pack_nil(pk);          np_pack_str(pk, "d");
	msgpack_pack_array(pk, 2);     msgpack_pack_uint8(pk, 1); msgpack_pack_uint8(pk, 2);
	np_pack_str(pk, "e");
	msgpack_pack_true(pk);         np_pack_str(pk, "f");
	msgpack_pack_bin(pk, 1);       msgpack_pack_bin_body(pk, "\xab", 1);
	np_pack_str(pk, "g");
	np_pack_str(pk, "dup");
	msgpack_pack_map(pk, 2);
	np_pack_kv_u64(pk, "x", 1);
	np_pack_kv_u64(pk, "x", 2);
}

/* [4, 1, {"t_ns": 1000}]: the END record of FORMAT.md 2.5. */
static void hx_end_record(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint16(pk, NP_REC_END);
	msgpack_pack_uint16(pk, 1);
	msgpack_pack_map(pk, 1);
	np_pack_kv_u64(pk, "t_ns", 1000);
}

static void hx_records(msgpack_sbuffer *sb, void (*fn)(msgpack_packer *))
{
	msgpack_packer pk;
	msgpack_sbuffer_clear(sb);
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	fn(&pk);
}

/* ---- files ---- */

/* One chunk decompressing to 256 MiB of msgpack nil (0xc0): 2048 RLE blocks
 * of 128 KiB, ~8 KB of file; 268 435 456 bad records. */
static void hx_nil_bomb(struct hx_buf *b)
{
	static const uint8_t magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	struct hx_buf p = { 0 };
	const uint32_t block = 128u << 10, nblocks = NP_CHUNK_MAX_ULEN / block;
	hx_put(&p, magic, 4);
	hx_le(&p, 0x80, 1);            /* FCS 4 bytes, window descriptor follows */
	hx_le(&p, 0x38, 1);            /* window 2^17 = 128 KiB */
	hx_le(&p, NP_CHUNK_MAX_ULEN, 4);
	for (uint32_t i = 0; i < nblocks; i++) {
		hx_le(&p, (uint64_t)block << 3 | 1u << 1 | (i == nblocks - 1), 3);
		hx_le(&p, 0xc0, 1);
	}
	hx_file_header(b, NP_FORMAT_VERSION, NP_KIND_RECORDING);
	hx_chunk(b, 0, &p, NP_CHUNK_MAX_ULEN);
	free(p.d);
}

/* A payload around the END record: how `how` bends the one-frame rule. */
enum hx_zstd { HX_TRAILING, HX_TWO_FRAMES, HX_SKIP_BEFORE, HX_SKIP_AFTER, HX_DICT };

static void hx_bent_frame(struct hx_buf *b, const msgpack_sbuffer *end, enum hx_zstd how)
{
	static const uint8_t skip[12] = { 0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 'n', 'o', 't', 'e' };
	struct hx_buf p = { 0 };
	if (how == HX_SKIP_BEFORE)
		hx_put(&p, skip, sizeof(skip));
	hx_frame(&p, end->data, end->size, how == HX_DICT ? 1 : 0);
	if (how == HX_TRAILING)
		hx_put(&p, "xyz", 3);
	else if (how == HX_TWO_FRAMES)
		hx_frame(&p, "", 0, 0);
	else if (how == HX_SKIP_AFTER)
		hx_put(&p, skip, sizeof(skip));
	hx_file_header(b, NP_FORMAT_VERSION, NP_KIND_RECORDING);
	hx_chunk(b, NP_REC_END, &p, (uint32_t)end->size);
	free(p.d);
}

static int hx_all(const char *dir)
{
	struct hx_buf b = { 0 };
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = 0;
#define HX_FILE(name, ...) do { b.len = 0; __VA_ARGS__; rc |= hx_write(dir, name, &b); } while (0)
	HX_FILE("utf8.npr", hx_file_header(&b, 1, NP_KIND_RECORDING);
		hx_records(&sb, hx_utf8_record); hx_record_chunk(&b, &sb));
	HX_FILE("numbers.npr", hx_file_header(&b, 1, NP_KIND_RECORDING);
		hx_records(&sb, hx_numbers_record); hx_record_chunk(&b, &sb));
	HX_FILE("nil-bomb.npr", hx_nil_bomb(&b));
	hx_records(&sb, hx_end_record);
	HX_FILE("version0.npr", hx_file_header(&b, 0, NP_KIND_RECORDING); hx_record_chunk(&b, &sb));
	HX_FILE("kind7.npr", hx_file_header(&b, 1, 7); hx_record_chunk(&b, &sb));
	HX_FILE("header-only.npr", hx_file_header(&b, 1, NP_KIND_RECORDING));
	HX_FILE("garbage-23.npr", hx_file_header(&b, 1, NP_KIND_RECORDING); hx_record_chunk(&b, &sb);
		hx_put(&b, "xxxxxxxxxxxxxxxxxxxxxxx", 23));
	HX_FILE("garbage-24.npr", hx_file_header(&b, 1, NP_KIND_RECORDING); hx_record_chunk(&b, &sb);
		hx_put(&b, "xxxxxxxxxxxxxxxxxxxxxxxx", 24));
	HX_FILE("tail-magic.npr", hx_file_header(&b, 1, NP_KIND_RECORDING); hx_record_chunk(&b, &sb);
		hx_put(&b, "NPCK\x04\x00\x00\x00\x15\x00", 10));
	HX_FILE("tail-np.npr", hx_file_header(&b, 1, NP_KIND_RECORDING); hx_record_chunk(&b, &sb);
		hx_put(&b, "NP", 2));
	HX_FILE("zstd-trailing.npr", hx_bent_frame(&b, &sb, HX_TRAILING));
	HX_FILE("zstd-two-frames.npr", hx_bent_frame(&b, &sb, HX_TWO_FRAMES));
	HX_FILE("zstd-skippable-before.npr", hx_bent_frame(&b, &sb, HX_SKIP_BEFORE));
	HX_FILE("zstd-skippable-after.npr", hx_bent_frame(&b, &sb, HX_SKIP_AFTER));
	HX_FILE("zstd-dict.npr", hx_bent_frame(&b, &sb, HX_DICT));
#undef HX_FILE
	msgpack_sbuffer_destroy(&sb);
	free(b.d);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkhostile DIR   (writes DIR/hostile/*.npr)\n");
		return 2;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/hostile", argv[1]);
	mkdir(argv[1], 0755);
	mkdir(dir, 0755);
	return hx_all(dir) ? 1 : 0;
}
