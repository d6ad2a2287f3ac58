/* The np container: writer and reader. See container.h and docs/FORMAT.md. */
#include "container.h"
#include "chunkindex.h"
#include "records.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#ifdef NP_DEBUG
#include "recschema.h"
#endif

/* ---- little-endian helpers ---- */

static void put_u16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* CRC-32 (zlib's) of buffers of 64 bytes and more by carry-less
 * multiplication (PCLMULQDQ): the message is folded 64 bytes at a time
 * into four 128-bit remainders, those into one, and zlib's crc32 finishes
 * on its 16 bytes and the tail. Same checksum as zlib: 57 MB in 13-14 ms
 * against zlib's 24-40 ms (memory-bound then); the reader checked every
 * chunk's payload with zlib at ~2.5 % of npanalyze's reading. In the bit-reflected order of this CRC (a block's
 * first bit is its highest power) a 128-bit block S = Sh x^64 + Sl
 * followed by d bits is congruent to Sh (x^(d+63) mod P) x + Sl (x^(d-1)
 * mod P) x, and a carry-less product of reflected operands carries the
 * extra factor x: the constants are the reflected x^(d+63) and x^(d-1)
 * mod P, computed once (crc_clmul_init). */
static __m128i crc_k64, crc_k16;   /* fold by 64 bytes, by 16 */
static bool crc_have_clmul;

/* x^n mod P (P = 0x104c11db7), reflected into the high half of 64 bits. */
static uint64_t crc_xpow(unsigned n)
{
	uint64_t r = 1, q = 0;
	while (n--) {
		r <<= 1;
		if (r & 0x100000000ull)
			r ^= 0x104c11db7ull;
	}
	for (int j = 0; j < 32; j++)
		if (r >> j & 1)
			q |= 1ull << (63 - j);
	return q;
}

__attribute__((constructor))
static void crc_clmul_init(void)
{
	__builtin_cpu_init();
	crc_have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
	crc_k64 = _mm_set_epi64x((long long)crc_xpow(512 - 1), (long long)crc_xpow(512 + 63));
	crc_k16 = _mm_set_epi64x((long long)crc_xpow(128 - 1), (long long)crc_xpow(128 + 63));
}

__attribute__((target("pclmul,sse4.1")))
static inline __m128i crc_fold(__m128i x, __m128i k, __m128i d)
{
	__m128i a = _mm_clmulepi64_si128(x, k, 0x00), b = _mm_clmulepi64_si128(x, k, 0x11);
	return _mm_xor_si128(_mm_xor_si128(a, b), d);
}

/* np_crc32 of len >= 64 bytes. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_clmul(const uint8_t *p, size_t len)
{
	__m128i x0 = _mm_loadu_si128((const __m128i *)p), x1 = _mm_loadu_si128((const __m128i *)(p + 16));
	__m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32)), x3 = _mm_loadu_si128((const __m128i *)(p + 48));
	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128(-1));   /* zlib's initial ~0 */
	for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
		x0 = crc_fold(x0, crc_k64, _mm_loadu_si128((const __m128i *)p));
		x1 = crc_fold(x1, crc_k64, _mm_loadu_si128((const __m128i *)(p + 16)));
		x2 = crc_fold(x2, crc_k64, _mm_loadu_si128((const __m128i *)(p + 32)));
		x3 = crc_fold(x3, crc_k64, _mm_loadu_si128((const __m128i *)(p + 48)));
	}
	x0 = crc_fold(crc_fold(crc_fold(x0, crc_k16, x1), crc_k16, x2), crc_k16, x3);
	for (; len >= 16; p += 16, len -= 16)
		x0 = crc_fold(x0, crc_k16, _mm_loadu_si128((const __m128i *)p));
	uint8_t rest[32];
	_mm_storeu_si128((__m128i *)rest, x0);
	memcpy(rest + 16, p, len);
	/* the remainder and the tail, from a register of 0 */
	return (uint32_t)crc32(0xffffffffUL, rest, (uInt)(16 + len));
}
#endif

uint32_t np_crc32(const void *data, size_t len)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (crc_have_clmul && len >= 64)
		return crc_clmul(data, len);
#endif
	uLong c = crc32(0L, Z_NULL, 0);
	const uint8_t *p = data;
	/* zlib takes uInt lengths: feed large buffers in pieces. */
	while (len > 0) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
		c = crc32(c, p, n);
		p += n;
		len -= n;
	}
	return (uint32_t)c;
}

/* ---- record buffers ---- */

void np_recbuf_init(struct np_recbuf *rb)
{
	msgpack_sbuffer_init(&rb->sbuf);
	msgpack_packer_init(&rb->pk, &rb->sbuf, msgpack_sbuffer_write);
	rb->nrecords = 0;
	rb->type = -1;
}

void np_recbuf_reset(struct np_recbuf *rb)
{
	rb->sbuf.size = 0;
	rb->nrecords = 0;
	rb->type = -1;
}

void np_recbuf_free(struct np_recbuf *rb)
{
	msgpack_sbuffer_destroy(&rb->sbuf);
	rb->nrecords = 0;
	rb->type = -1;
}

msgpack_packer *np_recbuf_begin(struct np_recbuf *rb, uint16_t type, uint16_t version)
{
	if (rb->type == -1)
		rb->type = type;
	else if (rb->type != type)
		rb->type = NP_CHUNK_TYPE_MIXED;
	rb->nrecords++;
	msgpack_pack_array(&rb->pk, 3);
	msgpack_pack_uint16(&rb->pk, type);
	msgpack_pack_uint16(&rb->pk, version);
	return &rb->pk;
}

/* ---- chunks ---- */

/* Header, checksums and trailer around clen compressed bytes at
 * buf + NP_CHUNK_HDR_LEN. */
static void chunk_frame(struct np_chunk *out, uint8_t *buf, size_t clen, const struct np_recbuf *rb)
{
	uint16_t type = rb->type < 0 ? NP_CHUNK_TYPE_MIXED : (uint16_t)rb->type;
	memcpy(buf, NP_CHUNK_MAGIC, 4);
	put_u16(buf + 4, type);
	put_u16(buf + 6, 0);
	put_u32(buf + 8, (uint32_t)clen);
	put_u32(buf + 12, (uint32_t)rb->sbuf.size);
	put_u32(buf + 16, np_crc32(buf + NP_CHUNK_HDR_LEN, clen));
	put_u32(buf + 20, np_crc32(buf, 20));
	size_t total = NP_CHUNK_HDR_LEN + clen + NP_CHUNK_TRL_LEN;
	put_u32(buf + NP_CHUNK_HDR_LEN + clen, (uint32_t)total);
	out->data = buf;
	out->len = total;
	out->type = type;
	out->ulen = (uint32_t)rb->sbuf.size;
	np_chunk_time(rb->sbuf.data, rb->sbuf.size, &out->t_lo, &out->t_hi);
}

/* One zstd frame (with its content size, which the reader checks) made
 * block by block, with p->pause called between steps. */
static size_t chunk_compress_paced(ZSTD_CCtx *z, uint8_t *dst, size_t cap, const struct np_recbuf *rb,
				   int level, const struct np_chunk_pacer *p)
{
	size_t rc = ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
	if (!ZSTD_isError(rc))
		rc = ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(rc))
		rc = ZSTD_CCtx_setPledgedSrcSize(z, rb->sbuf.size);
	if (ZSTD_isError(rc))
		return rc;
	ZSTD_outBuffer out = { dst, cap, 0 };
	ZSTD_inBuffer in = { rb->sbuf.data ? rb->sbuf.data : "", 0, 0 };
	size_t step = p->step ? p->step : 16384;
	for (;;) {
		size_t left = rb->sbuf.size - in.size;
		bool last = left <= step;
		in.size += last ? left : step;
		rc = ZSTD_compressStream2(z, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(rc))
			return rc;
		if (last && rc == 0)
			return out.pos;
		if (out.pos == out.size)
			return (size_t)-1;   /* ZSTD_isError() of it holds */
		if (p->pause)
			p->pause(p->arg);
	}
}

#ifdef NP_DEBUG
/* Debug builds: every finished record against its type's schema
 * (common/recschema.h); a writer that packs a key the schema lacks, leaves
 * out a required one or packs a column of the wrong length stops here. */
