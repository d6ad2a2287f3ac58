/* Loading recordings into the model. Record bodies are read by key names
 * (docs/records/); unknown keys and types are skipped, damage is counted
 * by np_reader and turned into warnings here. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "ana_pktdec.h"
#include "ana_read.h"
#include "ana_progress.h"
#include "ana_rows.h"
#include "npmsg.h"
#include "pktcols.h"
#include "records.h"
#include "recschema.h"

struct ana_loadctx {
	struct ana_model *m;
	const char *path;
	int host;
	struct ana_pktdec *dec;     /* PKT_EVENTS decoding, possibly on workers */
};

static void ana_load_warn_cb(void *ctx, const char *msg)
{
	struct ana_loadctx *c = ctx;
	if (strstr(msg, c->path))
		ana_warn(c->m, "%s", msg);
	else
		ana_warn(c->m, "%s: %s", c->path, msg);
}

/* "dir/client.0003.npr" -> "client" */
static void ana_file_stem(const char *path, char *out, size_t n)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	snprintf(out, n, "%s", b);
	char *dot = strrchr(out, '.');
	if (dot && (!strcmp(dot, ".npr") || !strcmp(dot, ".npa")))
		*dot = 0;
	dot = strrchr(out, '.');
	if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1))
		*dot = 0;
}

struct ana_ident {
	char hostname[128], machine_id[64], boot_id[64], label[128];
	unsigned ncpus;
	uint64_t interval_ns;
	int64_t clock_shift_ns;
	bool valid;
};

static void ana_ident_from_header(struct ana_ident *id, const msgpack_object *body)
{
	memset(id, 0, sizeof(*id));
	const msgpack_object *h = np_map_get(body, "host");
	uint64_t v;
	np_get_strbuf(h, "hostname", id->hostname, sizeof(id->hostname));
	np_get_strbuf(h, "machine_id", id->machine_id, sizeof(id->machine_id));
	np_get_strbuf(h, "boot_id", id->boot_id, sizeof(id->boot_id));
	if (np_get_u64(h, "ncpus", &v) == 0 && v < 65536)
		id->ncpus = (unsigned)v;
	if (np_get_u64(body, "interval_ns", &v) == 0)
		id->interval_ns = v;
	const msgpack_object *cfg = np_map_get(body, "config");
	if (np_get_strbuf(body, "label", id->label, sizeof(id->label)) != 0)
		np_get_strbuf(cfg, "netns", id->label, sizeof(id->label));
	np_get_i64(cfg, "test_clock_shift_ns", &id->clock_shift_ns);
	id->valid = true;
}

/* Same identity and same file stem = one host (a rotated set). */
static int ana_host_for(struct ana_model *m, const struct ana_ident *id, const char *stem,
			const char *alias)
{
	for (size_t i = 0; i < m->hosts.n; i++) {
		struct ana_host *h = &m->hosts.v[i];
		if (alias && !strcmp(h->name, alias))
			return (int)i;
		if (alias || strcmp(h->stem, stem))
			continue;
		if (!id->valid || !h->has_header ||
		    (!strcmp(h->hostname, id->hostname) && !strcmp(h->machine_id, id->machine_id) &&
		     !strcmp(h->boot_id, id->boot_id) && !strcmp(h->label, id->label)))
			return (int)i;
	}
	if (m->hosts.n >= ANA_HOST_NONE - 1)
		return -1;
	struct ana_host *h = ANA_PUSH(m->hosts);
	if (!h)
		return -1;
	memset(h, 0, sizeof(*h));
	h->t_min = UINT64_MAX;
	h->clk_a = 1.0;
	h->clk_quality = ANA_CLK_UNALIGNED;
	h->clk_via = -1;
	snprintf(h->stem, sizeof(h->stem), "%s", stem);
	if (alias)
		snprintf(h->name, sizeof(h->name), "%s", alias);
	return (int)(m->hosts.n - 1);
}

static void ana_host_apply_ident(struct ana_host *h, const struct ana_ident *id)
{
	if (!id->valid || h->has_header)
		return;
	h->has_header = true;
	memcpy(h->hostname, id->hostname, sizeof(h->hostname));
	memcpy(h->machine_id, id->machine_id, sizeof(h->machine_id));
	memcpy(h->boot_id, id->boot_id, sizeof(h->boot_id));
	memcpy(h->label, id->label, sizeof(h->label));
	h->ncpus = id->ncpus;
	h->interval_ns = id->interval_ns;
	h->clock_shift_ns = id->clock_shift_ns;
}

static void ana_host_seen(struct ana_model *m, int host, uint64_t t)
{
	struct ana_host *h = &m->hosts.v[host];
	if (!t)
		return;
	if (t < h->t_min)
		h->t_min = t;
	if (t > h->t_max)
		h->t_max = t;
	(void)m;
}

static uint64_t ana_rec_time(const msgpack_object *body)
{
	uint64_t t = 0;
	if (np_get_u64(body, "t0_ns", &t) && np_get_u64(body, "t_ns", &t) &&
	    np_get_u64(body, "start_ns", &t))
		t = 0;
	return t;
}

static uint64_t ana_rec_dur(struct ana_model *m, int host, const msgpack_object *body)
{
	uint64_t d = 0, a, b;
	if (np_get_u64(body, "t0_ns", &a) == 0 && np_get_u64(body, "t1_ns", &b) == 0 && b > a)
		d = b - a;
	else if (np_get_u64(body, "dur_ns", &d) || !d)
		d = m->hosts.v[host].interval_ns;
	return d ? d : 1000000000ull;
}

/* ---- packet paths ---- */

static void ana_load_pkt_flows(struct ana_loadctx *c, const msgpack_object *body)
{
	struct ana_rows r;
	ana_rows_open(&r, body, NULL);
	for (size_t i = 0; i < r.n; i++) {
		uint64_t id, v;
		if (!ana_rows_u64(&r, i, NPK(PKT_FLOWS, IDX), &id))
			id = i;
		uint32_t fi = ana_flow_lookup(c->m, (uint16_t)c->host, id, true);
		if (fi == UINT32_MAX)
			break;
		struct ana_flow *f = &c->m->flows.v[fi];
		if (ana_rows_u64(&r, i, NPK(PKT_FLOWS, PROTO), &v)) f->proto = (uint8_t)v;
		if (ana_rows_u64(&r, i, NPK(PKT_FLOWS, SPORT), &v)) f->sport = (uint16_t)v;
		if (ana_rows_u64(&r, i, NPK(PKT_FLOWS, DPORT), &v)) f->dport = (uint16_t)v;
		ana_obj_addr(ana_rows_obj(&r, i, NPK(PKT_FLOWS, SADDR)), f->src, sizeof(f->src));
		ana_obj_addr(ana_rows_obj(&r, i, NPK(PKT_FLOWS, DADDR)), f->dst, sizeof(f->dst));
	}
	ana_rows_close(&r);
}

