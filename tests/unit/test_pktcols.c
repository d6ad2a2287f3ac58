/* Packet-path columns and the packet-ID rules (common/pktcols.c,
 * bpf/pktpath.h): encode/decode round trip with per-flow deltas across
 * sequence wrap, malformed bodies refused, the GSO coverage rule, and IDs
 * that differ for a retransmission but not across NAT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "tap.h"
#include "npmsg.h"
#include "pktcols.h"
#include "pktpath.h"

static msgpack_sbuffer pack(const struct pktcols_ev *ev, size_t n, const char *drop)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (!drop) {
		msgpack_pack_map(&pk, PKTCOLS_EVENT_KEYS);
		pktcols_pack_events(&pk, ev, n);
		return sb;
	}
	/* re-pack without one key: decode a full body, copy all others */
	msgpack_sbuffer full = pack(ev, n, NULL);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	msgpack_unpack_next(&u, full.data, full.size, NULL);
	msgpack_pack_map(&pk, PKTCOLS_EVENT_KEYS - 1);
	for (uint32_t i = 0; i < u.data.via.map.size; i++) {
		const msgpack_object_kv *kv = &u.data.via.map.ptr[i];
		if (kv->key.via.str.size == strlen(drop) && !memcmp(kv->key.via.str.ptr, drop, strlen(drop)))
			continue;
		msgpack_pack_object(&pk, kv->key);
		msgpack_pack_object(&pk, kv->val);
	}
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&full);
	return sb;
}

static int unpack(msgpack_sbuffer *sb, struct pktcols_ev **out, size_t *n)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	int rc = -1;
	if (msgpack_unpack_next(&u, sb->data, sb->size, NULL) == MSGPACK_UNPACK_SUCCESS)
		rc = pktcols_unpack_events(&u.data, out, n);
	msgpack_unpacked_destroy(&u);
	return rc;
}

/* The pull parser (pktcols_raw_*) against npmsg's getters on the tree of
 * the same bytes: every integer width and sign, a wrong-typed element, a
 * duplicate key (the first counts), a non-string key, and keys past the
 * PKTCOLS_RAW_KEYS indexed ones. */
