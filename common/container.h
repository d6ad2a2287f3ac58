/* The np container: one format for recordings (.npr) and analyses (.npa).
 *
 *   file   = file-magic(8) version(u16le) kind(u16le) reserved(u32le)  [16 bytes]
 *            chunk*
 *   chunk  = header(24) payload(clen) trailer(4)
 *   header = magic "NPCK"(4) type(u16) flags(u16) clen(u32) ulen(u32)
 *            payload_crc32(u32) header_crc32(u32, over the 20 bytes before it)
 *   payload= one zstd frame; decompressed it is a sequence of msgpack records
 *   record = msgpack array [type(uint), version(uint), body(map)]
 *   trailer= u32le total chunk length (24 + clen + 4), to walk backwards
 *
 * A finished file (format version 2) ends with a chunk holding one INDEX
 * record: offset and time range of every chunk before it (chunkindex.h),
 * found from the end of the file through the last trailer.
 *
 * The first chunk of a file holds one NP_REC_HEADER record. docs/FORMAT.md is
 * the normative description; this header is its C side.
 */
#ifndef NP_CONTAINER_H
#define NP_CONTAINER_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <msgpack.h>

#define NP_FILE_MAGIC      "NPFILE\r\n"
#define NP_FILE_MAGIC_LEN  8
#define NP_FILE_HDR_LEN    16
#define NP_FORMAT_VERSION  2   /* 2: finished files end with a chunk index */
#define NP_CHUNK_MAGIC     "NPCK"
#define NP_CHUNK_HDR_LEN   24
#define NP_CHUNK_TRL_LEN   4
/* Readers refuse chunks claiming more than this: lengths are never trusted. */
#define NP_CHUNK_MAX_ULEN  (256u << 20)
#define NP_CHUNK_TYPE_MIXED 0   /* chunk holds records of several types */

enum np_file_kind {
	NP_KIND_RECORDING = 1,
	NP_KIND_ANALYSIS  = 2,
};

/* ---- building records in memory ------------------------------------- */

/* A record buffer collects msgpack records that will become one chunk. */
struct np_recbuf {
	msgpack_sbuffer sbuf;
	msgpack_packer  pk;
	uint32_t        nrecords;
	int             type;      /* -1 empty, record type if uniform, else MIXED */
};

void np_recbuf_init(struct np_recbuf *rb);
void np_recbuf_reset(struct np_recbuf *rb);
void np_recbuf_free(struct np_recbuf *rb);
/* Starts a record: packs [type, version, and the caller packs ONE map body
 * next with the returned packer. */
msgpack_packer *np_recbuf_begin(struct np_recbuf *rb, uint16_t type, uint16_t version);
static inline bool np_recbuf_empty(const struct np_recbuf *rb) { return rb->nrecords == 0; }

/* A finished chunk in memory (header + zstd payload + trailer). */
struct np_chunk {
	uint8_t *data;
	size_t   len;
	uint16_t type;
	uint32_t ulen;
	uint64_t t_lo, t_hi;   /* time range of its records (np_chunk_time) */
};
/* FORMAT.md 2.6: the smallest and largest non-zero t0_ns, t1_ns, t_ns of the
 * records in len bytes of decompressed chunk payload; 0 and 0 if none. */
void np_chunk_time(const void *recs, size_t len, uint64_t *t_lo, uint64_t *t_hi);
/* Compresses rb into a complete chunk. 0 or -errno. Does not reset rb. */
int  np_chunk_build(struct np_chunk *out, const struct np_recbuf *rb, int zstd_level);
/* The same with a compression context kept across chunks (no tables
 * allocated and faulted in per chunk) and, with p, the work cut into
 * steps with p->pause called between them, so that a recorder sharing a
 * busy CPU never holds it for the whole compression. Same output format. */
struct np_zctx;
struct np_chunk_pacer {
	void (*pause)(void *arg);
	void *arg;
	size_t step;        /* input bytes per step (0: 16 KiB) */
};
struct np_zctx *np_zctx_new(void);
void np_zctx_free(struct np_zctx *z);
int  np_chunk_build_paced(struct np_chunk *out, const struct np_recbuf *rb, int zstd_level,
			  struct np_zctx *zc, const struct np_chunk_pacer *p);
void np_chunk_free(struct np_chunk *c);

/* ---- writer ----------------------------------------------------------- */

struct np_writer;

struct np_writer_opts {
	int  zstd_level;   /* 0 = default (3) */
	bool fsync_each;   /* fsync after every chunk (durability over speed) */
	bool index;        /* np_writer_close ends the file with a chunk index */
};

/* Creates (or truncates, like tcpdump -w) path with mode 0600 and writes the
 * file magic. Returns 0 or -errno. */
/* Creates or truncates NAME (relative to dirfd, or AT_FDCWD) for writing,
 * mode 0600 even when it existed: recordings hold addresses and paths.
 * Returns the fd or -errno. */
int  np_open_private(int dirfd, const char *name, int extra_flags);
int  np_writer_open(struct np_writer **w, const char *path, enum np_file_kind kind,
		    const struct np_writer_opts *opts);