/* ---- clock sync ---- */

static void ana_load_sync(struct ana_loadctx *c, const msgpack_object *body)
{
	static const char *const lk[] = { "exchanges", "ex", NULL };
	struct ana_rows r;
	ana_rows_open(&r, body, lk);
	char role[16] = "client", peer[128] = "";
	np_get_strbuf(body, "role", role, sizeof(role));
	np_get_strbuf(body, "peer", peer, sizeof(peer));
	uint64_t self_id;
	if (np_get_u64(body, "self_id", &self_id) == 0)
		c->m->hosts.v[c->host].sync_id = self_id;
	for (size_t i = 0; i < r.n; i++) {
		struct ana_sync s = { 0 };
		char rrole[16];
		bool server = !strcmp(role, "server");
		if (ana_rows_str(&r, i, "role", rrole, sizeof(rrole)))
			server = !strcmp(rrole, "server");
		if (!ana_rows_u64(&r, i, "t1", &s.t1) || !ana_rows_u64(&r, i, "t2", &s.t2) ||
		    !ana_rows_u64(&r, i, "t3", &s.t3) || !ana_rows_u64(&r, i, "t4", &s.t4))
			continue;
		if (!s.t1 || !s.t2 || !s.t3 || !s.t4 || s.t4 < s.t1 || s.t3 < s.t2)
			continue;
		/* peer resolved in ana_load_finish: stash the recording host, the
		 * peer name goes into a side table by index */
		ana_rows_u64(&r, i, "peer_id", &s.peer_id);
		/* version 1 had no key: every exchange was unauthenticated */
		const msgpack_object *au = ana_rows_obj(&r, i, "authenticated");
		s.auth = au && au->type == MSGPACK_OBJECT_BOOLEAN && au->via.boolean;
		s.client = server ? ANA_HOST_NONE : (uint16_t)c->host;
		s.server = server ? (uint16_t)c->host : ANA_HOST_NONE;
		char pname[128] = "";
		if (!ana_rows_str(&r, i, "peer", pname, sizeof(pname)))
			snprintf(pname, sizeof(pname), "%s", peer);
		/* peer name kept in a parallel warning-free way: match by name now if
		 * that host is already known, else by exchange times later */
		for (size_t k = 0; pname[0] && k < c->m->hosts.n; k++) {
			const struct ana_host *hk = &c->m->hosts.v[k];
			if ((int)k != c->host && (!strcmp(hk->name, pname) || !strcmp(hk->hostname, pname) ||
						  !strcmp(hk->label, pname) || !strcmp(hk->stem, pname))) {
				if (server) s.client = (uint16_t)k; else s.server = (uint16_t)k;
				break;
			}
		}
		struct ana_sync *slot = ANA_PUSH(c->m->syncs);
		if (slot)
			*slot = s;
		ana_host_seen(c->m, c->host, server ? s.t2 : s.t1);
	}
	ana_rows_close(&r);
}

/* ---- other families ---- */

static void ana_load_flows(struct ana_loadctx *c, const msgpack_object *body)
{
	struct ana_rows r;
	ana_rows_open(&r, body, NULL);
	uint64_t t = ana_rec_time(body), dur = ana_rec_dur(c->m, c->host, body);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_flowstat *f = ANA_PUSH(c->m->fstats);
		if (!f)
			break;
		memset(f, 0, sizeof(*f));
		uint64_t v;
		f->host = (uint16_t)c->host;
		f->t = t; f->dur_ns = dur;
		ana_obj_addr(ana_rows_obj(&r, i, NPK(FLOWS, LADDR)), f->src, sizeof(f->src));
		ana_obj_addr(ana_rows_obj(&r, i, NPK(FLOWS, RADDR)), f->dst, sizeof(f->dst));
		if (ana_rows_u64(&r, i, NPK(FLOWS, LPORT), &v)) f->sport = (uint16_t)v;
		if (ana_rows_u64(&r, i, NPK(FLOWS, RPORT), &v)) f->dport = (uint16_t)v;
		if (ana_rows_u64(&r, i, NPK(FLOWS, PROTO), &v)) f->proto = (uint8_t)v;
		ana_rows_u64(&r, i, NPK(FLOWS, TX_BYTES), &f->tx_bytes);
		ana_rows_u64(&r, i, NPK(FLOWS, RX_BYTES), &f->rx_bytes);
		ana_rows_u64(&r, i, NPK(FLOWS, TX_PKTS), &f->tx_pkts);
		ana_rows_u64(&r, i, NPK(FLOWS, RX_PKTS), &f->rx_pkts);
		ana_rows_u64(&r, i, NPK(FLOWS, RETRANS), &f->retrans);
		if (ana_rows_u64(&r, i, NPK(FLOWS, SRTT_US), &v)) f->srtt_ns = v * 1000;
		if (ana_rows_u64(&r, i, NPK(FLOWS, PID), &v)) f->pid = (uint32_t)v;
		if (ana_rows_u64(&r, i, NPK(FLOWS, CGROUP_ID), &v)) f->cgroup = v;
		ana_rows_str(&r, i, NPK(FLOWS, COMM), f->comm, sizeof(f->comm));
		struct ana_flow tmp = { .proto = f->proto ? f->proto : 6, .sport = f->sport,
					.dport = f->dport };
		memcpy(tmp.src, f->src, sizeof(tmp.src));
		memcpy(tmp.dst, f->dst, sizeof(tmp.dst));
		ana_flow_key(&tmp, f->key, sizeof(f->key));
	}
	ana_host_seen(c->m, c->host, t);
	ana_rows_close(&r);
}