static void test_raw_columns(void)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	enum { NFILL = PKTCOLS_RAW_KEYS + 3 };
	msgpack_pack_map(&pk, 8 + NFILL + 2);
	np_pack_str(&pk, "ints");            /* every width, both signs */
	msgpack_pack_array(&pk, 14);
	msgpack_pack_fix_uint8(&pk, 200); msgpack_pack_fix_uint16(&pk, 7);
	msgpack_pack_fix_uint32(&pk, 70000); msgpack_pack_fix_uint64(&pk, UINT64_MAX);
	msgpack_pack_fix_int8(&pk, 5); msgpack_pack_fix_int16(&pk, -300);
	msgpack_pack_fix_int32(&pk, -70000); msgpack_pack_fix_int64(&pk, -5000000000ll);
	msgpack_pack_fix_int64(&pk, 5000000000ll); msgpack_pack_int(&pk, -1);
	msgpack_pack_int(&pk, -32); msgpack_pack_int(&pk, 127); msgpack_pack_fix_int8(&pk, -128);
	msgpack_pack_fix_uint8(&pk, 0);
	np_pack_str(&pk, "pos");             /* non-negative in signed and unsigned forms */
	msgpack_pack_array(&pk, 5);
	msgpack_pack_fix_int32(&pk, 9); msgpack_pack_uint64(&pk, 1ull << 40); msgpack_pack_int(&pk, 3);
	msgpack_pack_fix_int64(&pk, INT64_MAX); msgpack_pack_fix_uint64(&pk, 1ull << 63);
	np_pack_str(&pk, "delta");
	msgpack_pack_array(&pk, 4);
	msgpack_pack_uint64(&pk, 1000000000000ull); msgpack_pack_int(&pk, -5);
	msgpack_pack_int(&pk, 70000); msgpack_pack_fix_int64(&pk, -1);
	np_pack_str(&pk, "badtype");         /* a float inside */
	msgpack_pack_array(&pk, 2);
	msgpack_pack_int(&pk, 1); msgpack_pack_double(&pk, 2.0);
	np_pack_str(&pk, "negfirst");        /* a delta column may not start negative */
	msgpack_pack_array(&pk, 2);
	msgpack_pack_int(&pk, -1); msgpack_pack_int(&pk, 1);
	np_pack_kv_u64(&pk, "n", 77);
	msgpack_pack_int(&pk, 12);           /* a non-string key */
	msgpack_pack_int(&pk, 13);
	np_pack_kv_u64(&pk, "n", 99);        /* duplicate: ignored */
	for (int i = 0; i < NFILL; i++) {
		char k[16];
		snprintf(k, sizeof(k), "fill%d", i);
		np_pack_kv_str(&pk, k, "x");
	}
	np_pack_kv_i64(&pk, "late", -2);     /* past the indexed pairs */
	np_pack_str(&pk, "late_col");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_int(&pk, 4); msgpack_pack_int(&pk, 5);

	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	CHECK(msgpack_unpack_next(&u, sb.data, sb.size, NULL) == MSGPACK_UNPACK_SUCCESS, "tree");
	const msgpack_object *t = &u.data;
	struct pktcols_raw m;
	CHECK(pktcols_raw_open(&m, sb.data, sb.size) == 0, "raw open");
	CHECK(m.n == PKTCOLS_RAW_KEYS && m.more == 8 + NFILL + 2 - PKTCOLS_RAW_KEYS, "indexed %u", m.n);

	static const char *const keys[] = { "ints", "pos", "delta", "badtype", "negfirst", "n",
		"late", "late_col", "fill0", "missing" };
	int agree = 0, total = 0;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		size_t n1 = 0, n2 = 0;
		uint64_t *a = np_get_u64_array(t, keys[k], &n1);
		uint64_t *b = pktcols_raw_u64_array(&m, keys[k], &n2);
		agree += (!a == !b) && n1 == n2 && (!a || !memcmp(a, b, n1 * 8));
		free(a); free(b);
		a = np_get_u64_delta(t, keys[k], &n1);
		b = pktcols_raw_u64_delta(&m, keys[k], &n2);
		agree += (!a == !b) && n1 == n2 && (!a || !memcmp(a, b, n1 * 8));
		free(a); free(b);
		uint64_t v1 = 1, v2 = 2;
		int r1 = np_get_u64(t, keys[k], &v1), r2 = pktcols_raw_u64(&m, keys[k], &v2);
		agree += r1 == r2 && (r1 || v1 == v2);
		total += 3;
	}
	CHECK_EQ_U(agree, total);
	uint64_t v;
	CHECK(pktcols_raw_u64(&m, "n", &v) == 0 && v == 77, "first of a duplicate key");
	size_t n;
	uint64_t *d = pktcols_raw_u64_delta(&m, "delta", &n);
	CHECK(d && n == 4 && d[1] == 999999999995ull && d[3] == 1000000069994ull, "delta values");
	free(d);
	uint32_t *w = pktcols_raw_u32_mod(&m, "ints", 14);
	CHECK(w && w[3] == UINT32_MAX && w[5] == (uint32_t)-300 && w[7] == (uint32_t)-5000000000ll,
	      "modulo 2^32");
	free(w);
	CHECK(pktcols_raw_u32_mod(&m, "ints", 13) == NULL, "u32 column of another length refused");
	CHECK(pktcols_raw_u32_mod(&m, "badtype", 2) == NULL, "u32 column with a float refused");
	w = pktcols_raw_u32_mod(&m, "late_col", 2);
	CHECK(w && w[0] == 4 && w[1] == 5, "column past the index found");
	free(w);

	/* the same columns read piece by piece (pktcols_col_*), any piece size */
	int same = 0, tries = 0;
	for (size_t piece = 1; piece <= 14; piece++) {
		static const char *const ck[] = { "ints", "pos", "delta", "negfirst", "badtype" };
		for (size_t k = 0; k < 5; k++) {
			for (int how = 0; how < 3; how++) {
				size_t nw = 0;
				uint64_t cnt, *whole = how == 0 ? pktcols_raw_u64_array(&m, ck[k], &nw)
					: how == 1 ? pktcols_raw_u64_delta(&m, ck[k], &nw) : NULL;
				uint32_t *w32 = how == 2 ? pktcols_raw_u32_mod(&m, ck[k], ck[k][0] == 'i' ? 14
					: ck[k][0] == 'p' ? 5 : ck[k][0] == 'd' ? 4 : 2) : NULL;
				struct pktcols_col c;
				uint64_t v64[14];
				uint32_t v32[14];
				bool ok = pktcols_col_open(&c, &m, ck[k], &cnt) == 0;
				for (size_t at = 0; ok && at < cnt; at += piece) {
					size_t n1 = cnt - at < piece ? cnt - at : piece;
					ok = (how == 0 ? pktcols_col_u64(&c, v64 + at, n1)
					      : how == 1 ? pktcols_col_delta(&c, v64 + at, n1)
					      : pktcols_col_u32(&c, v32 + at, n1)) == 0;
				}
				bool wok = how == 2 ? w32 != NULL : whole != NULL;
				same += ok == wok && (!ok || (how == 2 ? !memcmp(v32, w32, cnt * 4)
								: !memcmp(v64, whole, cnt * 8)));
				tries++;
				free(whole);
				free(w32);
			}
		}
	}
	CHECK_EQ_U(same, tries);
	struct pktcols_col c;
	CHECK(pktcols_col_open(&c, &m, "delta", &v) == 0 && pktcols_col_u64(&c, (uint64_t[5]){ 0 }, 5) != 0,
	      "more values asked than the column holds refused");

	/* every cut of the body: never reads past it, refuses what is short */
	int refused = 0;
	for (size_t cut = 0; cut < sb.size; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		memcpy(copy, sb.data, cut);
		struct pktcols_raw c;
		if (pktcols_raw_open(&c, copy, cut) == 0) {
			free(pktcols_raw_u64_array(&c, "late_col", &n));
			free(pktcols_raw_u32_mod(&c, "ints", 14));
		} else
			refused++;
		free(copy);
	}
	CHECK(refused > 0, "cut bodies refused (%d)", refused);
	/* a count larger than the bytes left is refused before any allocation */
	static const uint8_t huge[] = { 0x81, 0xa1, 'x', 0xdd, 0x7f, 0xff, 0xff, 0xff, 0x00 };
	struct pktcols_raw h;
	CHECK(pktcols_raw_open(&h, huge, sizeof(huge)) != 0, "claimed 2^31 elements refused");
	CHECK(pktcols_raw_open(&h, "\x91\x00", 2) != 0, "not a map refused");
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

