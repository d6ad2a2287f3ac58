/* The INDEX record of docs/FORMAT.md 2.6; see chunkindex.h. */
#include "chunkindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "container.h"
#include "npmsg.h"

int np_index_add(struct np_index *ix, uint64_t off, uint64_t t_lo, uint64_t t_hi)
{
	if (ix->n == ix->cap) {
		size_t cap = ix->cap ? ix->cap * 2 : 256;
		struct np_chunk_span *v = realloc(ix->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ix->v = v;
		ix->cap = cap;
	}
	ix->v[ix->n++] = (struct np_chunk_span){ off, t_lo, t_hi };
	return 0;
}

void np_index_free(struct np_index *ix)
{
	free(ix->v);
	memset(ix, 0, sizeof(*ix));
}

/* One delta column of a field of the entries (FORMAT.md 3.1). */
static void index_pack_col(msgpack_packer *pk, const char *key, const struct np_index *ix,
			   size_t field)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, (uint32_t)ix->n);
	uint64_t prev = 0;
	for (size_t i = 0; i < ix->n; i++) {
		const struct np_chunk_span *e = &ix->v[i];
		uint64_t v = field == 0 ? e->off : field == 1 ? e->t_lo : e->t_hi;
		if (i == 0)
			msgpack_pack_uint64(pk, v);
		else
			msgpack_pack_int64(pk, (int64_t)(v - prev));
		prev = v;
	}
}

void np_index_pack(msgpack_packer *pk, const struct np_index *ix)
{
	msgpack_pack_map(pk, 5);
	np_pack_kv_u64(pk, "n", ix->n);
	np_pack_kv_u64(pk, "end", ix->end);
	index_pack_col(pk, "off_d", ix, 0);
	index_pack_col(pk, "lo_d", ix, 1);
	index_pack_col(pk, "hi_d", ix, 2);
}

uint64_t np_index_chunk_bound(size_t n)
{
	/* 9 bytes per value at most, 3 values per entry, and the keys */
	size_t u = 27 * n + 128;
	return NP_CHUNK_HDR_LEN + ZSTD_compressBound(u) + NP_CHUNK_TRL_LEN;
}

static bool index_spans_ok(const struct np_index *ix, uint64_t at)
{
	for (size_t i = 0; i < ix->n; i++) {
		const struct np_chunk_span *s = &ix->v[i];
		uint64_t next = i + 1 < ix->n ? ix->v[i + 1].off : at;
		if (i == 0 && s->off != NP_FILE_HDR_LEN)
			return false;
		/* in order, each at least a chunk long, the last ending before at */
		if (next < s->off || next - s->off < NP_CHUNK_MIN_LEN)
			return false;
		if (np_span_timed(s) && (!s->t_lo || s->t_lo > s->t_hi))
			return false;
	}
	return true;
}

int np_index_from_body(const msgpack_object *body, uint64_t at, struct np_index *ix)
{
	uint64_t n, end;
	size_t no, nl, nh;
	memset(ix, 0, sizeof(*ix));
	if (body->type != MSGPACK_OBJECT_MAP || np_get_u64(body, "n", &n) ||
	    np_get_u64(body, "end", &end) || end != at || at < NP_FILE_HDR_LEN ||
	    n > NP_INDEX_MAX_N || n > (at - NP_FILE_HDR_LEN) / NP_CHUNK_MIN_LEN)
		return -EINVAL;
	uint64_t *off = np_get_u64_delta(body, "off_d", &no);
	uint64_t *lo = np_get_u64_delta(body, "lo_d", &nl);
	uint64_t *hi = np_get_u64_delta(body, "hi_d", &nh);
	int rc = -EINVAL;
	if (off && lo && hi && no == n && nl == n && nh == n) {
		ix->v = malloc((n ? n : 1) * sizeof(*ix->v));
		rc = ix->v ? 0 : -ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		ix->v[i] = (struct np_chunk_span){ off[i], lo[i], hi[i] };
	free(off);
	free(lo);
	free(hi);
	if (rc == 0) {
		ix->n = ix->cap = n;
		ix->end = end;
		if (!index_spans_ok(ix, at))
			rc = -EINVAL;
	}
	if (rc)
		np_index_free(ix);
	return rc;
}