static void ana_load_drops(struct ana_loadctx *c, const msgpack_object *body)
{
	struct ana_rows r;
	ana_rows_open(&r, body, NULL);
	uint64_t t = ana_rec_time(body);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_drop *d = ANA_PUSH(c->m->drops);
		if (!d)
			break;
		memset(d, 0, sizeof(*d));
		d->host = (uint16_t)c->host;
		d->t = t;
		uint64_t v;
		if (!ana_rows_u64(&r, i, NPK(DROPS, COUNT), &d->count))
			d->count = 1;
		if (ana_rows_u64(&r, i, NPK(DROPS, T_NS), &v)) d->t = v;
		if (!ana_rows_str(&r, i, NPK(DROPS, REASON_NAME), d->reason, sizeof(d->reason)) &&
		    ana_rows_u64(&r, i, NPK(DROPS, REASON), &v))
			snprintf(d->reason, sizeof(d->reason), "reason_%llu", (unsigned long long)v);
		struct ana_flow tmp = { .proto = 6 };
		if (ana_rows_u64(&r, i, NPK(DROPS, SPORT), &v)) tmp.sport = (uint16_t)v;
		if (ana_rows_u64(&r, i, NPK(DROPS, DPORT), &v)) tmp.dport = (uint16_t)v;
		if (ana_rows_u64(&r, i, NPK(DROPS, PROTO), &v)) tmp.proto = (uint8_t)v;
		ana_obj_addr(ana_rows_obj(&r, i, NPK(DROPS, SADDR)), tmp.src, sizeof(tmp.src));
		ana_obj_addr(ana_rows_obj(&r, i, NPK(DROPS, DADDR)), tmp.dst, sizeof(tmp.dst));
		ana_flow_key(&tmp, d->flowkey, sizeof(d->flowkey));
		d->hook = 0;   /* DROPS has no hook: the kernel's drop point is the reason */
	}
	ana_rows_close(&r);
}

/* The row's request starts (recorders since 2026-11-26): from start_lo,
 * the previous row's last start or, in the connection's first row
 * (count == count_total), its first; to start_hi. */
static void ana_load_txn_starts(struct ana_rows *r, size_t i, struct ana_txn *x)
{
	uint64_t lo, hi, total;
	if (!x->count || !ana_rows_u64(r, i, NPK(TXN_STATS, START_LO_NS), &lo) ||
	    !ana_rows_u64(r, i, NPK(TXN_STATS, START_HI_NS), &hi) ||
	    !ana_rows_u64(r, i, NPK(TXN_STATS, COUNT_TOTAL), &total) || !lo || hi < lo)
		return;
	x->start_lo = lo;
	x->start_hi = hi;
	x->start_first_row = total == x->count;
	x->start_gaps = x->count - x->start_first_row;
	ana_rows_u64(r, i, NPK(TXN_STATS, START_SECOND_NS), &x->start_second);
	ana_rows_u64(r, i, NPK(TXN_STATS, START_PREV_NS), &x->start_prev);
}

/* A --redact-paths recording keeps only a keyed hash of each path: the
 * endpoints are told apart by it ("#" and 16 hex digits). */
static void ana_redacted_path(char *buf, size_t size, uint64_t hash)
{
	snprintf(buf, size, "#%016" PRIx64, hash);
}

static void ana_load_txn_stats(struct ana_loadctx *c, const msgpack_object *body)
{
	struct ana_rows r;
	ana_rows_open(&r, body, NULL);
	uint64_t t = ana_rec_time(body);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_txn *x = ANA_PUSH(c->m->txns);
		if (!x)
			break;
		memset(x, 0, sizeof(*x));
		np_sketch_init(&x->lat);
		x->host = (uint16_t)c->host;
		x->t = t;
		uint64_t v;
		ana_obj_addr(ana_rows_obj(&r, i, NPK(TXN_STATS, LADDR)), x->local_addr, sizeof(x->local_addr));
		ana_obj_addr(ana_rows_obj(&r, i, NPK(TXN_STATS, RADDR)), x->peer_host_addr, sizeof(x->peer_host_addr));
		if (ana_rows_u64(&r, i, NPK(TXN_STATS, LPORT), &v)) x->local_port = (uint16_t)v;
		if (ana_rows_u64(&r, i, NPK(TXN_STATS, RPORT), &v)) x->peer_port = (uint16_t)v;
		if (ana_rows_u64(&r, i, NPK(TXN_STATS, ROLE), &v))
			x->server = v == TXN_ROLE_SERVER;
		if (ana_rows_u64(&r, i, NPK(TXN_STATS, PID), &v)) x->pid = (uint32_t)v;
		ana_rows_u64(&r, i, NPK(TXN_STATS, COUNT), &x->count);
		ana_rows_u64(&r, i, NPK(TXN_STATS, CONN), &x->conn_id);
		np_get_u64(body, NPK(TXN_STATS, EV_SAMPLE), &x->ev_sample);   /* txn events sampled */
		x->ev_skipped = ana_rows_u64(&r, i, NPK(TXN_STATS, EV), &v) && !v;
		uint64_t a = 0, b2 = 0;
		ana_rows_u64(&r, i, NPK(TXN_STATS, BYTES_REQ), &a);
		ana_rows_u64(&r, i, NPK(TXN_STATS, BYTES_RESP), &b2);
		x->bytes = a + b2;
		const msgpack_object *sk = ana_rows_obj(&r, i, NPK(TXN_STATS, LAT));
		if (sk)
			np_sketch_unpack(&x->lat, sk);
		if (!x->count)
			x->count = x->lat.n;
		ana_load_txn_starts(&r, i, x);
		char path[128] = "", method[16] = "";
		ana_rows_str(&r, i, NPK(TXN_STATS, PATH), path, sizeof(path));
		if (!path[0] && ana_rows_u64(&r, i, NPK(TXN_STATS, PATH_HASH), &v) && v)
			ana_redacted_path(path, sizeof(path), v);
		ana_rows_str(&r, i, NPK(TXN_STATS, METHOD), method, sizeof(method));
		const char *saddr = x->server ? x->local_addr : x->peer_host_addr;
		unsigned sport = x->server ? x->local_port : x->peer_port;
		snprintf(x->endpoint, sizeof(x->endpoint), "%s:%u%s%s%s%s", saddr, sport,
			 method[0] || path[0] ? " " : "", method, method[0] && path[0] ? " " : "", path);
		snprintf(x->conn, sizeof(x->conn), "%s:%u>%s:%u", x->local_addr, x->local_port,
			 x->peer_host_addr, x->peer_port);
	}
	ana_rows_close(&r);
}

/* A string cell, control bytes shown as '?' (as ana_rows_str) */
static void ana_cell_str(const msgpack_object *o, char *buf, size_t size)
{
	if (!o || o->type != MSGPACK_OBJECT_STR)
		return;
	size_t n = o->via.str.size < size - 1 ? o->via.str.size : size - 1;
	memcpy(buf, o->via.str.ptr, n);
	buf[n] = 0;
	for (size_t k = 0; k < n; k++)
		if ((unsigned char)buf[k] < 0x20)
			buf[k] = '?';
}