static void chunk_check_schema(const struct np_recbuf *rb)
{
	msgpack_unpacked u;
	size_t off = 0;
	char err[160];
	msgpack_unpacked_init(&u);
	while (msgpack_unpack_next(&u, rb->sbuf.data, rb->sbuf.size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *r = &u.data;
		if (r->type != MSGPACK_OBJECT_ARRAY || r->via.array.size != 3 ||
		    r->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			continue;
		if (np_schema_check((int)r->via.array.ptr[0].via.u64, &r->via.array.ptr[2], true, err, sizeof(err))) {
			fprintf(stderr, "np: record against its schema: %s\n", err);
			abort();
		}
	}
	msgpack_unpacked_destroy(&u);
}
#endif

int np_chunk_build_paced(struct np_chunk *out, const struct np_recbuf *rb, int zstd_level,
			 struct np_zctx *zc, const struct np_chunk_pacer *p)
{
	memset(out, 0, sizeof(*out));
#ifdef NP_DEBUG
	chunk_check_schema(rb);
#endif
	if (rb->sbuf.size > NP_CHUNK_MAX_ULEN)
		return -EFBIG;
	int level = zstd_level > 0 ? zstd_level : 3;
	size_t bound = ZSTD_compressBound(rb->sbuf.size);
	size_t total_max = NP_CHUNK_HDR_LEN + bound + NP_CHUNK_TRL_LEN;
	uint8_t *buf = malloc(total_max);
	if (!buf)
		return -ENOMEM;
	size_t clen;
	if (zc && p)
		clen = chunk_compress_paced((ZSTD_CCtx *)zc, buf + NP_CHUNK_HDR_LEN, bound, rb, level, p);
	else if (zc)
		clen = ZSTD_compressCCtx((ZSTD_CCtx *)zc, buf + NP_CHUNK_HDR_LEN, bound,
					 rb->sbuf.data ? rb->sbuf.data : "", rb->sbuf.size, level);
	else
		clen = ZSTD_compress(buf + NP_CHUNK_HDR_LEN, bound, rb->sbuf.data ? rb->sbuf.data : "",
				     rb->sbuf.size, level);
	if (ZSTD_isError(clen)) {
		free(buf);
		return -EIO;
	}
	chunk_frame(out, buf, clen, rb);
	return 0;
}

int np_chunk_build(struct np_chunk *out, const struct np_recbuf *rb, int zstd_level)
{
	return np_chunk_build_paced(out, rb, zstd_level, NULL, NULL);
}

struct np_zctx *np_zctx_new(void) { return (struct np_zctx *)ZSTD_createCCtx(); }
void np_zctx_free(struct np_zctx *z) { ZSTD_freeCCtx((ZSTD_CCtx *)z); }

void np_chunk_free(struct np_chunk *c)
{
	free(c->data);
	memset(c, 0, sizeof(*c));
}

/* ---- writer ---- */

struct np_writer {
	int fd;
	uint64_t bytes;       /* length of the valid file */
	uint64_t chunks;
	int error;            /* first error, sticky */
	struct np_writer_opts opts;
	struct np_index ix;   /* chunks written (opts.index) */
	bool ix_lost;         /* out of memory for it: no index at close */
};

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int writer_start(struct np_writer **wp, int fd, enum np_file_kind kind,
			const struct np_writer_opts *opts)
{
	struct np_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	w->fd = fd;
	if (opts)
		w->opts = *opts;
	uint8_t hdr[NP_FILE_HDR_LEN] = {0};
	memcpy(hdr, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
	put_u16(hdr + 8, NP_FORMAT_VERSION);
	put_u16(hdr + 10, (uint16_t)kind);
	int err = write_all(fd, hdr, sizeof(hdr));
	if (err) {
		close(fd);
		free(w);
		return err;
	}
	w->bytes = NP_FILE_HDR_LEN;
	*wp = w;
	return 0;
}

int np_open_private(int dirfd, const char *name, int extra_flags)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | extra_flags, 0600);
	if (fd < 0)
		return -errno;
	/* An existing file keeps its mode under O_CREAT: recordings hold
	 * addresses and paths, so force 0600 either way. */
	if (fchmod(fd, 0600) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int np_writer_open(struct np_writer **w, const char *path, enum np_file_kind kind,
		   const struct np_writer_opts *opts)
{
	int fd = np_open_private(AT_FDCWD, path, 0);
	return fd < 0 ? fd : writer_start(w, fd, kind, opts);
}

int np_writer_fdopen(struct np_writer **w, int fd, enum np_file_kind kind,
		     const struct np_writer_opts *opts)
{
	return writer_start(w, fd, kind, opts);
}

int np_writer_write_chunk(struct np_writer *w, const struct np_chunk *c)
{
	if (w->error)
		return w->error;
	int err = write_all(w->fd, c->data, c->len);
	if (!err && w->opts.fsync_each && fsync(w->fd) < 0 && errno != EINVAL)
		err = -errno;
	if (err) {
		/* Cut the partial chunk off so the file ends on a chunk
		 * boundary; pipes cannot be truncated, which is fine: a
		 * reader reports the torn tail. */
		if (ftruncate(w->fd, (off_t)w->bytes) == 0)
			lseek(w->fd, (off_t)w->bytes, SEEK_SET);
		w->error = err;
		return err;
	}
	if (w->opts.index && !w->ix_lost && np_index_add(&w->ix, w->bytes, c->t_lo, c->t_hi) < 0)
		w->ix_lost = true;
	w->bytes += c->len;
	w->chunks++;
	return 0;
}

int np_writer_commit(struct np_writer *w, struct np_recbuf *rb)
{
	if (w->error)
		return w->error;
	if (np_recbuf_empty(rb))
		return 0;
	struct np_chunk c;
	int err = np_chunk_build(&c, rb, w->opts.zstd_level);
	if (err)
		return err;
	err = np_writer_write_chunk(w, &c);
	np_chunk_free(&c);
	np_recbuf_reset(rb);
	return err;
}

int np_writer_fsync(struct np_writer *w)
{
	if (fsync(w->fd) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

uint64_t np_writer_bytes(const struct np_writer *w) { return w->bytes; }
uint64_t np_writer_chunks(const struct np_writer *w) { return w->chunks; }

uint64_t np_writer_index_bound(const struct np_writer *w)
{
	return w->opts.index ? np_index_chunk_bound(w->ix.n + 1) : 0;
}

/* The INDEX chunk (FORMAT.md 2.6) after the last chunk. A failure is
 * truncated away by np_writer_write_chunk: the file stays a valid file
 * without an index, which readers scan, so it is not reported. */
static void writer_put_index(struct np_writer *w)
{
	struct np_recbuf rb;
	struct np_chunk c;
	np_recbuf_init(&rb);
	w->ix.end = w->bytes;
	np_index_pack(np_recbuf_begin(&rb, NP_REC_INDEX, NP_INDEX_VERSION), &w->ix);
	w->opts.index = false;       /* the index does not index itself */
	if (np_chunk_build(&c, &rb, w->opts.zstd_level) == 0) {
		np_writer_write_chunk(w, &c);
		np_chunk_free(&c);
	}
	np_recbuf_free(&rb);
}
int np_writer_fd(const struct np_writer *w) { return w->fd; }

int np_writer_close(struct np_writer *w)
{
	if (!w)
		return 0;
	int err = w->error;
	if (w->opts.index && !err && !w->ix_lost && w->ix.n) {
		writer_put_index(w);
		w->error = 0;
	}
	np_index_free(&w->ix);
	if (w->opts.fsync_each && fsync(w->fd) < 0 && errno != EINVAL && !err)
		err = -errno;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	free(w);
	return err;
}

/* ---- reader ---- */

/* One record start of a chunk as np_reader_next's walk sees it. */
struct np_walkent {
	size_t upos, olen;
	uint64_t objs;               /* np_mp_walk's count (raw == 0) */
	int raw;                     /* raw_record's answer */
	uint16_t type, version;      /* raw == 1: the record */
	size_t body, blen;           /* its body's offset and length */
	uint32_t pair0, npairs;      /* its pairs in np_chunkbuf.pairs; UINT32_MAX: too many */
};

struct np_reader {
	const uint8_t *data;
	size_t size;
	bool mapped;
	char *path;
	enum np_file_kind kind;
	size_t pos;                 /* next chunk candidate */
	/* current chunk */
	struct np_chunkbuf cb;      /* its payload (and records delimited ahead) */
	size_t ulen, upos;
	size_t wi;                  /* next entry of cb.walk to consider */
	uint64_t chunk_offset;
	msgpack_zone *zone;         /* reused for every record */
	size_t zone_size;
	uint64_t raw_types[4];      /* bit per record type returned undecoded */
	struct np_rawpair pairs[NP_RAW_PAIRS];
	msgpack_object obj;
	struct np_reader_stats st;
	np_warn_fn warn;
	void *warn_ctx;
	/* warning caps (FORMAT.md 4.3) */
	uint64_t warned;            /* warnings passed to warn for this file */
	uint64_t unwarned;          /* problems not shown: over the file cap */
	uint64_t chunk_warned;      /* record warnings shown for the current chunk */
	uint64_t chunk_unwarned;    /* ... and those over the chunk cap */
	bool summarised;
	uint64_t chunk_no;          /* number of the current chunk (FORMAT.md 4.2) */
	uint16_t chunk_type;        /* its header's type */
	/* np_reader_set_window */
	enum np_seek_mode seek;
	uint64_t win_lo, win_hi;    /* absolute, once based */
	int64_t rel_lo, rel_hi;     /* relative to first_t until it is known */
	bool win_rel;
	bool have_first_t;
	uint64_t first_t;
	struct np_index ix;
	bool ix_tried;              /* np_reader_index looked for it */
	size_t ix_next;             /* next index entry to consider */
	np_prefetch_fn prefetch;    /* np_reader_set_prefetch */
	void *prefetch_ctx;
};

static void vrwarn(struct np_reader *r, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	r->warn(r->warn_ctx, msg);
}

/* One warning per problem, at most NP_WARN_FILE_MAX per file: a crafted
 * file must not turn into gigabytes of messages (FORMAT.md 4.3). */
static void rwarn(struct np_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rwarn(struct np_reader *r, const char *fmt, ...)
{
	if (!r->warn)
		return;
	if (r->warned >= NP_WARN_FILE_MAX) {
		r->unwarned++;
		return;
	}
	r->warned++;
	va_list ap;
	va_start(ap, fmt);
	vrwarn(r, fmt, ap);
	va_end(ap);
}

/* A problem with a record: at most NP_WARN_CHUNK_MAX of them per chunk,
 * the rest summed up when the chunk ends (reader_chunk_done). */
static void rwarn_rec(struct np_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rwarn_rec(struct np_reader *r, const char *fmt, ...)
{
	if (!r->warn)
		return;
	if (r->chunk_warned >= NP_WARN_CHUNK_MAX || r->warned >= NP_WARN_FILE_MAX) {
		r->chunk_unwarned++;
		return;
	}
	r->chunk_warned++;
	r->warned++;
	va_list ap;
	va_start(ap, fmt);
	vrwarn(r, fmt, ap);
	va_end(ap);
}

void np_reader_warn_rec(struct np_reader *r, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rwarn_rec(r, "%s: %s", r->path, msg);
}

/* The chunk's summary line, if record warnings were held back. */
static void reader_chunk_done(struct np_reader *r)
{
	if (r->chunk_unwarned) {
		if (r->warned >= NP_WARN_FILE_MAX)
			r->unwarned += r->chunk_unwarned;
		else
			rwarn(r, "%s: ... and %llu more like it in chunk %llu (offset %llu)", r->path,
			      (unsigned long long)r->chunk_unwarned,
			      (unsigned long long)r->chunk_no,
			      (unsigned long long)r->chunk_offset);
	}
	r->chunk_warned = r->chunk_unwarned = 0;
}

/* At the end of the file: the file's summary line (not capped itself). */
static void reader_file_done(struct np_reader *r)
{
	reader_chunk_done(r);
	if (r->unwarned && r->warn && !r->summarised) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s: ... and %llu more like it (warnings stop after %u per file)",
			 r->path, (unsigned long long)r->unwarned, NP_WARN_FILE_MAX);
		r->warn(r->warn_ctx, msg);
	}
	r->summarised = true;
}

/* "after chunk N" in warnings uses the numbering of npreport dump (0-based
 * among good chunks). */
static const char *after_chunk(const struct np_reader *r, char *buf, size_t n)
{
	if (r->st.chunks_ok)
		snprintf(buf, n, "after chunk %llu", (unsigned long long)(r->st.chunks_ok - 1));
	else
		snprintf(buf, n, "before the first good chunk");
	return buf;
}

static int reader_init(struct np_reader *r)
{
	if (r->size < NP_FILE_HDR_LEN || memcmp(r->data, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN) != 0) {
		r->st.bad_file_header = true;
		rwarn(r, "%s: no np file header; scanning for chunks", r->path);
		r->pos = 0;
		return 0;
	}
	uint16_t ver = get_u16(r->data + 8);
	uint16_t kind = get_u16(r->data + 10);
	if (ver == 0) {
		/* no writer ever wrote 0: the header is damaged, its magic is not */
		r->st.bad_file_header = true;
		rwarn(r, "%s: format version 0 does not exist (damaged file header); reading as version %u",
		      r->path, NP_FORMAT_VERSION);
	} else if (ver > NP_FORMAT_VERSION) {
		rwarn(r, "%s: format version %u is newer than this reader (%u); reading known records",
		      r->path, ver, NP_FORMAT_VERSION);
	}
	if (kind == NP_KIND_RECORDING || kind == NP_KIND_ANALYSIS)
		r->kind = (enum np_file_kind)kind;
	else
		rwarn(r, "%s: unknown file kind %u; reading its records", r->path, kind);
	r->pos = NP_FILE_HDR_LEN;
	if (!r->st.bad_file_header)
		r->st.last_good_offset = NP_FILE_HDR_LEN;   /* a header alone is a valid file */
	return 0;
}

int np_reader_open_mem(struct np_reader **rp, const void *data, size_t len,
		       np_warn_fn warn, void *ctx)
{
	struct np_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->data = data;
	r->size = len;
	r->path = strdup("(memory)");
	r->warn = warn;
	r->warn_ctx = ctx;
	reader_init(r);
	*rp = r;
	return 0;
}

int np_reader_open(struct np_reader **rp, const char *path, np_warn_fn warn, void *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	struct np_reader *r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->size = (size_t)sb.st_size;
	if (r->size > 0) {
		void *m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			int e = -errno;
			close(fd);
			free(r);
			return e;
		}
		r->data = m;
		r->mapped = true;
	}
	close(fd);
	r->path = strdup(path);
	r->warn = warn;
	r->warn_ctx = ctx;
	reader_init(r);
	*rp = r;
	return 0;
}

/* Offset of the next chunk magic at or after from, or size. */
static size_t find_magic(const struct np_reader *r, size_t from)
{
	if (from >= r->size)
		return r->size;
	const void *p = memmem(r->data + from, r->size - from, NP_CHUNK_MAGIC, 4);
	return p ? (size_t)((const uint8_t *)p - r->data) : r->size;
}

/* Skips damaged bytes from r->pos to the next chunk magic after it. */
static void resync(struct np_reader *r, const char *why)
{
	size_t next = find_magic(r, r->pos + 1);
	char ac[48];
	r->st.bytes_skipped += next - r->pos;
	rwarn(r, "%s: %s at offset %zu (%s); skipped %zu bytes",
	      r->path, why, r->pos, after_chunk(r, ac, sizeof(ac)), next - r->pos);
	r->pos = next;
}

static bool ensure_buf(uint8_t **buf, size_t *bcap, size_t need)
{
	if (need <= *bcap)
		return true;
	size_t cap = *bcap ? *bcap : 65536;
	while (cap < need)
		cap *= 2;
	uint8_t *n = realloc(*buf, cap);
	if (!n)
		return false;
	*buf = n;
	*bcap = cap;
	return true;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* FORMAT.md 4.2 step 2/5: the file ends inside a chunk. */
static void truncated_tail(struct np_reader *r, size_t left)
{
	char ac[48];
	r->st.truncated = true;
	r->st.bytes_skipped += left;
	rwarn(r, "%s: file ends inside a chunk at offset %zu (%s); %zu bytes not read",
	      r->path, r->pos, after_chunk(r, ac, sizeof(ac)), left);
	r->pos = r->size;
}

/* FORMAT.md 2.2: the payload is exactly one zstd frame (not a skippable
 * one, nothing after it, no dictionary) declaring ulen as its content size. */
static bool payload_frame_ok(const uint8_t *p, size_t clen, uint32_t ulen)
{
	static const uint8_t zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	static const uint8_t did_len[4] = { 0, 1, 2, 4 };
	if (clen < 5 || memcmp(p, zmagic, 4) != 0)
		return false;
	if (ZSTD_getFrameContentSize(p, clen) != ulen)
		return false;
	size_t fsize = ZSTD_findFrameCompressedSize(p, clen);
	if (ZSTD_isError(fsize) || fsize != clen)
		return false;
	size_t off = 5 + !(p[4] & 0x20), dl = did_len[p[4] & 3];
	return off + dl <= clen && all_zero(p + off, dl);
}

enum chunk_payload {
	CHUNK_PAYLOAD_OK,
	CHUNK_PAYLOAD_NOT_FRAME,    /* not one zstd frame of ulen bytes (or no memory) */
	CHUNK_PAYLOAD_NO_DECOMP,
};

/* A payload whose checksum is good, decompressed into *buf (grown to fit). */
static enum chunk_payload payload_decode(const uint8_t *payload, uint32_t clen, uint32_t ulen,
					 uint8_t **buf, size_t *cap)
{
	if (!payload_frame_ok(payload, clen, ulen) || !ensure_buf(buf, cap, ulen ? ulen : 1))
		return CHUNK_PAYLOAD_NOT_FRAME;
	size_t got = ZSTD_decompress(*buf, ulen ? ulen : 1, payload, clen);
	if (ZSTD_isError(got) || got != ulen)
		return CHUNK_PAYLOAD_NO_DECOMP;
	return CHUNK_PAYLOAD_OK;
}

/* The end of the chunk at off if its header is good (as chunk_try checks
 * it) and the chunk fits in the file, else 0. */
static uint64_t chunk_end(const struct np_reader *r, uint64_t off)
{
	if (off >= r->size || r->size - off < NP_CHUNK_HDR_LEN)
		return 0;
	const uint8_t *h = r->data + off;
	if (memcmp(h, NP_CHUNK_MAGIC, 4) != 0 || get_u32(h + 20) != np_crc32(h, 20))
		return 0;
	uint32_t clen = get_u32(h + 8), ulen = get_u32(h + 12);
	uint64_t total = (uint64_t)NP_CHUNK_HDR_LEN + clen + NP_CHUNK_TRL_LEN;
	if (ulen > NP_CHUNK_MAX_ULEN || clen > NP_CHUNK_MAX_ULEN + 65536 || total > r->size - off)
		return 0;
	return off + total;
}

uint64_t np_reader_next_chunk(const struct np_reader *r, uint64_t off)
{
	if (r->seek == NP_SEEK_INDEX) {
		/* the window's next chunk after the indexed one at off, as
		 * load_chunk will go (the index and the window are fixed once
		 * np_reader_set_window chose the index; entries ascend) */
		size_t lo = 0, hi = r->ix.n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (r->ix.v[mid].off < off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= r->ix.n || r->ix.v[lo].off != off)
			return 0;
		for (size_t i = lo + 1; i < r->ix.n; i++)
			if (np_span_wanted(&r->ix.v[i], r->win_lo, r->win_hi))
				return r->ix.v[i].off;
		return 0;
	}
	uint64_t end = chunk_end(r, off);
	return end < r->size ? end : 0;
}

static void chunk_walk(const struct np_reader *r, struct np_chunkbuf *cb, size_t ulen);

int np_reader_decode_at(const struct np_reader *r, uint64_t off, struct np_chunkbuf *cb)
{
	if (!chunk_end(r, off))
		return -1;
	const uint8_t *h = r->data + off;
	uint32_t clen = get_u32(h + 8), ulen = get_u32(h + 12);
	const uint8_t *payload = h + NP_CHUNK_HDR_LEN;
	if (get_u32(h + 16) != np_crc32(payload, clen))
		return -1;
	cb->nwalk = 0;
	if (payload_decode(payload, clen, ulen, &cb->buf, &cb->cap) != CHUNK_PAYLOAD_OK)
		return -1;
	chunk_walk(r, cb, ulen);
	return 0;
}

void np_reader_set_prefetch(struct np_reader *r, np_prefetch_fn fn, void *ctx)
{
	r->prefetch = fn;
	r->prefetch_ctx = ctx;
}

/* One chunk at r->pos (FORMAT.md 4.2 steps 1-9). 1: a good chunk is decoded
 * into ubuf; 0: end of file; -1: damage skipped (r->pos moved on). */
static int chunk_try(struct np_reader *r)
{
	if (r->pos >= r->size)
		return 0;
	size_t left = r->size - r->pos;
	const uint8_t *h = r->data + r->pos;
	if (left < NP_CHUNK_HDR_LEN || memcmp(h, NP_CHUNK_MAGIC, 4) != 0) {
		/* a chunk was begun (its magic, or what of it fits) but
		 * the file ends before its header does */
		if (left < NP_CHUNK_HDR_LEN && memcmp(h, NP_CHUNK_MAGIC, left < 4 ? left : 4) == 0) {
			truncated_tail(r, left);
			return 0;
		}
		resync(r, "garbage instead of a chunk");
		return -1;
	}
	if (get_u32(h + 20) != np_crc32(h, 20)) {
		resync(r, "damaged chunk header");
		return -1;
	}
	uint32_t clen = get_u32(h + 8), ulen = get_u32(h + 12);
	if (ulen > NP_CHUNK_MAX_ULEN || clen > NP_CHUNK_MAX_ULEN + 65536) {
		r->st.chunks_bad++;
		resync(r, "chunk with impossible length");
		return -1;
	}
	size_t total = (size_t)NP_CHUNK_HDR_LEN + clen + NP_CHUNK_TRL_LEN;
	if (total > left) {
		if (find_magic(r, r->pos + 1) == r->size) {
			truncated_tail(r, left);
			return 0;
		}
		r->st.chunks_bad++;
		resync(r, "chunk longer than the file");
		return -1;
	}
	const uint8_t *payload = h + NP_CHUNK_HDR_LEN;
	/* a payload decoded ahead (np_reader_set_prefetch) passed the
	 * checks below; the reader makes them itself when there is none */
	bool ahead = r->prefetch && r->prefetch(r->prefetch_ctx, r->pos, &r->cb);
	r->wi = 0;
	if (!ahead)
		r->cb.nwalk = 0;
	if (!ahead && get_u32(h + 16) != np_crc32(payload, clen)) {
		r->st.chunks_bad++;
		resync(r, "chunk checksum mismatch");
		return -1;
	}
	if (get_u32(payload + clen) != total)
		rwarn(r, "%s: chunk at offset %zu has a wrong trailer length; content checksum is good, reading it",
		      r->path, r->pos);
	enum chunk_payload pc = ahead ? CHUNK_PAYLOAD_OK : payload_decode(payload, clen, ulen, &r->cb.buf, &r->cb.cap);
	if (pc == CHUNK_PAYLOAD_NOT_FRAME) {
		r->st.chunks_bad++;
		resync(r, "chunk payload is not one zstd frame of the stated size");
		return -1;
	}
	if (pc == CHUNK_PAYLOAD_NO_DECOMP) {
		r->st.chunks_bad++;
		resync(r, "chunk payload does not decompress");
		return -1;
	}
	r->chunk_offset = r->pos;
	r->chunk_type = get_u16(h + 4);
	r->ulen = ulen;
	r->upos = 0;
	r->pos += total;
	r->st.chunks_ok++;
	r->st.last_good_offset = r->pos;
	return 1;
}

static void reader_note_time(struct np_reader *r, const struct np_chunk_span *s);

/* Scanning with a window: the chunk's time decided from its records. */
static bool chunk_wanted_scan(struct np_reader *r)
{
	struct np_chunk_span s = { r->chunk_offset, 0, 0 };
	np_chunk_time(r->cb.buf, r->ulen, &s.t_lo, &s.t_hi);
	reader_note_time(r, &s);
	if (r->st.chunks_ok == 1)
		return true;          /* the file's first chunk: its HEADER */
	return r->chunk_type != NP_REC_INDEX && np_span_wanted(&s, r->win_lo, r->win_hi);
}

/* 1: a good chunk is decoded into ubuf; 0: end of file. */
static int load_chunk(struct np_reader *r)
{
	if (r->seek == NP_SEEK_INDEX) {
		while (r->ix_next < r->ix.n) {
			size_t i = r->ix_next++;
			if (i && !np_span_wanted(&r->ix.v[i], r->win_lo, r->win_hi))
				continue;
			r->pos = r->ix.v[i].off;
			if (chunk_try(r) == 1) {
				r->chunk_no = i;
				return 1;
			}
		}
		r->pos = r->size;
		return 0;
	}
	for (;;) {
		int rc = chunk_try(r);
		if (rc < 0)
			continue;
		if (rc == 0)
			return 0;
		r->chunk_no = r->st.chunks_ok - 1;
		if (r->seek != NP_SEEK_SCAN || chunk_wanted_scan(r))
			return 1;
	}
}

/* Bytes an object of fixed size takes, by its first byte; 0 for containers,
 * strings, bin and ext with a length field (and fixstr, rare in columns),
 * and for 0xc1, which MessagePack never uses. */
static const uint8_t mp_fixed[256] = {
	[0x00 ... 0x7f] = 1, [0xe0 ... 0xff] = 1,
	[0xc0] = 1, [0xc2] = 1, [0xc3] = 1,
	[0xca] = 5, [0xcb] = 9,
	[0xcc] = 2, [0xcd] = 3, [0xce] = 5, [0xcf] = 9,
	[0xd0] = 2, [0xd1] = 3, [0xd2] = 5, [0xd3] = 9,
	[0xd4] = 3, [0xd5] = 4, [0xd6] = 6, [0xd7] = 10, [0xd8] = 18,
};

static uint64_t mp_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

#define MP_FIXED_MAX 18          /* the largest mp_fixed */

/* Steps over up to k objects of fixed size from p + *pos, the bytes left
 * holding k of MP_FIXED_MAX at least (no step checks the end), and stops
 * before any other: how many. */
static size_t mp_step_fixed(const uint8_t *p, size_t *pos, size_t k)
{
	const uint8_t *q = p + *pos;
	size_t j = 0;
	for (; j + 4 <= k; j += 4) {     /* unrolled: the steps are a chain anyway */
		size_t f0 = mp_fixed[q[0]];
		if (!f0)
			goto out;
		size_t f1 = mp_fixed[q[f0]];
		if (!f1) {
			q += f0, j += 1;
			goto out;
		}
		size_t f2 = mp_fixed[q[f0 + f1]];
		if (!f2) {
			q += f0 + f1, j += 2;
			goto out;
		}
		size_t f3 = mp_fixed[q[f0 + f1 + f2]];
		if (!f3) {
			q += f0 + f1 + f2, j += 3;
			goto out;
		}
		q += f0 + f1 + f2 + f3;
	}
	for (; j < k; j++) {
		size_t f = mp_fixed[*q];
		if (!f)
			break;
		q += f;
	}
out:
	*pos = (size_t)(q - p);
	return j;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define MP_WIN 64                /* positions one window steps from */
#define MP_WIN_V 5               /* 16-byte vectors classified for it */

/* The sizes (mp_fixed) of the 16 objects that would start at q[0..16). */
__attribute__((target("ssse3")))
static inline __m128i mp_sizes16(const uint8_t *q)
{
	const __m128i tc = _mm_setr_epi8(1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 5, 9, 2, 3, 5, 9);
	const __m128i td = _mm_setr_epi8(2, 3, 5, 9, 3, 4, 6, 10, 18, 0, 0, 0, 0, 0, 0, 0);
	const __m128i lo4 = _mm_set1_epi8(0x0f), hi4 = _mm_set1_epi8((char)0xf0);
	__m128i b = _mm_loadu_si128((const __m128i *)q);
	__m128i hi = _mm_and_si128(b, hi4), lo = _mm_and_si128(b, lo4);
	/* fixints: 0x00..0x7f and 0xe0..0xff are > -33 as signed bytes */
	__m128i v = _mm_and_si128(_mm_cmpgt_epi8(b, _mm_set1_epi8(-33)), _mm_set1_epi8(1));
	v = _mm_or_si128(v, _mm_and_si128(_mm_cmpeq_epi8(hi, _mm_set1_epi8((char)0xc0)),
					  _mm_shuffle_epi8(tc, lo)));
	return _mm_or_si128(v, _mm_and_si128(_mm_cmpeq_epi8(hi, _mm_set1_epi8((char)0xd0)),
					     _mm_shuffle_epi8(td, lo)));
}

/* Of two vectors of sizes at positions [0, 32): at each of the first 16,
 * its object's size plus the next object's when both are integers
 * (sizes 1, 2, 3, 5, 9), else 0. */
__attribute__((target("ssse3")))
static inline __m128i mp_pairs16(__m128i s, __m128i t)
{
#define MP_NEXT(n) _mm_and_si128(_mm_cmpeq_epi8(s, _mm_set1_epi8(n)), _mm_alignr_epi8(t, s, n))
	__m128i nx = _mm_or_si128(_mm_or_si128(MP_NEXT(1), MP_NEXT(2)),
				  _mm_or_si128(_mm_or_si128(MP_NEXT(3), MP_NEXT(5)), MP_NEXT(9)));
#undef MP_NEXT
	return _mm_andnot_si128(_mm_cmpeq_epi8(nx, _mm_setzero_si128()), _mm_add_epi8(s, nx));
}

/* mp_step_fixed with the forms of a window of bytes classified at once
 * (16 at a time, SSSE3 table lookups; the same sizes as mp_fixed), and
 * the sizes of each two objects in a row added up: a step then waits on
 * one load (the pair's size where it lands) for two objects instead of
 * two loads (the byte, then its size) for one. The columns of mixed
 * integer widths (ts_d, slen, the per-flow deltas) were a quarter of
 * npanalyze's reading. A window is classified only while k - j >=
 * MP_WIN_V objects are due: the bytes left then hold MP_WIN_V *
 * MP_FIXED_MAX > 16 * MP_WIN_V. */
__attribute__((target("ssse3")))
static size_t mp_step_fixed_win(const uint8_t *p, size_t *pos, size_t k)
{
	const uint8_t *q = p + *pos;
	uint8_t sz[16 * MP_WIN_V], sz2[MP_WIN];
	size_t j = 0;
	while (k - j >= MP_WIN_V) {
		__m128i v[MP_WIN_V];
		for (int w = 0; w < MP_WIN_V; w++) {
			v[w] = mp_sizes16(q + 16 * w);
			_mm_storeu_si128((__m128i *)(sz + 16 * w), v[w]);
		}
		for (int w = 0; w < MP_WIN / 16; w++)
			_mm_storeu_si128((__m128i *)(sz2 + 16 * w), mp_pairs16(v[w], v[w + 1]));
		size_t i = 0;
		while (i < MP_WIN && j < k) {
			size_t f = sz2[i];
			if (f && k - j >= 2) {
				i += f;
				j += 2;
				continue;
			}
			if (!(f = sz[i])) {
				*pos = (size_t)(q + i - p);
				return j;
			}
			i += f;
			j++;
		}
		q += i;
	}
	for (; j < k; j++) {
		size_t f = mp_fixed[*q];
		if (!f)
			break;
		q += f;
	}
	*pos = (size_t)(q - p);
	return j;
}

/* mp_step_fixed with no chain of steps per object. Windows of 64 bytes
 * follow each other from where the step starts; each is classified at
 * once (mp_fixed of the 128 non-fixint forms in two tables, one
 * vpermi2b), every position in it gets the position after its object
 * (64 and up: in the next window; 128 + i: the object at i is not of
 * fixed size), and pointer doubling (six rounds of vpermb: 2^6 = 64
 * objects at most start in a window) gives for every position where its
 * chain leaves the window and how many objects it steps over. None of
 * that depends on where the walk enters the window, so windows are
 * worked on ahead; the walk itself then waits per window only on the
 * lane it enters at. The mixed-width columns took ~20 instructions an
 * object in mp_step_fixed_win, a chain of dependent loads; here ~45 a
 * window of ~25 objects. The bytes left hold MP_FIXED_MAX * (k - j) >=
 * 72 from the walk's position, which is at most 63 past its window's
 * start, while a window is loaded; the last objects (fewer than a
 * window's) are stepped one by one. */
static uint8_t mp_vb_tab[128], mp_vb_idx[64];   /* mp_fixed[0x80 + i]; i (mp_win_init) */

#define MP_VB_TGT __attribute__((target("avx512f,avx512bw,avx512vbmi")))

MP_VB_TGT
static size_t mp_step_fixed_vbmi(const uint8_t *p, size_t *pos, size_t k)
{
	const __m512i tlo = _mm512_loadu_si512(mp_vb_tab), thi = _mm512_loadu_si512(mp_vb_tab + 64),
		idx = _mm512_loadu_si512(mp_vb_idx);
	const __m512i one = _mm512_set1_epi8(1), c64 = _mm512_set1_epi8(64),
		stop = _mm512_set1_epi8((char)128);
	const uint8_t *w = p + *pos;    /* the window */
	unsigned o = 0;                 /* the walk's position in it */
	size_t j = 0;
	while (k - j >= 4) {
		__m512i b = _mm512_loadu_si512(w);
		__m512i sz = _mm512_mask_mov_epi8(_mm512_permutex2var_epi8(tlo, b, thi),
						  ~_mm512_movepi8_mask(b), one);
		__mmask64 fixed = _mm512_test_epi8_mask(sz, sz);
		__m512i cur = _mm512_mask_add_epi8(_mm512_add_epi8(idx, stop), fixed, idx, sz);
		__m512i cnt = _mm512_maskz_mov_epi8(fixed, one);
		for (int r = 0; r < 6; r++) {
			__mmask64 in = _mm512_cmplt_epu8_mask(cur, c64);
			__m512i gc = _mm512_permutexvar_epi8(cur, cnt);
			__m512i g = _mm512_permutexvar_epi8(cur, cur);
			cnt = _mm512_mask_add_epi8(cnt, in, cnt, gc);
			cur = _mm512_mask_mov_epi8(cur, in, g);
		}
		__m512i at = _mm512_set1_epi8((char)o);
		unsigned e = (uint8_t)_mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_permutexvar_epi8(at, cur)));
		unsigned c = (uint8_t)_mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_permutexvar_epi8(at, cnt)));
		if (c > k - j)
			break;               /* the column ends in this window */
		j += c;
		if (e >= 128) {
			*pos = (size_t)(w + (e - 128) - p);
			return j;
		}
		w += 64;
		o = e - 64;
	}
	const uint8_t *q = w + o;
	for (; j < k; j++) {
		size_t f = mp_fixed[*q];
		if (!f)
			break;
		q += f;
	}
	*pos = (size_t)(q - p);
	return j;
}

static int mp_have_win;          /* 1: SSSE3, 2: AVX-512 VBMI */

__attribute__((constructor))
static void mp_win_init(void)
{
	__builtin_cpu_init();
	mp_have_win = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw") ? 2
		    : __builtin_cpu_supports("ssse3");
	for (int i = 0; i < 128; i++)
		mp_vb_tab[i] = mp_fixed[0x80 + i];
	for (int i = 0; i < 64; i++)
		mp_vb_idx[i] = (uint8_t)i;
}
#define MP_STEP_FIXED(p, pos, k) (mp_have_win == 2 ? mp_step_fixed_vbmi(p, pos, k) \
				  : mp_have_win ? mp_step_fixed_win(p, pos, k) : mp_step_fixed(p, pos, k))

int np_mp_walk_cap(int max)
{
	if (max < mp_have_win)
		mp_have_win = max < 0 ? 0 : max;
	return mp_have_win;
}
#else
#define MP_STEP_FIXED(p, pos, k) mp_step_fixed(p, pos, k)

int np_mp_walk_cap(int max)
{
	(void)max;
	return 0;
}
#endif

/* np_mp_walk of an object found inside `outer` open containers. */
static size_t mp_walk_in(const void *buf, size_t len, uint64_t *objs, int outer)
{
	const uint8_t *p = buf;
	uint64_t left[NP_MP_MAX_DEPTH];    /* elements still due in each open container */
	int top = 0;
	size_t pos = 0;
	uint64_t nobj = 0;
	for (;;) {
		if (pos >= len)
			return 0;
		uint8_t b = p[pos];
		size_t f = mp_fixed[b];
		if (f) {
			if (f > len - pos)
				return 0;
			pos += f;
			nobj++;
			/* the rest of a column of scalars, without the generic step */
			if (top) {
				uint64_t l = left[top - 1], l0 = l;
				bool runs = true;
				while (l > 1 && pos < len) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
					/* eight bytes at a time while they are all
					 * fixints; a column that mixes in wider
					 * integers is stepped by the table alone (its
					 * forms come at random: no branch on them) */
					if (runs && l > 8 && len - pos >= 8) {
						uint64_t x;
						memcpy(&x, p + pos, 8);
						x &= 0x8080808080808080ull;
						unsigned k = x ? (unsigned)__builtin_ctzll(x) >> 3 : 8;
						pos += k;
						l -= k;
						if (k == 8)
							continue;
						runs = false;
					}
#endif
					/* then by the table in batches that fit in the
					 * bytes left, with no check of the end per step */
					size_t room = (len - pos) / MP_FIXED_MAX;
					if (!runs && l > 8 && room >= 8) {
						size_t want = room < l - 1 ? room : l - 1, got = MP_STEP_FIXED(p, &pos, want);
						l -= got;
						if (got < want)
							break;     /* not of fixed size: the generic step */
						continue;
					}
					f = mp_fixed[p[pos]];
					if (!f || f > len - pos)
						break;
					pos += f;
					l--;
				}
				nobj += l0 - l;
				left[top - 1] = l;
			}
		} else {
			pos++;
			uint64_t skip = 0, n = 0;
			size_t lb = 0;             /* bytes of a length field */
			int kind = 0;              /* 0 bytes, 1 ext, 2 array, 3 map */
			if (b <= 0x8f) { n = 2u * (b & 0x0f); kind = 3; }
			else if (b <= 0x9f) { n = b & 0x0f; kind = 2; }
			else if (b <= 0xbf) { skip = b & 0x1f; }
			else switch (b) {
			case 0xc4: case 0xd9: lb = 1; break;
			case 0xc5: case 0xda: lb = 2; break;
			case 0xc6: case 0xdb: lb = 4; break;
			case 0xc7: lb = 1; kind = 1; break;
			case 0xc8: lb = 2; kind = 1; break;
			case 0xc9: lb = 4; kind = 1; break;
			case 0xdc: lb = 2; kind = 2; break;
			case 0xdd: lb = 4; kind = 2; break;
			case 0xde: lb = 2; kind = 3; break;
			case 0xdf: lb = 4; kind = 3; break;
			default: return 0;         /* 0xc1 */
			}
			if (lb) {
				if (len - pos < lb)
					return 0;
				uint64_t v = mp_be(p + pos, lb);
				pos += lb;
				if (kind == 0) skip = v;
				else if (kind == 1) skip = v + 1;   /* ext: type byte + data */
				else n = kind == 3 ? 2 * v : v;
			}
			nobj++;
			if (kind >= 2) {
				/* msgpack-c refuses the 33rd level even when empty */
				if (top + outer >= NP_MP_MAX_DEPTH || n > len - pos)
					return 0;
				if (n) {
					left[top++] = n;
					continue;
				}
			} else {
				if (skip > len - pos)
					return 0;
				pos += skip;
			}
		}
		/* one element done: close every container it completes */
		for (;;) {
			if (!top) {
				if (objs)
					*objs = nobj;
				return pos;
			}
			if (--left[top - 1])
				break;
			top--;
		}
	}
}