/* One column of n integers of every form the recorder writes (mostly
 * fixints and 2-5 byte ints, now and then 9 bytes), `spoil` at index bad:
 * 'f' a float, '-' a negative integer. */
static void fc_column(msgpack_packer *pk, const char *key, size_t n, unsigned seed, char spoil, size_t bad)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		unsigned r = seed >> 16;
		if (i == bad && spoil == 'f')
			msgpack_pack_double(pk, 1.5);
		else if (i == bad && spoil == '-')
			msgpack_pack_int(pk, -(int)(r % 70000) - 1);
		else if (r % 97 == 0)
			msgpack_pack_fix_uint64(pk, 1ull << 40 | r);
		else if (r % 5 == 0)
			msgpack_pack_fix_int32(pk, (int32_t)(r % 200000));      /* signed form, >= 0 */
		else if (r % 3 == 0)
			msgpack_pack_uint32(pk, r * 977u);
		else
			msgpack_pack_uint32(pk, r % 128);
	}
}

/* pktcols_col_u32_3 and pktcols_col_delta_u64 give what the single
 * column calls give: the values, the refusal and which column refused. */
static void test_fused_columns(void)
{
	static const char spoils[] = { 0, 'f', '-' };
	static const size_t pieces[] = { 1, 7, 512, 3000 };
	enum { N = 3000 };
	static uint64_t a64[2][N], b64[2][N];
	static uint32_t a32[3][N], b32[3][N];
	int same = 0, tries = 0, refusals = 0;
	for (int col = 0; col < 3; col++)
		for (size_t sp = 0; sp < sizeof(spoils); sp++)
			for (size_t bad = 0; bad < N; bad += 1499) {
				msgpack_sbuffer sb;
				msgpack_sbuffer_init(&sb);
				msgpack_packer pk;
				msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
				msgpack_pack_map(&pk, 5);
				static const char *const k[] = { "c0", "c1", "c2" };
				for (int j = 0; j < 3; j++)
					fc_column(&pk, k[j], j == 2 && bad == 0 ? N - 1 : N, 7u + (unsigned)j,
						  j == col ? spoils[sp] : 0, bad + (size_t)j);
				fc_column(&pk, "d", N, 3, col == 0 ? spoils[sp] : 0, bad);
				fc_column(&pk, "u", N, 5, col == 1 ? spoils[sp] : 0, bad + 1);
				struct pktcols_raw m;
				CHECK(pktcols_raw_open(&m, sb.data, sb.size) == 0, "fused: raw open");
				for (size_t pi = 0; pi < sizeof(pieces) / sizeof(pieces[0]); pi++) {
					size_t piece = pieces[pi];
					struct pktcols_col f[3], g[3], fd, fu, gd, gu;
					uint64_t n;
					for (int j = 0; j < 3; j++) {
						pktcols_col_open(&f[j], &m, k[j], &n);
						g[j] = f[j];
					}
					pktcols_col_open(&fd, &m, "d", &n);
					pktcols_col_open(&fu, &m, "u", &n);
					gd = fd, gu = fu;
					int rf = 0, rg = 0, jf = -1, jg = -1, rf2 = 0, rg2 = 0, jf2 = -1, jg2 = -1;
					for (size_t at = 0; at < N && !rf && !rg; at += piece) {
						size_t kk = N - at < piece ? N - at : piece;
						uint32_t *const o[3] = { a32[0] + at, a32[1] + at, a32[2] + at };
						rf = pktcols_col_u32_3(f, o, kk, &jf);
						for (int j = 0; j < 3 && !rg; j++)
							if ((rg = pktcols_col_u32(&g[j], b32[j] + at, kk)))
								jg = j;
					}
					for (size_t at = 0; at < N && !rf2 && !rg2; at += piece) {
						size_t kk = N - at < piece ? N - at : piece;
						rf2 = pktcols_col_delta_u64(&fd, &fu, a64[0] + at, a64[1] + at, kk, &jf2);
						if ((rg2 = pktcols_col_delta(&gd, b64[0] + at, kk)))
							jg2 = 0;
						else if ((rg2 = pktcols_col_u64(&gu, b64[1] + at, kk)))
							jg2 = 1;
					}
					refusals += (rf != 0) + (rf2 != 0);
					same += rf == rg && jf == jg && (rf || !memcmp(a32, b32, sizeof(a32)));
					same += rf2 == rg2 && jf2 == jg2 && (rf2 || !memcmp(a64, b64, sizeof(a64)));
					tries += 2;
				}
				msgpack_sbuffer_destroy(&sb);
			}
	CHECK_EQ_U(same, tries);
	CHECK(refusals >= 30, "fused: refusals seen (%d)", refusals);
}

