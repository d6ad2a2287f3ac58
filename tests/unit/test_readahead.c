/* Chunks decoded ahead of the reader (np_reader_decode_at, ana_read.c): the
 * reader must return the same records (raw PKT_EVENTS bodies and their
 * pairs included), warnings and statistics as a serial read, on a good file
 * and on every damaged variant of it, whether each payload comes from a
 * worker (1 and 3 threads) or from a prefetcher that decodes the chunk the
 * reader asks for synchronously. Truth: the serial reader's log. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "container.h"
#include "records.h"
#include "ana_read.h"

#define NCHUNK 6

static uint8_t file[1 << 22];
static size_t flen, coff[NCHUNK + 1];     /* chunk offsets, end */

/* a log of everything a read returns and says */
struct log { char *s; size_t n, cap; };

static void logf_(struct log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct log *l, const char *fmt, ...)
{
	char b[600];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (l->n + (size_t)k + 1 > l->cap) {
		l->cap = 2 * (l->n + (size_t)k + 1);
		l->s = realloc(l->s, l->cap);
	}
	memcpy(l->s + l->n, b, (size_t)k + 1);
	l->n += (size_t)k;
}

static void log_warn(void *ctx, const char *msg) { logf_(ctx, "W %s\n", msg); }

static void pack_raw(struct np_recbuf *rb, unsigned i, unsigned npairs)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_PKT_EVENTS, 1);
	msgpack_pack_map(pk, npairs);
	for (unsigned k = 0; k < npairs; k++) {
		char key[8];
		int kl = snprintf(key, sizeof(key), "k%u", k);
		msgpack_pack_str_with_body(pk, key, (size_t)kl);
		msgpack_pack_array(pk, 1 + (i + k) % 40);
		for (unsigned j = 0; j <= (i + k) % 40; j++)
			msgpack_pack_uint32(pk, i * 1000 + j * 300);
	}
}

static void pack_plain(struct np_recbuf *rb, unsigned i)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_FLOWS, 1);
	msgpack_pack_map(pk, 2);
	msgpack_pack_str_with_body(pk, "t_ns", 4);
	msgpack_pack_uint64(pk, 1000000000ull + i);
	msgpack_pack_str_with_body(pk, "v", 1);
	msgpack_pack_uint32(pk, i);
}

/* Chunk c: raw records (some with more pairs than NP_RAW_PAIRS), plain
 * ones, in chunk 1 scalars between them; chunk 3 holds more records than a worker
 * delimits ahead (NP_WALK_MAX). */
static void build_file(void)
{
	memcpy(file, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
	memset(file + 8, 0, 8);
	file[8] = NP_FORMAT_VERSION;
	file[10] = NP_KIND_RECORDING;
	flen = NP_FILE_HDR_LEN;
	for (unsigned c = 0; c < NCHUNK; c++) {
		struct np_recbuf rb;
		struct np_chunk ch;
		np_recbuf_init(&rb);
		unsigned n = c == 3 ? NP_WALK_MAX + 300 : 20 + 7 * c;
		for (unsigned i = 0; i < n; i++) {
			if (i % 5 == 0)
				pack_plain(&rb, c * 10000 + i);
			else
				pack_raw(&rb, c * 10000 + i, i % 11 == 0 ? NP_RAW_PAIRS + 3 : 1 + i % 6);
			if (c == 1 && i % 13 == 0)
				msgpack_pack_nil(&rb.pk);         /* a scalar: a bad record */
		}
		CHECK(np_chunk_build(&ch, &rb, 1) == 0 && flen + ch.len < sizeof(file), "chunk %u", c);
		coff[c] = flen;
		memcpy(file + flen, ch.data, ch.len);
		flen += ch.len;
		np_chunk_free(&ch);
		np_recbuf_free(&rb);
	}
	coff[NCHUNK] = flen;
}

/* synchronous prefetcher: decodes exactly the chunk asked for */
struct syncpf { const struct np_reader *r; struct np_chunkbuf cb; };
static int sync_take(void *ctx, uint64_t off, struct np_chunkbuf *cb)
{
	struct syncpf *s = ctx;
	if (np_reader_decode_at(s->r, off, &s->cb))
		return 0;
	struct np_chunkbuf t = *cb;
	*cb = s->cb;
	s->cb = t;
	return 1;
}

/* mode 0 serial, 1 synchronous prefetch, 2 and 4: ana_read with 1 (bounded) and 3 workers */
static void read_log(const uint8_t *data, size_t len, int mode, struct log *l)
{
	struct np_reader *r;
	struct np_record rec;
	struct syncpf s = { 0 };
	struct ana_read *a = NULL;
	l->n = 0;
	if (np_reader_open_mem(&r, data, len, log_warn, l))
		return;
	np_reader_set_raw(r, NP_REC_PKT_EVENTS);
	if (mode == 1) {
		s.r = r;
		np_reader_set_prefetch(r, sync_take, &s);
	} else if (mode >= 2) {
		a = ana_read_new(r, (unsigned)mode - 1, mode == 2);   /* 4: the reader's slots too */
	}
	while (np_reader_next(r, &rec) == 1) {
		logf_(l, "R %u %u c%llu o%llu len %zu crc %08x", rec.type, rec.version,
		      (unsigned long long)rec.chunk_index, (unsigned long long)rec.file_offset,
		      rec.raw_len, np_crc32(rec.raw, rec.raw_len));
		if (rec.raw_pairs)
			for (uint32_t i = 0; i < rec.raw_npairs; i++)
				logf_(l, " %td+%zu:%td+%zu", rec.raw_pairs[i].key - rec.raw, rec.raw_pairs[i].klen,
				      rec.raw_pairs[i].val - rec.raw, rec.raw_pairs[i].vlen);
		logf_(l, " %s\n", rec.body ? "tree" : rec.raw_pairs ? "pairs" : "raw");
	}
	const struct np_reader_stats *st = np_reader_stats(r);
	logf_(l, "S %llu %llu %llu %llu %llu %d %llu\n", (unsigned long long)st->chunks_ok,
	      (unsigned long long)st->chunks_bad, (unsigned long long)st->bytes_skipped,
	      (unsigned long long)st->records, (unsigned long long)st->records_bad, st->truncated,
	      (unsigned long long)st->last_good_offset);
	ana_read_free(a);
	np_reader_close(r);
	np_chunkbuf_free(&s.cb);
}

static uint8_t dmg[sizeof(file) + 64];

/* A checksum of the warning lines of a log. */
static uint32_t warnings_crc(const struct log *l)
{
	uint32_t h = 0;
	for (const char *p = l->s; p && *p; ) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (!strncmp(p, "W ", 2))
			h = h * 31 + np_crc32(p, n);
		p = e ? e + 1 : NULL;
	}
	return h;
}

