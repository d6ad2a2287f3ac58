/* See pktcols.h. Sequence, ack, TSval and IP ID are stored as differences to
 * the previous event of the same flow in the batch: consecutive hooks of
 * one packet give 0, consecutive segments the MSS, which zstd packs into
 * runs. */
#include "pktcols.h"

#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "npmsg.h"
#include "npwire.h"
#include "recschema.h"

_Static_assert(PKTCOLS_FLOW_KEYS == NPK_PKT_FLOWS__N, "PKT_FLOWS keys: common/recschema.h");

static const char *const pktcols_hooks[PK_HOOK_MAX] = {
	[PK_HOOK_SOCK_SEND] = "sock_send",     [PK_HOOK_DEV_QUEUE] = "dev_queue",
	[PK_HOOK_TC_EGRESS] = "tc_egress",     [PK_HOOK_QDISC_ENQ] = "qdisc_enq",
	[PK_HOOK_QDISC_DEQ] = "qdisc_deq",     [PK_HOOK_DEV_START_XMIT] = "dev_start_xmit",
	[PK_HOOK_DEV_XMIT] = "dev_xmit",       [PK_HOOK_GRO_ENTRY] = "gro_entry",
	[PK_HOOK_TC_INGRESS] = "tc_ingress",   [PK_HOOK_NETIF_RECEIVE] = "netif_receive",
	[PK_HOOK_TCP_RCV] = "tcp_rcv",         [PK_HOOK_COPY_TO_USER] = "copy_to_user",
	[PK_HOOK_AID_TX] = "aid_tx",           [PK_HOOK_AID_RX] = "aid_rx",
};

const char *pktcols_hook_name(unsigned hook)
{
	return hook < PK_HOOK_MAX ? pktcols_hooks[hook] : NULL;
}

uint32_t pktcols_id(const struct pktcols_ev *e)
{
	if (e->flags & PK_F_RANGE)
		return 0;
	if (e->uid)
		return e->uid;
	return pk_tcp_id(e->seq, e->ack, e->doff, e->tcpflags, e->tsval, e->ipid);
}

bool pktcols_covers(const struct pktcols_ev *s, const struct pktcols_ev *r)
{
	uint32_t slen = s->end_seq - s->seq, d = r->seq - s->seq, dend = r->end_seq - s->seq;
	if (s->ack != r->ack || s->tsval != r->tsval || s->doff != r->doff)
		return false;
	if (d >= slen || dend > slen || dend <= d)
		return false;
	if (s->flags & PK_F_V6)
		return true;
	uint16_t k = (uint16_t)(r->ipid - s->ipid);
	if (d == 0)
		return k == 0;
	if (s->gso)                       /* segment k starts at k * gso_size */
		return (uint32_t)k * s->gso == d;
	/* no GSO size recorded (receive-side sender event): any whole MSS */
	return k != 0 && d % k == 0 && d / k >= 64 && d / k <= 65535;
}

/* Flow-relative delta state while packing or unpacking one batch. */
struct pc_prev { uint32_t seq, ack, tsval; uint16_t ipid; };

static struct pc_prev *pc_prev_table(const struct pktcols_ev *ev, size_t n, uint32_t *nflows)
{
	uint32_t max = 0;
	for (size_t i = 0; i < n; i++)
		if (ev[i].flow + 1 > max)
			max = ev[i].flow + 1;
	*nflows = max;
	return calloc(max ? max : 1, sizeof(struct pc_prev));
}

#define PC_COL(key, expr) do {                                   \
	np_pack_str(pk, key);                                        \
	msgpack_pack_array(pk, n);                                   \
	for (size_t i = 0; i < n; i++) { const struct pktcols_ev *e = &ev[i]; (void)e; expr; } \
} while (0)