size_t np_mp_walk(const void *buf, size_t len, uint64_t *objs)
{
	return mp_walk_in(buf, len, objs, 0);
}

/* An unsigned integer in any width (msgpack-c's POSITIVE_INTEGER: signed
 * encodings of values >= 0 count too): its length in bytes, 0 if p holds
 * none. */
static size_t mp_uint(const uint8_t *p, size_t len, uint64_t *out)
{
	if (!len)
		return 0;
	uint8_t b = p[0];
	if (b <= 0x7f) {
		*out = b;
		return 1;
	}
	size_t w;
	bool sign;
	if (b >= 0xcc && b <= 0xcf) { w = (size_t)1 << (b - 0xcc); sign = false; }
	else if (b >= 0xd0 && b <= 0xd3) { w = (size_t)1 << (b - 0xd0); sign = true; }
	else return 0;
	if (len - 1 < w || (sign && (p[1] & 0x80)))
		return 0;                  /* cut short, or negative */
	*out = mp_be(p + 1, w);
	return 1 + w;
}

/* An unsigned integer <= 0xffff in any width, at *pos. */
static bool mp_u16(const uint8_t *p, size_t len, size_t *pos, uint16_t *out)
{
	uint64_t v;
	size_t w = *pos < len ? mp_uint(p + *pos, len - *pos, &v) : 0;
	if (!w || v > 0xffff)
		return false;
	*pos += w;
	*out = (uint16_t)v;
	return true;
}