/* Adopts an open fd (e.g. stdout); the writer closes it. */
int  np_writer_fdopen(struct np_writer **w, int fd, enum np_file_kind kind,
		      const struct np_writer_opts *opts);
/* Builds a chunk from rb, writes and flushes it, resets rb. On a write error
 * (ENOSPC, EIO) the file is truncated back to the last complete chunk so it
 * stays valid, and -errno is returned; the writer is then unusable. */
int  np_writer_commit(struct np_writer *w, struct np_recbuf *rb);
/* Writes an already built chunk (flight recorder ring, rotation). */
int  np_writer_write_chunk(struct np_writer *w, const struct np_chunk *c);
int  np_writer_fsync(struct np_writer *w);
uint64_t np_writer_bytes(const struct np_writer *w);    /* bytes in the file */
uint64_t np_writer_chunks(const struct np_writer *w);
/* Bytes the chunk index written at close may take after one more chunk
 * (0 without opts.index): room a size limit keeps for it. */
uint64_t np_writer_index_bound(const struct np_writer *w);
int  np_writer_fd(const struct np_writer *w);
/* Writes the chunk index (opts.index, no earlier error: a failure to write
 * it truncates it away and is not an error, readers then scan), flushes and
 * closes; returns the first error seen, 0 if none. Frees w. */
int  np_writer_close(struct np_writer *w);

/* ---- reader ----------------------------------------------------------- */

struct np_reader;

/* A key/value pair of a raw record's body, as MessagePack bytes. */
struct np_rawpair {
	const uint8_t *key, *val;
	size_t klen, vlen;
};
#define NP_RAW_PAIRS 32

struct np_record {
	uint16_t type;
	uint16_t version;
	/* a map; valid until the next np_reader_next. NULL for the types
	 * passed to np_reader_set_raw. */
	const msgpack_object *body;
	/* The body map's MessagePack bytes (complete, nesting checked), valid
	 * as long as body; set for every record. */
	const uint8_t *raw;
	size_t raw_len;
	/* Raw records (np_reader_set_raw) with at most NP_RAW_PAIRS pairs: the
	 * body's pairs as the reader's walk found them, else NULL. */
	const struct np_rawpair *raw_pairs;
	uint32_t raw_npairs;
	uint64_t chunk_index;         /* 0-based index of good chunks */
	uint64_t file_offset;         /* offset of the chunk holding the record */
};

struct np_reader_stats {
	uint64_t chunks_ok;
	uint64_t chunks_bad;          /* checksum / decompression / msgpack errors */
	uint64_t bytes_skipped;       /* garbage or damaged bytes passed over */
	uint64_t records;
	uint64_t records_bad;         /* undecodable records inside a good chunk */
	bool     truncated;           /* file ends inside a chunk */
	uint64_t last_good_offset;    /* end of the last good chunk; 16 (the file
					 * header) if none, 0 if the header is bad */
	bool     bad_file_header;
};

/* Called once per problem; msg has no trailing newline. NULL = silent.
 * Capped (FORMAT.md 4.3): at most NP_WARN_CHUNK_MAX warnings about the
 * records of one chunk, then one "... and N more like it in chunk C" line;
 * at most NP_WARN_FILE_MAX per file, then one "... and N more like it" line
 * when the end of the file is reached. The statistics count every problem. */
typedef void (*np_warn_fn)(void *ctx, const char *msg);
#define NP_WARN_CHUNK_MAX 10
#define NP_WARN_FILE_MAX  100

/* msgpack-c builds a 24-byte msgpack_object per element: a record of more
 * objects than this is skipped (one bad record), so a crafted chunk cannot
 * make a reader allocate 24x its decompressed size (6 GB for 256 MB); the
 * bound is then 768 MB. Why not lower: FLOWS and TXN_STATS records and
 * analysis tables are one record per interval or table, columnar, ~20
 * objects per flow or row: a 1 M-flow interval is ~20 M objects and must
 * still read. A PKT_EVENTS record (65536 events) has ~1.05 M objects.
 * Records returned raw (np_reader_set_raw) build no tree and are exempt. */
#define NP_REC_MAX_OBJS   (32u << 20)
/* Nesting msgpack-c and FORMAT.md 4.2 accept (the record array included). */
#define NP_MP_MAX_DEPTH   32

/* Opens path (mmap). Returns 0 or -errno; a file whose 16-byte header is
 * damaged is still opened (stats.bad_file_header) and scanned for chunks. */
int  np_reader_open(struct np_reader **r, const char *path, np_warn_fn warn, void *ctx);
/* Reads from memory (fuzzing, tests); data must outlive the reader. */
int  np_reader_open_mem(struct np_reader **r, const void *data, size_t len,
			np_warn_fn warn, void *ctx);
/* 1 = rec filled, 0 = end of file. Never fails on content: damage is
 * skipped, counted and reported through warn. */