static void ana_load_txn_events(struct ana_loadctx *c, const msgpack_object *body)
{
	struct np_cols r;
	np_cols_open(&r, NP_REC_TXN_EVENTS, body);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_txev x = { .host = (uint16_t)c->host };
		uint64_t v;
		if (!np_cols_u64(&r, NPK_TXN_EVENTS_START_NS_D, i, &x.start) ||
		    !np_cols_u64(&r, NPK_TXN_EVENTS_DUR_NS, i, &x.dur))
			continue;
		if (np_cols_u64(&r, NPK_TXN_EVENTS_ROLE, i, &v)) x.server = v == TXN_ROLE_SERVER;
		if (np_cols_u64(&r, NPK_TXN_EVENTS_PID, i, &v)) x.pid = (uint32_t)v;
		if (np_cols_u64(&r, NPK_TXN_EVENTS_TID, i, &v)) x.tid = (uint32_t)v;
		np_cols_u64(&r, NPK_TXN_EVENTS_CONN, i, &x.conn);
		x.end = x.start + x.dur;
		uint64_t req = 0, resp = 0;
		np_cols_u64(&r, NPK_TXN_EVENTS_BYTES_REQ, i, &req);
		np_cols_u64(&r, NPK_TXN_EVENTS_BYTES_RESP, i, &resp);
		x.bytes = req + resp;
		ana_cell_str(np_cols_obj(&r, NPK_TXN_EVENTS_METHOD, i), x.method, sizeof(x.method));
		ana_cell_str(np_cols_obj(&r, NPK_TXN_EVENTS_PATH, i), x.path, sizeof(x.path));
		if (!x.path[0] && np_cols_u64(&r, NPK_TXN_EVENTS_PATH_HASH, i, &v) && v)
			ana_redacted_path(x.path, sizeof(x.path), v);
		struct ana_txev *slot = ANA_PUSH(c->m->txevs);
		if (!slot)
			break;
		*slot = x;
	}
	np_cols_close(&r);
}

/* The record's sock_sampler (since j32c); a name this reader does not
 * know counts as unnamed, as an absent one. */
static uint8_t ana_sock_sampler(const msgpack_object *body)
{
	static const char *const name[] = { [ANA_SAMPLER_LOCAL] = "local", [ANA_SAMPLER_REMOTE_RECV] = "remote-recv",
					    [ANA_SAMPLER_REMOTE] = "remote" };
	char s[16] = "";
	np_get_strbuf(body, "sock_sampler", s, sizeof(s));
	for (uint8_t k = ANA_SAMPLER_LOCAL; k <= ANA_SAMPLER_REMOTE; k++)
		if (!strcmp(s, name[k]))
			return k;
	return ANA_SAMPLER_UNNAMED;
}

static void ana_load_netcpu(struct ana_loadctx *c, const msgpack_object *body)
{
	static const char *const lk[] = { "cpus", NULL };
	struct ana_rows r;
	ana_rows_open(&r, body, lk);
	struct ana_netcpu *x = ANA_PUSH(c->m->netcpu);
	if (!x) {
		ana_rows_close(&r);
		return;
	}
	memset(x, 0, sizeof(*x));
	x->host = (uint16_t)c->host;
	x->t = ana_rec_time(body);
	x->dur_ns = ana_rec_dur(c->m, c->host, body);
	for (size_t i = 0; i < r.n; i++) {
		uint64_t v;
		if (ana_rows_u64(&r, i, "netrx_ns", &v)) x->net_rx_ns += v;
		if (ana_rows_u64(&r, i, "nettx_ns", &v)) x->net_tx_ns += v;
		if (ana_rows_u64(&r, i, "send_ns", &v)) x->sock_send_ns += v;
		if (ana_rows_u64(&r, i, "recv_ns", &v)) x->sock_recv_ns += v;
		if (ana_rows_u64(&r, i, "send_smp", &v)) x->send_smp += v;
		if (ana_rows_u64(&r, i, "recv_smp", &v)) x->recv_smp += v;
		if (ana_rows_u64(&r, i, "netrx_smp", &v)) x->rx_smp += v;
		if (ana_rows_u64(&r, i, "nettx_smp", &v)) x->tx_smp += v;
		if (ana_rows_u64(&r, i, "netrx_probe_smp", &v)) {
			x->rx_probe_smp += v;
			x->probe_mask |= ANA_NC_PROBE_RX;
		}
		if (ana_rows_u64(&r, i, "netrx_stray_smp", &v)) x->rx_stray_smp += v;
		/* absent before j24o: no like-for-like ratio then */
		if (ana_rows_u64(&r, i, "send_probe_smp", &v)) {
			x->send_probe_smp += v;
			x->probe_mask |= ANA_NC_PROBE_SOCK;
		}
		if (ana_rows_u64(&r, i, "recv_probe_smp", &v)) x->recv_probe_smp += v;
		if (ana_rows_u64(&r, i, "send_outside_smp", &v)) x->send_out_smp += v;
		if (ana_rows_u64(&r, i, "recv_outside_smp", &v)) x->recv_out_smp += v;
		if (ana_rows_u64(&r, i, "send_smp_ns", &v)) x->send_smp_ns += v;
		if (ana_rows_u64(&r, i, "recv_smp_ns", &v)) x->recv_smp_ns += v;
		if (ana_rows_u64(&r, i, "netrx_smp_ns", &v)) x->rx_smp_ns += v;
		if (ana_rows_u64(&r, i, "nettx_smp_ns", &v)) x->tx_smp_ns += v;
		if (ana_rows_u64(&r, i, "send_unclocked_n", &v)) {
			x->send_unclocked += v;
			x->has_unclocked = true;
		}
		if (ana_rows_u64(&r, i, "recv_unclocked_n", &v)) x->recv_unclocked += v;
	}
	/* sock: absent before issue 24 = exact */
	char how[16] = "exact";
	np_get_strbuf(body, "sock", how, sizeof(how));
	x->sock_how = !strcmp(how, "sampled") ? ANA_SOCK_SAMPLED : !strcmp(how, "none") ? ANA_SOCK_NONE
										  : ANA_SOCK_EXACT;
	/* sirq: absent before the sampled softirq time = exact */
	strcpy(how, "exact");
	np_get_strbuf(body, "sirq", how, sizeof(how));
	x->sirq_how = !strcmp(how, "sampled") ? ANA_SOCK_SAMPLED : !strcmp(how, "none") ? ANA_SOCK_NONE
										  : ANA_SOCK_EXACT;
	np_get_u64(body, "smp_period_ns", &x->smp_period_ns);
	x->sock_sampler = ana_sock_sampler(body);
	ana_host_seen(c->m, c->host, x->t);
	ana_rows_close(&r);
}