void pktcols_pack_events(msgpack_packer *pk, const struct pktcols_ev *ev, size_t n)
{
	uint32_t nflows;
	struct pc_prev *prev = pc_prev_table(ev, n, &nflows);
	PC_COL("ts_d", msgpack_pack_int64(pk, i ? (int64_t)(e->ts - ev[i - 1].ts) : (int64_t)e->ts));
	PC_COL("hook", msgpack_pack_uint32(pk, e->hook));
	PC_COL("flow", msgpack_pack_uint32(pk, e->flow));
	PC_COL("cpu", msgpack_pack_uint32(pk, e->cpu));
	PC_COL("ifindex", msgpack_pack_uint32(pk, e->ifindex));
	PC_COL("len", msgpack_pack_uint32(pk, e->len));
	PC_COL("slen", msgpack_pack_uint32(pk, e->end_seq - e->seq));
	PC_COL("tcpflags", msgpack_pack_uint32(pk, e->tcpflags));
	PC_COL("doff", msgpack_pack_uint32(pk, e->doff));
	PC_COL("evflags", msgpack_pack_uint32(pk, e->flags));
	PC_COL("uid", msgpack_pack_uint32(pk, e->uid));
	PC_COL("gso", msgpack_pack_uint32(pk, e->gso));
	/* Per-flow deltas: without the table (out of memory) they are absolute. */
	PC_COL("seq_fd", {
		uint32_t p = prev ? prev[e->flow].seq : 0;
		msgpack_pack_int32(pk, (int32_t)(e->seq - p));
		if (prev) prev[e->flow].seq = e->seq; });
	PC_COL("ack_fd", {
		uint32_t p = prev ? prev[e->flow].ack : 0;
		msgpack_pack_int32(pk, (int32_t)(e->ack - p));
		if (prev) prev[e->flow].ack = e->ack; });
	PC_COL("tsval_fd", {
		uint32_t p = prev ? prev[e->flow].tsval : 0;
		msgpack_pack_int32(pk, (int32_t)(e->tsval - p));
		if (prev) prev[e->flow].tsval = e->tsval; });
	PC_COL("ipid_fd", {
		uint16_t p = prev ? prev[e->flow].ipid : 0;
		msgpack_pack_int32(pk, (int16_t)(uint16_t)(e->ipid - p));
		if (prev) prev[e->flow].ipid = e->ipid; });
	free(prev);
}

static const msgpack_object_array *pc_col(const msgpack_object *body, const char *key, size_t n)
{
	const msgpack_object_array *a = np_get_array(body, key);
	return a && a->size == n ? a : NULL;
}

static int pc_i64(const msgpack_object_array *a, size_t i, int64_t *v)
{
	return np_obj_i64(&a->ptr[i], v);
}

int pktcols_unpack_events(const msgpack_object *body, struct pktcols_ev **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	const msgpack_object_array *ts = np_get_array(body, "ts_d");
	if (!ts)
		return -1;
	size_t n = ts->size;
	static const char *const keys[] = { "hook", "flow", "cpu", "ifindex", "len", "slen",
		"tcpflags", "doff", "evflags", "uid", "seq_fd", "ack_fd", "tsval_fd", "ipid_fd" };
	const msgpack_object_array *c[14];
	for (size_t k = 0; k < 14; k++)
		if (!(c[k] = pc_col(body, keys[k], n)))
			return -1;
	const msgpack_object_array *gso = pc_col(body, "gso", n);   /* optional */
	struct pktcols_ev *ev = calloc(n ? n : 1, sizeof(*ev));
	if (!ev)
		return -1;
	uint64_t t = 0;
	int64_t v[14];
	for (size_t i = 0; i < n; i++) {
		int64_t d;
		if (np_obj_i64(&ts->ptr[i], &d))
			goto bad;
		t = i ? t + (uint64_t)d : (uint64_t)d;
		for (size_t k = 0; k < 14; k++)
			if (pc_i64(c[k], i, &v[k]))
				goto bad;
		struct pktcols_ev *e = &ev[i];
		e->ts = t;
		e->hook = (uint8_t)v[0];
		if (v[1] < 0 || v[1] > (int64_t)n * 64 + 1000000)
			goto bad;     /* flow indices are bounded to keep prev[] small */
		e->flow = (uint32_t)v[1];
		e->cpu = (uint16_t)v[2];
		e->ifindex = (uint32_t)v[3];
		e->len = (uint32_t)v[4];
		e->tcpflags = (uint8_t)v[6];
		e->doff = (uint8_t)v[7];
		e->flags = (uint8_t)v[8];
		e->uid = (uint32_t)v[9];
		/* seq etc. hold deltas until the second pass */
		e->seq = (uint32_t)v[10];
		e->end_seq = (uint32_t)v[5];
		e->ack = (uint32_t)v[11];
		e->tsval = (uint32_t)v[12];
		e->ipid = (uint16_t)v[13];
		int64_t g;
		if (gso && np_obj_i64(&gso->ptr[i], &g) == 0)
			e->gso = (uint16_t)g;
	}
	uint32_t nflows;
	struct pc_prev *prev = pc_prev_table(ev, n, &nflows);
	if (!prev)
		goto bad;
	for (size_t i = 0; i < n; i++) {
		struct pktcols_ev *e = &ev[i];
		struct pc_prev *p = &prev[e->flow];
		p->seq += e->seq;     e->seq = p->seq;
		p->ack += e->ack;     e->ack = p->ack;
		p->tsval += e->tsval; e->tsval = p->tsval;
		p->ipid += e->ipid;   e->ipid = p->ipid;
		e->end_seq += e->seq;
	}
	free(prev);
	*out = ev;
	*nout = n;
	return 0;
bad:
	free(ev);
	return -1;
}