/* The fast-form runs (pktcols_col_fast_*, pktcols_col_fixints), each
 * followed by a few values of the checked call as npanalyze does, give
 * what the checked call gives over the whole column: the values, and a
 * refusal at the same place. Columns of every form (fc_column), with
 * negative values (the signed forms the fast runs stop at or take). */
static int fast_vs_checked(const struct pktcols_raw *m, const char *key, int kind, size_t n)
{
	static uint64_t a64[4000], b64[4000];
	static uint32_t a32[4000], b32[4000];
	struct pktcols_col f, g;
	uint64_t cnt;
	if (pktcols_col_open(&f, m, key, &cnt) || cnt != n || n > 4000)
		return 0;
	g = f;
	int rg = kind == 0 ? pktcols_col_delta(&g, b64, n) : kind == 2 ? pktcols_col_u32(&g, b32, n)
	       : pktcols_col_u64(&g, b64, n);
	size_t at = 0;
	int rf = 0;
	while (at < n && !rf) {
		size_t k = n - at, got;
		if (kind == 3) {          /* fixints, read in place */
			got = pktcols_col_fixints(&f, k);
			for (size_t i = 0; i < got; i++)
				a64[at + i] = f.p[i];
			pktcols_col_skip(&f, got);
		} else if (kind == 1) {
			got = pktcols_col_fast_u32(&f, a32, k);
			for (size_t i = 0; i < got; i++)
				a64[at + i] = a32[i];
		} else
			got = kind == 0 ? pktcols_col_fast_delta(&f, a64 + at, k)
			    : pktcols_col_fast_i32(&f, a32 + at, k);
		at += got;
		k = n - at < 3 ? n - at : 3;
		if (k)
			rf = kind == 0 ? pktcols_col_delta(&f, a64 + at, k)
			   : kind == 2 ? pktcols_col_u32(&f, a32 + at, k) : pktcols_col_u64(&f, a64 + at, k);
		at += k;
	}
	if (kind == 1 || kind == 3) {     /* the u64 semantics, as 32 bits (slen) or bytes */
		for (size_t i = 0; i < n; i++)
			b64[i] = kind == 1 ? (uint32_t)b64[i] : b64[i];
		for (size_t i = 0; i < n && kind == 1; i++)
			a64[i] = (uint32_t)a64[i];
	}
	if ((rf != 0) != (rg != 0))
		return 0;
	if (rg)
		return 1;
	return kind == 2 ? !memcmp(a32, b32, n * sizeof(*a32)) : !memcmp(a64, b64, n * sizeof(*a64));
}