/* NETRX_STACKS: category names and the NET_RX time estimated per category. */
static void ana_load_netrx(struct ana_loadctx *c, const msgpack_object *body)
{
	const msgpack_object_array *cat = np_get_array(body, "cat");
	size_t ne = 0, ns = 0;
	uint64_t *est = np_get_u64_array(body, "cat_est_ns", &ne);
	uint64_t *smp = np_get_u64_array(body, "cat_samples", &ns);
	uint64_t t = ana_rec_time(body);
	for (uint32_t i = 0; cat && i < cat->size; i++) {
		if (cat->ptr[i].type != MSGPACK_OBJECT_STR)
			continue;
		struct ana_netrx *x = ANA_PUSH(c->m->netrx);
		if (!x)
			break;
		memset(x, 0, sizeof(*x));
		x->host = (uint16_t)c->host;
		x->t = t;
		size_t l = cat->ptr[i].via.str.size < sizeof(x->comp) - 1 ? cat->ptr[i].via.str.size
									   : sizeof(x->comp) - 1;
		memcpy(x->comp, cat->ptr[i].via.str.ptr, l);
		x->est_ns = est && i < ne ? est[i] : 0;
		x->samples = smp && i < ns ? smp[i] : 0;
	}
	free(est);
	free(smp);
}

static void ana_load_threads(struct ana_loadctx *c, const msgpack_object *body)
{
	struct ana_rows r;
	ana_rows_open(&r, body, NULL);
	uint64_t t = ana_rec_time(body), dur = ana_rec_dur(c->m, c->host, body);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_thread *x = ANA_PUSH(c->m->threads);
		if (!x)
			break;
		memset(x, 0, sizeof(*x));
		uint64_t v;
		x->host = (uint16_t)c->host;
		x->t = t; x->dur_ns = dur;
		if (ana_rows_u64(&r, i, NPK(THREADS, PID), &v)) x->pid = (uint32_t)v;
		if (ana_rows_u64(&r, i, "tid", &v)) x->tid = (uint32_t)v;   /* tid_d, by its stem */
		if (ana_rows_u64(&r, i, NPK(THREADS, CGROUP_ID), &v)) x->cgroup = v;
		ana_rows_str(&r, i, NPK(THREADS, COMM), x->comm, sizeof(x->comm));
		ana_rows_u64(&r, i, NPK(THREADS, ONCPU_NS), &x->cpu_ns);
	}
	ana_rows_close(&r);
}

static void ana_load_cgroups(struct ana_loadctx *c, const msgpack_object *body)
{
	static const char *const lk[] = { "cgroups", NULL };
	struct ana_rows r;
	ana_rows_open(&r, body, lk);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_cgroup *x = ANA_PUSH(c->m->cgroups);
		if (!x)
			break;
		memset(x, 0, sizeof(*x));
		x->host = (uint16_t)c->host;
		if (!ana_rows_u64(&r, i, "id", &x->id))
			ana_rows_u64(&r, i, "cgroup", &x->id);
		ana_rows_str(&r, i, "path", x->path, sizeof(x->path));
	}
	ana_rows_close(&r);
}

static void ana_load_alerts(struct ana_loadctx *c, const msgpack_object *body)
{
	static const char *const lk[] = { "alerts", NULL };
	struct ana_rows r;
	ana_rows_open(&r, body, lk);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_alert *x = ANA_PUSH(c->m->alerts);
		if (!x)
			break;
		memset(x, 0, sizeof(*x));
		x->host = (uint16_t)c->host;
		if (!ana_rows_u64(&r, i, "ts_ns", &x->t) && !ana_rows_u64(&r, i, "t_ns", &x->t))
			ana_rows_u64(&r, i, "ts", &x->t);
		if (!ana_rows_str(&r, i, "comp", x->comp, sizeof(x->comp)))
			ana_rows_str(&r, i, "component", x->comp, sizeof(x->comp));
		if (!ana_rows_u64(&r, i, "value_ns", &x->value_ns))
			ana_rows_u64(&r, i, "value", &x->value_ns);
		if (!ana_rows_u64(&r, i, "thresh_ns", &x->thresh_ns))
			ana_rows_u64(&r, i, "threshold_ns", &x->thresh_ns);
		ana_rows_str(&r, i, "flow", x->flowkey, sizeof(x->flowkey));
	}
	ana_rows_close(&r);
}

static const char *const ana_comp_names[4] = { "rtt", "rnst1", "cnst", "rnst2" };

static void ana_load_ewma(struct ana_loadctx *c, const msgpack_object *body)
{
	struct ana_rows r;
	ana_rows_open(&r, body, NULL);
	uint64_t t = ana_rec_time(body);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_ewma *x = ANA_PUSH(c->m->ewma);
		if (!x)
			break;
		memset(x, 0, sizeof(*x));
		x->host = (uint16_t)c->host;
		x->t = t;
		char pa[48] = "", ra[48] = "";
		uint64_t pp = 0, rp = 0;
		ana_rows_str(&r, i, "paddr", pa, sizeof(pa));
		ana_rows_str(&r, i, "raddr", ra, sizeof(ra));
		ana_rows_u64(&r, i, "pport", &pp);
		ana_rows_u64(&r, i, "rport", &rp);
		snprintf(x->flowkey, sizeof(x->flowkey), "tcp %s:%u>%s:%u", pa, (unsigned)pp, ra, (unsigned)rp);
		ana_rows_str(&r, i, "bucket", x->bucket, sizeof(x->bucket));
		for (int k = 0; k < 4; k++) {
			char key[32];
			snprintf(key, sizeof(key), "f_%s_ns", ana_comp_names[k]);
			ana_rows_u64(&r, i, key, &x->f[k]);
			snprintf(key, sizeof(key), "n_%s", ana_comp_names[k]);
			ana_rows_u64(&r, i, key, &x->n[k]);
			snprintf(key, sizeof(key), "alerts_%s", ana_comp_names[k]);
			ana_rows_u64(&r, i, key, &x->alerts[k]);
		}
	}
	ana_rows_close(&r);
}

