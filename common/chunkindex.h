/* The chunk index of a file (docs/FORMAT.md 2.6): where each chunk starts
 * and which times its records cover, stored as the last chunk of a finished
 * file (one INDEX record) so that a reader wanting minutes of an hours-long
 * recording finds its chunks from the end of the file without reading the
 * rest. This file holds the record's body (packing, parsing, the checks that
 * need no file); the container (container.c) finds it, checks it against the
 * file and reads through it. */
#ifndef NP_CHUNKINDEX_H
#define NP_CHUNKINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>

#define NP_INDEX_VERSION   1
/* The smallest chunk a reader accepts: header, a 5-byte payload (clen < 5
 * is never one zstd frame, FORMAT.md 2.2), trailer. Bounds the entries an
 * index of a file of a given size can hold. */
#define NP_CHUNK_MIN_LEN   (24u + 5u + 4u)
/* At most this many entries (48 days of 1 s chunks) and this many bytes of
 * decompressed INDEX record (27 bytes per entry at most, 9 per column):
 * readers refuse larger ones without allocating for them. */
#define NP_INDEX_MAX_N     (4u << 20)
#define NP_INDEX_MAX_ULEN  (128u << 20)

/* One chunk: its file offset and the time range of its records; t_lo = t_hi
 * = 0 when none of its records carries a time. */
struct np_chunk_span {
	uint64_t off;
	uint64_t t_lo, t_hi;
};

struct np_index {
	struct np_chunk_span *v;
	size_t n, cap;
	uint64_t end;        /* offset of the INDEX chunk: end of the last indexed chunk */
};

int  np_index_add(struct np_index *ix, uint64_t off, uint64_t t_lo, uint64_t t_hi);
void np_index_free(struct np_index *ix);
/* Packs the INDEX record's body map (the caller began the record). */
void np_index_pack(msgpack_packer *pk, const struct np_index *ix);
/* Bytes the INDEX chunk of n entries takes at most (for --max-size). */
uint64_t np_index_chunk_bound(size_t n);
/* Parses and checks an INDEX body found in a chunk at file offset `at`:
 * counts bounded, offsets in order and inside [16, at), time ranges well
 * formed. 0, or -EINVAL (ix left empty). Whether the chunks are really
 * there is the container's check (np_reader). */
int  np_index_from_body(const msgpack_object *body, uint64_t at, struct np_index *ix);

static inline bool np_span_timed(const struct np_chunk_span *s)
{
	return s->t_lo || s->t_hi;
}
/* A chunk is read for [lo, hi] when it overlaps it or has no time. */
static inline bool np_span_wanted(const struct np_chunk_span *s, uint64_t lo, uint64_t hi)
{
	return !np_span_timed(s) || (s->t_hi >= lo && s->t_lo <= hi);
}

#endif