/* The record shape of FORMAT.md 3 read from the bytes of a complete record:
 * [uint type, uint version, map body, ...]. Sets the body's bytes. */
static bool mp_record_head(const uint8_t *p, size_t len, struct np_record *rec)
{
	size_t pos = 1;
	uint64_t n;
	if (!len)
		return false;
	if (p[0] >= 0x90 && p[0] <= 0x9f)
		n = p[0] & 0x0f;
	else if ((p[0] == 0xdc || p[0] == 0xdd) && len > (p[0] == 0xdc ? 2u : 4u)) {
		size_t w = p[0] == 0xdc ? 2 : 4;
		n = mp_be(p + 1, w);
		pos += w;
	} else
		return false;
	if (n < 3 || !mp_u16(p, len, &pos, &rec->type) || !mp_u16(p, len, &pos, &rec->version))
		return false;
	if (pos >= len || !((p[pos] >= 0x80 && p[pos] <= 0x8f) || p[pos] == 0xde || p[pos] == 0xdf))
		return false;
	size_t blen = n == 3 ? len - pos : np_mp_walk(p + pos, len - pos, NULL);
	if (!blen)
		return false;
	rec->raw = p + pos;
	rec->raw_len = blen;
	return true;
}

static bool reader_raw_type(const struct np_reader *r, uint16_t type);