/* The fused runs give what the single-column runs give on the same
 * column (cursors on one key stop at the same row). */
static int fused_vs_single(const struct pktcols_raw *m, const char *key, size_t n)
{
	static uint64_t d1[4000], d2[4000];
	static uint32_t u1[4000], u2[4000], w[3][4000], x[3][4000];
	struct pktcols_col a, b, s1, s2, c3[3], t3;
	uint64_t cnt;
	if (pktcols_col_open(&a, m, key, &cnt) || n > 4000)
		return 0;
	b = s1 = s2 = t3 = a;
	c3[0] = c3[1] = c3[2] = a;
	size_t k1 = pktcols_col_fast_delta_u32(&a, &b, d1, u1, n);
	size_t kd = pktcols_col_fast_delta(&s1, d2, n), ku = pktcols_col_fast_u32(&s2, u2, n);
	size_t l = kd < ku ? kd : ku;
	uint32_t *const o[3] = { w[0], w[1], w[2] };
	size_t k3 = pktcols_col_fast_i32_3(c3, o, n), ki = pktcols_col_fast_i32(&t3, x[0], n);
	return k1 == l && !memcmp(d1, d2, l * 8) && !memcmp(u1, u2, l * 4) && a.i == l && b.i == l &&
	       k3 == ki && c3[2].p == t3.p && !memcmp(w[0], x[0], ki * 4) && !memcmp(w[1], x[0], ki * 4) &&
	       !memcmp(w[2], x[0], ki * 4);
}

static void test_fast_columns(void)
{
	static const char spoils[] = { 0, 'f', '-' };
	enum { N = 3000 };
	int same = 0, tries = 0;
	for (size_t sp = 0; sp < sizeof(spoils); sp++)
		for (size_t bad = 0; bad < N; bad += 997) {
			msgpack_sbuffer sb;
			msgpack_sbuffer_init(&sb);
			msgpack_packer pk;
			msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
			msgpack_pack_map(&pk, 3);
			fc_column(&pk, "c", N, 11u + (unsigned)bad, spoils[sp], bad);
			np_pack_str(&pk, "s");         /* negative values of every width */
			msgpack_pack_array(&pk, N);
			for (int i = 0; i < N; i++) {
				static const int64_t v[] = { -1, -32, -33, -200, -40000, -3000000000ll,
							     5, 300, 70000, 1ll << 40, -(1ll << 40) };
				msgpack_pack_int64(&pk, i == (int)bad && spoils[sp] == 'f' ? 0 : v[(i * 7 + (int)bad) % 11]);
			}
			np_pack_str(&pk, "x");         /* fixints with a few others */
			msgpack_pack_array(&pk, N);
			for (int i = 0; i < N; i++)
				msgpack_pack_int(&pk, i % 401 == 400 ? 1000 : i % 503 == 502 ? -3 : i % 128);
			struct pktcols_raw m;
			CHECK(pktcols_raw_open(&m, sb.data, sb.size) == 0, "fast: raw open");
			static const char *const keys[] = { "c", "s", "x" };
			for (int key = 0; key < 3; key++)
				for (int kind = 0; kind < 4; kind++) {
					same += fast_vs_checked(&m, keys[key], kind, N);
					tries++;
				}
			for (int key = 0; key < 3; key++) {
				same += fused_vs_single(&m, keys[key], N);
				tries++;
			}
			msgpack_sbuffer_destroy(&sb);
		}
	CHECK_EQ_U(same, tries);
}

