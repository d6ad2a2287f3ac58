/* libFuzzer target: the packet-path column decoders (common/pktcols.c) on
 * arbitrary msgpack. Whatever decodes must re-encode to the same events, and
 * the pull parser over the bytes (pktcols_raw_*) must give what npmsg's
 * getters give on msgpack-c's tree of the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "container.h"
#include "npmsg.h"
#include "pktcols.h"

static bool fz_same(const void *a, size_t na, const void *b, size_t nb, size_t elem)
{
	return !a == !b && na == nb && (!a || !memcmp(a, b, na * elem));
}

enum { FZ_SINGLE, FZ_FUSED, FZ_FAST };

/* The fast runs (pktcols_col_fast_*) of at most lim (<= 7) values from at,
 * into the checked modes' buffers (fast_u32's 32 bits widened, the values
 * it takes fit); how many they took. */
static size_t fz_fast(struct pktcols_col *c, bool u32, uint64_t n, uint64_t at, size_t lim, uint32_t *o32,
		      uint64_t *o64)
{
	if (u32) {
		uint32_t *const o[3] = { o32 + at, o32 + n + at, o32 + 2 * n + at };
		return pktcols_col_fast_i32_3(c, o, lim);
	}
	uint32_t u[7];
	size_t got = pktcols_col_fast_delta_u32(&c[0], &c[1], o64 + at, u, lim);
	if (got > lim)
		abort();
	for (size_t i = 0; i < got; i++)
		o64[n + at + i] = u[i];
	return got;
}

/* Piece by piece (7 values) into out, one column at a time (FZ_SINGLE),
 * the fused decoders (FZ_FUSED), or a fast run of 0-7 values (varying by
 * piece) then the piece's rest one column at a time (FZ_FAST: the fast
 * runs never refuse, so a refusal falls on the same piece and column as
 * in FZ_SINGLE): 0, or 1 + the first refusing column. u32: three columns;
 * else a delta column and a u64 one. */
static int fz_pieces(struct pktcols_col *c, bool u32, int mode, uint64_t n, uint32_t *o32, uint64_t *o64)
{
	for (uint64_t at = 0; at < n; at += 7) {
		size_t k = n - at < 7 ? (size_t)(n - at) : 7, lim = (size_t)(at / 7 % 8);
		uint64_t p = at;
		int bad = -1;
		if (mode == FZ_FAST) {
			size_t got = fz_fast(c, u32, n, at, lim < k ? lim : k, o32, o64);
			p += got;
			k -= got;
			if (!k)
				continue;
		}
		if (mode == FZ_FUSED && u32) {
			uint32_t *const o[3] = { o32 + p, o32 + n + p, o32 + 2 * n + p };
			if (pktcols_col_u32_3(c, o, k, &bad))
				return 1 + bad;
		} else if (mode == FZ_FUSED) {
			if (pktcols_col_delta_u64(&c[0], &c[1], o64 + p, o64 + n + p, k, &bad))
				return 1 + bad;
		} else
			for (int j = 0; j < (u32 ? 3 : 2); j++)
				if (u32 ? pktcols_col_u32(&c[j], o32 + j * n + p, k)
				    : j ? pktcols_col_u64(&c[j], o64 + n + p, k)
				    : pktcols_col_delta(&c[j], o64 + p, k))
					return 1 + j;
	}
	return 0;
}

/* The fused decoders and the fast runs between checked pieces give what
 * the single-column ones give (values and the first refusing column) on
 * the columns of keys a, b, c. */