void pktcols_pack_flows(msgpack_packer *pk, const struct pktcols_flow *f, size_t n)
{
	np_pack_str(pk, NPK(PKT_FLOWS, IDX));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].idx);
	np_pack_str(pk, NPK(PKT_FLOWS, FAMILY));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].family);
	np_pack_str(pk, NPK(PKT_FLOWS, PROTO));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].proto);
	np_pack_str(pk, NPK(PKT_FLOWS, SADDR));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		size_t l = f[i].family == 6 ? 16 : 4;
		msgpack_pack_bin(pk, l);
		msgpack_pack_bin_body(pk, f[i].saddr, l);
	}
	np_pack_str(pk, NPK(PKT_FLOWS, DADDR));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		size_t l = f[i].family == 6 ? 16 : 4;
		msgpack_pack_bin(pk, l);
		msgpack_pack_bin_body(pk, f[i].daddr, l);
	}
	np_pack_str(pk, NPK(PKT_FLOWS, SPORT));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].sport);
	np_pack_str(pk, NPK(PKT_FLOWS, DPORT));
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].dport);
}

static int pc_bin(const msgpack_object *o, uint8_t *dst)
{
	if (o->type != MSGPACK_OBJECT_BIN || (o->via.bin.size != 4 && o->via.bin.size != 16))
		return -1;
	memcpy(dst, o->via.bin.ptr, o->via.bin.size);
	return 0;
}

int pktcols_unpack_flows(const msgpack_object *body, struct pktcols_flow **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	const msgpack_object_array *idx = np_get_array(body, "idx");
	if (!idx)
		return -1;
	size_t n = idx->size;
	const msgpack_object_array *fa = pc_col(body, "family", n), *pr = pc_col(body, "proto", n),
		*sa = pc_col(body, "saddr", n), *da = pc_col(body, "daddr", n),
		*sp = pc_col(body, "sport", n), *dp = pc_col(body, "dport", n);
	if (!fa || !pr || !sa || !da || !sp || !dp)
		return -1;
	struct pktcols_flow *f = calloc(n ? n : 1, sizeof(*f));
	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t a, b, c, d, e;
		if (np_obj_u64(&idx->ptr[i], &a) || np_obj_u64(&fa->ptr[i], &b) ||
		    np_obj_u64(&pr->ptr[i], &c) || np_obj_u64(&sp->ptr[i], &d) ||
		    np_obj_u64(&dp->ptr[i], &e) || pc_bin(&sa->ptr[i], f[i].saddr) ||
		    pc_bin(&da->ptr[i], f[i].daddr)) {
			free(f);
			return -1;
		}
		f[i].idx = (uint32_t)a;
		f[i].family = (uint8_t)b;
		f[i].proto = (uint8_t)c;
		f[i].sport = (uint16_t)d;
		f[i].dport = (uint16_t)e;
	}
	*out = f;
	*nout = n;
	return 0;
}

/* ---- pull parser over the body bytes ---- */

static uint64_t pr_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t pr_load(const uint8_t *p, size_t w)
{
	uint16_t a; uint32_t b; uint64_t c;
	switch (w) {
	case 1: return p[0];
	case 2: memcpy(&a, p, 2); return __builtin_bswap16(a);
	case 4: memcpy(&b, p, 4); return __builtin_bswap32(b);
	default: memcpy(&c, p, 8); return __builtin_bswap64(c);
	}
}

/* One integer of any width at *pp: its value as 64 bits (two's complement
 * when negative) and whether msgpack-c calls it NEGATIVE_INTEGER. 0, or -1
 * when it is not an integer or is cut short. */
static inline __attribute__((always_inline))
int pr_int(const uint8_t **pp, const uint8_t *end, uint64_t *v, bool *neg)
{
	const uint8_t *p = *pp;
	if (p >= end)
		return -1;
	uint8_t b = *p;
	if (b <= 0x7f) {
		*v = b;
		*neg = false;
		*pp = p + 1;
		return 0;
	}
	if (b >= 0xe0) {
		*v = (uint64_t)(int64_t)(int8_t)b;
		*neg = true;
		*pp = p + 1;
		return 0;
	}
	size_t w;
	uint64_t x;
	switch (b) {
	case 0xcc: case 0xcd: case 0xce: case 0xcf:
		w = (size_t)1 << (b - 0xcc);
		if ((size_t)(end - p) - 1 < w)
			return -1;
		*v = pr_load(p + 1, w);
		*neg = false;
		break;
	case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		w = (size_t)1 << (b - 0xd0);
		if ((size_t)(end - p) - 1 < w)
			return -1;
		x = pr_load(p + 1, w);
		if (w < 8 && (x >> (8 * w - 1)))
			x |= ~0ull << (8 * w);     /* sign-extend */
		*v = x;
		*neg = (int64_t)x < 0;
		break;
	default:
		return -1;
	}
	*pp = p + 1 + w;
	return 0;
}