/* Sums every integer under a key containing "lost" (any nesting). */
static uint64_t ana_sum_lost(const msgpack_object *o, bool under)
{
	uint64_t s = 0;
	if (!o)
		return 0;
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		return under ? o->via.u64 : 0;
	if (o->type == MSGPACK_OBJECT_ARRAY) {
		for (uint32_t i = 0; i < o->via.array.size; i++)
			s += ana_sum_lost(&o->via.array.ptr[i], under);
		return s;
	}
	if (o->type != MSGPACK_OBJECT_MAP)
		return 0;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		bool u = under;
		if (k->type == MSGPACK_OBJECT_STR && memmem(k->via.str.ptr, k->via.str.size, "lost", 4))
			u = true;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size >= 3 &&
		    !memcmp(k->via.str.ptr, "t_", 2))
			continue;
		/* cumulative counters ("lost_total") would count twice */
		if (k->type == MSGPACK_OBJECT_STR && memmem(k->via.str.ptr, k->via.str.size, "total", 5))
			continue;
		s += ana_sum_lost(&o->via.map.ptr[i].val, u);
	}
	return s;
}

/* LOST: per family when the record names them ("family" + per-interval
 * "lost" columns; the cumulative "lost_total" is not added), else every
 * integer under the "lost" key. */
static void ana_load_lost(struct ana_loadctx *c, const msgpack_object *body)
{
	struct ana_host *h = &c->m->hosts.v[c->host];
	const msgpack_object_array *fam = np_get_array(body, "family");
	size_t nl = 0;
	uint64_t *lost = np_get_u64_array(body, "lost", &nl);
	if (!fam || !lost || fam->size != nl) {
		free(lost);
		h->lost_events += ana_sum_lost(np_map_get(body, "lost"), true);
		return;
	}
	for (size_t i = 0; i < nl; i++) {
		if (!lost[i] || fam->ptr[i].type != MSGPACK_OBJECT_STR)
			continue;
		h->lost_events += lost[i];
		char name[16];
		size_t l = fam->ptr[i].via.str.size < sizeof(name) - 1 ? fam->ptr[i].via.str.size : sizeof(name) - 1;
		memcpy(name, fam->ptr[i].via.str.ptr, l);
		name[l] = 0;
		int k;
		for (k = 0; k < 8 && h->lost_fam[k][0] && strcmp(h->lost_fam[k], name); k++)
			;
		if (k == 8)
			continue;
		memcpy(h->lost_fam[k], name, sizeof(name));
		h->lost_fam_n[k] += lost[i];
	}
	free(lost);
}

/* HEADER and PROBES: the probe list, one row per (host, family, probe);
 * the record with the latest time wins (a rotated set repeats the list in
 * every header, a PROBES record says what changed while recording). */
static void ana_load_probes(struct ana_loadctx *c, const msgpack_object *body)
{
	static const char *const lk[] = { "probes", NULL };
	uint64_t t = ana_rec_time(body);
	struct ana_rows r;
	ana_rows_open(&r, body, lk);
	for (size_t i = 0; i < r.n; i++) {
		struct ana_probe p = { .host = (uint16_t)c->host, .t = t };
		ana_rows_str(&r, i, "family", p.family, sizeof(p.family));
		ana_rows_str(&r, i, "probe", p.probe, sizeof(p.probe));
		ana_rows_str(&r, i, "state", p.state, sizeof(p.state));
		ana_rows_str(&r, i, "reason", p.reason, sizeof(p.reason));
		struct ana_probe *x = NULL;
		for (size_t k = 0; k < c->m->probes.n && !x; k++) {
			struct ana_probe *y = &c->m->probes.v[k];
			if (y->host == p.host && !strcmp(y->family, p.family) && !strcmp(y->probe, p.probe))
				x = y;
		}
		if (!x)
			x = ANA_PUSH(c->m->probes);
		else if (x->t > t)
			continue;
		if (!x)
			break;
		*x = p;
	}
	ana_rows_close(&r);
}

static void ana_load_record(struct ana_loadctx *c, const struct np_record *rec)
{
	const msgpack_object *b = rec->body;
	switch (rec->type) {
	case NP_REC_INTERVAL: {
		uint64_t t = ana_rec_time(b);
		ana_host_seen(c->m, c->host, t);
		break;
	}
	case NP_REC_LOST:
		ana_load_lost(c, b);
		break;
	case NP_REC_PKT_FLOWS:
		/* flow indices are created in record order: events read before
		 * this record get theirs first, whatever the thread count */
		ana_pktdec_drain(c->dec);
		ana_load_pkt_flows(c, b);
		break;
	case NP_REC_PKT_EVENTS:
		ana_pktdec_submit(c->dec, c->host, rec);
		break;
	case NP_REC_SYNC:        ana_load_sync(c, b); break;
	case NP_REC_FLOWS:
		c->m->hosts.v[c->host].has_flows = true;
		ana_load_flows(c, b);
		break;
	case NP_REC_DROPS:       ana_load_drops(c, b); break;
	case NP_REC_PROGS:       ana_progs_load(&c->m->hosts.v[c->host], b); break;
	case NP_REC_TXN_STATS:   ana_load_txn_stats(c, b); break;
	case NP_REC_TXN_EVENTS:  ana_load_txn_events(c, b); break;
	case NP_REC_NETCPU:      ana_load_netcpu(c, b); break;
	case NP_REC_NETRX_STACKS: ana_load_netrx(c, b); break;
	case NP_REC_THREADS:     ana_load_threads(c, b); break;
	case NP_REC_CGROUPS:     ana_load_cgroups(c, b); break;
	case NP_REC_ALERTS:      ana_load_alerts(c, b); break;
	case NP_REC_STACK_EWMA:  ana_load_ewma(c, b); break;
	case NP_REC_HEADER: case NP_REC_PROBES: ana_load_probes(c, b); break;
	default: break;
	}
}