static void fz_fused(const struct pktcols_raw *m, const char *a, const char *b, const char *c)
{
	const char *key[3] = { a, b, c };
	struct pktcols_col col[3], one[3];
	uint64_t n, cnt;
	for (int j = 0; j < 3; j++)
		if (pktcols_col_open(&col[j], m, key[j], j ? &cnt : &n))
			return;
	if (n > 4096)
		return;
	uint32_t *f32 = calloc(3 * n + 1, 4), *s32 = calloc(3 * n + 1, 4), *q32 = calloc(3 * n + 1, 4);
	uint64_t *f64 = calloc(2 * n + 1, 8), *s64 = calloc(2 * n + 1, 8), *q64 = calloc(2 * n + 1, 8);
	if (!f32 || !s32 || !q32 || !f64 || !s64 || !q64)
		abort();
	for (int u32 = 0; u32 < 2; u32++) {
		memcpy(one, col, sizeof(one));
		int rs = fz_pieces(one, u32, FZ_SINGLE, n, s32, s64);
		memcpy(one, col, sizeof(one));
		int rf = fz_pieces(one, u32, FZ_FUSED, n, f32, f64);
		if (rs != rf || (!rs && (memcmp(s32, f32, 3 * n * 4) || memcmp(s64, f64, 2 * n * 8))))
			abort();
		memcpy(one, col, sizeof(one));
		int rq = fz_pieces(one, u32, FZ_FAST, n, q32, q64);
		if (rs != rq || (!rs && (u32 ? memcmp(s32, q32, 3 * n * 4) : memcmp(s64, q64, 2 * n * 8))))
			abort();
	}
	free(f32); free(s32); free(q32); free(f64); free(s64); free(q64);
}

/* Differential: raw decoders vs tree getters for every string key. */
static void fz_raw_vs_tree(const msgpack_object *map, const uint8_t *bytes, size_t len)
{
	struct pktcols_raw m;
	if (pktcols_raw_open(&m, bytes, len))
		abort();    /* msgpack-c decoded it: a map the pull parser must take */
	for (uint32_t i = 0; i < map->via.map.size && i < 64; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		/* np_map_get would memcmp msgpack-c's NULL pointer of "" */
		if (k->type != MSGPACK_OBJECT_STR || !k->via.str.size || k->via.str.size > 63)
			continue;
		char key[64];
		memcpy(key, k->via.str.ptr, k->via.str.size);
		key[k->via.str.size] = 0;
		if (strlen(key) != k->via.str.size)
			continue;    /* embedded NUL: not a C key */
		/* with the indexed keys after it (any key, the same one too) */
		const char *next[2] = { key, key };
		for (uint32_t j = 1; j <= 2 && j < m.n; j++)
			if (m.kv[j].key && m.kv[j].klen < 64)
				next[j - 1] = NULL;
		char k1[64], k2[64];
		char *kk[2] = { k1, k2 };
		for (int j = 0; j < 2; j++)
			if (!next[j]) {
				memcpy(kk[j], m.kv[j + 1].key, m.kv[j + 1].klen);
				kk[j][m.kv[j + 1].klen] = 0;
				next[j] = strlen(kk[j]) == m.kv[j + 1].klen ? kk[j] : key;
			}
		fz_fused(&m, key, next[0], next[1]);
		size_t n1, n2;
		uint64_t *a = np_get_u64_array(map, key, &n1), *b = pktcols_raw_u64_array(&m, key, &n2);
		if (!fz_same(a, n1, b, n2, 8))
			abort();
		free(b);
		/* non-negative integers are a valid modulo-2^32 column too */
		uint32_t *c = pktcols_raw_u32_mod(&m, key, n1);
		if (a && !c)
			abort();
		for (size_t j = 0; a && j < n1; j++)
			if (c[j] != (uint32_t)a[j])
				abort();
		free(a);
		free(c);
		a = np_get_u64_delta(map, key, &n1);
		b = pktcols_raw_u64_delta(&m, key, &n2);
		if (!fz_same(a, n1, b, n2, 8))
			abort();
		free(a);
		free(b);
		uint64_t v1 = 1, v2 = 2;
		int r1 = np_get_u64(map, key, &v1), r2 = pktcols_raw_u64(&m, key, &v2);
		if (r1 != r2 || (!r1 && v1 != v2))
			abort();
	}
}