/* Container header (fixmap/fixarray, 16- and 32-bit forms): its element
 * count; false if p does not hold one. */
static bool mp_container(const uint8_t *p, size_t len, size_t *pos, bool map, uint64_t *n)
{
	if (*pos >= len)
		return false;
	uint8_t b = p[*pos], fix = map ? 0x80 : 0x90, c16 = map ? 0xde : 0xdc;
	if ((b & 0xf0) == fix) {
		*n = b & 0x0f;
		(*pos)++;
		return true;
	}
	if (b != c16 && b != c16 + 1)
		return false;
	size_t w = b == c16 ? 2 : 4;
	if (len - *pos - 1 < w)
		return false;
	*n = mp_be(p + *pos + 1, w);
	*pos += 1 + w;
	return true;
}

/* A record of a raw type, delimited by walking its body pair by pair so
 * the pairs come for free (pktcols_raw_from_record): the same checks as one
 * np_mp_walk of the whole record. 1 = raw record (*olen, rec filled), 0 = not
 * a raw record (the generic path decides), -1 = malformed. */
static int raw_record_in(const struct np_reader *r, const uint8_t *p, size_t len, struct np_record *rec,
			 size_t *olen, struct np_rawpair *pairs)
{
	size_t pos = 0;
	uint64_t n, npairs;
	if (!mp_container(p, len, &pos, false, &n) || n < 3 ||
	    !mp_u16(p, len, &pos, &rec->type) || !mp_u16(p, len, &pos, &rec->version) ||
	    !reader_raw_type(r, rec->type))
		return 0;
	size_t body = pos;
	if (!mp_container(p, len, &pos, true, &npairs))
		return 0;
	if (n - 2 > len - body || npairs > (len - pos) / 2)
		return -1;                 /* counts beyond the bytes left */
	rec->raw_npairs = 0;
	for (uint64_t i = 0; i < npairs; i++) {
		size_t kl = mp_walk_in(p + pos, len - pos, NULL, 2);
		size_t vl = kl ? mp_walk_in(p + pos + kl, len - pos - kl, NULL, 2) : 0;
		if (!vl)
			return -1;
		if (i < NP_RAW_PAIRS)
			pairs[i] = (struct np_rawpair){ p + pos, p + pos + kl, kl, vl };
		pos += kl + vl;
	}
	rec->raw = p + body;
	rec->raw_len = pos - body;
	rec->raw_pairs = npairs <= NP_RAW_PAIRS ? pairs : NULL;
	rec->raw_npairs = npairs <= NP_RAW_PAIRS ? (uint32_t)npairs : 0;
	for (uint64_t i = 3; i < n; i++) {         /* elements after the body */
		size_t l = mp_walk_in(p + pos, len - pos, NULL, 1);
		if (!l)
			return -1;
		pos += l;
	}
	rec->body = NULL;
	*olen = pos;
	return 1;
}

