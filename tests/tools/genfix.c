/* genfix: writes multi-host recordings with exactly known truth, for the
 * analyzer's tests and benchmark.
 *
 *   genfix -o DIR [--packets N] [--flows F] [--offset NS] [--drift PPM]
 *          [--loss K] [--gso K] [--det] [--sync N] [--seed S] [--no-truth]
 *          [--no-header-b] [--retx] [--gap NS] [--txn N] [--zstd L]
 *          [--chunk-events N] [--no-acks] [--router OFFSET_NS] [--slow-rpc]
 *          [--pair P]
 *
 * Host "hosta" is the reference clock (true time); "hostb" runs at
 * hostb = true + offset + drift_ppm*1e-6*(true - T0). Every flow sends data
 * packets hosta -> hostb through sock_send, qdisc_enq, qdisc_deq, dev_xmit
 * on hosta and netif_receive, tcp_rcv, copy_to_user on hostb; hostb answers
 * each with a pure ACK (dev_xmit on hostb, netif_receive on hosta). Sync
 * exchanges (T1..T4) are stored in both files. --loss K drops every K-th
 * data packet after a hook chosen in rotation (qdisc_enq, dev_xmit,
 * netif_receive); --retx resends each lost packet 200 ms later with a new
 * TSval. --gso K sends super-packets of K segments that the receiver sees
 * as K wire segments. --no-acks leaves out the ACKs (one-way traffic:
 * with --sync 0 the clock can only be approximate). --router OFFSET puts a
 * third host "hostr" (clock = true + OFFSET) between them that forwards every
 * packet (netif_receive, dev_queue, qdisc_enq, qdisc_deq, dev_xmit); its time
 * is part of the truth's wire segment. --slow-rpc adds TXN_EVENTS with
 * three 50 ms server transactions (with --txn N for the connection's
 * TXN_STATS) during which flow 0's receive stack on hostb is 200 us slower.
 * --pair P (1..40) names the hosts "pPa" and "pPb" (files pPa.npr, pPb.npr),
 * gives their packets keys of their own (ACK numbers + P * 1e8) and adds to
 * pPa sync exchanges with p(P-1)b (same --offset/--drift, stored on pPa's
 * side only): pairs 0..K-1 made into one directory are 2K hosts whose clocks
 * are linked only along the chain p0a - p0b - p1a - p1b - ... (the
 * benchmark's many-host case).
 * --det makes every segment a deterministic function of
 * the packet number (exact jitter). DIR/truth.txt holds key=value lines. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/types.h>
#include "container.h"
#include "npmsg.h"
#include "pktcols.h"
#include "pktpath.h"
#include "records.h"
#include "sketch.h"

#define GF_MSS 1448
#define GF_REC_EVENTS 65536
#define GF_T0 1000000000000ull          /* hosta's first timestamp: 1000 s */
#define GF_NSEG 10

enum { S_SND, S_QDISC, S_DEV, S_WIRE, S_FSTACK, S_FQDISC, S_FDEV, S_RSTACK, S_RAPP, S_TOTAL };
static const char *const gf_seg[GF_NSEG] = { "sender_stack", "qdisc", "device", "wire",
					     "forward_stack", "forward_qdisc", "forward_device",
					     "receiver_stack", "receiver_app", "total" };

struct gf_opts {
	const char *dir;
	long packets, flows, sync, loss, gso, txn;
	double offset, drift;
	unsigned long long seed;
	long gap;
	bool det, truth, no_header_b, retx, no_acks;
	bool router, slow_rpc;
	double roffset;
	int zstd;
	long chunk;
	long pair;                  /* --pair P, -1 none */
	char name_a[16], name_b[16];
};

struct gf_host {
	const char *name;
	struct np_writer *w;
	struct np_recbuf rb;
	struct pktcols_ev *ev;
	size_t nev;
	uint64_t last_ts;
	int idx;
};

