/* npmutate SEED COUNT OUTDIR FILE...: structure-aware mutants of np files
 * for the process-level fuzz of npanalyze / npreport (tests/fuzz/procfuzz.sh).
 *
 * Each mutant OUTDIR/mut-SEED+k.EXT is one of the input files with its
 * chunks decompressed, the MessagePack inside mutated (objects replaced by
 * values of another type, taken from elsewhere in the file, or edge values;
 * arrays shortened or lengthened; records dropped, duplicated, retyped or
 * spliced in from another input; keys renamed; bytes flipped), then framed
 * again with valid zstd, lengths and CRCs, so that the mutations reach the
 * record decoders instead of dying at a checksum. A few mutants also get a
 * damaged zstd frame or chunk list with the CRCs fixed. Mutant k depends
 * only on SEED + k and the inputs: a crash is reproduced by its seed. */
#include "container.h"
#include "npmsg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* ---- random ---- */

static uint64_t mu_state;
static uint64_t mu_rand(void)
{
	uint64_t z = (mu_state += 0x9e3779b97f4a7c15ull);     /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static size_t mu_below(size_t n) { return n ? (size_t)(mu_rand() % n) : 0; }

/* ---- byte buffers ---- */

struct mu_buf {
	uint8_t *d;
	size_t len, cap;
};

static void mu_put(struct mu_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *d = realloc(b->d, cap);
		if (!d) {
			fprintf(stderr, "npmutate: out of memory\n");
			exit(1);
		}
		b->d = d;
		b->cap = cap;
	}
	if (n)
		memcpy(b->d + b->len, p, n);
	b->len += n;
}

/* Replaces b[at, at+n) with p[0, pn). */
static void mu_splice(struct mu_buf *b, size_t at, size_t n, const void *p, size_t pn)
{
	struct mu_buf o = { 0 };
	mu_put(&o, b->d, at);
	mu_put(&o, p, pn);
	mu_put(&o, b->d + at + n, b->len - at - n);
	free(b->d);
	*b = o;
}

static int mu_sbuf_write(void *data, const char *buf, size_t len)
{
	mu_put(data, buf, len);
	return 0;
}

/* ---- input files: header and decompressed chunk payloads ---- */

#define MU_MAX_CHUNKS 256
struct mu_file {
	uint8_t hdr[NP_FILE_HDR_LEN];
	const char *ext;
	struct mu_buf chunk[MU_MAX_CHUNKS];
	uint16_t ctype[MU_MAX_CHUNKS];
	size_t n;
};

static uint32_t mu_le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint32_t mu_be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

static int mu_load(struct mu_file *f, const char *path)
{
	FILE *fp = fopen(path, "rb");
	struct mu_buf raw = { 0 };
	uint8_t tmp[65536];
	size_t got;
	if (!fp)
		return -errno;
	while ((got = fread(tmp, 1, sizeof(tmp), fp)) > 0)
		mu_put(&raw, tmp, got);
	fclose(fp);
	memset(f, 0, sizeof(*f));
	const char *dot = strrchr(path, '.');
	f->ext = dot && !strcmp(dot, ".npa") ? "npa" : "npr";
	if (raw.len < NP_FILE_HDR_LEN) {
		free(raw.d);
		return -EINVAL;
	}
	memcpy(f->hdr, raw.d, NP_FILE_HDR_LEN);
	size_t pos = NP_FILE_HDR_LEN;
	while (pos + NP_CHUNK_HDR_LEN <= raw.len && f->n < MU_MAX_CHUNKS) {
		uint32_t clen = mu_le32(raw.d + pos + 8), ulen = mu_le32(raw.d + pos + 12);
		if (pos + NP_CHUNK_HDR_LEN + clen > raw.len || ulen > (64u << 20))
			break;
		struct mu_buf *c = &f->chunk[f->n];
		mu_put(c, NULL, 0);
		c->d = calloc(1, ulen + 1);
		c->cap = ulen + 1;
		c->len = ZSTD_decompress(c->d, ulen + 1, raw.d + pos + NP_CHUNK_HDR_LEN, clen);
		if (ZSTD_isError(c->len))
			break;
		f->ctype[f->n++] = (uint16_t)(raw.d[pos + 4] | raw.d[pos + 5] << 8);
		pos += NP_CHUNK_HDR_LEN + clen + NP_CHUNK_TRL_LEN;
	}
	free(raw.d);
	return f->n ? 0 : -EINVAL;
}