/* Container header at *pp: element count (pairs for a map). */
static int pr_head(const uint8_t **pp, const uint8_t *end, bool map, uint64_t *n)
{
	const uint8_t *p = *pp;
	if (p >= end)
		return -1;
	uint8_t b = *p, fix = map ? 0x80 : 0x90, c16 = map ? 0xde : 0xdc;
	size_t w;
	if ((b & 0xf0) == fix) {
		*n = b & 0x0f;
		w = 0;
	} else if (b == c16 || b == c16 + 1) {
		w = b == c16 ? 2 : 4;
		if ((size_t)(end - p) - 1 < w)
			return -1;
		*n = pr_be(p + 1, w);
	} else
		return -1;
	p += 1 + w;
	/* every element takes a byte at least */
	if (*n > (uint64_t)(end - p) / (map ? 2 : 1))
		return -1;
	*pp = p;
	return 0;
}

/* A string key's bytes, or NULL (any other type). */
static const uint8_t *pr_str(const uint8_t *p, size_t len, uint32_t *slen)
{
	size_t w, n;
	*slen = 0;
	if (!len)
		return NULL;
	if (p[0] >= 0xa0 && p[0] <= 0xbf) { w = 0; n = p[0] & 0x1f; }
	else if (p[0] >= 0xd9 && p[0] <= 0xdb) {
		w = (size_t)1 << (p[0] - 0xd9);
		if (len - 1 < w)
			return NULL;
		n = (size_t)pr_be(p + 1, w);
	} else
		return NULL;
	if (len - 1 - w < n || n > UINT32_MAX)
		return NULL;
	*slen = (uint32_t)n;
	return p + 1 + w;
}

int pktcols_map_begin(struct pktcols_mapit *it, const void *map, size_t len)
{
	it->p = map;
	it->end = it->p + len;
	return pr_head(&it->p, it->end, true, &it->left);
}

int pktcols_map_next(struct pktcols_mapit *it, const uint8_t **key, size_t *klen,
		     const uint8_t **val, size_t *vlen)
{
	if (!it->left)
		return 0;
	size_t kl = np_mp_walk(it->p, (size_t)(it->end - it->p), NULL);
	if (!kl)
		return -1;
	size_t vl = np_mp_walk(it->p + kl, (size_t)(it->end - it->p) - kl, NULL);
	if (!vl)
		return -1;
	*key = it->p;
	*klen = kl;
	*val = it->p + kl;
	*vlen = vl;
	it->p += kl + vl;
	it->left--;
	return 1;
}

int pktcols_raw_open(struct pktcols_raw *m, const void *body, size_t len)
{
	struct pktcols_mapit it;
	m->n = 0;
	m->more = 0;
	if (pktcols_map_begin(&it, body, len))
		return -1;
	const uint8_t *k, *v;
	size_t kl, vl;
	while (m->n < PKTCOLS_RAW_KEYS) {
		int rc = pktcols_map_next(&it, &k, &kl, &v, &vl);
		if (rc < 0)
			return -1;
		if (rc == 0)
			break;
		m->kv[m->n].key = pr_str(k, kl, &m->kv[m->n].klen);
		m->kv[m->n].val = v;
		m->kv[m->n].vlen = vl;
		m->n++;
	}
	m->more = it.left;
	m->rest = it.p;
	m->end = it.end;
	return 0;
}

int pktcols_raw_from_record(struct pktcols_raw *m, const struct np_record *rec)
{
	if (!rec->raw)
		return -1;
	if (!rec->raw_pairs || rec->raw_npairs > PKTCOLS_RAW_KEYS)
		return pktcols_raw_open(m, rec->raw, rec->raw_len);
	m->n = rec->raw_npairs;
	m->more = 0;
	m->rest = m->end = rec->raw + rec->raw_len;
	for (uint32_t i = 0; i < m->n; i++) {
		const struct np_rawpair *p = &rec->raw_pairs[i];
		m->kv[i].key = pr_str(p->key, p->klen, &m->kv[i].klen);
		m->kv[i].val = p->val;
		m->kv[i].vlen = p->vlen;
	}
	return 0;
}