static unsigned long long gf_rng;
static double gf_uniform(void)
{
	gf_rng ^= gf_rng << 13; gf_rng ^= gf_rng >> 7; gf_rng ^= gf_rng << 17;
	return ((gf_rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gf_exp(double mean) { return -mean * log(gf_uniform()); }

static struct gf_opts O = { .packets = 10000, .flows = 2, .sync = 200, .offset = 3000000,
			    .drift = 0, .seed = 1, .gap = 100000, .truth = true, .zstd = 1,
			    .chunk = GF_REC_EVENTS, .pair = -1, .name_a = "hosta", .name_b = "hostb" };

static struct gf_host *GR;    /* the router host with --router, else NULL */

static uint64_t gf_r(double t) { return (uint64_t)llround(t + O.roffset); }

/* hostb's clock for a true time */
static uint64_t gf_b(double t)
{
	return (uint64_t)llround(t + O.offset + O.drift * 1e-6 * (t - (double)GF_T0));
}

static int gf_ev_cmp(const void *a, const void *b)
{
	const struct pktcols_ev *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int gf_flush(struct gf_host *h)
{
	if (!h->nev)
		return 0;
	qsort(h->ev, h->nev, sizeof(*h->ev), gf_ev_cmp);
	msgpack_packer *pk = np_recbuf_begin(&h->rb, NP_REC_PKT_EVENTS, 1);
	msgpack_pack_map(pk, PKTCOLS_EVENT_KEYS + 4);
	np_pack_kv_u64(pk, "t0_ns", h->ev[0].ts);
	np_pack_kv_u64(pk, "t1_ns", h->ev[h->nev - 1].ts);
	np_pack_kv_u64(pk, "n", h->nev);
	np_pack_kv_u64(pk, "sample_n", 1);
	pktcols_pack_events(pk, h->ev, h->nev);
	h->nev = 0;
	return np_writer_commit(h->w, &h->rb);
}

static int gf_emit(struct gf_host *h, uint64_t ts, int hook, uint32_t flow, uint32_t seq,
		   uint32_t slen, uint32_t ack, uint32_t tsval, uint8_t flags)
{
	struct pktcols_ev *e = &h->ev[h->nev++];
	memset(e, 0, sizeof(*e));
	e->ts = ts; e->hook = (uint8_t)hook; e->flow = flow;
	e->seq = seq; e->end_seq = seq + slen; e->ack = ack; e->tsval = tsval;
	e->len = slen + 52; e->tcpflags = slen ? 0x18 : 0x10; e->doff = 8;
	e->flags = flags | (hook == PK_HOOK_SOCK_SEND ? PK_F_RANGE : PK_F_HAS_TS);
	if (hook == PK_HOOK_SOCK_SEND) { e->ack = 0; e->tsval = 0; e->len = slen; }
	if (ts > h->last_ts) h->last_ts = ts;
	return h->nev >= (size_t)O.chunk ? gf_flush(h) : 0;
}

static void gf_header(struct gf_host *h, bool with_header)
{
	if (!with_header)
		return;
	msgpack_packer *pk = np_recbuf_begin(&h->rb, NP_REC_HEADER, 1);
	msgpack_pack_map(pk, 6);
	np_pack_kv_str(pk, "kind", "recording");
	np_pack_kv_str(pk, "producer", "genfix");
	np_pack_str(pk, "host");
	msgpack_pack_map(pk, 5);
	np_pack_kv_str(pk, "hostname", h->name);
	np_pack_kv_str(pk, "machine_id", h->idx == 2 ? "rrrr" : h->idx ? "bbbb" : "aaaa");
	np_pack_kv_str(pk, "boot_id", h->idx == 2 ? "r00r" : h->idx ? "b00b" : "a00a");
	np_pack_kv_str(pk, "kernel", "6.18-genfix");
	np_pack_kv_u64(pk, "ncpus", 2);
	np_pack_kv_u64(pk, "interval_ns", 1000000000ull);
	uint64_t start = h->idx == 2 ? gf_r((double)GF_T0) : h->idx ? gf_b((double)GF_T0) : GF_T0;
	np_pack_kv_u64(pk, "start_ns", start);
	/* the clock pair of a real HEADER: the same true instant on every host
	 * (npanalyze --from/--to maps windows between hosts through it) */
	np_pack_str(pk, "clock");
	msgpack_pack_map(pk, 2);
	np_pack_kv_u64(pk, "mono_ns", start);
	np_pack_kv_u64(pk, "rt_ns", 1767225600000000000ull);
	np_writer_commit(h->w, &h->rb);
}

static void gf_flows(struct gf_host *h)
{
	struct pktcols_flow *f = calloc((size_t)O.flows * 2, sizeof(*f));
	if (!f)
		return;
	for (long i = 0; i < O.flows; i++) {
		for (int d = 0; d < 2; d++) {       /* d=0 data a->b, d=1 acks b->a */
			struct pktcols_flow *x = &f[i * 2 + d];
			x->idx = (uint32_t)(i * 2 + d);
			x->family = 4;
			x->proto = 6;
			uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
			memcpy(x->saddr, d ? b : a, 4);
			memcpy(x->daddr, d ? a : b, 4);
			x->sport = (uint16_t)(d ? 8080 : 40000 + i);
			x->dport = (uint16_t)(d ? 40000 + i : 8080);
		}
	}
	msgpack_packer *pk = np_recbuf_begin(&h->rb, NP_REC_PKT_FLOWS, 1);
	msgpack_pack_map(pk, PKTCOLS_FLOW_KEYS);
	pktcols_pack_flows(pk, f, (size_t)O.flows * 2);
	free(f);
	/* a chunk of its own: without a time, it is read for any window
	 * (nprec writes the flows of each interval into that interval's chunk) */
	np_writer_commit(h->w, &h->rb);
}

/* ---- truth ---- */

struct gf_truth {
	uint64_t *seg[GF_NSEG];
	size_t n[GF_NSEG], cap;
	FILE *f;
	/* jitter per flow: transit differences in send order */
	int64_t *prev_transit;
	bool *have_prev;
	int64_t *jmin, *jmax;
	double *rfc;
	int64_t **absj;
	size_t *nabs;
};

static struct gf_truth T;

static void gf_truth_seg(int s, int64_t v)
{
	if (!O.truth || v < 0)
		return;
	T.seg[s][T.n[s]++] = (uint64_t)v;
}

static int gf_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int gf_i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* exact order statistic of rank ceil(q*n) */
static uint64_t gf_q(const uint64_t *v, size_t n, double q)
{
	size_t r = (size_t)ceil(q * (double)n);
	return v[r ? r - 1 : 0];
}

/* ---- the traffic ---- */

struct gf_seglat { double snd, qd, dev, wire, rstk, app; };

static void gf_latencies(long k, struct gf_seglat *l)
{
	if (O.det) {
		l->snd = 20000; l->qd = 5000.0 * (double)(k % 3); l->dev = 2000;
		l->wire = 50000 + 10000.0 * (double)(k % 4);
		l->rstk = 15000; l->app = 7000.0 * (double)(k % 5);
		return;
	}
	l->snd = 8000 + gf_exp(12000);
	l->qd = gf_uniform() < 0.3 ? gf_exp(40000) : 1000 + gf_exp(500);
	l->dev = 1500 + gf_exp(800);
	l->wire = 40000 + gf_exp(30000);
	l->rstk = 10000 + gf_exp(6000);
	l->app = 5000 + gf_exp(100000);
}

/* --slow-rpc: three 50 ms server transactions at 1/4, 1/2, 3/4 of the
 * traffic; flow 0's packets sent inside them take 200 us more in hostb's
 * receive stack. */
#define GF_SLOW_NS 50000000.0
static double gf_slow_at(int k)
{
	return (double)GF_T0 + 1e6 + (double)O.gap * (double)O.packets * (double)(k + 1) / 4.0;
}

static bool gf_in_slow(double t)
{
	for (int k = 0; k < 3; k++)
		if (t >= gf_slow_at(k) && t <= gf_slow_at(k) + GF_SLOW_NS)
			return true;
	return false;
}

static void gf_txn_events(struct gf_host *B)
{
	size_t n = 300;
	uint64_t *start = malloc(n * sizeof(uint64_t)), *dur = malloc(n * sizeof(uint64_t));
	uint64_t *one = malloc(n * sizeof(uint64_t)), *role = malloc(n * sizeof(uint64_t));
	uint64_t *pid = malloc(n * sizeof(uint64_t));
	if (!start || !dur || !one || !role || !pid)
		goto out;
	double span = (double)O.gap * (double)O.packets;
	for (size_t i = 0; i < n; i++) {
		double t = (double)GF_T0 + 1e6 + span * ((double)i + 0.5) / (double)n;
		start[i] = gf_b(t);
		dur[i] = 100000 + (i % 10) * 1000;
		one[i] = 1; role[i] = 2; pid[i] = 4242;
	}
	for (int k = 0; k < 3; k++) {     /* the slow ones replace three entries */
		size_t i = (size_t)(k + 1) * n / 4;
		start[i] = gf_b(gf_slow_at(k));
		dur[i] = (uint64_t)GF_SLOW_NS;
	}
	/* keep start times sorted for the delta column */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && start[j - 1] > start[j]; j--) {
			uint64_t a = start[j]; start[j] = start[j - 1]; start[j - 1] = a;
			a = dur[j]; dur[j] = dur[j - 1]; dur[j - 1] = a;
		}
	msgpack_packer *pk = np_recbuf_begin(&B->rb, NP_REC_TXN_EVENTS, 1);
	msgpack_pack_map(pk, 9);
	np_pack_kv_u64(pk, "t0_ns", gf_b((double)GF_T0));
	np_pack_kv_u64(pk, "t1_ns", gf_b((double)GF_T0 + span + 2e6));
	np_pack_kv_u64(pk, "n", n);
	np_pack_kv_u64_array(pk, "conn", one, n);
	np_pack_kv_u64_array(pk, "role", role, n);
	np_pack_kv_u64_array(pk, "pid", pid, n);
	np_pack_kv_u64_array(pk, "tid", pid, n);
	np_pack_kv_u64_delta(pk, "start_ns_d", start, n);
	np_pack_kv_u64_array(pk, "dur_ns", dur, n);
	np_writer_commit(B->w, &B->rb);
	if (O.truth)
		fprintf(T.f, "slow_rpc.count=3\nslow_rpc.bottleneck=receiver_stack\n");
out:
	free(start); free(dur); free(one); free(role); free(pid);
}

static int gf_traffic(struct gf_host *A, struct gf_host *B)
{
	long lost_n = 0;
	double t = (double)GF_T0 + 1e6;
	uint32_t *seq = calloc((size_t)O.flows, sizeof(uint32_t));
	uint32_t *rseq = calloc((size_t)O.flows, sizeof(uint32_t));
	long *cnt = calloc((size_t)O.flows, sizeof(long));
	if (!seq || !rseq || !cnt)
		return -ENOMEM;
	for (long f = 0; f < O.flows; f++) {
		seq[f] = 1000000u * (uint32_t)(f + 1) + 0xf0000000u;
		rseq[f] = 5000000u * (uint32_t)(f + 1) + (O.pair > 0 ? 100000000u * (uint32_t)O.pair : 0);
	}
	long gso = O.gso > 1 ? O.gso : 1;
	static const int loss_hook[3] = { PK_HOOK_QDISC_ENQ, PK_HOOK_DEV_XMIT, PK_HOOK_NETIF_RECEIVE };
	for (long k = 0; k < O.packets; k += gso) {
		long f = (k / gso) % O.flows;
		uint32_t fl = (uint32_t)(f * 2), rfl = fl + 1;
		struct gf_seglat l;
		gf_latencies(cnt[f]++, &l);
		if (O.slow_rpc && f == 0 && gf_in_slow(t))
			l.rstk += 200000;           /* the receiver's stack stalls during slow RPCs */
		uint32_t tsv = (uint32_t)(t / 1e6);
		uint32_t ack = rseq[f];
		uint32_t s0 = seq[f];
		int lost_after = 0;
		if (O.loss > 0 && (k / gso + 1) % O.loss == 0)
			lost_after = loss_hook[lost_n++ % 3];
		/* sender side: one super event for the whole GSO send */
		double t_send = t, t_enq = t + l.snd, t_deq = t_enq + l.qd, t_xmit = t_deq + l.dev;
		int rc = 0;
		rc |= gf_emit(A, (uint64_t)llround(t_send), PK_HOOK_SOCK_SEND, fl, s0, (uint32_t)(GF_MSS * gso), 0, 0, 0);
		rc |= gf_emit(A, (uint64_t)llround(t_enq), PK_HOOK_QDISC_ENQ, fl, s0, (uint32_t)(GF_MSS * gso), ack, tsv, 0);
		if (lost_after != PK_HOOK_QDISC_ENQ) {
			rc |= gf_emit(A, (uint64_t)llround(t_deq), PK_HOOK_QDISC_DEQ, fl, s0, (uint32_t)(GF_MSS * gso), ack, tsv, 0);
			rc |= gf_emit(A, (uint64_t)llround(t_xmit), PK_HOOK_DEV_XMIT, fl, s0, (uint32_t)(GF_MSS * gso), ack, tsv, 0);
		}
		for (long g = 0; g < gso; g++) {
			uint32_t s = s0 + (uint32_t)(GF_MSS * g);
			/* each wire segment: serialisation adds g * 1 us after the first */
			double wire = l.wire + 1000.0 * (double)g;
			double t_rx = t_xmit + wire;
			bool lost = lost_after != 0;
			double r_rx = 0, r_enq = 0, r_deq = 0, r_x = 0;
			if (GR && !lost) {
				/* forwarded by the router: the wire is both links, the
				 * router's own hooks are its forward_ segments */
				r_rx = t_xmit + wire * 0.4;
				double r_q = r_rx + 4000 + (O.det ? 0 : gf_exp(2000));
				r_enq = r_q + 500;
				r_deq = r_enq + 1000;
				r_x = r_deq + 800;
				rc |= gf_emit(GR, gf_r(r_rx), PK_HOOK_NETIF_RECEIVE, fl, s, GF_MSS, ack, tsv, 0);
				rc |= gf_emit(GR, gf_r(r_q), PK_HOOK_DEV_QUEUE, fl, s, GF_MSS, ack, tsv, 0);
				rc |= gf_emit(GR, gf_r(r_enq), PK_HOOK_QDISC_ENQ, fl, s, GF_MSS, ack, tsv, 0);
				rc |= gf_emit(GR, gf_r(r_deq), PK_HOOK_QDISC_DEQ, fl, s, GF_MSS, ack, tsv, 0);
				rc |= gf_emit(GR, gf_r(r_x), PK_HOOK_DEV_XMIT, fl, s, GF_MSS, ack, tsv, 0);
				t_rx = r_x + wire * 0.6;
			}
			double t_rcv = t_rx + l.rstk, t_app = t_rcv + l.app;
			if (!lost) {
				rc |= gf_emit(B, gf_b(t_rx), PK_HOOK_NETIF_RECEIVE, fl, s, GF_MSS, ack, tsv, 0);
				rc |= gf_emit(B, gf_b(t_rcv), PK_HOOK_TCP_RCV, fl, s, GF_MSS, ack, tsv, 0);
				rc |= gf_emit(B, gf_b(t_app), PK_HOOK_COPY_TO_USER, fl, s, GF_MSS, ack, tsv, 0);
				/* pure ACK back, same wire delay distribution */
				double t_ack = t_rcv + 3000, t_ackrx = t_ack + 40000 + (O.det ? 0 : gf_exp(30000));
				uint32_t aseq = rseq[f];
				uint32_t atsv = (uint32_t)(gf_b(t_ack) / 1000000) + (uint32_t)k;
				if (!O.no_acks && GR) {
					/* same minimum one-way delays as the data direction: no asymmetry */
					double r_rx = t_ack + 24000 + (O.det ? 0 : gf_exp(10000)), r_x = r_rx + 3000;
					rc |= gf_emit(GR, gf_r(r_rx), PK_HOOK_NETIF_RECEIVE, rfl, aseq, 0, s + GF_MSS, atsv, 0);
					rc |= gf_emit(GR, gf_r(r_x), PK_HOOK_DEV_XMIT, rfl, aseq, 0, s + GF_MSS, atsv, 0);
					t_ackrx = r_x + 16000 + (O.det ? 0 : gf_exp(10000));
				}
				if (!O.no_acks) {
					rc |= gf_emit(B, gf_b(t_ack), PK_HOOK_DEV_XMIT, rfl, aseq, 0, s + GF_MSS,
						      (uint32_t)(gf_b(t_ack) / 1000000) + (uint32_t)k, 0);
					rc |= gf_emit(A, (uint64_t)llround(t_ackrx), PK_HOOK_NETIF_RECEIVE, rfl, aseq, 0,
						      s + GF_MSS, (uint32_t)(gf_b(t_ack) / 1000000) + (uint32_t)k, 0);
				}
				gf_truth_seg(S_SND, llround(t_enq) - llround(t_send));
				gf_truth_seg(S_QDISC, llround(t_deq) - llround(t_enq));
				gf_truth_seg(S_DEV, llround(t_xmit) - llround(t_deq));
				if (GR) {
					gf_truth_seg(S_WIRE, llround(r_rx) - llround(t_xmit) + llround(t_rx) - llround(r_x));
					gf_truth_seg(S_FSTACK, (int64_t)(gf_r(r_enq) - gf_r(r_rx)));
					gf_truth_seg(S_FQDISC, (int64_t)(gf_r(r_deq) - gf_r(r_enq)));
					gf_truth_seg(S_FDEV, (int64_t)(gf_r(r_x) - gf_r(r_deq)));
				} else
					gf_truth_seg(S_WIRE, llround(t_rx) - llround(t_xmit));
				gf_truth_seg(S_RSTACK, (int64_t)(gf_b(t_rcv) - gf_b(t_rx)));
				gf_truth_seg(S_RAPP, (int64_t)(gf_b(t_app) - gf_b(t_rcv)));
				gf_truth_seg(S_TOTAL, llround(t_app) - llround(t_send));
				if (O.truth && O.det && gso == 1) {
					/* RFC 3550 transit with local clocks, send order */
					int64_t transit = (int64_t)gf_b(t_app) - llround(t_send);
					if (T.have_prev[f]) {
						int64_t dj = transit - T.prev_transit[f];
						if (dj < T.jmin[f]) T.jmin[f] = dj;
						if (dj > T.jmax[f]) T.jmax[f] = dj;
						int64_t a = dj < 0 ? -dj : dj;
						T.rfc[f] += ((double)a - T.rfc[f]) / 16.0;
						T.absj[f][T.nabs[f]++] = a;
					}
					T.have_prev[f] = true;
					T.prev_transit[f] = transit;
				}
			} else if (O.truth && g == 0) {
				int last = lost_after == PK_HOOK_NETIF_RECEIVE ? PK_HOOK_DEV_XMIT : lost_after;
				const char *seg = lost_after == PK_HOOK_QDISC_ENQ ? "qdisc"
						  : lost_after == PK_HOOK_DEV_XMIT ? "wire" : "wire";
				if (lost_after == PK_HOOK_NETIF_RECEIVE) {
					/* seen on hostb's netif_receive, then dropped in its stack */
					rc |= gf_emit(B, gf_b(t_rx), PK_HOOK_NETIF_RECEIVE, fl, s, GF_MSS, ack, tsv, 0);
					last = PK_HOOK_NETIF_RECEIVE;
					seg = "receiver_stack";
				}
				fprintf(T.f, "lost.%ld=%u %s %s %s\n", lost_n, s,
					last == PK_HOOK_NETIF_RECEIVE ? "hostb" : "hosta",
					pktcols_hook_name((unsigned)last), seg);
			}
			if (lost && O.retx) {
				/* retransmission 200 ms later, new TSval, delivered */
				double r0 = t + 2e8;
				uint32_t rtsv = (uint32_t)(r0 / 1e6);
				rc |= gf_emit(A, (uint64_t)llround(r0 + l.snd), PK_HOOK_QDISC_ENQ, fl, s, GF_MSS, ack, rtsv, 0);
				rc |= gf_emit(A, (uint64_t)llround(r0 + l.snd + 1000), PK_HOOK_QDISC_DEQ, fl, s, GF_MSS, ack, rtsv, 0);
				rc |= gf_emit(A, (uint64_t)llround(r0 + l.snd + 2000), PK_HOOK_DEV_XMIT, fl, s, GF_MSS, ack, rtsv, 0);
				rc |= gf_emit(B, gf_b(r0 + l.snd + 2000 + l.wire), PK_HOOK_NETIF_RECEIVE, fl, s, GF_MSS, ack, rtsv, 0);
				rc |= gf_emit(B, gf_b(r0 + l.snd + 2000 + l.wire + l.rstk), PK_HOOK_TCP_RCV, fl, s, GF_MSS, ack, rtsv, 0);
			}
		}
		if (rc)
			return -EIO;
		seq[f] += (uint32_t)(GF_MSS * gso);
		rseq[f] += 0;
		t += (double)O.gap * (double)gso;
	}
	if (O.truth)
		fprintf(T.f, "lost=%ld\nretx=%ld\n", lost_n, O.retx ? lost_n : 0);
	free(seq); free(rseq); free(cnt);
	return 0;
}

/* Exchanges of different pairs at different times: the analyzer takes
 * exchanges with equal T1..T3 for two copies of one. */
static double gf_pair_shift(void)
{
	return O.pair > 0 ? 7919.0 * (double)O.pair : 0;
}

static uint64_t gf_sync_id(int side, long pair)
{
	return (pair > 0 ? 1000 * (uint64_t)pair : 0) + (side ? 222 : 111);
}

/* n exchanges spread over the run at phase (0..1) of each slot: T1/T4 on
 * true time, T2/T3 on hostb's clock, one-way delays 40 us + exp(20 us). */
struct gf_ex { uint64_t *t[4]; size_t n; };

static int gf_ex_make(struct gf_ex *x, double phase, double t_end)
{
	size_t n = x->n = (size_t)O.sync;
	for (int k = 0; k < 4; k++)
		x->t[k] = malloc(n * 8);
	if (!x->t[0] || !x->t[1] || !x->t[2] || !x->t[3])
		return -1;
	double span = t_end - (double)GF_T0;
	for (size_t i = 0; i < n; i++) {
		double t = (double)GF_T0 + span * ((double)i + phase) / (double)n + gf_pair_shift();
		double w1 = 40000 + gf_exp(20000), w2 = 40000 + gf_exp(20000);
		x->t[0][i] = (uint64_t)llround(t);
		x->t[1][i] = gf_b(t + w1);
		x->t[2][i] = x->t[1][i] + 20000;
		double t3true = t + w1 + 20000;
		x->t[3][i] = (uint64_t)llround(t3true + w2);
	}
	return 0;
}

static void gf_ex_pack(msgpack_packer *pk, const struct gf_ex *x)
{
	static const char *const key[4] = { "t1", "t2", "t3", "t4" };
	for (int k = 0; k < 4; k++)
		np_pack_kv_u64_array(pk, key[k], x->t[k], x->n);
}

static void gf_ex_free(struct gf_ex *x)
{
	for (int k = 0; k < 4; k++)
		free(x->t[k]);
}

/* --pair P > 0: pPa (client, true time) exchanges with p(P-1)b (clock as
 * hostb's), only pPa's copy stored: the analyzer pairs it by peer_id. */
static void gf_sync_chain(struct gf_host *A, double t_end)
{
	struct gf_ex x;
	if (gf_ex_make(&x, 0.25, t_end))
		goto out;
	msgpack_packer *pk = np_recbuf_begin(&A->rb, NP_REC_SYNC, 1);
	msgpack_pack_map(pk, 9);
	np_pack_kv_u64(pk, "t0_ns", GF_T0);
	np_pack_kv_u64(pk, "t1_ns", (uint64_t)t_end);
	np_pack_kv_u64(pk, "self_id", gf_sync_id(0, O.pair));
	np_pack_kv_u64(pk, "n", x.n);
	np_pack_str(pk, "peer_id");
	msgpack_pack_array(pk, x.n);
	for (size_t i = 0; i < x.n; i++)
		msgpack_pack_uint64(pk, gf_sync_id(1, O.pair - 1));
	gf_ex_pack(pk, &x);
	np_writer_commit(A->w, &A->rb);
out:
	gf_ex_free(&x);
}

/* Sync exchanges spread over the recording, stored in both files. */
static void gf_sync(struct gf_host *A, struct gf_host *B, double t_end)
{
	if (O.sync <= 0)
		return;
	struct gf_ex x;
	size_t n = (size_t)O.sync;
	if (gf_ex_make(&x, 0.5, t_end))
		goto out;
	for (int side = 0; side < 2; side++) {
		struct gf_host *h = side ? B : A;
		msgpack_packer *pk = np_recbuf_begin(&h->rb, NP_REC_SYNC, 1);
		msgpack_pack_map(pk, 11);
		np_pack_kv_u64(pk, "t0_ns", GF_T0);
		np_pack_kv_u64(pk, "t1_ns", (uint64_t)t_end);
		np_pack_kv_u64(pk, "self_id", gf_sync_id(side, O.pair));
		np_pack_kv_u64(pk, "n", n);
		np_pack_str(pk, "role");
		msgpack_pack_array(pk, n);
		for (size_t i = 0; i < n; i++)
			np_pack_str(pk, side ? "server" : "client");
		np_pack_str(pk, "peer_id");
		msgpack_pack_array(pk, n);
		for (size_t i = 0; i < n; i++)
			msgpack_pack_uint64(pk, gf_sync_id(!side, O.pair));
		np_pack_str(pk, "peer");
		msgpack_pack_array(pk, n);
		for (size_t i = 0; i < n; i++)
			np_pack_str(pk, side ? "" : "hostb:9999");
		gf_ex_pack(pk, &x);
		np_writer_commit(h->w, &h->rb);
	}
out:
	gf_ex_free(&x);
}

/* Transactions on hostb (server) with known latencies: TXN_STATS sketch. */
static void gf_txn(struct gf_host *B)
{
	if (O.txn <= 0)
		return;
	struct np_sketch sk;
	np_sketch_init(&sk);
	uint64_t *lat = malloc((size_t)O.txn * sizeof(uint64_t));
	if (!lat)
		return;
	for (long i = 0; i < O.txn; i++) {
		lat[i] = 100000 + (uint64_t)(i % 100) * 10000;     /* 100 us .. 1.09 ms */
		np_sketch_add(&sk, lat[i], 1);
	}
	msgpack_packer *pk = np_recbuf_begin(&B->rb, NP_REC_TXN_STATS, 1);
	msgpack_pack_map(pk, 13);
	np_pack_kv_u64(pk, "t0_ns", gf_b((double)GF_T0));
	np_pack_kv_u64(pk, "t1_ns", gf_b((double)GF_T0 + 1e9));
	np_pack_kv_u64(pk, "n", 1);
	uint64_t one = 1;
	uint64_t role = 2, lport = 8080, rport = 40000, cnt = (uint64_t)O.txn, pid = 4242;
	np_pack_kv_u64_array(pk, "conn", &one, 1);
	np_pack_kv_u64_array(pk, "role", &role, 1);
	np_pack_str(pk, "laddr"); msgpack_pack_array(pk, 1); np_pack_str(pk, "10.0.0.2");
	np_pack_kv_u64_array(pk, "lport", &lport, 1);
	np_pack_str(pk, "raddr"); msgpack_pack_array(pk, 1); np_pack_str(pk, "10.0.0.1");
	np_pack_kv_u64_array(pk, "rport", &rport, 1);
	np_pack_kv_u64_array(pk, "count", &cnt, 1);
	np_pack_kv_u64_array(pk, "pid", &pid, 1);
	np_pack_str(pk, "path"); msgpack_pack_array(pk, 1); np_pack_str(pk, "/api");
	np_pack_str(pk, "lat"); msgpack_pack_array(pk, 1); np_sketch_pack(pk, &sk);
	np_writer_commit(B->w, &B->rb);
	qsort(lat, (size_t)O.txn, sizeof(*lat), gf_u64_cmp);
	if (O.truth)
		fprintf(T.f, "txn.count=%ld\ntxn.p50=%llu\ntxn.p99=%llu\n", O.txn,
			(unsigned long long)gf_q(lat, (size_t)O.txn, 0.5),
			(unsigned long long)gf_q(lat, (size_t)O.txn, 0.99));
	free(lat);
	np_sketch_free(&sk);
}

static int gf_open(struct gf_host *h, const char *name, int idx)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.npr", O.dir, name);
	unlink(path);
	h->name = name;
	h->idx = idx;
	np_recbuf_init(&h->rb);
	h->ev = malloc(GF_REC_EVENTS * sizeof(*h->ev));
	struct np_writer_opts wo = { .zstd_level = O.zstd, .index = true };
	int rc = np_writer_open(&h->w, path, NP_KIND_RECORDING, &wo);
	if (rc || !h->ev) {
		fprintf(stderr, "genfix: cannot create %s: %s\n", path, strerror(rc ? -rc : ENOMEM));
		return -1;
	}
	return 0;
}

static void gf_usage(FILE *f)
{
	fprintf(f, "usage: genfix -o DIR [--packets N] [--flows F] [--offset NS] [--drift PPM]\n"
		"       [--loss K] [--gso K] [--det] [--sync N] [--seed S] [--no-truth]\n"
		"       [--no-header-b] [--retx] [--gap NS] [--txn N] [--zstd L] [--chunk-events N] [--no-acks]\n"
		"       [--router OFFSET_NS] [--slow-rpc] [--pair P]\n");
}

/* --help: what each option does is in the comment at the top of genfix.c,
 * the one place that keeps it true. */
static void gf_help(void)
{
	gf_usage(stdout);
	printf("Writes two-host recordings (hosta.npr, hostb.npr) with exactly known truth\n"
	       "(DIR/truth.txt) for the analyzer's tests and benchmark; options are described\n"
	       "in the comment at the top of tests/tools/genfix.c.\n"
	       "Exit codes: 0 written, 1 cannot write, 2 bad usage.\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "packets", 1, NULL, 'p' }, { "flows", 1, NULL, 'f' }, { "offset", 1, NULL, 'O' },
		{ "drift", 1, NULL, 'D' }, { "loss", 1, NULL, 'l' }, { "gso", 1, NULL, 'g' },
		{ "det", 0, NULL, 'd' }, { "sync", 1, NULL, 's' }, { "seed", 1, NULL, 'S' },
		{ "no-truth", 0, NULL, 'N' }, { "no-header-b", 0, NULL, 'H' }, { "retx", 0, NULL, 'r' },
		{ "gap", 1, NULL, 'G' }, { "txn", 1, NULL, 't' }, { "zstd", 1, NULL, 'z' },
		{ "chunk-events", 1, NULL, 'c' }, { "no-acks", 0, NULL, 'A' },
		{ "router", 1, NULL, 'R' }, { "slow-rpc", 0, NULL, 'W' }, { "pair", 1, NULL, 'P' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
		switch (c) {
		case 'o': O.dir = optarg; break;
		case 'p': O.packets = atol(optarg); break;
		case 'f': O.flows = atol(optarg); break;
		case 'O': O.offset = atof(optarg); break;
		case 'D': O.drift = atof(optarg); break;
		case 'l': O.loss = atol(optarg); break;
		case 'g': O.gso = atol(optarg); break;
		case 'd': O.det = true; break;
		case 's': O.sync = atol(optarg); break;
		case 'S': O.seed = strtoull(optarg, NULL, 0); break;
		case 'N': O.truth = false; break;
		case 'H': O.no_header_b = true; break;
		case 'r': O.retx = true; break;
		case 'G': O.gap = atol(optarg); break;
		case 't': O.txn = atol(optarg); break;
		case 'z': O.zstd = atoi(optarg); break;
		case 'c': O.chunk = atol(optarg); break;
		case 'A': O.no_acks = true; break;
		case 'R': O.router = true; O.roffset = atof(optarg); break;
		case 'W': O.slow_rpc = true; break;
		case 'h': gf_help(); return 0;
		case 'P':
			O.pair = atol(optarg);
			snprintf(O.name_a, sizeof(O.name_a), "p%lda", O.pair);
			snprintf(O.name_b, sizeof(O.name_b), "p%ldb", O.pair);
			break;
		default: gf_usage(stderr); return 2;
		}
	}
	if (!O.dir || O.flows < 1 || O.packets < 1 || O.gap < 1 || O.chunk < 1 || O.chunk > GF_REC_EVENTS) {
		gf_usage(stderr);
		return 2;
	}
	gf_rng = O.seed * 0x9e3779b97f4a7c15ULL + 1;
	mkdir(O.dir, 0700);
	struct gf_host A = { 0 }, B = { 0 }, R = { 0 };
	if (O.pair > 40 || (O.pair >= 0 && O.flows > 19)) {
		fprintf(stderr, "genfix: --pair is 0..40, with at most 19 flows\n");
		return 2;
	}
	if (gf_open(&A, O.name_a, 0) || gf_open(&B, O.name_b, 1))
		return 1;
	if (O.router) {
		if (O.gso > 1 || O.loss) {
			fprintf(stderr, "genfix: --router goes without --gso and --loss\n");
			return 2;
		}
		if (gf_open(&R, "hostr", 2))
			return 1;
		GR = &R;
	}
	if (O.truth) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/truth.txt", O.dir);
		T.f = fopen(path, "w");
		size_t cap = (size_t)O.packets + 16;
		for (int s = 0; s < GF_NSEG; s++)
			T.seg[s] = malloc(cap * sizeof(uint64_t));
		T.prev_transit = calloc((size_t)O.flows, sizeof(int64_t));
		T.have_prev = calloc((size_t)O.flows, sizeof(bool));
		T.jmin = calloc((size_t)O.flows, sizeof(int64_t));
		T.jmax = calloc((size_t)O.flows, sizeof(int64_t));
		T.rfc = calloc((size_t)O.flows, sizeof(double));
		T.absj = calloc((size_t)O.flows, sizeof(int64_t *));
		T.nabs = calloc((size_t)O.flows, sizeof(size_t));
		for (long f = 0; f < O.flows; f++) {
			T.absj[f] = malloc(cap * sizeof(int64_t));
			T.jmin[f] = INT64_MAX;
			T.jmax[f] = INT64_MIN;
		}
		if (!T.f) {
			fprintf(stderr, "genfix: cannot write %s\n", path);
			return 1;
		}
	}
	gf_header(&A, true);
	gf_header(&B, !O.no_header_b);
	gf_flows(&A);
	gf_flows(&B);
	if (GR) {
		gf_header(GR, true);
		gf_flows(GR);
	}
	if (gf_traffic(&A, &B) || gf_flush(&A) || gf_flush(&B) || (GR && gf_flush(GR))) {
		fprintf(stderr, "genfix: write failed\n");
		return 1;
	}
	double t_end = (double)GF_T0 + 1e6 + (double)O.gap * (double)O.packets + 3e8;
	gf_sync(&A, &B, t_end);
	if (O.pair > 0 && O.sync > 0)
		gf_sync_chain(&A, t_end);
	gf_txn(&B);
	if (O.slow_rpc)
		gf_txn_events(&B);
	int rc = np_writer_close(A.w) | np_writer_close(B.w) | (GR ? np_writer_close(R.w) : 0);
	if (O.truth) {
		fprintf(T.f, "offset_ns=%.0f\ndrift_ppm=%.6f\n", O.offset, O.drift);
		for (int s = 0; s < GF_NSEG; s++) {
			qsort(T.seg[s], T.n[s], sizeof(uint64_t), gf_u64_cmp);
			if (!T.n[s])
				continue;
			fprintf(T.f, "seg.%s.count=%zu\nseg.%s.p50=%llu\nseg.%s.p99=%llu\n", gf_seg[s], T.n[s],
				gf_seg[s], (unsigned long long)gf_q(T.seg[s], T.n[s], 0.5), gf_seg[s],
				(unsigned long long)gf_q(T.seg[s], T.n[s], 0.99));
		}
		for (long f = 0; O.det && f < O.flows && T.nabs[f]; f++) {
			qsort(T.absj[f], T.nabs[f], sizeof(int64_t), gf_i64_cmp);
			size_t i99 = (size_t)ceil(0.99 * (double)T.nabs[f]) - 1;
			fprintf(T.f, "jitter.%ld.flow=tcp 10.0.0.1:%ld>10.0.0.2:8080\n", f, 40000 + f);
			fprintf(T.f, "jitter.%ld.min=%lld\njitter.%ld.max=%lld\njitter.%ld.p99=%lld\n"
				"jitter.%ld.rfc3550=%.3f\n", f, (long long)T.jmin[f], f, (long long)T.jmax[f],
				f, (long long)T.absj[f][i99], f, T.rfc[f]);
		}
		fprintf(T.f, "events=%llu\n", 0ull);
		fclose(T.f);
	}
	np_recbuf_free(&A.rb); np_recbuf_free(&B.rb);
	free(A.ev); free(B.ev);
	if (GR) {
		np_recbuf_free(&R.rb);
		free(R.ev);
		if (O.truth) {
			FILE *f;
			char path[4096];
			snprintf(path, sizeof(path), "%s/truth.txt", O.dir);
			if ((f = fopen(path, "a"))) {
				fprintf(f, "router_offset_ns=%.0f\n", O.roffset);
				fclose(f);
			}
		}
	}
	return rc ? 1 : 0;
}