static int raw_record(struct np_reader *r, const uint8_t *p, size_t len, struct np_record *rec,
		      size_t *olen)
{
	return raw_record_in(r, p, len, rec, olen, r->pairs);
}

/* Records delimited ahead (np_reader_decode_at, on a worker): what
 * np_reader_next's walk finds at each record start, scalars skipped as it
 * skips them, up to the first record that ends the chunk. Bounded: past
 * NP_WALK_MAX records the reader walks the rest itself. */
static bool walk_room(struct np_chunkbuf *cb, uint32_t npairs)
{
	if (!cb->walk && !(cb->walk = malloc(NP_WALK_MAX * sizeof(*cb->walk))))
		return false;
	if (cb->npairs + npairs <= cb->paircap)
		return true;
	size_t cap = cb->paircap ? 2 * cb->paircap : 256;
	while (cap < cb->npairs + npairs)
		cap *= 2;
	struct np_rawpair *n = realloc(cb->pairs, cap * sizeof(*n));
	if (!n)
		return false;
	cb->pairs = n;
	cb->paircap = cap;
	return true;
}

static void chunk_walk(const struct np_reader *r, struct np_chunkbuf *cb, size_t ulen)
{
	struct np_rawpair pairs[NP_RAW_PAIRS];
	size_t pos = 0, f;
	cb->nwalk = cb->npairs = 0;
	while (pos < ulen && cb->nwalk < NP_WALK_MAX) {
		const uint8_t *p = cb->buf + pos;
		if ((f = mp_fixed[*p]) != 0 && f <= ulen - pos) {
			pos += f;
			continue;
		}
		struct np_record rec = { 0 };
		struct np_walkent e = { .upos = pos };
		e.raw = raw_record_in(r, p, ulen - pos, &rec, &e.olen, pairs);
		if (e.raw == 0)
			e.olen = np_mp_walk(p, ulen - pos, &e.objs);
		if (e.raw == 1) {
			e.type = rec.type;
			e.version = rec.version;
			e.body = (size_t)(rec.raw - cb->buf);
			e.blen = rec.raw_len;
			e.npairs = rec.raw_pairs ? rec.raw_npairs : UINT32_MAX;
		}
		if (!walk_room(cb, e.npairs == UINT32_MAX ? 0 : e.npairs))
			return;
		e.pair0 = (uint32_t)cb->npairs;
		if (e.raw == 1 && rec.raw_pairs && e.npairs) {
			memcpy(cb->pairs + cb->npairs, pairs, e.npairs * sizeof(*pairs));
			cb->npairs += e.npairs;
		}
		cb->walk[cb->nwalk++] = e;
		if (e.raw < 0 || e.olen == 0)
			return;
		pos += e.olen;
	}
}