static bool pr_key_is(const uint8_t *k, uint32_t klen, const char *key, size_t len)
{
	return k && klen == len && !memcmp(k, key, len);
}

const uint8_t *pktcols_raw_get(const struct pktcols_raw *m, const char *key, size_t *vlen)
{
	size_t len = strlen(key);
	for (uint32_t i = 0; i < m->n; i++)
		if (pr_key_is(m->kv[i].key, m->kv[i].klen, key, len)) {
			*vlen = m->kv[i].vlen;
			return m->kv[i].val;
		}
	struct pktcols_mapit it = { .p = m->rest, .end = m->end, .left = m->more };
	const uint8_t *k, *v;
	size_t kl, vl;
	while (pktcols_map_next(&it, &k, &kl, &v, &vl) == 1) {
		uint32_t sl;
		const uint8_t *s = pr_str(k, kl, &sl);
		if (pr_key_is(s, sl, key, len)) {
			*vlen = vl;
			return v;
		}
	}
	return NULL;
}

int pktcols_raw_u64(const struct pktcols_raw *m, const char *key, uint64_t *out)
{
	size_t vl;
	const uint8_t *p = pktcols_raw_get(m, key, &vl);
	uint64_t v;
	bool neg;
	if (!p || pr_int(&p, p + vl, &v, &neg) || neg)
		return -1;
	*out = v;
	return 0;
}

/* The array under key: its count and first element. */
static const uint8_t *pr_array(const struct pktcols_raw *m, const char *key, uint64_t *n,
			       const uint8_t **end)
{
	size_t vl;
	const uint8_t *p = pktcols_raw_get(m, key, &vl);
	if (!p)
		return NULL;
	*end = p + vl;
	return pr_head(&p, *end, false, n) ? NULL : p;
}

/* What to make of each integer of a column. */
enum pr_col { PR_U64, PR_DELTA, PR_U32 };

int pktcols_col_open(struct pktcols_col *c, const struct pktcols_raw *m, const char *key, uint64_t *n)
{
	memset(c, 0, sizeof(*c));
	if (!(c->p = pr_array(m, key, &c->left, &c->end)))
		return -1;
	*n = c->left;
	return 0;
}

/* Per first byte: an integer whose value is in its first 5 bytes, read as
 * one big-endian word x: len bytes, value (x << sh1) >> sh2, the shift
 * arithmetic when sgn. len 0: any other byte (pr_int decides). */
struct pr_fastint { uint8_t len, sh1, sh2, sgn; };
static const struct pr_fastint pr_fast[256] = {
	[0x00 ... 0x7f] = { 1, 0, 56, 0 },  [0xe0 ... 0xff] = { 1, 0, 56, 1 },
	[0xcc] = { 2, 8, 56, 0 }, [0xcd] = { 3, 8, 48, 0 }, [0xce] = { 5, 8, 32, 0 },
	[0xd0] = { 2, 8, 56, 1 }, [0xd1] = { 3, 8, 48, 1 }, [0xd2] = { 5, 8, 32, 1 },
};

/* The next k values of a column; the loop inlined once per kind so the
 * kind is no per-value branch. The delta's sum and the index (its first
 * value must not be negative) carry over from piece to piece. */
static inline __attribute__((always_inline))
int pr_piece(struct pktcols_col *c, enum pr_col how, void *out, size_t k)
{
	if (k > c->left)
		return -1;
	const uint8_t *p = c->p, *end = c->end;
	uint64_t *o64 = out, acc = c->acc;
	uint32_t *o32 = out;
	for (size_t i = 0; i < k; i++) {
		uint64_t v;
		bool neg;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (how == PR_U32 && end - p >= 8) {
			/* the per-flow delta columns mix fixints and wider
			 * integers at random: no branch on the form */
			const struct pr_fastint *f = &pr_fast[*p];
			if (f->len) {
				uint64_t x;
				memcpy(&x, p, 8);
				x = __builtin_bswap64(x) << f->sh1;
				o32[i] = (uint32_t)(f->sgn ? (uint64_t)((int64_t)x >> f->sh2) : x >> f->sh2);
				p += f->len;
				continue;
			}
		} else if (end - p >= 8) {
			uint64_t x;
			memcpy(&x, p, 8);
			/* a run of positive fixints (most values of most columns),
			 * up to eight at once */
			uint64_t hi = x & 0x8080808080808080ull;
			size_t run = hi ? (size_t)__builtin_ctzll(hi) >> 3 : 8;
			if (run > k - i)
				run = k - i;
			for (size_t j = 0; j < run; j++) {
				if (how == PR_U64)
					o64[i + j] = p[j];
				else if (how == PR_DELTA)
					o64[i + j] = acc += p[j];
				else
					o32[i + j] = p[j];
			}
			p += run;
			i += run;
			if (i == k)
				break;
			if (run == 8 || end - p < 8) {
				i--;
				continue;
			}
			/* then one integer of another form, without branching on it */
			const struct pr_fastint *f = &pr_fast[*p];
			if (f->len) {
				memcpy(&x, p, 8);
				x = __builtin_bswap64(x) << f->sh1;
				v = f->sgn ? (uint64_t)((int64_t)x >> f->sh2) : x >> f->sh2;
				neg = (int64_t)v < 0 && f->sgn;
				p += f->len;
				goto have;
			}
		}
#endif
		if (pr_int(&p, end, &v, &neg))
			return -1;
	have:
		if (how == PR_U64) {
			if (neg)
				return -1;
			o64[i] = v;
		} else if (how == PR_DELTA) {
			if (neg && c->i + i == 0)
				return -1;
			o64[i] = acc += v;     /* acc starts at 0: the first value as is */
		} else
			o32[i] = (uint32_t)v;
	}
	c->p = p;
	c->acc = acc;
	c->i += k;
	c->left -= k;
	return 0;
}