/* ---- the objects of a payload ---- */

struct mu_obj {
	size_t start, end;
	int parent, depth;
	uint8_t kind;          /* 'a' array, 'm' map, 's' scalar */
	uint32_t n;            /* elements (array) or pairs (map) */
};
#define MU_MAX_OBJS 200000
static struct mu_obj mu_objs[MU_MAX_OBJS];
static size_t mu_nobj;

/* Walks one object at b[pos] (already known well-formed); returns its end. */
static size_t mu_visit(const uint8_t *b, size_t len, size_t pos, int parent, int depth)
{
	size_t self = mu_nobj;
	size_t olen = np_mp_walk(b + pos, len - pos, NULL);
	if (!olen)
		return 0;
	if (mu_nobj < MU_MAX_OBJS)
		mu_objs[mu_nobj++] = (struct mu_obj){ pos, pos + olen, parent, depth, 's', 0 };
	else
		return pos + olen;
	uint8_t t = b[pos];
	uint64_t n = 0;
	size_t p = pos + 1;
	int kind = 0;
	if (t >= 0x80 && t <= 0x8f) { n = t & 0x0f; kind = 'm'; }
	else if (t >= 0x90 && t <= 0x9f) { n = t & 0x0f; kind = 'a'; }
	else if (t == 0xdc || t == 0xde) { n = (uint64_t)b[p] << 8 | b[p + 1]; p += 2; kind = t == 0xdc ? 'a' : 'm'; }
	else if (t == 0xdd || t == 0xdf) { n = mu_be32(b + p); p += 4; kind = t == 0xdd ? 'a' : 'm'; }
	if (!kind)
		return pos + olen;
	mu_objs[self].kind = (uint8_t)kind;
	mu_objs[self].n = (uint32_t)n;
	uint64_t elems = kind == 'm' ? 2 * n : n;
	for (uint64_t i = 0; i < elems && p; i++)
		p = mu_visit(b, len, p, (int)self, depth + 1);
	return pos + olen;
}

static void mu_index(const struct mu_buf *c)
{
	mu_nobj = 0;
	size_t pos = 0;
	while (pos < c->len) {
		size_t e = mu_visit(c->d, c->len, pos, -1, 0);
		if (!e)
			break;
		pos = e;
	}
}

/* ---- values ---- */

static const char *const mu_keys[] = {
	"n", "t0_ns", "t1_ns", "t_ns", "ts_d", "hook", "flow", "cpu", "len", "seq_fd", "conn",
	"lat", "b", "min", "max", "sum", "name", "cols", "rows", "nkey", "table", "key", "metric",
	"sketch", "v", "t_d", "host", "hostname", "probes", "clock", "mono_ns", "count", "tx_bytes",
	"idx", "saddr", "daddr", "sport", "dport", "t1", "t2", "t3", "t4", "role", "peer_id",
	"self_id", "severity", "text", "unit", "interval_ns", "start_ns", "tid", "pid", "comm",
};
#define MU_NKEYS (sizeof(mu_keys) / sizeof(mu_keys[0]))
static const uint16_t mu_types[] = { 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15, 16, 17, 18,
				     20, 21, 22, 23, 24, 25, 64, 65, 66, 67, 68, 7, 300 };

/* An edge value of a random type. */
static void mu_value(msgpack_packer *pk, int depth)
{
	static const uint64_t u[] = { 0, 1, 2, 63, 64, 127, 128, 255, 256, 3775, 3776, 65535, 65536,
		1ull << 31, 1ull << 32, (1ull << 63) - 1, 1ull << 63, UINT64_MAX, 1000000000000ull };
	static const double f[] = { 0.0, -0.0, 1.0, -1.0, 0.5, 1e308, -1e308, 5e-324, 1e-9, 1e19 };
	switch (mu_below(depth > 2 ? 9 : 12)) {
	case 0: msgpack_pack_nil(pk); break;
	case 1: mu_below(2) ? msgpack_pack_true(pk) : msgpack_pack_false(pk); break;
	case 2: msgpack_pack_uint64(pk, u[mu_below(sizeof(u) / sizeof(u[0]))]); break;
	case 3: msgpack_pack_int64(pk, -(int64_t)(mu_rand() >> mu_below(64)) - 1); break;
	case 4: msgpack_pack_double(pk, f[mu_below(sizeof(f) / sizeof(f[0]))]); break;
	case 5: msgpack_pack_double(pk, mu_below(2) ? NAN : (mu_below(2) ? INFINITY : -INFINITY)); break;
	case 6: np_pack_str(pk, mu_keys[mu_below(MU_NKEYS)]); break;
	case 7: np_pack_strn(pk, "\xed\xa0\x80\xff/\x00x", 1 + mu_below(7)); break;
	case 8: {
		size_t n = mu_below(2) ? 4 : 0;
		msgpack_pack_bin(pk, n);
		msgpack_pack_bin_body(pk, "\x0a\x00\x00\x01", n);
		break;
	}
	case 9: {
		size_t n = mu_below(6);
		msgpack_pack_array(pk, n);
		for (size_t i = 0; i < n; i++)
			mu_value(pk, depth + 1);
		break;
	}
	case 10: {
		size_t n = mu_below(4);
		msgpack_pack_map(pk, n);
		for (size_t i = 0; i < n; i++) {
			np_pack_str(pk, mu_keys[mu_below(MU_NKEYS)]);
			mu_value(pk, depth + 1);
		}
		break;
	}
	default:
		msgpack_pack_uint64(pk, mu_rand() >> mu_below(64));
		break;
	}
}