void np_chunkbuf_free(struct np_chunkbuf *cb)
{
	free(cb->buf);
	free(cb->walk);
	free(cb->pairs);
	memset(cb, 0, sizeof(*cb));
}

/* The record at r->upos as a worker's walk found it: raw_record's answer
 * (rec, *olen set) and, for other records, np_mp_walk's; -2 when the walk
 * has no entry there. */
static int walked_record(struct np_reader *r, struct np_record *rec, size_t *olen, uint64_t *objs)
{
	while (r->wi < r->cb.nwalk && r->cb.walk[r->wi].upos < r->upos)
		r->wi++;
	if (r->wi >= r->cb.nwalk || r->cb.walk[r->wi].upos != r->upos)
		return -2;
	const struct np_walkent *e = &r->cb.walk[r->wi++];
	*olen = e->olen;
	*objs = e->objs;
	if (e->raw != 1)
		return e->raw;
	rec->type = e->type;
	rec->version = e->version;
	rec->raw = r->cb.buf + e->body;
	rec->raw_len = e->blen;
	rec->body = NULL;
	if (e->npairs != UINT32_MAX) {
		/* the walk's pairs point into cb.buf, the buffer it walked */
		if (e->npairs)
			memcpy(r->pairs, r->cb.pairs + e->pair0, e->npairs * sizeof(*r->pairs));
		rec->raw_pairs = r->pairs;
		rec->raw_npairs = e->npairs;
	}
	return 1;
}

/* One zone reused for every record, its first chunk sized for the largest
 * record seen (msgpack-c takes 24 bytes per object): a fresh zone per
 * record made the kernel fault in new pages for every record and doubled
 * the reader's CPU time. */
#define NP_ZONE_MIN (64u << 10)
static bool reader_zone_fit(struct np_reader *r, uint64_t objs)
{
	size_t need = (size_t)objs * sizeof(msgpack_object) + 4096;
	if (r->zone && need <= r->zone_size) {
		msgpack_zone_clear(r->zone);
		return true;
	}
	size_t size = r->zone_size ? r->zone_size : NP_ZONE_MIN;
	while (size < need)
		size *= 2;
	if (r->zone)
		msgpack_zone_free(r->zone);
	r->zone = msgpack_zone_new(size);
	r->zone_size = r->zone ? size : 0;
	return r->zone != NULL;
}