int  np_reader_next(struct np_reader *r, struct np_record *rec);
/* Records of this type come back undecoded (body NULL, raw set): for the
 * large columnar records a caller decodes straight from the bytes (PKT_EVENTS
 * in npanalyze: pktcols_raw_*). The walk that delimits them still checks
 * every length and the nesting. 0 or -EINVAL (type >= 256). */
int  np_reader_set_raw(struct np_reader *r, uint16_t type);
/* A warning of the caller about the record np_reader_next just returned
 * (a body it cannot use), prefixed with the file name and under the same
 * caps as the reader's own (FORMAT.md 4.3). */
void np_reader_warn_rec(struct np_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* --from/--to: from now on np_reader_next returns only the records of the
 * chunks whose time range (FORMAT.md 2.6) meets [lo, hi], of chunks without
 * a time, and of the file's first chunk (its HEADER). rel: lo and hi count
 * from the t_lo of the file's first chunk with a time (negative lo: before
 * it). Through the file's chunk index when it has a good one (only those
 * chunks are touched; chunk numbers are index positions; the statistics
 * count the chunks read), else by reading every chunk and deciding on its
 * records (old files, a crash, a damaged index; the same chunks result).
 * Call before the second chunk is loaded; 0, or -EBUSY. */
int  np_reader_set_window(struct np_reader *r, int64_t lo, int64_t hi, bool rel);
enum np_seek_mode {
	NP_SEEK_NONE,       /* no window: every chunk */
	NP_SEEK_INDEX,      /* through the file's chunk index */
	NP_SEEK_SCAN,       /* no usable index: every chunk decoded, times from records */
};
enum np_seek_mode np_reader_seek_mode(const struct np_reader *r);
/* The file's chunk index when it has a usable one (FORMAT.md 2.6: every
 * check done, chunks where it says), else NULL: for a reader that splits
 * the chunks among threads. Valid until np_reader_close. */
struct np_index;
const struct np_index *np_reader_index(struct np_reader *r);
/* Parallel reading (npanalyze --threads): chunk payloads decoded on other
 * threads, handed to the reader in its own order. np_reader_decode_at
 * checks the chunk at off as the reader would (header, lengths, checksums,
 * one zstd frame of the stated size), decompresses its payload into cb
 * (grown as needed) and delimits its records as np_reader_next will: 0, or -1 where the reader would find
 * damage (it then finds and reports it itself, in order). It reads only the
 * file's bytes: safe from any thread while the reader is open. */
struct np_walkent;
struct np_chunkbuf {
	uint8_t *buf;                /* decompressed payload; cap bytes allocated */
	size_t cap;
	struct np_walkent *walk;     /* its records, delimited ahead */
	size_t nwalk;
	struct np_rawpair *pairs;    /* the raw records' pairs, pointing into buf */
	size_t npairs, paircap;
};
#define NP_WALK_MAX 1024            /* records delimited ahead per chunk */
void np_chunkbuf_free(struct np_chunkbuf *cb);
int  np_reader_decode_at(const struct np_reader *r, uint64_t off, struct np_chunkbuf *cb);
/* Where the chunk after the one at off starts when that one's header is good
 * and it ends inside the file: the reader's next position if the chunk at
 * off is good. 0 otherwise (and at the end of the file). Through a chunk
 * index (NP_SEEK_INDEX): the next indexed chunk the window wants after the
 * one at off, 0 after the window's last. Thread-safe too. */
uint64_t np_reader_next_chunk(const struct np_reader *r, uint64_t off);
/* Asked by np_reader_next for each chunk whose header it found good, with
 * the chunk's offset: 1 after swapping into *cb the payload
 * np_reader_decode_at decoded at that offset (the reader's old buffers go
 * to the callee), 0 when it has none (the reader decodes it itself). */
typedef int (*np_prefetch_fn)(void *ctx, uint64_t off, struct np_chunkbuf *cb);
void np_reader_set_prefetch(struct np_reader *r, np_prefetch_fn fn, void *ctx);
/* The t_lo of the file's first chunk with a time (from the index, or the
 * chunks read so far); false when not known. */
bool np_reader_first_time(const struct np_reader *r, uint64_t *t);
enum np_file_kind np_reader_kind(const struct np_reader *r);   /* 0 if unknown */
const struct np_reader_stats *np_reader_stats(const struct np_reader *r);
const char *np_reader_path(const struct np_reader *r);
void np_reader_close(struct np_reader *r);

uint32_t np_crc32(const void *data, size_t len);

/* Walks one MessagePack object without allocating: its length in bytes, or
 * 0 when it is cut short, uses 0xc1, nests deeper than NP_MP_MAX_DEPTH, or
 * has a container claiming more elements than bytes remain. *objs (if not
 * NULL) gets the number of objects (keys and values counted). */
size_t np_mp_walk(const void *p, size_t len, uint64_t *objs);
/* Caps the vector step np_mp_walk uses (2 AVX-512 VBMI, 1 SSSE3, 0
 * scalar) at max and returns the level now in use: for tests, so that a
 * machine with AVX-512 still checks the other two. */
int np_mp_walk_cap(int max);

#endif