int pktcols_col_u64(struct pktcols_col *c, uint64_t *out, size_t k)
{
	return pr_piece(c, PR_U64, out, k);
}

int pktcols_col_delta(struct pktcols_col *c, uint64_t *out, size_t k)
{
	return pr_piece(c, PR_DELTA, out, k);
}

int pktcols_col_u32(struct pktcols_col *c, uint32_t *out, size_t k)
{
	return pr_piece(c, PR_U32, out, k);
}

/* One integer of the fast forms at p (pr_fast), modulo 2^32; p moves on. */
/* An integer of the fast forms at p (pr_fast), sign- or zero-extended;
 * *neg when it is below zero. */
static inline uint64_t pr_fast_val(const uint8_t *p, const struct pr_fastint *f, bool *neg)
{
	uint64_t x;
	memcpy(&x, p, 8);
	x = __builtin_bswap64(x) << f->sh1;
	uint64_t v = f->sgn ? (uint64_t)((int64_t)x >> f->sh2) : x >> f->sh2;
	*neg = f->sgn && (int64_t)v < 0;
	return v;
}

/* The first values of a piece of several columns, decoded in one loop
 * while every column's next integer is of a fast form with 8 bytes to
 * read and its kind takes it: how many (each column moved on by that
 * many). The caller decodes the rest column by column with pr_piece, in
 * order, so results and the first refusing column are as pr_piece's. */
static size_t pr_fast_u32_3(struct pktcols_col c[3], uint32_t *const out[3], size_t k)
{
	size_t i = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint8_t *p0 = c[0].p, *p1 = c[1].p, *p2 = c[2].p;
	for (; i < k; i++) {
		if (c[0].end - p0 < 8 || c[1].end - p1 < 8 || c[2].end - p2 < 8)
			break;
		const struct pr_fastint *f0 = &pr_fast[*p0], *f1 = &pr_fast[*p1], *f2 = &pr_fast[*p2];
		if (!f0->len || !f1->len || !f2->len)
			break;
		bool neg;
		out[0][i] = (uint32_t)pr_fast_val(p0, f0, &neg);
		out[1][i] = (uint32_t)pr_fast_val(p1, f1, &neg);
		out[2][i] = (uint32_t)pr_fast_val(p2, f2, &neg);
		p0 += f0->len;
		p1 += f1->len;
		p2 += f2->len;
	}
	c[0].p = p0;
	c[1].p = p1;
	c[2].p = p2;
	for (int j = 0; j < 3; j++) {
		c[j].i += i;
		c[j].left -= i;
	}
#endif
	return i;
}

int pktcols_col_u32_3(struct pktcols_col c[3], uint32_t *const out[3], size_t k, int *bad)
{
	/* a column shorter than k: one by one, so an earlier column's
	 * error is found first */
	size_t i = k <= c[0].left && k <= c[1].left && k <= c[2].left ? pr_fast_u32_3(c, out, k) : 0;
	for (int j = 0; j < 3 && i < k; j++)
		if (pr_piece(&c[j], PR_U32, out[j] + i, k - i)) {
			*bad = j;
			return -1;
		}
	return 0;
}