int main(void)
{
	enum { N = 300 };
	struct pktcols_ev ev[N];
	memset(ev, 0, sizeof(ev));
	for (int i = 0; i < N; i++) {
		struct pktcols_ev *e = &ev[i];
		e->ts = 1000000000ull + (uint64_t)i * 1700;
		e->flow = i % 3;
		e->seq = 4294900000u + (uint32_t)(i / 3) * 1448;     /* wraps past 2^32 */
		e->end_seq = e->seq + (i % 5 ? 1448 : 0);
		e->ack = 77u + (uint32_t)(i % 3) * 1000000000u;
		e->tsval = 5000 + i / 30;
		e->ipid = (uint16_t)(65500 + i);                      /* wraps past 2^16 */
		e->hook = 1 + i % 12;
		e->doff = 8;
		e->tcpflags = 0x10;
		e->len = 1514;
		e->gso = i % 7 ? 0 : 1448;
		e->cpu = i & 1;
	}
	msgpack_sbuffer sb = pack(ev, N, NULL);
	struct pktcols_ev *out = NULL;
	size_t n = 0;
	CHECK(unpack(&sb, &out, &n) == 0, "decode");
	CHECK_EQ_U(n, N);
	int same = 0;
	for (size_t i = 0; out && i < n; i++)
		same += !memcmp(&ev[i], &out[i], sizeof(ev[i]));
	CHECK_EQ_U(same, N);
	CHECK(sb.size < (size_t)N * 40, "columnar body %zu bytes for %d events", sb.size, N);
	free(out);
	msgpack_sbuffer_destroy(&sb);

	static const char *const cols[] = { "ts_d", "hook", "seq_fd", "ipid_fd", "slen" };
	for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
		msgpack_sbuffer b = pack(ev, N, cols[k]);
		out = NULL;
		CHECK(unpack(&b, &out, &n) != 0 && out == NULL, "body without %s refused", cols[k]);
		msgpack_sbuffer_destroy(&b);
	}

	/* GSO rule: a 10-segment super-packet and its segments. */
	struct pktcols_ev s = { .seq = 4294960000u, .ack = 9, .tsval = 42, .doff = 8, .ipid = 65530,
				.gso = 1448, .tcpflags = 0x18 };
	s.end_seq = s.seq + 10 * 1448;
	int covered = 0, idsame = 0;
	for (uint32_t k = 0; k < 10; k++) {
		struct pktcols_ev r = s;
		r.seq = s.seq + k * 1448;
		r.end_seq = r.seq + 1448;
		r.ipid = (uint16_t)(s.ipid + k);
		r.gso = 0;
		r.tcpflags = k == 9 ? 0x18 : 0x10;
		covered += pktcols_covers(&s, &r);
		struct pktcols_ev v = s;
		v.seq = r.seq;
		v.ipid = r.ipid;
		idsame += pktcols_id(&v) == pktcols_id(&r);
	}
	CHECK_EQ_U(covered, 10);
	CHECK_EQ_U(idsame, 10);
	struct pktcols_ev first = s;
	first.end_seq = first.seq + 1448;
	first.gso = 0;
	CHECK(pktcols_id(&first) == pktcols_id(&s), "super-packet ID = first segment's ID");
	struct pktcols_ev rx = first;
	rx.ipid = (uint16_t)(s.ipid + 40);           /* a retransmission of segment 0 */
	CHECK(!pktcols_covers(&s, &rx), "retransmission not covered by the original");
	CHECK(pktcols_id(&rx) != pktcols_id(&first), "retransmission has another ID");
	struct pktcols_ev other = s;
	other.seq += 1448 * 3 + 100;                 /* not on a segment boundary */
	other.end_seq = other.seq + 1448;
	other.ipid = (uint16_t)(s.ipid + 3);
	CHECK(!pktcols_covers(&s, &other), "misaligned segment refused");
	struct pktcols_ev ack = first;
	ack.ack++;
	CHECK(!pktcols_covers(&s, &ack), "other ack refused");
	CHECK(pktcols_hook_name(PK_HOOK_DEV_XMIT) && !strcmp(pktcols_hook_name(PK_HOOK_DEV_XMIT), "dev_xmit"),
	      "hook names");
	CHECK(pktcols_hook_name(200) == NULL, "unknown hook");
	test_raw_columns();
	test_fused_columns();
	test_fast_columns();
	return tap_done();
}