/* ---- mutations of one payload ---- */

/* Array/map header for n elements/pairs. */
static void mu_header(struct mu_buf *o, uint8_t kind, uint32_t n)
{
	msgpack_packer pk;
	msgpack_packer_init(&pk, o, mu_sbuf_write);
	if (kind == 'a')
		msgpack_pack_array(&pk, n);
	else
		msgpack_pack_map(&pk, n);
}

static bool mu_child_range(size_t parent, size_t *first, size_t *last)
{
	bool any = false;
	for (size_t i = parent + 1; i < mu_nobj && mu_objs[i].start < mu_objs[parent].end; i++) {
		if (mu_objs[i].parent != (int)parent)
			continue;
		if (!any)
			*first = i;
		*last = i;
		any = true;
	}
	return any;
}

static void mu_mutate_payload(struct mu_buf *c, const struct mu_file *files, size_t nfiles)
{
	mu_index(c);
	struct mu_buf nb = { 0 };
	msgpack_packer pk;
	msgpack_packer_init(&pk, &nb, mu_sbuf_write);
	size_t op = mu_below(10);
	if (!mu_nobj || op == 9) {                /* bytes: flip, insert, delete */
		if (!c->len) {
			mu_put(c, "\x93\x04\x01\x80", 4);
			return;
		}
		size_t at = mu_below(c->len);
		switch (mu_below(3)) {
		case 0: c->d[at] ^= (uint8_t)(1u << mu_below(8)); break;
		case 1: { uint8_t x = (uint8_t)mu_rand(); mu_splice(c, at, 0, &x, 1); break; }
		default: mu_splice(c, at, 1 + mu_below(c->len - at < 8 ? c->len - at : 8), NULL, 0); break;
		}
		return;
	}
	size_t i = mu_below(mu_nobj);
	struct mu_obj o = mu_objs[i];
	switch (op) {
	case 0: case 1: case 2:                   /* an edge value */
		mu_value(&pk, o.depth);
		break;
	case 3: case 4: {                         /* another object of this file */
		struct mu_obj s = mu_objs[mu_below(mu_nobj)];
		mu_put(&nb, c->d + s.start, s.end - s.start);
		break;
	}
	case 5: {                                 /* shorten or lengthen a container */
		size_t first = 0, last = 0;
		for (size_t k = 0; k < 32 && (mu_objs[i].kind == 's' || !mu_child_range(i, &first, &last)); k++)
			i = mu_below(mu_nobj);
		o = mu_objs[i];
		if (o.kind == 's' || !mu_child_range(i, &first, &last))
			return;
		/* the last element, or the last pair's key */
		size_t cut = last;
		if (o.kind == 'm')
			for (size_t k = first; k < last; k++)
				if (mu_objs[k].parent == (int)i)
					cut = k;
		size_t fs = mu_objs[first].start, cs = mu_objs[cut].start;
		if (mu_below(2)) {
			mu_header(&nb, o.kind, o.n + 1);
			mu_put(&nb, c->d + fs, o.end - fs);
			mu_put(&nb, c->d + cs, o.end - cs);
		} else {
			mu_header(&nb, o.kind, o.n - 1);
			mu_put(&nb, c->d + fs, cs - fs);
		}
		break;
	}
	case 6: {                                 /* a record: drop, duplicate, retype */
		size_t r = i, first, last;
		while (mu_objs[r].parent >= 0)
			r = (size_t)mu_objs[r].parent;
		o = mu_objs[r];
		size_t what = mu_below(3);
		if (what == 1) {
			mu_put(&nb, c->d + o.start, o.end - o.start);
			mu_put(&nb, c->d + o.start, o.end - o.start);
		} else if (what == 2 && o.kind == 'a' && mu_child_range(r, &first, &last)) {
			mu_put(&nb, c->d + o.start, mu_objs[first].start - o.start);
			msgpack_pack_uint16(&pk, mu_types[mu_below(sizeof(mu_types) / sizeof(mu_types[0]))]);
			mu_put(&nb, c->d + mu_objs[first].end, o.end - mu_objs[first].end);
		} else if (what == 2) {
			mu_put(&nb, c->d + o.start, o.end - o.start);
		}
		break;
	}
	case 7: {                                 /* a record of another input file */
		const struct mu_file *f = &files[mu_below(nfiles)];
		const struct mu_buf *src = &f->chunk[mu_below(f->n)];
		size_t l = src->len ? np_mp_walk(src->d, src->len, NULL) : 0;
		if (l)
			mu_put(&nb, src->d, l);
		/* insert before the record holding object i */
		size_t r = i;
		while (mu_objs[r].parent >= 0)
			r = (size_t)mu_objs[r].parent;
		mu_splice(c, mu_objs[r].start, 0, nb.d, nb.len);
		free(nb.d);
		return;
	}
	default:                                  /* a map key renamed */
		if (o.parent >= 0 && mu_objs[o.parent].kind == 'm')
			np_pack_str(&pk, mu_keys[mu_below(MU_NKEYS)]);
		else
			mu_value(&pk, o.depth);
		break;
	}
	mu_splice(c, o.start, o.end - o.start, nb.d, nb.len);
	free(nb.d);
}