static bool record_shape_ok(const msgpack_object *o, struct np_record *rec)
{
	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 3)
		return false;
	const msgpack_object *e = o->via.array.ptr;
	if (e[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[0].via.u64 > 0xffff)
		return false;
	if (e[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER || e[1].via.u64 > 0xffff)
		return false;
	if (e[2].type != MSGPACK_OBJECT_MAP)
		return false;
	rec->type = (uint16_t)e[0].via.u64;
	rec->version = (uint16_t)e[1].via.u64;
	rec->body = &e[2];
	return true;
}

int np_reader_set_raw(struct np_reader *r, uint16_t type)
{
	if (type >= 8 * sizeof(r->raw_types))
		return -EINVAL;
	r->raw_types[type / 64] |= 1ull << (type % 64);
	return 0;
}

static bool reader_raw_type(const struct np_reader *r, uint16_t type)
{
	return type < 8 * sizeof(r->raw_types) && (r->raw_types[type / 64] >> (type % 64) & 1);
}

/* A run of scalars where records should be: each one a bad record
 * (FORMAT.md 4.2), skipped here without the generic decode so a chunk of
 * 256 Mi msgpack nils costs a fraction of a second, not minutes. */
static void skip_scalars(struct np_reader *r)
{
	uint64_t n = 0;
	size_t f;
	while (r->upos < r->ulen && (f = mp_fixed[r->cb.buf[r->upos]]) != 0 && f <= r->ulen - r->upos) {
		if (r->warn && r->chunk_warned < NP_WARN_CHUNK_MAX && r->warned < NP_WARN_FILE_MAX)
			rwarn_rec(r, "%s: malformed record (not an array) at byte %zu of chunk %llu (offset %llu) skipped",
				  r->path, r->upos, (unsigned long long)r->chunk_no,
				  (unsigned long long)r->chunk_offset);
		else if (r->warn)
			r->chunk_unwarned++;
		r->upos += f;
		n++;
	}
	r->st.records_bad += n;
}

static void rwarn_undecodable(struct np_reader *r)
{
	rwarn_rec(r, "%s: undecodable record at byte %zu of chunk %llu (offset %llu); rest of chunk skipped",
		  r->path, r->upos, (unsigned long long)r->chunk_no,
		  (unsigned long long)r->chunk_offset);
}

int np_reader_next(struct np_reader *r, struct np_record *rec)
{
	for (;;) {
		if (r->upos >= r->ulen) {
			r->ulen = r->upos = 0;
			reader_chunk_done(r);
			if (!load_chunk(r)) {
				reader_file_done(r);
				return 0;
			}
			if (r->ulen == 0)
				continue;
		}
		const uint8_t *p = r->cb.buf + r->upos;
		if (mp_fixed[*p] && mp_fixed[*p] <= r->ulen - r->upos) {
			skip_scalars(r);
			continue;
		}
		uint64_t objs = 0;
		size_t olen = 0;
		rec->raw = NULL;
		rec->raw_len = 0;
		rec->raw_pairs = NULL;
		rec->raw_npairs = 0;
		int raw = walked_record(r, rec, &olen, &objs);
		if (raw == -2)
			raw = raw_record(r, p, r->ulen - r->upos, rec, &olen);
		if (raw == 0 && !olen)
			olen = np_mp_walk(p, r->ulen - r->upos, &objs);
		if (raw < 0 || olen == 0) {
			r->st.records_bad++;
			rwarn_undecodable(r);
			r->upos = r->ulen;
			continue;
		}
		if (raw) {
			/* body, raw and raw_pairs set by raw_record */
		} else if (objs > NP_REC_MAX_OBJS) {
			r->st.records_bad++;
			rwarn_rec(r, "%s: record of %llu objects (more than %u) at byte %zu of chunk %llu (offset %llu) skipped",
				  r->path, (unsigned long long)objs, NP_REC_MAX_OBJS, r->upos,
				  (unsigned long long)r->chunk_no, (unsigned long long)r->chunk_offset);
			r->upos += olen;
			continue;
		} else if (!mp_record_head(p, olen, rec)) {
			/* not [uint, uint, map, ...]: no tree needed to say so */
			r->st.records_bad++;
			rwarn_rec(r, "%s: malformed record at byte %zu of chunk %llu (offset %llu) skipped",
				  r->path, r->upos, (unsigned long long)r->chunk_no,
				  (unsigned long long)r->chunk_offset);
			r->upos += olen;
			continue;
		} else {
			size_t off = 0;
			if (!reader_zone_fit(r, objs) ||
			    msgpack_unpack((const char *)p, olen, &off, r->zone, &r->obj) !=
				    MSGPACK_UNPACK_SUCCESS || off != olen || !record_shape_ok(&r->obj, rec)) {
				r->st.records_bad++;
				rwarn_undecodable(r);
				r->upos = r->ulen;
				continue;
			}
		}
		r->upos += olen;
		rec->chunk_index = r->chunk_no;
		rec->file_offset = r->chunk_offset;
		r->st.records++;
		return 1;
	}
}

enum np_file_kind np_reader_kind(const struct np_reader *r) { return r->kind; }
const struct np_reader_stats *np_reader_stats(const struct np_reader *r) { return &r->st; }
const char *np_reader_path(const struct np_reader *r) { return r->path; }

void np_reader_close(struct np_reader *r)
{
	if (!r)
		return;
	if (r->zone)
		msgpack_zone_free(r->zone);
	if (r->mapped)
		munmap((void *)r->data, r->size);
	np_index_free(&r->ix);
	np_chunkbuf_free(&r->cb);
	free(r->path);
	free(r);
}

/* ---- chunk times and the chunk index (FORMAT.md 2.6) ---- */

/* Which time key a MessagePack string key is: 0 t0_ns, 1 t1_ns, 2 t_ns, -1 none. */
static int time_key(const uint8_t *p, size_t len)
{
	static const char *const keys[] = { "t0_ns", "t1_ns", "t_ns" };
	size_t hl, sl;
	if (len && (p[0] & 0xe0) == 0xa0) { hl = 1; sl = p[0] & 0x1f; }
	else if (len >= 2 && p[0] == 0xd9) { hl = 2; sl = p[1]; }
	else return -1;
	if (hl + sl != len)
		return -1;
	for (int k = 0; k < 3; k++)
		if (strlen(keys[k]) == sl && memcmp(p + hl, keys[k], sl) == 0)
			return k;
	return -1;
}

/* The body map at p: its length (0 if malformed), its objects added to
 * *objs, the range of its time keys (first occurrence of each) merged into
 * *lo, *hi. */
static size_t body_times(const uint8_t *p, size_t len, uint64_t *objs, uint64_t *lo, uint64_t *hi)
{
	size_t pos = 0;
	uint64_t npairs;
	unsigned seen = 0;
	if (!mp_container(p, len, &pos, true, &npairs) || npairs > (len - pos) / 2)
		return 0;
	for (uint64_t i = 0; i < npairs; i++) {
		uint64_t ko = 0, vo = 0;
		size_t kl = mp_walk_in(p + pos, len - pos, &ko, 2);
		size_t vl = kl ? mp_walk_in(p + pos + kl, len - pos - kl, &vo, 2) : 0;
		if (!vl)
			return 0;
		*objs += ko + vo;
		int k = time_key(p + pos, kl);
		uint64_t v;
		if (k >= 0 && !(seen >> k & 1)) {
			seen |= 1u << k;
			if (mp_uint(p + pos + kl, vl, &v) && v) {
				*lo = v < *lo ? v : *lo;
				*hi = v > *hi ? v : *hi;
			}
		}
		pos += kl + vl;
	}
	return pos;
}

/* One record at p: its length, its times merged into *lo, *hi when it is a
 * record a reader returns (4.2: [uint, uint, map, ...] of at most
 * NP_REC_MAX_OBJS objects); 0 when p holds no complete object of that
 * shape (the caller then delimits it as the reader would). */
static size_t record_times(const uint8_t *p, size_t len, uint64_t *lo, uint64_t *hi)
{
	size_t pos = 0, bl;
	uint64_t n, a = *lo, b = *hi, objs = 4;   /* array, type, version, body map */
	uint16_t type, version;
	if (!mp_container(p, len, &pos, false, &n) || n < 3 || n - 2 > len - pos ||
	    !mp_u16(p, len, &pos, &type) || !mp_u16(p, len, &pos, &version) ||
	    !(bl = body_times(p + pos, len - pos, &objs, &a, &b)))
		return 0;
	pos += bl;
	for (uint64_t i = 3; i < n; i++) {
		uint64_t eo = 0;
		size_t l = mp_walk_in(p + pos, len - pos, &eo, 1);
		if (!l)
			return 0;
		objs += eo;
		pos += l;
	}
	if (objs <= NP_REC_MAX_OBJS) {
		*lo = a;
		*hi = b;
	}
	return pos;
}

void np_chunk_time(const void *recs, size_t len, uint64_t *t_lo, uint64_t *t_hi)
{
	const uint8_t *p = recs;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t pos = 0;
	while (pos < len) {
		size_t l = record_times(p + pos, len - pos, &lo, &hi);
		if (!l)
			l = np_mp_walk(p + pos, len - pos, NULL);   /* a bad record: skipped */
		if (!l)
			break;                                      /* ends the chunk (4.2) */
		pos += l;
	}
	*t_lo = hi ? lo : 0;
	*t_hi = hi;
}

static uint64_t sat_add(uint64_t base, int64_t d)
{
	if (d < 0)
		return base > (uint64_t)-(d + 1) ? base + (uint64_t)d : 0;
	return UINT64_MAX - base < (uint64_t)d ? UINT64_MAX : base + (uint64_t)d;
}

/* The first chunk with a time fixes a relative window. */
static void reader_note_time(struct np_reader *r, const struct np_chunk_span *s)
{
	if (r->have_first_t || !np_span_timed(s))
		return;
	r->have_first_t = true;
	r->first_t = s->t_lo;
	if (r->win_rel) {
		r->win_lo = sat_add(s->t_lo, r->rel_lo);
		r->win_hi = sat_add(s->t_lo, r->rel_hi);
	}
}

/* Every indexed chunk is where the index says, one after the other up to
 * the INDEX chunk: its magic, header checksum and length (the payloads are
 * checked when read). */
static bool index_chain_ok(const struct np_reader *r, const struct np_index *ix)
{
	for (size_t i = 0; i < ix->n; i++) {
		const uint8_t *h = r->data + ix->v[i].off;
		uint64_t next = i + 1 < ix->n ? ix->v[i + 1].off : ix->end;
		if (memcmp(h, NP_CHUNK_MAGIC, 4) != 0 || get_u32(h + 20) != np_crc32(h, 20) ||
		    (uint64_t)NP_CHUNK_HDR_LEN + get_u32(h + 8) + NP_CHUNK_TRL_LEN != next - ix->v[i].off)
			return false;
	}
	return true;
}

/* The INDEX record of the chunk at `at` (its header checked), decoded with
 * the bounds of 4.2. */
static int index_decode(const struct np_reader *r, size_t at, struct np_index *ix)
{
	const uint8_t *h = r->data + at, *payload = h + NP_CHUNK_HDR_LEN;
	uint32_t clen = get_u32(h + 8), ulen = get_u32(h + 12);
	if (clen != r->size - at - NP_CHUNK_HDR_LEN - NP_CHUNK_TRL_LEN || ulen > NP_INDEX_MAX_ULEN ||
	    get_u32(h + 16) != np_crc32(payload, clen) || !payload_frame_ok(payload, clen, ulen))
		return -EINVAL;
	uint8_t *buf = malloc(ulen ? ulen : 1);
	if (!buf)
		return -ENOMEM;
	int rc = -EINVAL;
	uint64_t objs = 0;
	size_t got = ZSTD_decompress(buf, ulen ? ulen : 1, payload, clen);
	if (!ZSTD_isError(got) && got == ulen && ulen && np_mp_walk(buf, ulen, &objs) == ulen &&
	    objs <= NP_REC_MAX_OBJS) {
		msgpack_unpacked u;
		struct np_record rec;
		size_t off = 0;
		msgpack_unpacked_init(&u);
		if (msgpack_unpack_next(&u, (const char *)buf, ulen, &off) == MSGPACK_UNPACK_SUCCESS &&
		    record_shape_ok(&u.data, &rec) && rec.type == NP_REC_INDEX)
			rc = np_index_from_body(rec.body, at, ix);
		msgpack_unpacked_destroy(&u);
	}
	free(buf);
	return rc;
}

/* The file's chunk index, found through the last trailer. 0, or -1 when
 * there is none (an old file, a crash: silent) or it is damaged (warned);
 * the caller then scans. */
static int reader_load_index(struct np_reader *r)
{
	if (r->st.bad_file_header || r->size < NP_FILE_HDR_LEN + 2 * NP_CHUNK_MIN_LEN)
		return -1;
	uint32_t total = get_u32(r->data + r->size - NP_CHUNK_TRL_LEN);
	if (total < NP_CHUNK_MIN_LEN || total > r->size - NP_FILE_HDR_LEN - NP_CHUNK_MIN_LEN)
		return -1;
	size_t at = r->size - total;
	const uint8_t *h = r->data + at;
	if (memcmp(h, NP_CHUNK_MAGIC, 4) != 0 || get_u32(h + 20) != np_crc32(h, 20) ||
	    get_u16(h + 4) != NP_REC_INDEX)
		return -1;
	if (index_decode(r, at, &r->ix) == 0 && index_chain_ok(r, &r->ix))
		return 0;
	np_index_free(&r->ix);
	rwarn(r, "%s: the chunk index at offset %zu is damaged or does not match the file; "
	      "reading every chunk", r->path, at);
	return -1;
}

static void reader_index_first_time(struct np_reader *r)
{
	for (size_t i = 0; i < r->ix.n; i++)
		if (np_span_timed(&r->ix.v[i])) {
			reader_note_time(r, &r->ix.v[i]);
			return;
		}
}

int np_reader_set_window(struct np_reader *r, int64_t lo, int64_t hi, bool rel)
{
	bool fresh = r->st.chunks_ok == 0 && r->st.chunks_bad == 0 && r->st.bytes_skipped == 0;
	bool in_first = r->st.chunks_ok == 1 && r->chunk_offset == NP_FILE_HDR_LEN;
	if (r->seek != NP_SEEK_NONE || (!fresh && !in_first))
		return -EBUSY;
	r->win_rel = rel;
	r->rel_lo = lo;
	r->rel_hi = hi;
	r->win_lo = rel ? 0 : (lo < 0 ? 0 : (uint64_t)lo);
	r->win_hi = rel ? 0 : (hi < 0 ? 0 : (uint64_t)hi);
	if (r->have_first_t && rel) {
		r->win_lo = sat_add(r->first_t, lo);
		r->win_hi = sat_add(r->first_t, hi);
	}
	r->seek = NP_SEEK_SCAN;
	if (np_reader_index(r)) {
		r->seek = NP_SEEK_INDEX;
		r->ix_next = fresh ? 0 : 1;
		reader_index_first_time(r);
	}
	return 0;
}

enum np_seek_mode np_reader_seek_mode(const struct np_reader *r) { return r->seek; }

const struct np_index *np_reader_index(struct np_reader *r)
{
	if (!r->ix_tried) {
		r->ix_tried = true;
		reader_load_index(r);      /* frees what it refuses */
	}
	return r->ix.v ? &r->ix : NULL;
}

bool np_reader_first_time(const struct np_reader *r, uint64_t *t)
{
	if (r->have_first_t)
		*t = r->first_t;
	return r->have_first_t;
}