/* pr_fast_u32_3 for a delta column and a u64 column. */
static size_t pr_fast_delta_u64(struct pktcols_col *cd, struct pktcols_col *cu, uint64_t *od, uint64_t *ou,
				size_t k)
{
	size_t i = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint8_t *pd = cd->p, *pu = cu->p;
	uint64_t acc = cd->acc;
	for (; i < k; i++) {
		if (cd->end - pd < 8 || cu->end - pu < 8)
			break;
		const struct pr_fastint *fd = &pr_fast[*pd], *fu = &pr_fast[*pu];
		if (!fd->len || !fu->len)
			break;
		bool nd, nu;
		uint64_t vd = pr_fast_val(pd, fd, &nd), vu = pr_fast_val(pu, fu, &nu);
		if ((nd && cd->i + i == 0) || nu)
			break;              /* refused: pr_piece says so */
		od[i] = acc += vd;
		ou[i] = vu;
		pd += fd->len;
		pu += fu->len;
	}
	cd->p = pd;
	cd->acc = acc;
	cu->p = pu;
	cd->i += i;
	cd->left -= i;
	cu->i += i;
	cu->left -= i;
#endif
	return i;
}

int pktcols_col_delta_u64(struct pktcols_col *cd, struct pktcols_col *cu, uint64_t *od, uint64_t *ou,
			  size_t k, int *bad)
{
	size_t i = k <= cd->left && k <= cu->left ? pr_fast_delta_u64(cd, cu, od, ou, k) : 0;
	if (i < k && pr_piece(cd, PR_DELTA, od + i, k - i)) {
		*bad = 0;
		return -1;
	}
	if (i < k && pr_piece(cu, PR_U64, ou + i, k - i)) {
		*bad = 1;
		return -1;
	}
	return 0;
}

/* ---- fast forms (pktcols.h) ----
 * Per first byte: the integer's bytes and, read as one big-endian word x
 * from its first byte on, its value ((x >> sh) & mask ^ sign) - sign
 * modulo 2^32; bad: a form the table does not take. */
struct pf_form { uint8_t len, sh, bad; uint32_t mask, sign; };
#define PF_BAD { 1, 0, 1, 0, 0 }
#define PF_UNSIGNED \
	[0x00 ... 0x7f] = { 1, 56, 0, 0xff, 0 }, [0xcc] = { 2, 48, 0, 0xff, 0 }, \
	[0xcd] = { 3, 40, 0, 0xffff, 0 }, [0xce] = { 5, 24, 0, 0xffffffff, 0 }
static const struct pf_form pf_unsigned[256] = {
	PF_UNSIGNED, [0x80 ... 0xcb] = PF_BAD, [0xcf ... 0xff] = PF_BAD,
};
static const struct pf_form pf_signed[256] = {
	PF_UNSIGNED, [0x80 ... 0xcb] = PF_BAD, [0xcf] = PF_BAD, [0xd3 ... 0xdf] = PF_BAD,
	[0xe0 ... 0xff] = { 1, 56, 0, 0xff, 0x80 },
	[0xd0] = { 2, 48, 0, 0xff, 0x80 }, [0xd1] = { 3, 40, 0, 0xffff, 0x8000 },
	[0xd2] = { 5, 24, 0, 0xffffffff, 0x80000000 },
};
#define PF_LONGEST 5            /* bytes of the longest form taken */

/* Values of c that may be read as fast forms: 8 bytes readable at each. */
static size_t pf_room(const struct pktcols_col *c, size_t k)
{
	size_t left = (size_t)(c->end - c->p);
	size_t r = left < 8 ? 0 : (left - 8) / PF_LONGEST + 1;
	if (r > c->left)
		r = c->left;
	return r < k ? r : k;
}

static inline uint32_t pf_val(const struct pf_form *f, const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return (((uint32_t)(x >> f->sh) & f->mask) ^ f->sign) - f->sign;
}

static void pf_done(struct pktcols_col *c, const uint8_t *p, size_t i)
{
	c->p = p;
	c->i += i;
	c->left -= i;
}

/* Up to k rows of nc columns in one loop: the chain of each column (a
 * value's first byte says where the next begins) is a load, a table look-up
 * and an add, and the columns' chains overlap. Column 0 is a delta
 * (running sum in c[0]->acc into out64) when delta, else into out[0];
 * column j reads by tab[j]. It stops before the first row with a value
 * of another form in any column: how many rows. */