static void fz_roundtrip(const struct pktcols_ev *ev, size_t n)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, PKTCOLS_EVENT_KEYS);
	pktcols_pack_events(&pk, ev, n);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	struct pktcols_ev *again = NULL;
	size_t m = 0;
	if (msgpack_unpack_next(&u, sb.data, sb.size, NULL) != MSGPACK_UNPACK_SUCCESS ||
	    pktcols_unpack_events(&u.data, &again, &m) || m != n)
		abort();
	for (size_t i = 0; i < n; i++) {
		/* the packer keeps the low bits the columns hold */
		if (again[i].ts != ev[i].ts || again[i].seq != ev[i].seq || again[i].ack != ev[i].ack ||
		    again[i].ipid != ev[i].ipid || again[i].end_seq != ev[i].end_seq)
			abort();
		(void)pktcols_id(&again[i]);
		if (i)
			(void)pktcols_covers(&again[i - 1], &again[i]);
	}
	free(again);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

/* msgpack-c allocates what a header claims before reading the elements;
 * the container reader checks lengths first (container.c), so does this:
 * an object whose element counts exceed the bytes left is refused. Returns
 * the object's length or 0. */
static uint64_t fz_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = (v << 8) | p[i];
	return v;
}

static size_t fz_len(const uint8_t *p, size_t n, int depth)
{
	if (!n || depth > 32)
		return 0;
	uint8_t b = p[0];
	uint64_t cnt = 0, fixed = 0;
	size_t hdr = 1;
	int kind = 0, lenbytes = 0;   /* kind: 0 scalar/bytes, 1 array, 2 map */
	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
		fixed = 0;
	else if (b >= 0x80 && b <= 0x8f)
		kind = 2, cnt = b & 15;
	else if (b >= 0x90 && b <= 0x9f)
		kind = 1, cnt = b & 15;
	else if (b >= 0xa0 && b <= 0xbf)
		fixed = b & 31;
	else if (b == 0xcc || b == 0xd0)
		fixed = 1;
	else if (b == 0xcd || b == 0xd1)
		fixed = 2;
	else if (b == 0xca || b == 0xce || b == 0xd2)
		fixed = 4;
	else if (b == 0xcb || b == 0xcf || b == 0xd3)
		fixed = 8;
	else if (b == 0xd9 || b == 0xc4)
		lenbytes = 1;
	else if (b == 0xda || b == 0xc5)
		lenbytes = 2;
	else if (b == 0xdb || b == 0xc6)
		lenbytes = 4;
	else if (b == 0xdc || b == 0xdd)
		kind = 1, lenbytes = b == 0xdc ? 2 : 4;
	else if (b == 0xde || b == 0xdf)
		kind = 2, lenbytes = b == 0xde ? 2 : 4;
	else
		return 0;     /* ext types: not used by np */
	if (lenbytes) {
		if (n < 1 + (size_t)lenbytes)
			return 0;
		hdr = 1 + lenbytes;
		if (kind)
			cnt = fz_be(p + 1, lenbytes);
		else
			fixed = fz_be(p + 1, lenbytes);
	}
	if (!kind)
		return fixed <= n - hdr ? hdr + fixed : 0;
	if (kind == 2)
		cnt *= 2;
	if (cnt > n - hdr)
		return 0;
	size_t off = hdr;
	for (uint64_t i = 0; i < cnt; i++) {
		size_t l = fz_len(p + off, n - off, depth + 1);
		if (!l)
			return 0;
		off += l;
	}
	return off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	int guard = 0;
	size_t start = off;
	while (guard++ < 64 && off < size && fz_len(data + off, size - off, 0) &&
	       msgpack_unpack_next(&u, (const char *)data, size, &off) == MSGPACK_UNPACK_SUCCESS) {
		size_t olen = off - start;
		if (np_mp_walk(data + start, size - start, NULL) != olen)
			abort();    /* the reader's walk delimits what msgpack-c decodes */
		start = off;
		if (u.data.type != MSGPACK_OBJECT_MAP)
			continue;
		fz_raw_vs_tree(&u.data, data + off - olen, olen);
		struct pktcols_ev *ev = NULL;
		size_t n = 0;
		if (pktcols_unpack_events(&u.data, &ev, &n) == 0) {
			fz_roundtrip(ev, n);
			free(ev);
		}
		struct pktcols_flow *fl = NULL;
		if (pktcols_unpack_flows(&u.data, &fl, &n) == 0)
			free(fl);
	}
	msgpack_unpacked_destroy(&u);
	return 0;
}