static int ana_load_reader(struct ana_model *m, struct np_reader *r, struct ana_loadctx *c,
			   const char *path, const char *alias)
{
	struct np_record rec;
	char stem[256];
	ana_file_stem(path, stem, sizeof(stem));
	int more = np_reader_next(r, &rec);
	/* no file header and not one chunk found by the resync scan: refused
	 * before it becomes a host (as tcpdump -r refuses a non-capture) */
	if (more != 1 && np_reader_stats(r)->bad_file_header && !np_reader_stats(r)->chunks_ok)
		return ANA_LOAD_NOT_NP;
	struct ana_ident id = { 0 };
	if (more == 1 && rec.type == NP_REC_HEADER)
		ana_ident_from_header(&id, rec.body);
	c->host = ana_host_for(m, &id, stem, alias);
	if (c->host < 0)
		return -ENOMEM;
	struct ana_host *h = &m->hosts.v[c->host];
	ana_host_apply_ident(h, &id);
	h->nfiles++;
	if (!id.valid)
		ana_warn(m, "%s: no header record: host identity taken from the file name (%s)",
			 path, alias ? alias : stem);
	if (np_reader_kind(r) == NP_KIND_ANALYSIS)
		ana_warn(m, "%s: is an analysis file, not a recording", path);
	ana_seek_begin(m, c->host, r, more == 1 && rec.type == NP_REC_HEADER ? rec.body : NULL);
	unsigned threads = m->opt ? m->opt->threads : 1;
	/* threads - 1: at --threads 2 this thread decodes the columns itself
	 * (no copy of each body, no events handed between cores) while the
	 * read-ahead worker decompresses and walks the chunks; the two halves
	 * weigh about the same (docs/BENCHMARKS.md) */
	c->dec = ana_pktdec_new(m, threads > 1 ? threads - 1 : 1);
	if (!c->dec)
		return -ENOMEM;
	/* decompression ahead of the reader (through an index: the window's
	 * chunks only, np_reader_next_chunk) */
	uint64_t limit = m->opt ? m->opt->mem_limit : 0;
	bool bounded = limit || (m->opt && m->opt->window_ns);
	struct ana_read *ahead = threads > 1 ? ana_read_new(r, threads - 1, bounded) : NULL;
	if (ahead)
		ana_pktdec_ahead_by(c->dec, ahead);   /* threads 2: the worker's idle time */
	struct ana_progress *prog = m->opt ? m->opt->prog : NULL;
	bool over = false;
	while (more == 1 && !over) {
		ana_load_record(c, &rec);
		if (m->pev_drop)
			m->pev.n = 0;       /* streamed skeleton: counted, not kept */
		more = np_reader_next(r, &rec);
		ana_progress_tick(prog, np_reader_stats(r)->last_good_offset, m->pev.n);
		over = limit && ana_mem_predict(m) > limit;
	}
	/* every record appended (the host's t_min, t_max final) before the
	 * seek looks at them */
	ana_pktdec_ahead_by(c->dec, NULL);
	ana_read_free(ahead);
	ana_pktdec_free(c->dec);
	c->dec = NULL;
	if (m->pev_drop)
		m->pev.n = 0;
	ana_seek_end(m, c->host, r);
	if (over || (limit && ana_mem_predict(m) > limit))
		return ANA_LOAD_OVER_MEM;
	ana_progress_file_done(prog, np_reader_stats(r)->last_good_offset);
	const struct np_reader_stats *st = np_reader_stats(r);
	h = &m->hosts.v[c->host];
	h->records += st->records;
	h->chunks_bad += st->chunks_bad;
	h->bytes_skipped += st->bytes_skipped;
	h->records_bad += st->records_bad;
	if (st->truncated) {
		h->truncated = true;
		ana_warn(m, "%s: truncated after offset %llu: analysed up to the damage", path,
			 (unsigned long long)st->last_good_offset);
	}
	if (st->chunks_bad || st->bytes_skipped)
		ana_warn(m, "%s: %llu damaged chunk(s), %llu bytes skipped", path,
			 (unsigned long long)st->chunks_bad, (unsigned long long)st->bytes_skipped);
	if (st->records_bad)
		ana_warn(m, "%s: %llu undecodable record(s) skipped", path,
			 (unsigned long long)st->records_bad);
	char **in = ANA_PUSH(m->inputs);
	if (in)
		*in = strdup(path);
	return 0;
}

/* The analysis's peak if it went on with what is read now. */
uint64_t ana_mem_predict(const struct ana_model *m)
{
	return (m->opt ? m->opt->mem_base : 0) + (uint64_t)m->pev.n * ANA_MEM_PER_EVENT;
}

int ana_load_file(struct ana_model *m, const char *path, const char *alias)
{
	struct np_reader *r;
	struct ana_loadctx c = { .m = m, .path = path, .host = -1 };
	int rc = np_reader_open(&r, path, ana_load_warn_cb, &c);
	if (rc) {
		ana_warn(m, "%s: cannot open: %s", path, strerror(-rc));
		return rc;
	}
	np_reader_set_raw(r, NP_REC_PKT_EVENTS);
	rc = ana_load_reader(m, r, &c, path, alias);
	np_reader_close(r);
	return rc;
}

int ana_load_mem(struct ana_model *m, const void *data, size_t len, const char *name)
{
	struct np_reader *r;
	struct ana_loadctx c = { .m = m, .path = name, .host = -1 };
	int rc = np_reader_open_mem(&r, data, len, ana_load_warn_cb, &c);
	if (rc)
		return rc;
	np_reader_set_raw(r, NP_REC_PKT_EVENTS);
	rc = ana_load_reader(m, r, &c, name, NULL);
	np_reader_close(r);
	return rc;
}

/* Matches each sync exchange stored by one side to the other side's copy
 * (same T1..T3), fills unknown peers, drops duplicates. */
static int ana_sync_cmp(const void *a, const void *b)
{
	const struct ana_sync *x = a, *y = b;
	if (x->t1 != y->t1) return x->t1 < y->t1 ? -1 : 1;
	if (x->t2 != y->t2) return x->t2 < y->t2 ? -1 : 1;
	if (x->t3 != y->t3) return x->t3 < y->t3 ? -1 : 1;
	return 0;
}

/* Two recorders on one boot share CLOCK_MONOTONIC (namespaces of one
 * machine): a request received before it was sent (T2 < T1) or a reply
 * before its request was answered (T4 < T3) is a damaged stamp, and one
 * of them makes the pair's fit bounds cross. --test-clock-shift is taken
 * back out first. */
static bool ana_sync_impossible(const struct ana_model *m, const struct ana_sync *x)
{
	const struct ana_host *c = &m->hosts.v[x->client], *s = &m->hosts.v[x->server];
	if (!c->has_header || !s->has_header || !c->boot_id[0] || strcmp(c->boot_id, s->boot_id))
		return false;
	int64_t d = s->clock_shift_ns - c->clock_shift_ns;
	return (int64_t)(x->t2 - x->t1) < d || (int64_t)(x->t4 - x->t3) < -d;
}