static inline __attribute__((always_inline))
size_t pf_rows(struct pktcols_col *const *c, const struct pf_form *const *tab, int nc, bool delta,
	       uint64_t *out64, uint32_t *const *out, size_t k)
{
	const uint8_t *p[4];
	uint64_t acc = c[0]->acc;
#pragma GCC unroll 4
	for (int j = 0; j < nc; j++) {
		k = pf_room(c[j], k);
		p[j] = c[j]->p;
	}
	size_t i = 0;
	for (; i < k; i++) {
		const struct pf_form *f[4];
		unsigned bad = 0;
#pragma GCC unroll 4
		for (int j = 0; j < nc; j++) {
			f[j] = &tab[j][*p[j]];
			bad |= f[j]->bad;
		}
		if (bad)
			break;
#pragma GCC unroll 4
		for (int j = 0; j < nc; j++) {
			uint32_t v = pf_val(f[j], p[j]);
			if (j == 0 && delta)
				out64[i] = acc += v;
			else
				out[j][i] = v;
			p[j] += f[j]->len;
		}
	}
	c[0]->acc = acc;
	for (int j = 0; j < nc; j++)
		pf_done(c[j], p[j], i);
	return i;
}

size_t pktcols_col_fast_delta(struct pktcols_col *c, uint64_t *out, size_t k)
{
	static const struct pf_form *const tab[1] = { pf_unsigned };
	return pf_rows(&c, tab, 1, true, out, NULL, k);
}

size_t pktcols_col_fast_u32(struct pktcols_col *c, uint32_t *out, size_t k)
{
	static const struct pf_form *const tab[1] = { pf_unsigned };
	return pf_rows(&c, tab, 1, false, NULL, &out, k);
}

size_t pktcols_col_fast_i32(struct pktcols_col *c, uint32_t *out, size_t k)
{
	static const struct pf_form *const tab[1] = { pf_signed };
	return pf_rows(&c, tab, 1, false, NULL, &out, k);
}

size_t pktcols_col_fast_delta_u32(struct pktcols_col *cd, struct pktcols_col *cu, uint64_t *od, uint32_t *ou,
				  size_t k)
{
	static const struct pf_form *const tab[2] = { pf_unsigned, pf_unsigned };
	struct pktcols_col *const c[2] = { cd, cu };
	uint32_t *const out[2] = { NULL, ou };
	return pf_rows(c, tab, 2, true, od, out, k);
}

size_t pktcols_col_fast_i32_3(struct pktcols_col c[3], uint32_t *const out[3], size_t k)
{
	static const struct pf_form *const tab[3] = { pf_signed, pf_signed, pf_signed };
	struct pktcols_col *const cp[3] = { &c[0], &c[1], &c[2] };
	return pf_rows(cp, tab, 3, false, NULL, out, k);
}

size_t pktcols_col_fixints(const struct pktcols_col *c, size_t k)
{
	size_t i = 0;
	if (k > c->left)
		k = c->left;
	if (k > (size_t)(c->end - c->p))
		k = (size_t)(c->end - c->p);
	for (; i + 8 <= k; i += 8) {
		uint64_t x;
		memcpy(&x, c->p + i, 8);
		if ((x &= 0x8080808080808080ull)) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return i + ((size_t)__builtin_ctzll(x) >> 3);
#else
			return i + ((size_t)__builtin_clzll(x) >> 3);
#endif
		}
	}
	while (i < k && c->p[i] < 0x80)
		i++;
	return i;
}

void pktcols_col_skip(struct pktcols_col *c, size_t k)
{
	pf_done(c, c->p + k, k);
}

/* A whole column in a new array. */
static void *pr_column(const struct pktcols_raw *m, const char *key, enum pr_col how, size_t *nout)
{
	struct pktcols_col c;
	uint64_t n;
	*nout = 0;
	if (pktcols_col_open(&c, m, key, &n))
		return NULL;
	/* n <= the bytes of the value (pr_head): the allocation is bounded by
	 * input actually present */
	void *out = malloc((n ? n : 1) * (how == PR_U32 ? sizeof(uint32_t) : sizeof(uint64_t)));
	if (!out)
		return NULL;
	int rc = how == PR_U64 ? pktcols_col_u64(&c, out, n)
	       : how == PR_DELTA ? pktcols_col_delta(&c, out, n) : pktcols_col_u32(&c, out, n);
	if (rc) {
		free(out);
		return NULL;
	}
	*nout = (size_t)n;
	return out;
}

uint64_t *pktcols_raw_u64_array(const struct pktcols_raw *m, const char *key, size_t *n)
{
	return pr_column(m, key, PR_U64, n);
}

uint64_t *pktcols_raw_u64_delta(const struct pktcols_raw *m, const char *key, size_t *n)
{
	return pr_column(m, key, PR_DELTA, n);
}

uint32_t *pktcols_raw_u32_mod(const struct pktcols_raw *m, const char *key, size_t n)
{
	size_t got;
	uint32_t *v = pr_column(m, key, PR_U32, &got);
	if (v && got != n) {
		free(v);
		return NULL;
	}
	return v;
}