/* ---- mutations of a whole file ---- */

/* Type id of the record at top-level object r, -1 if it has none. */
static int mu_rec_type(const struct mu_buf *c, size_t r)
{
	size_t first, last;
	if (mu_objs[r].kind != 'a' || !mu_child_range(r, &first, &last))
		return -1;
	const uint8_t *p = c->d + mu_objs[first].start;
	if (p[0] <= 0x7f)
		return p[0];
	if (p[0] == 0xcc)
		return p[1];
	if (p[0] == 0xcd)
		return p[1] << 8 | p[2];
	return -1;
}

/* Keeps (keep = true) or drops the records whose type is in types[]: files
 * with "drops but no flows", "a header and nothing else", ... */
static void mu_filter_types(struct mu_buf *c, const int *types, size_t ntypes, bool keep)
{
	struct mu_buf o = { 0 };
	mu_index(c);
	for (size_t i = 0; i < mu_nobj; i++) {
		if (mu_objs[i].parent >= 0)
			continue;
		int t = mu_rec_type(c, i);
		bool in = false;
		for (size_t k = 0; k < ntypes; k++)
			in |= t == types[k];
		if (in == keep)
			mu_put(&o, c->d + mu_objs[i].start, mu_objs[i].end - mu_objs[i].start);
	}
	free(c->d);
	*c = o;
}

/* One of the distinct record types of the file, uniformly (or -1). */
static int mu_some_type(struct mu_buf *ch, size_t n)
{
	bool seen[65536] = { false };
	int types[256];
	size_t nt = 0;
	for (size_t k = 0; k < n; k++) {
		mu_index(&ch[k]);
		for (size_t i = 0; i < mu_nobj; i++) {
			int t = mu_objs[i].parent < 0 ? mu_rec_type(&ch[k], i) : -1;
			if (t >= 0 && !seen[t] && nt < 256) {
				seen[t] = true;
				types[nt++] = t;
			}
		}
	}
	return nt ? types[mu_below(nt)] : -1;
}

static void mu_mutate_file(struct mu_buf *ch, size_t n)
{
	size_t op = mu_below(10);
	if (op >= 3)
		return;
	int types[4];
	size_t nt = op == 0 ? 1 : 1 + mu_below(3);
	for (size_t k = 0; k < nt; k++)
		types[k] = mu_some_type(ch, n);
	if (op == 2)
		types[nt++] = 1;                  /* keep the HEADER with them */
	for (size_t k = 0; k < n; k++)
		mu_filter_types(&ch[k], types, nt, op == 2);
}

/* ---- output ---- */

