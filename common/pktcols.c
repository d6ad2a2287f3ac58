/* See pktcols.h. Sequence, ack, TSval and IP ID are stored as differences to
 * the previous event of the same flow in the batch: consecutive hooks of
 * one packet give 0, consecutive segments the MSS, which zstd packs into
 * runs. */
#include "pktcols.h"

#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "npmsg.h"
#include "pktpath.h"

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
	np_pack_str(pk, "idx");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].idx);
	np_pack_str(pk, "family");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].family);
	np_pack_str(pk, "proto");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].proto);
	np_pack_str(pk, "saddr");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		size_t l = f[i].family == 6 ? 16 : 4;
		msgpack_pack_bin(pk, l);
		msgpack_pack_bin_body(pk, f[i].saddr, l);
	}
	np_pack_str(pk, "daddr");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		size_t l = f[i].family == 6 ? 16 : 4;
		msgpack_pack_bin(pk, l);
		msgpack_pack_bin_body(pk, f[i].daddr, l);
	}
	np_pack_str(pk, "sport");
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) msgpack_pack_uint32(pk, f[i].sport);
	np_pack_str(pk, "dport");
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