static void ana_sync_finish(struct ana_model *m)
{
	uint64_t bad = 0;
	struct ana_sync *s = m->syncs.v;
	size_t n = m->syncs.n, out = 0;
	if (!n)
		return;
	qsort(s, n, sizeof(*s), ana_sync_cmp);
	for (size_t i = 0; i < n; i++) {
		struct ana_sync cur = s[i];
		while (i + 1 < n && s[i + 1].t1 == cur.t1 && s[i + 1].t2 == cur.t2 && s[i + 1].t3 == cur.t3) {
			i++;
			if (cur.client == ANA_HOST_NONE) cur.client = s[i].client;
			if (cur.server == ANA_HOST_NONE) cur.server = s[i].server;
			cur.auth = cur.auth && s[i].auth;
		}
		for (size_t h = 0; cur.peer_id && h < m->hosts.n; h++)
			if (m->hosts.v[h].sync_id == cur.peer_id) {
				if (cur.client == ANA_HOST_NONE) cur.client = (uint16_t)h;
				else if (cur.server == ANA_HOST_NONE) cur.server = (uint16_t)h;
			}
		/* with two hosts the unknown side can only be the other one */
		if (m->hosts.n == 2 && !cur.peer_id) {
			if (cur.client == ANA_HOST_NONE && cur.server != ANA_HOST_NONE &&
			    m->hosts.v[1 - cur.server].pkt_events)
				cur.client = (uint16_t)(1 - cur.server);
			if (cur.server == ANA_HOST_NONE && cur.client != ANA_HOST_NONE &&
			    m->hosts.v[1 - cur.client].pkt_events)
				cur.server = (uint16_t)(1 - cur.client);
		}
		if (cur.client == ANA_HOST_NONE || cur.server == ANA_HOST_NONE || cur.client == cur.server)
			continue;
		if (ana_sync_impossible(m, &cur)) {
			bad++;
			continue;
		}
		s[out++] = cur;
	}
	if (bad)
		((double)bad <= ANA_MINOR_MISSED_SHARE * (double)(out + bad) ? ana_note : ana_warn)(
			m, "%llu of %llu clock-sync exchanges dropped: stamps impossible on one boot "
			"(T2 < T1 or T4 < T3)", (unsigned long long)bad, (unsigned long long)(out + bad));
	if (out < n && !out)
		ana_warn(m, "clock sync exchanges found but no peer recording to pair them with");
	m->syncs.n = out;
}

/* Display names: alias, else hostname (+ netns label), else the file stem;
 * duplicates get the file stem so every host name is unique. */
void ana_load_finish(struct ana_model *m)
{
	for (size_t i = 0; i < m->hosts.n; i++) {
		struct ana_host *h = &m->hosts.v[i];
		if (h->name[0])
			continue;
		if (h->hostname[0] && h->label[0])
			snprintf(h->name, sizeof(h->name), "%.60s/%.60s", h->hostname, h->label);
		else if (h->hostname[0])
			snprintf(h->name, sizeof(h->name), "%s", h->hostname);
		else
			snprintf(h->name, sizeof(h->name), "%.127s", h->stem);
	}
	for (size_t i = 0; i < m->hosts.n; i++)
		for (size_t j = 0; j < m->hosts.n; j++) {
			struct ana_host *a = &m->hosts.v[i], *b = &m->hosts.v[j];
			if (i != j && !strcmp(a->name, b->name) && strcmp(a->stem, b->stem)) {
				char tmp[128];
				snprintf(tmp, sizeof(tmp), "%s", a->name);
				snprintf(a->name, sizeof(a->name), "%.60s(%.60s)", tmp, a->stem);
				snprintf(b->name, sizeof(b->name), "%.60s(%.60s)", tmp, b->stem);
			}
		}
	for (size_t i = 0; i < m->hosts.n; i++) {
		struct ana_host *h = &m->hosts.v[i];
		if (h->t_min == UINT64_MAX)
			h->t_min = h->t_max = 0;
		h->t0 = h->t_min;
		h->clk_b = (double)h->t0;
		/* a few lost events among many are noted, not warned: every
		 * real recorder loses a handful of netcpu events */
		uint64_t nlost = h->lost_events + h->pkt_lost;
		void (*say)(struct ana_model *, const char *, ...) =
			(double)nlost <= ANA_MINOR_SHARE * (double)(h->pkt_seen + h->records) ? ana_note : ana_warn;
		if (h->lost_events || h->pkt_lost) {
			char list[256] = "";
			size_t o = 0;
			for (int k = 0; k < 8 && h->lost_fam[k][0] && o < sizeof(list); k++)
				o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s %llu", o ? ", " : "",
						      h->lost_fam[k], (unsigned long long)h->lost_fam_n[k]);
			if (h->pkt_lost)
				say(m, "%s: the recorder lost %llu packet-path events (ring buffer full): "
					 "packets missing there look lost; loss figures are upper bounds",
					 h->name, (unsigned long long)h->pkt_lost);
			if (list[0] || (h->lost_events && !h->pkt_lost))
				say(m, "%s: the recorder lost events (%s): the figures of those families "
					 "are lower bounds", h->name, list[0] ? list : "total");
		}
		if (h->pkt_missed)
			((double)h->pkt_missed <= ANA_MINOR_MISSED_SHARE * (double)h->pkt_seen ? ana_note : ana_warn)(
				m, "%s: the kernel did not run the packet-hook tracepoint programs for %llu packets "
				"(counted by the recorder: at netif_receive and dev_queue against its TC hooks, at "
				"qdisc_deq against the qdisc's enqueue, where an AQM qdisc's own drops count too): "
				"their events there are missing, the packets are not lost", h->name,
				(unsigned long long)h->pkt_missed);
		if (h->pkt_prog_missed)
			((double)h->pkt_prog_missed <= ANA_MINOR_MISSED_SHARE * (double)h->pkt_seen ? ana_note : ana_warn)(
				m, "%s: the kernel skipped %llu packet-hook program runs (the program was already "
				"running on that CPU; counted by the kernel): those events are missing, the "
				"packets are not lost", h->name, (unsigned long long)h->pkt_prog_missed);
		ana_progs_note(m, h);
		if (h->capped_events)
			ana_warn(m, "%s: the per-flow cap dropped %llu packet events: packets capped on "
				 "one host only look lost", h->name, (unsigned long long)h->capped_events);
	}
	ana_sync_finish(m);
}