/* Reads dmg in every mode; a checksum of the serial read's warnings. */
static uint32_t compare(const char *what, size_t len)
{
	static struct log ref, got;
	read_log(dmg, len, 0, &ref);
	for (int mode = 1; mode <= 4; mode++) {
		if (mode == 3)
			continue;
		read_log(dmg, len, mode, &got);
		CHECK(ref.n == got.n && memcmp(ref.s, got.s, ref.n) == 0, "%s, mode %d: reads differ", what, mode);
	}
	return warnings_crc(&ref);
}

int main(void)
{
	build_file();
	unsigned warned = 0, variants = 0;
	char what[80];

	memcpy(dmg, file, flen);
	uint32_t base = compare("intact", flen);  /* the scalars' warnings */
	CHECK(base != 0, "the scalars between records are warned about");
	struct log l = { 0 };
	read_log(file, flen, 2, &l);
	CHECK(strstr(l.s, "pairs") && strstr(l.s, " raw\n") && strstr(l.s, "tree"),
	      "raw records with pairs, without, and decoded ones read");
	free(l.s);

	for (unsigned c = 1; c < NCHUNK; c++) {
		size_t mid = coff[c] + (coff[c + 1] - coff[c]) / 2;
		memcpy(dmg, file, flen);
		dmg[mid] ^= 0x10;                       /* payload: checksum */
		snprintf(what, sizeof(what), "payload byte of chunk %u", c);
		{ uint32_t w = compare(what, flen); warned += w != base; variants++; if (w == base) fprintf(stderr, "no warning: %s\n", what); }
		memcpy(dmg, file, flen);
		dmg[coff[c] + 9] ^= 1;                  /* header: clen */
		snprintf(what, sizeof(what), "header of chunk %u", c);
		{ uint32_t w = compare(what, flen); warned += w != base; variants++; if (w == base) fprintf(stderr, "no warning: %s\n", what); }
		memcpy(dmg, file, flen);
		snprintf(what, sizeof(what), "file cut in chunk %u", c);
		{ uint32_t w = compare(what, mid); warned += w != base; variants++; if (w == base) fprintf(stderr, "no warning: %s\n", what); }
		memcpy(dmg, file, coff[c]);             /* garbage before the chunk */
		memset(dmg + coff[c], 0xc1, 37);
		memcpy(dmg + coff[c] + 37, file + coff[c], flen - coff[c]);
		snprintf(what, sizeof(what), "garbage before chunk %u", c);
		{ uint32_t w = compare(what, flen + 37); warned += w != base; variants++; if (w == base) fprintf(stderr, "no warning: %s\n", what); }
		memcpy(dmg, file, flen);                /* chunk c dropped */
		memmove(dmg + coff[c], file + coff[c + 1], flen - coff[c + 1]);
		snprintf(what, sizeof(what), "chunk %u dropped", c);
		compare(what, flen - (coff[c + 1] - coff[c]));   /* framing intact: not seen */
	}
	/* a record cut short inside a good chunk (checksums redone): the walk
	 * ahead meets it as the reader does */
	for (unsigned c = 1; c < NCHUNK; c++) {
		struct np_reader *r;
		np_reader_open_mem(&r, file, flen, NULL, NULL);
		struct np_chunkbuf cb = { 0 };
		CHECK(np_reader_decode_at(r, coff[c], &cb) == 0, "decode_at chunk %u", c);
		CHECK(np_reader_decode_at(r, coff[c] + 1, &cb) == -1, "decode_at off a chunk start");
		size_t ulen = (size_t)file[coff[c] + 12] | (size_t)file[coff[c] + 13] << 8 |
			      (size_t)file[coff[c] + 14] << 16;
		struct np_recbuf rb;                    /* the records cut at a third */
		np_recbuf_init(&rb);
		msgpack_sbuffer_write(&rb.sbuf, (const char *)cb.buf, ulen / 3);
		rb.nrecords = 1;
		struct np_chunk ch;
		np_chunk_build(&ch, &rb, 1);
		memcpy(dmg, file, coff[c]);
		memcpy(dmg + coff[c], ch.data, ch.len);
		memcpy(dmg + coff[c] + ch.len, file + coff[c + 1], flen - coff[c + 1]);
		snprintf(what, sizeof(what), "bad record in chunk %u", c);
		{ uint32_t w = compare(what, coff[c] + ch.len + flen - coff[c + 1]); warned += w != base; variants++; if (w == base) fprintf(stderr, "no warning: %s\n", what); }
		np_chunk_free(&ch);
		np_recbuf_free(&rb);
		np_chunkbuf_free(&cb);
		np_reader_close(r);
	}
	CHECK(warned == variants, "every damaged variant warned (%u of %u)", warned, variants);
	return tap_done();
}