static void mu_le(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }

/* Frames payload as a chunk; damage_zstd flips a byte of the compressed
 * frame and fixes the CRCs, so the zstd decoder sees it. */
static void mu_write_chunk(FILE *fp, uint16_t type, const struct mu_buf *payload, bool damage_zstd)
{
	size_t cap = ZSTD_compressBound(payload->len);
	uint8_t *c = malloc(NP_CHUNK_HDR_LEN + cap + NP_CHUNK_TRL_LEN);
	size_t clen = ZSTD_compress(c + NP_CHUNK_HDR_LEN, cap, payload->d ? payload->d : (const void *)"", payload->len, 1);
	if (ZSTD_isError(clen)) {
		free(c);
		return;
	}
	uint32_t ulen = (uint32_t)payload->len;
	if (damage_zstd) {
		if (mu_below(4) == 0)
			ulen += (uint32_t)mu_below(3) - 1;      /* a wrong ulen, CRC fixed */
		else
			c[NP_CHUNK_HDR_LEN + 4 + mu_below(clen > 4 ? clen - 4 : 1)] ^= (uint8_t)(1u << mu_below(8));
	}
	memcpy(c, NP_CHUNK_MAGIC, 4);
	c[4] = (uint8_t)type; c[5] = (uint8_t)(type >> 8); c[6] = c[7] = 0;
	mu_le(c + 8, (uint32_t)clen);
	mu_le(c + 12, ulen);
	mu_le(c + 16, np_crc32(c + NP_CHUNK_HDR_LEN, clen));
	mu_le(c + 20, np_crc32(c, 20));
	mu_le(c + NP_CHUNK_HDR_LEN + clen, (uint32_t)(NP_CHUNK_HDR_LEN + clen + NP_CHUNK_TRL_LEN));
	fwrite(c, 1, NP_CHUNK_HDR_LEN + clen + NP_CHUNK_TRL_LEN, fp);
	free(c);
}

static int mu_mutant(const char *dir, uint64_t seed, const struct mu_file *files, size_t nfiles)
{
	mu_state = seed * 0x2545f4914f6cdd1dull + 1;
	const struct mu_file *f = &files[mu_below(nfiles)];
	struct mu_buf ch[MU_MAX_CHUNKS];
	size_t n = f->n;
	for (size_t k = 0; k < n; k++) {
		ch[k] = (struct mu_buf){ 0 };
		mu_put(&ch[k], f->chunk[k].d, f->chunk[k].len);
	}
	mu_mutate_file(ch, n);                    /* 30 %: whole record types dropped or kept */
	size_t nmut = mu_below(5);
	for (size_t m = 0; m < nmut; m++)
		mu_mutate_payload(&ch[mu_below(n)], files, nfiles);
	char path[4096];
	snprintf(path, sizeof(path), "%s/mut-%llu.%s", dir, (unsigned long long)seed, f->ext);
	FILE *fp = fopen(path, "wb");
	if (!fp) {
		fprintf(stderr, "npmutate: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fwrite(f->hdr, 1, NP_FILE_HDR_LEN, fp);
	size_t dz = mu_below(20) == 0 ? mu_below(n) : SIZE_MAX;      /* 5 %: zstd damage */
	size_t drop = mu_below(20) == 0 ? mu_below(n) : SIZE_MAX;    /* 5 %: a chunk dropped or doubled */
	for (size_t k = 0; k < n; k++) {
		if (k == drop && mu_below(2))
			continue;
		mu_write_chunk(fp, f->ctype[k], &ch[k], k == dz);
		if (k == drop)
			mu_write_chunk(fp, f->ctype[k], &ch[k], false);
	}
	for (size_t k = 0; k < n; k++)
		free(ch[k].d);
	return fclose(fp) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: npmutate SEED COUNT OUTDIR FILE...\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 10);
	unsigned long count = strtoul(argv[2], NULL, 10);
	size_t nfiles = (size_t)(argc - 4);
	struct mu_file *files = calloc(nfiles, sizeof(*files));
	for (size_t i = 0; i < nfiles; i++) {
		int e = mu_load(&files[i], argv[4 + i]);
		if (e) {
			fprintf(stderr, "npmutate: cannot read %s: %s\n", argv[4 + i], strerror(-e));
			return 2;
		}
	}
	for (unsigned long k = 0; k < count; k++)
		if (mu_mutant(argv[3], seed + k, files, nfiles))
			return 1;
	return 0;
}
