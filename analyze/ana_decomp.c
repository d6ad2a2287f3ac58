/* Per-packet latency decomposition, jitter and loss over the matched paths.
 * Tables: decomp, jitter, loss, loss_hops, lost_packets, pkt_flows (see
 * docs/ANALYSIS.md). */
#include <math.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "ana_par.h"
#include "ana_path.h"
#include "ana_kth.h"
#include "ana_kth2.h"

#define ANA_TOP_FLOWS 64
#define ANA_SK_CHUNKS 32              /* chunks per range of the results, for the sketch pass */
#define ANA_SK_CHUNK_COUNTS (1u << 20) /* chunks times flows at most (their counts: 8 MB) */
#define ANA_MAX_POS   32
#define ANA_MAX_INTERVALS 600
#define ANA_LOST_ROWS 10000
#define ANA_TB_DATA (1u << 20)        /* d->totb: counts for flow "all" */
#define ANA_TB_SET  (1u << 21)
_Static_assert(NP_SK_NBUCKETS <= 0x1000 && ANA_TOP_FLOWS < 0xff, "d->totb's fields");

struct ana_pres {                 /* one packet's result */
	int64_t t;                    /* first event, reference timeline */
	int64_t seg[ANA_NSEGS];       /* -1: not observed */
	uint32_t flow;                /* sender's flow */
	uint32_t len;
	uint32_t posmask;             /* positions of the flow seen */
	uint8_t nhosts;
	uint8_t retx : 1, skip : 1;
	uint8_t resent : 1;           /* a hook seen twice on the sender: re-sent with the same key */
	uint8_t ctl : 1;              /* no payload or SYN/FIN/RST: not expected at the socket */
	uint8_t dup : 1;              /* some hook saw the packet's key more than once */
	uint8_t copies_later : 1;     /* maybe more than one copy: counted once the flow's
				       * sending hooks are known (ana_copies) */
	uint8_t gself : 1;            /* its retransmission group is itself (pkts[k].group
				       * == k): the sketch pass need not read pkts[k] */
	int64_t transit;              /* last local ts - first header event's local ts
				       * (mixed clocks; sock_send byte ranges are
				       * attached to a few packets only: not counted) */
};

struct ana_pos {
	uint16_t host; uint8_t hook;
	uint8_t rn0;                  /* packet ranges: rn when the range began (seeded) */
	uint64_t n, lost_here; double rsum; uint64_t rn;
	double hsum; uint64_t hn;     /* time from the packet's previous hook to this one */
};

struct ana_fagg {                 /* per flow */
	uint64_t pkts, bytes, retx, lost, lost_ok;
	uint64_t lost_why;            /* lost with a kernel drop reason joined */
	uint64_t unrec;               /* delivered, socket-hook events missing */
	uint64_t copies;              /* packets on the wire (copies of one key count) */
	int drop_mark;                /* 1 + index of its last ana_dropagg entry, 0 none */
	int64_t first, last;
	struct ana_pos *pos;          /* ANA_MAX_POS entries, allocated on first use */
	uint8_t npos, order[ANA_MAX_POS], rank[ANA_MAX_POS];
	uint8_t full;                 /* a position found no slot (ANA_MAX_POS, memory) */
	uint8_t ranged;               /* a packet range's copy: keeps rk */
	uint8_t (*rk)[64];            /* packet ranges: the ranks rsum took, by rn (in
				       * pos's allocation) */
	int top;                      /* index into sketches or -1 */
	uint16_t snd_host, rcv_host;
	uint32_t first_mask_bit, deliver_mask;
	uint32_t first_hdr_bit;       /* first position with packet headers (not sock_send) */
	uint32_t sent_mask;           /* loss: the egress header hooks of the sending host */
	uint32_t recv_mask;           /* loss: where a copy counts as delivered */
	int sent_pos;                 /* the first of them in path order, -1 if none */
};

struct ana_jit { uint32_t flow; int64_t t, lat; };   /* a packet for jitter */

struct ana_klist {                /* packet indices */
	uint32_t *v;
	size_t n, cap;
	bool full;                    /* no memory for the list: every packet is a candidate */
};

/* A host's clock as ana_to_ref reads it (aligned or not), for the per-event
 * conversions of the results pass. */
struct ana_dclk { uint64_t t0; double a, b; bool ok; };

struct ana_dctx {
	struct ana_model *m;
	struct ana_dclk *clk;         /* per host */
	size_t nclk;
	struct ana_paths *p;
	struct ana_out *o;
	struct ana_pres *res;
	size_t res_len;               /* bytes mapped for res */
	bool res_spare;               /* res lies in p->pe's block (ana_path.h: spare) */
	struct ana_fagg *fa;
	/* the sketch pass's range 0 adds to all[] per packet while the other
	 * ranges read the fields around it per packet: kept off their lines */
	char pad0[64];
	struct np_sketch all[ANA_NSEGS];
	char pad1[64];
	struct np_sketch (*top)[ANA_NSEGS];
	uint32_t topflow[ANA_TOP_FLOWS];
	int ntop;
	int64_t t_start, iv, t_end_cut;
	size_t nint;
	struct np_sketch (*ivsk)[ANA_NSEGS];
	uint64_t (*ivbytes)[ANA_TOP_FLOWS];
	uint32_t (*ivpkts)[ANA_TOP_FLOWS], (*ivlost)[ANA_TOP_FLOWS];
	uint64_t negative;
	uint64_t unrec;               /* sum of the flows' unrec */
	double (*whole)[ANA_NSEGS];   /* segment sums of the packets with a whole path:
				       * flow all (0) and the top flows (1 + top) */
	uint8_t *gdeliv;              /* retransmission groups with a member that reached the socket */
	struct ana_klist lc;          /* packets that may have lost copies, in packet order */
	struct ana_jit *jit;          /* jitter: full-path packets, each flow's from jat[flow] */
	size_t *jat, *jend;
	uint64_t *rpk;                /* chunks of the results' packet ranges (nrg of them,
				       * ana_chunk_bounds): chunk g's packets of flow f
				       * at [g * flows + f] (NULL: one pass) */
	unsigned nrg;
	bool segbig;                  /* the results' segments sum to 2^53 or more */
	bool anygroup;                /* a retransmission group has several packets
				       * (seen by the results pass, for ana_retx_mark) */
	uint32_t *totb;               /* per packet, for the tail sums: when it counts
				       * there (not skipped nor retransmitted, in the
				       * window, a total) ANA_TB_SET | the sketch bucket
				       * of its total | its top flow's group << 12 |
				       * ANA_TB_DATA when not control; else 0; NULL: no
				       * memory (all read) */
	int64_t win_lo, win_hi;       /* m's window (ana_in_window), read per packet */
	/* ana_path_segment(hook, first on host, forwarder) at [hook][first][forwarder] */
	int8_t segof[256][2][2];
};

/* (t - d->t_start) / d->iv without a division per packet: packets come
 * nearly in time order, so the last quotient's range [lo, hi) of t -
 * t_start usually holds the next (kept for t - t_start >= 0 only, where
 * the quotient is the floor). */
struct ana_ivq { int64_t lo, hi, q; };

static inline int64_t ana_ivq(const struct ana_dctx *d, struct ana_ivq *c, int64_t t)
{
	int64_t x = t - d->t_start;
	if (x >= c->lo && x < c->hi)
		return c->q;
	int64_t q = x / d->iv;
	if (x >= 0) {
		c->lo = q * d->iv;
		c->hi = c->lo > INT64_MAX - d->iv ? INT64_MAX : c->lo + d->iv;
		c->q = q;
	}
	return q;
}

/* ana_in_window(d->m, t), inline. */
static inline bool ana_dc_inwin(const struct ana_dctx *d, int64_t t)
{
	return t >= d->win_lo && t <= d->win_hi;
}

/* ana_to_ref(m, h, t) inline, bit for bit: fmin/fmax as compares (a NaN
 * goes to the lower bound as fmax sends it there) and llround as truncation
 * plus the half away from zero (exact: |v| <= 2^61, its fraction exact). */
static inline int64_t ana_dc_ref(const struct ana_dctx *d, uint16_t h, uint64_t t)
{
	const struct ana_dclk *c = &d->clk[h];
	double x = (double)(int64_t)(t - c->t0);
	double v = c->a * x + c->b;
	v = v > -0x1p61 ? v : -0x1p61;
	v = v < 0x1p61 ? v : 0x1p61;
	int64_t i = (int64_t)v;
	double f = v - (double)i;
	return i + (f >= 0.5) - (f <= -0.5);
}

static inline bool ana_dc_ok(const struct ana_dctx *d, uint16_t h)
{
	return h < d->nclk && d->clk[h].ok;
}

/* The time from event prev to e of one packet's path: on one host its own
 * clock; across hosts through the clock fit, -1 (and *cross_ok false) when
 * either host has none; a negative time counts in *negative (own: in the
 * window) and is 0. */
static inline int64_t ana_step_dt(const struct ana_dctx *d, const struct ana_pe *prev,
				  const struct ana_pe *e, bool newhost, bool own, bool *cross_ok,
				  uint64_t *negative)
{
	int64_t dt;
	if (!newhost)
		dt = (int64_t)(e->ts - prev->ts);
	else if (ana_dc_ok(d, e->host) && ana_dc_ok(d, prev->host))
		dt = ana_dc_ref(d, e->host, e->ts) - ana_dc_ref(d, prev->host, prev->ts);
	else {
		*cross_ok = false;
		return -1;
	}
	if (dt < 0 && dt != -1) {
		*negative += own;
		dt = 0;
	}
	return dt;
}

/* The clocks of the hosts (NULL: no memory). */
static struct ana_dclk *ana_dc_clocks(const struct ana_model *m)
{
	struct ana_dclk *c = calloc(m->hosts.n ? m->hosts.n : 1, sizeof(*c));
	for (size_t h = 0; c && h < m->hosts.n; h++) {
		const struct ana_host *x = &m->hosts.v[h];
		c[h] = (struct ana_dclk){ x->t0, x->clk_a, x->clk_b, ana_host_aligned(m, (int)h) };
	}
	return c;
}

static unsigned ana_threads(const struct ana_model *m)
{
	unsigned n = m->opt && m->opt->threads > 1 ? m->opt->threads : 1;
	return n < ANA_PAR_MAXT ? n : ANA_PAR_MAXT;
}

/* f->pos (and in a packet range's copy f->rk after it); false: no memory. */
static bool ana_fagg_pos_alloc(struct ana_fagg *f)
{
	size_t rk = f->ranged ? sizeof(*f->rk) : 0;
	f->pos = calloc(ANA_MAX_POS, sizeof(*f->pos) + rk);
	f->rk = f->pos && rk ? (void *)(f->pos + ANA_MAX_POS) : NULL;
	return f->pos;
}

/* A flow's hook position; rank = host ordinal in the path * 64 + index of
 * the hook on that host, averaged over packets, gives the canonical order. */
/* hint: the position to try first (a flow's packets pass its positions in
 * the same order, so the one after the previous event's usually matches). */
static int ana_flow_pos(struct ana_fagg *f, uint16_t host, uint8_t hook, int rank, int hint)
{
	int i = hint;
	if (i >= f->npos || f->pos[i].host != host || f->pos[i].hook != hook)
		for (i = 0; i < f->npos; i++)
			if (f->pos[i].host == host && f->pos[i].hook == hook)
				break;
	if (i == f->npos) {
		if (f->npos >= ANA_MAX_POS || (!f->pos && !ana_fagg_pos_alloc(f))) {
			f->full = 1;
			return -1;
		}
		f->pos[f->npos++] = (struct ana_pos){ .host = host, .hook = hook };
	}
	if (f->pos[i].rn < 64) {           /* the first packets fix the order */
		if (f->rk)
			f->rk[i][f->pos[i].rn] = (uint8_t)rank;
		f->pos[i].rsum += rank;
		f->pos[i].rn++;
	}
	return i;
}

static bool ana_flow_match(const struct ana_model *m, uint32_t flow)
{
	const char *flt = m->opt ? m->opt->flow_filter : NULL;
	if (!flt || !*flt)
		return true;
	char key[160];
	ana_flow_key(&m->flows.v[flow], key, sizeof(key));
	return strstr(key, flt) != NULL;
}

/* Packet k's events in path order, as ana_path_order (ana_path.c) gives
 * them: per host by (ts, hook), hosts by role then by first time on the
 * reference timeline. Here with the clocks inline (ana_dc_ref, bit for
 * bit ana_to_ref) and a host's reference time computed only where it can
 * decide the order (another host of the same role): that order is
 * ana_path_order's, whose host sort is stable. Packets with more events
 * than ANA_PATH_MAXEV (ana_path_order picks some): ana_path_order.
 * role (NULL: not wanted): per output event its host's role (0 sender,
 * 1 forwarder, 2 receiver, as ana_packet_body finds it), | ANA_ROLE_NOPAY
 * when the packet has an event without payload; ANA_ROLE_NONE: not known. */
#define ANA_ROLE_NOPAY 0x80
#define ANA_ROLE_NONE  0xff
static size_t ana_dc_order(const struct ana_dctx *d, size_t k, uint32_t *out, uint8_t *role)
{
	const struct ana_pkt *q = &d->p->pkts[k];
	if (q->nev > ANA_PATH_MAXEV) {
		size_t n = ana_path_order(d->m, d->p, k, out, ANA_PATH_MAXEV);
		if (role)
			memset(role, ANA_ROLE_NONE, n);
		return n;
	}
	const struct ana_pe *ev = d->p->pe + q->head;
	size_t n = q->nev;
	struct { uint64_t ts; uint16_t host; uint8_t hook; uint8_t i; } e[ANA_PATH_MAXEV];
	uint8_t nopay = 0;
	for (size_t i = 0; i < n; i++) {             /* by host, ts, hook (stable) */
		__typeof__(e[0]) x = { ev[i].ts, ev[i].host, ev[i].hook, (uint8_t)i };
		nopay |= ev[i].flags & ANA_PE_NOPAY;
		size_t j = i;
		while (j > 0 && (e[j - 1].host != x.host ? e[j - 1].host > x.host
				 : e[j - 1].ts != x.ts ? e[j - 1].ts > x.ts : e[j - 1].hook > x.hook)) {
			e[j] = e[j - 1];
			j--;
		}
		e[j] = x;
	}
	struct { uint8_t a, b, role, tset; int64_t t; } g[16];
	size_t ng = 0;
	for (size_t i = 0; i < n && ng < 16;) {
		size_t j = i;
		bool ing = false, eg_after = false, eg_first = false;
		for (; j < n && e[j].host == e[i].host; j++) {
			if (e[j].hook <= PK_HOOK_DEV_XMIT) {
				eg_first |= !ing;
				eg_after |= ing;
			} else
				ing = true;
		}
		g[ng++] = (__typeof__(g[0])){ (uint8_t)i, (uint8_t)j, eg_first ? 0 : eg_after ? 1 : 2, 0, 0 };
		i = j;
	}
	nopay = nopay ? ANA_ROLE_NOPAY : 0;
	if (ng <= 1) {
		for (size_t i = 0; i < n; i++)
			out[i] = q->head + e[i].i;
		for (size_t i = 0; role && i < n; i++)
			role[i] = g[0].role | nopay;
		return n;
	}
	for (size_t a = 0; a < ng; a++)
		for (size_t b = a + 1; b < ng; b++)
			if (g[a].role == g[b].role)
				g[a].tset = g[b].tset = 1;
	for (size_t a = 0; a < ng; a++) {
		uint16_t h = e[g[a].a].host;
		if (g[a].tset && ana_dc_ok(d, h))
			g[a].t = ana_dc_ref(d, h, e[g[a].a].ts);
	}
	for (size_t i = 1; i < ng; i++) {
		__typeof__(g[0]) x = g[i];
		size_t j = i;
		while (j > 0 && (g[j - 1].role > x.role || (g[j - 1].role == x.role && g[j - 1].t > x.t))) {
			g[j] = g[j - 1];
			j--;
		}
		g[j] = x;
	}
	size_t o = 0;
	for (size_t i = 0; i < ng; i++)
		for (size_t j = g[i].a; j < g[i].b; j++) {
			if (role)
				role[o] = g[i].role | nopay;
			out[o++] = q->head + e[j].i;
		}
	return o;
}

/* The first event of packet k's own path (a pure ACK's events ahead of
 * the segment skipped). */
static size_t ana_first_ev(const struct ana_pe *ev, const struct ana_pres *r, const uint32_t *idx,
			   size_t n)
{
	size_t i0 = 0;
	while (r->len && i0 + 1 < n && (ev[idx[i0]].flags & ANA_PE_NOPAY))
		i0++;
	return i0;
}

/* The part of packet k's result that needs no flow state: its path order
 * into idx, its flow, first time and kind. Returns the path's length, 0
 * when the packet is skipped. */
static size_t ana_packet_head(struct ana_dctx *d, size_t k, uint32_t *idx, uint8_t *role)
{
	struct ana_model *m = d->m;
	const struct ana_pe *ev = d->p->pe;
	struct ana_pres *r = &d->res[k];
	memset(r, 0, sizeof(*r));
	for (int s = 0; s < ANA_NSEGS; s++)
		r->seg[s] = -1;
	size_t n = ana_dc_order(d, k, idx, role);
	if (!n) {
		r->skip = 1;
		return 0;
	}
	r->gself = d->p->pkts[k].group == k;
	r->len = d->p->pkts[k].minlen == UINT32_MAX ? 0 : d->p->pkts[k].minlen;
	const struct ana_pe *e0 = &ev[idx[ana_first_ev(ev, r, idx, n)]];
	r->flow = e0->flow;
	r->t = ana_dc_ok(d, e0->host) ? ana_dc_ref(d, e0->host, e0->ts) : (int64_t)e0->ts;
	r->nhosts = 1;
	if (!r->len && !d->p->pkts[k].udp)
		r->ctl = 1;
	if (!ana_flow_match(m, r->flow)) {
		r->skip = 1;
		return 0;
	}
	return n;
}

/* Packet r into its flow's counts (sums, extremes: any order of the flow's
 * packets gives the same, except f->first's 0-as-unset, kept as the packet
 * order has it); multi: some hook may have seen more than one copy. Its
 * positions' counts are the caller's (ana_pos_count). False: not in the
 * window, not counted. */
static bool ana_packet_count(const struct ana_dctx *d, struct ana_pres *r, struct ana_fagg *f,
			     bool multi)
{
	if (!ana_dc_inwin(d, r->t))
		return false;
	f->pkts++;
	if (multi)
		r->copies_later = 1;
	else
		f->copies++;
	f->bytes += r->len;
	if (r->resent && !r->ctl)       /* a re-sent pure ACK is a dup ACK */
		f->retx++;                  /* the other retransmissions: ana_retx_mark */
	if (!f->first || r->t < f->first) f->first = r->t;
	if (r->t > f->last) f->last = r->t;
	return true;
}

/* cnt packets seen at the positions of posmask. */
static void ana_pos_count(struct ana_fagg *f, uint32_t posmask, uint64_t cnt)
{
	for (uint32_t b = posmask; b; b &= b - 1)
		f->pos[__builtin_ctz(b)].n += cnt;
}

/* What the results pass counts besides the flows: cross-host segments
 * clamped from below zero, and, with packet ranges (sums set), the sum of
 * the packets' positive segments (capped at 2^53: past it the doubles that
 * sum them may round, see struct ana_frange). */
struct ana_rcnt { uint64_t negative, segsum; bool sums; };

/* Packet r, whose counted hops summed to sum (saturating), into c->segsum:
 * its segments before the total hold those hops, and the total, when set,
 * is sum again. Exact below 2^52, where nothing saturated; from there the
 * cap is reached as the segments' own sum would reach it. */
static inline void ana_rcnt_seg(struct ana_rcnt *c, const struct ana_pres *r, int64_t sum)
{
	if (!c->sums)
		return;
	uint64_t x = sum >= (1ll << 52) ? 1ull << 53 : (uint64_t)sum << (r->seg[ANA_SEG_TOTAL] >= 0);
	c->segsum = c->segsum + x > (1ull << 53) ? 1ull << 53 : c->segsum + x;
}

/* ---- packet templates ----
 * Most packets of a flow take the same path: the same hosts and hooks in
 * the same order, so ana_dc_order's order, the roles, the flow's positions
 * and the segments of each hop come out the same. A packet the general
 * path (ana_packet_head, ana_packet_body) went through leaves a template
 * of what it found, once its flow's positions no longer take ranks
 * (rn >= 64: ana_flow_pos then only looks up). A later packet with the
 * same events (host, hook, flags in stored order), length class and UDP
 * flag, whose timestamps give the same order, takes the template: only its
 * times are read. Packets whose order could depend on the clocks (two
 * hosts of one role) make no template. */
bool ana_decomp_tpl_on = true;
size_t ana_decomp_tpl_hits;

#define ANA_TPL_MAXEV 16
#define ANA_TPL_SLOTS 2048
struct ana_tpl {
	uint32_t key;                 /* events[0].flow of the packets it fits */
	uint32_t flow;                /* their result's flow (the path's first event's) */
	uint8_t n;                    /* events; 0: empty slot */
	uint8_t nact;                 /* events the body counts (not skipped nor duplicates) */
	uint8_t lenc, udp;            /* length 0, 1 or more; the packet's udp */
	uint8_t e0, hdr0;             /* stored index of the first event, of the first
				       * header event (0xff: none) */
	uint8_t nhosts, ctl, dup, resent, multi, ok;
	uint32_t posmask;
	uint64_t pend;                /* packets counted since the positions' counts
				       * took them (ana_tpl_flush) */
	uint32_t sig[ANA_TPL_MAXEV];  /* host | hook << 16 | flags << 24, stored order */
	uint8_t perm[ANA_TPL_MAXEV];  /* path order: stored indices */
	uint8_t tie[ANA_TPL_MAXEV];   /* path position i: 0 another host than i - 1; 1 its
				       * time must be later; 2 later or the same */
	struct { uint8_t ev; int8_t sg; uint8_t newhost, pos; } act[ANA_TPL_MAXEV];
};

static inline uint32_t ana_tpl_sig(const struct ana_pe *e)
{
	return (uint32_t)e->host | (uint32_t)e->hook << 16 | (uint32_t)e->flags << 24;
}

static inline size_t ana_tpl_slot(uint32_t flow, size_t n)
{
	return ((size_t)flow * 17 + n) & (ANA_TPL_SLOTS - 1);
}

static inline uint8_t ana_tpl_lenc(uint32_t len)
{
	return len == 0 ? 0 : len == 1 ? 1 : 2;
}

/* Template t's pending packets into its flow's position counts (fa: the
 * flows it was made with; counts add in any order). */
static void ana_tpl_flush(struct ana_tpl *t, struct ana_fagg *fa)
{
	if (t->pend)
		ana_pos_count(&fa[t->flow], t->posmask, t->pend);
	t->pend = 0;
}

static void ana_tpl_flush_all(struct ana_tpl *tpl, struct ana_fagg *fa)
{
	for (size_t i = 0; tpl && i < ANA_TPL_SLOTS; i++)
		ana_tpl_flush(&tpl[i], fa);
}

/* The body's counted event (stored index ev) into the template. */
static void ana_tpl_act(struct ana_tpl *t, size_t ev, int sg, bool newhost, int pos)
{
	if (t->nact >= ANA_TPL_MAXEV || pos < 0) {
		t->ok = 0;
		return;
	}
	t->act[t->nact++] = (__typeof__(t->act[0])){ (uint8_t)ev, (int8_t)sg, newhost, (uint8_t)pos };
}

/* The general path's packet k (path idx[0, n), roles role) closed into
 * template rec: kept (rec->ok) when its order does not depend on times
 * beyond what ana_tpl_try checks. */
static void ana_tpl_close(struct ana_tpl *rec, const struct ana_dctx *d, size_t k, const uint32_t *idx,
			  const uint8_t *role, size_t n, const struct ana_pres *r,
			  const struct ana_pe *e0, const struct ana_pe *hdr0, bool multi)
{
	const struct ana_pkt *q = &d->p->pkts[k];
	const struct ana_pe *ev = d->p->pe + q->head;
	if (!rec->ok || n != q->nev || n > ANA_TPL_MAXEV || !rec->nact)
		goto no;
	uint8_t seen = 0;                        /* roles of the host groups */
	for (size_t i = 0; i < n; i++) {
		uint32_t x = idx[i] - q->head;
		rec->perm[i] = (uint8_t)x;
		rec->sig[i] = ana_tpl_sig(&ev[i]);
		rec->tie[i] = 0;
		if (i && ev[x].host == ev[rec->perm[i - 1]].host) {
			uint32_t a = rec->perm[i - 1];
			rec->tie[i] = ev[a].hook < ev[x].hook || (ev[a].hook == ev[x].hook && a < x) ? 2 : 1;
			continue;
		}
		if (role[i] == ANA_ROLE_NONE || (seen & (1u << (role[i] & 3))))
			goto no;                     /* same role twice: the clocks order them */
		seen |= (uint8_t)(1u << (role[i] & 3));
	}
	rec->key = ev[0].flow;
	rec->flow = r->flow;
	rec->n = (uint8_t)n;
	rec->lenc = ana_tpl_lenc(r->len);
	rec->udp = q->udp;
	rec->e0 = (uint8_t)(e0 - ev);
	rec->hdr0 = hdr0 ? (uint8_t)(hdr0 - ev) : 0xff;
	rec->nhosts = r->nhosts;
	rec->ctl = r->ctl;
	rec->dup = r->dup;
	rec->resent = r->resent;
	rec->multi = multi;
	rec->posmask = r->posmask;
	return;
no:
	rec->n = 0;
}

/* Packet k by its template (see above); false: none fits, nothing done. */
static bool ana_tpl_try(struct ana_dctx *d, size_t k, struct ana_tpl *tpl, struct ana_fagg *fa,
			struct ana_rcnt *c)
{
	const struct ana_pkt *q = &d->p->pkts[k];
	size_t n = q->nev;
	if (n - 1 >= ANA_TPL_MAXEV)
		return false;
	const struct ana_pe *ev = d->p->pe + q->head;
	struct ana_tpl *t = &tpl[ana_tpl_slot(ev[0].flow, n)];
	uint32_t len = q->minlen == UINT32_MAX ? 0 : q->minlen;
	if (t->n != n || t->key != ev[0].flow || t->lenc != ana_tpl_lenc(len) || t->udp != q->udp ||
	    ev[t->e0].flow != t->flow)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ana_tpl_sig(&ev[i]) != t->sig[i])
			return false;
	for (size_t i = 1; i < n; i++) {
		if (!t->tie[i])
			continue;
		uint64_t a = ev[t->perm[i - 1]].ts, b = ev[t->perm[i]].ts;
		if (a > b || (a == b && t->tie[i] == 1))
			return false;
	}
	struct ana_pres *r = &d->res[k];
	memset(r, 0, sizeof(*r));
	for (int s = 0; s < ANA_NSEGS; s++)
		r->seg[s] = -1;
	const struct ana_pe *e0 = &ev[t->e0];
	r->len = len;
	r->gself = q->group == k;
	r->flow = t->flow;
	r->t = ana_dc_ok(d, e0->host) ? ana_dc_ref(d, e0->host, e0->ts) : (int64_t)e0->ts;
	r->nhosts = t->nhosts;
	r->ctl = t->ctl;
	r->dup = t->dup;
	r->resent = t->resent;
	r->posmask = t->posmask;
	struct ana_fagg *f = &fa[t->flow];
	bool own = !d->m->sacc || ana_dc_inwin(d, r->t);
	bool cross_ok = true;
	int64_t sum = 0;
	for (size_t j = 1; j < t->nact; j++) {          /* as ana_packet_body */
		const struct ana_pe *e = &ev[t->act[j].ev], *prev = &ev[t->act[j - 1].ev];
		int sg = t->act[j].sg, pos = t->act[j].pos;
		int64_t dt = ana_step_dt(d, prev, e, t->act[j].newhost, own, &cross_ok, &c->negative);
		if (dt >= 0) {
			r->seg[sg] = r->seg[sg] < 0 ? dt
				   : r->seg[sg] > INT64_MAX - dt ? INT64_MAX : r->seg[sg] + dt;
			sum = sum > INT64_MAX - dt ? INT64_MAX : sum + dt;
			if (own) {
				f->pos[pos].hsum += (double)dt;
				f->pos[pos].hn++;
			}
		}
	}
	const struct ana_pe *last = &ev[t->act[t->nact - 1].ev];
	r->transit = (int64_t)(last->ts - (t->hdr0 != 0xff ? &ev[t->hdr0] : e0)->ts);
	if (cross_ok && n > 1)
		r->seg[ANA_SEG_TOTAL] = sum;
	ana_rcnt_seg(c, r, sum);
	t->pend += ana_packet_count(d, r, f, t->multi);    /* its positions: ana_tpl_flush */
	return true;
}

/* The rest of packet k's result: segments, positions of its flow (the
 * flow's state: packets of one flow go through here in packet order);
 * cross-host segments clamped from below zero are counted in c. */
static void ana_packet_body(struct ana_dctx *d, size_t k, const uint32_t *idx, const uint8_t *role,
			    size_t n, struct ana_fagg *fa, struct ana_rcnt *c, struct ana_tpl *rec)
{
	struct ana_model *m = d->m;
	const struct ana_pe *ev = d->p->pe;
	struct ana_pres *r = &d->res[k];
	const struct ana_pe *e0 = &ev[idx[ana_first_ev(ev, r, idx, n)]];
	struct ana_fagg *f = &fa[r->flow];
	uint32_t seenpos = 0, seencopy = 0;
	bool multi = n != d->p->pkts[k].nev;    /* not all its events in the path */
	int hostord = 0, inhost = 0, hint = 0;
	const struct ana_pe *prev = NULL, *hdr0 = NULL;
	bool cross_ok = true;
	int64_t sum = 0;                /* of the segments, as clamped */
	/* streamed: a window's edge packets are read by the next window too;
	 * only the window that owns a packet counts its hops and clamps */
	bool own = !m->sacc || ana_dc_inwin(d, r->t);
	for (size_t i = 0; i < n; i++) {
		const struct ana_pe *e = &ev[idx[i]];
		if (r->len && (e->flags & ANA_PE_NOPAY))
			continue;               /* a pure ACK with the same key, not this segment */
		bool newhost = prev && e->host != prev->host;
		if (newhost || !prev) {
			/* role of this host: 0 sender, 1 forwarder, 2 receiver; the
			 * order's, unless events were skipped (then this host's
			 * run starts after its first event) */
			if (role[i] < ANA_ROLE_NOPAY || (role[i] != ANA_ROLE_NONE && !r->len)) {
				hostord = role[i] & 3;
			} else {
				bool ing = false, eg_after = false, eg_first = false;
				for (size_t x = i; x < n && ev[idx[x]].host == e->host; x++) {
					if (ev[idx[x]].hook <= PK_HOOK_DEV_XMIT) {
						if (!ing) eg_first = true; else eg_after = true;
					} else
						ing = true;
				}
				hostord = eg_first ? 0 : eg_after ? 1 : 2;
			}
			inhost = 0;
		}
		int pos = ana_flow_pos(f, e->host, e->hook, hostord * 64 + inhost++, hint);
		hint = pos + 1;
		if (rec && (pos < 0 || f->pos[pos].rn < 64))
			rec = NULL;             /* its rank still counts: no template */
		/* SYN/FIN/RST: control, unless the segment carries payload (the
		 * last data segment of a transfer usually has FIN; its payload
		 * reaches the socket hooks like any other data). A bare SYN or
		 * FIN has a length of 1 (its sequence number): a 1-byte segment
		 * with FIN stays control. */
		if ((e->flags & ANA_EVF_CTL) && r->len <= 1)
			r->ctl = 1;
		if (pos >= 0 && !(e->flags & ANA_EVF_RANGE)) {   /* as ana_copies counts */
			multi |= (seencopy >> pos) & 1;
			seencopy |= 1u << pos;
		}
		if (pos >= 0) {
			if (seenpos & (1u << pos)) {
				r->dup = 1;
				if (e->host == e0->host)
					r->resent = 1;  /* same key sent again (TSval within the same ms) */
				continue;           /* the first transmission's timestamps count */
			}
			seenpos |= 1u << pos;
		}
		if (newhost)
			r->nhosts++;
		if (prev) {
			/* a forwarding host (router, balancer) has segments of its own */
			int seg = d->segof[e->hook][newhost][hostord == 1];
			int64_t dt = ana_step_dt(d, prev, e, newhost, own, &cross_ok, &c->negative);
			if (dt >= 0) {   /* saturating: damaged timestamps (fuzz) */
				r->seg[seg] = r->seg[seg] < 0 ? dt
					    : r->seg[seg] > INT64_MAX - dt ? INT64_MAX : r->seg[seg] + dt;
				sum = sum > INT64_MAX - dt ? INT64_MAX : sum + dt;
			}
			if (dt >= 0 && pos >= 0 && own) {
				f->pos[pos].hsum += (double)dt;
				f->pos[pos].hn++;
			}
		}
		if (rec)
			ana_tpl_act(rec, (size_t)(e - ev) - d->p->pkts[k].head, prev ? d->segof[e->hook][newhost][hostord == 1] : 0,
				    newhost, pos);
		prev = e;
		if (!hdr0 && e->hook != PK_HOOK_SOCK_SEND)
			hdr0 = e;
	}
	r->posmask = seenpos;
	r->transit = (int64_t)(prev->ts - (hdr0 ? hdr0 : e0)->ts);
	/* total = the sum of its segments: last minus first hook unless a
	 * segment came out negative and was clamped (a clock off by more than
	 * the wire: last - first then read less than the segments, and shares
	 * of 4 539 %) */
	if (cross_ok && n > 1)
		r->seg[ANA_SEG_TOTAL] = sum;
	ana_rcnt_seg(c, r, sum);
	if (rec)
		ana_tpl_close(rec, d, k, idx, role, n, r, e0, hdr0, multi);
	if (ana_packet_count(d, r, f, multi))
		ana_pos_count(f, r->posmask, 1);
}

/* Packet k's result, by its template or the general path (which leaves
 * one); false: skipped. tpl NULL: the general path only. */
static bool ana_packet_one(struct ana_dctx *d, size_t k, uint32_t *idx, uint8_t *role,
			   struct ana_fagg *fa, struct ana_rcnt *c, struct ana_tpl *tpl, size_t *hits)
{
	if (tpl && ana_tpl_try(d, k, tpl, fa, c)) {
		++*hits;
		return true;
	}
	size_t n = ana_packet_head(d, k, idx, role);
	if (!n)
		return false;
	struct ana_tpl *rec = NULL;
	const struct ana_pkt *q = &d->p->pkts[k];
	if (tpl && q->nev - 1 < ANA_TPL_MAXEV) {
		rec = &tpl[ana_tpl_slot(d->p->pe[q->head].flow, q->nev)];
		ana_tpl_flush(rec, fa);
		rec->n = 0;
		rec->nact = 0;
		rec->ok = 1;
	}
	ana_packet_body(d, k, idx, role, n, fa, c, rec);
	return true;
}

/* Pass 1 of the parallel results: the heads of packets [lo, hi). */
/* The results array: a mapping of its own, so that its pages can be made
 * present in one call per packet range (ana_res_populate) rather than
 * faulted in 4 KB at a time (~60 000 faults on the 10 M case). */
static struct ana_pres *ana_res_alloc(struct ana_paths *p, size_t n, size_t *len, bool *spare)
{
	*len = n * sizeof(struct ana_pres);
	if (p->spare && p->spare_len >= *len) {     /* every entry is set by ana_packet_head */
		void *r = p->spare;
		*spare = true;
		p->spare = NULL;
		return r;
	}
	if (p->spare)
		(void)madvise(p->spare, p->spare_len, MADV_DONTNEED);
	p->spare = NULL;
	void *m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

/* The pages [p, p + len) touches made present and writable (Linux 5.14;
 * without it, or out of memory, they fault in as they are written). On
 * this VM a fault costs ~2.3 us a page, populating ~1.6 us. For an array
 * about to be written in full; a page another thread writes at the same
 * time is safe (populating a present page leaves it as it is). */
static void ana_populate(const void *p, size_t len)
{
	uintptr_t pg = 4096, a = (uintptr_t)p & ~(pg - 1);
	uintptr_t b = ((uintptr_t)p + len + pg - 1) & ~(pg - 1);
	if (len && b > a)
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
}

static void ana_res_populate(struct ana_dctx *d, size_t lo, size_t hi)
{
	ana_populate(d->res + lo, (hi - lo) * sizeof(*d->res));
}

/* Task t of nt's share of res's pages made present: every nt-th run of
 * 2 MB. Packet ranges would leave it uneven: the pages of the event array's
 * tail (p->spare) are present already, and res begins there, so the last
 * range alone faulted in the rest (~92 MB on the 10 M case, ~21 k faults,
 * 0.02 s). */
static void ana_res_populate_share(struct ana_dctx *d, size_t t, size_t nt)
{
	size_t run = 2u << 20, len = d->p->npkts * sizeof(*d->res);
	for (size_t a = t * run; a < len; a += nt * run) {
		size_t b = a + run < len ? a + run : len;
		ana_res_populate(d, a / sizeof(*d->res), (b + sizeof(*d->res) - 1) / sizeof(*d->res));
	}
}

struct ana_skout;
struct ana_sktask {                /* the sketch pass's nt tasks over d */
	struct ana_dctx *d;
	unsigned nt;
	struct ana_skout *rg;          /* by chunk: the threads' sinks; NULL: by segment */
	size_t next;                   /* by chunk: the next chunk to take */
	size_t *coff;                  /* the chunks' jitter ends per flow (NULL: no jitter) */
	struct ana_klist *clc;         /* the chunks' loss candidates */
};

/* Unmapping res frees its pages (~60 000, 20 ms on the 10 M case): with
 * threads, handed back side by side first. */
static void ana_res_free(struct ana_dctx *d)
{
	unsigned nt = ana_threads(d->m);
	if (nt > 1 && d->p->npkts >= 65536)
		ana_par_zap(d->res, d->res_len, nt);
	if (!d->res_spare)
		munmap(d->res, d->res_len);
}

static void ana_stream_seed(struct ana_dctx *d);

/* Packet ranges on threads: each range finishes its packets against a flow
 * state of its own (struct ana_frange), merged in range order afterwards.
 * What a flow keeps adds up exactly in any split: counts, extremes, the
 * first 64 ranks of each position (kept, and taken in range order), and
 * hop sums, which are sums of whole nanoseconds in doubles: exact, hence
 * the serial sum, while below 2^53. A range numbers a flow's positions in
 * the order it meets them; the merge appends the ones earlier ranges had
 * not met, in that order (the serial order of first meeting), and renumbers
 * the range's packets' position masks. Where that could differ from one
 * pass (a flow with more than ANA_MAX_POS positions, a hop sum past 2^53,
 * a packet at time 0, no memory) the results are taken again serially. */
struct ana_frange {
	struct ana_fagg *fa;          /* per flow, positions numbered by this range */
	uint64_t negative;
	uint64_t segsum;              /* of its packets' positive segments ... */
	bool segbig;                  /* ... reached 2^53 */
	bool redo;                    /* the merge cannot give the serial result */
	bool remap;                   /* some flow's positions are numbered otherwise */
	bool anygroup;                /* as ana_dctx's, for its packets */
};

/* Each range in k chunks (ana_chunk_bounds, nested in the ranges); at the
 * end of chunk g of a range its flows' packet counts so far go to cpk[g *
 * flows + f] (cpk NULL: k is 1, the ranges' counts are kept). */
struct ana_franges { struct ana_dctx *d; struct ana_frange *rg; unsigned n, k; uint64_t *cpk; };

/* Chunk g of nc over the packets; chunk t * k + c of n * k is part c of
 * range t of n (npk * t * k / (n * k) is npk * t / n). */
static void ana_chunk_bounds(size_t npk, size_t nc, size_t g, size_t *lo, size_t *hi)
{
	*lo = npk * g / nc;
	*hi = npk * (g + 1) / nc;
}

static void ana_franges_bounds(const struct ana_franges *x, size_t t, size_t *lo, size_t *hi)
{
	ana_chunk_bounds(x->d->p->npkts, x->n, t, lo, hi);
}

/* The range's copy of the streamed run's positions (ana_stream_seed), with
 * their rn as the range starts. */
static bool ana_frange_seed(const struct ana_fagg *G, struct ana_fagg *L)
{
	L->ranged = 1;
	if (!G->npos)
		return true;
	if (!ana_fagg_pos_alloc(L))
		return false;
	for (int i = 0; i < G->npos; i++)
		L->pos[i] = (struct ana_pos){ .host = G->pos[i].host, .hook = G->pos[i].hook,
					      .rn = G->pos[i].rn, .rn0 = (uint8_t)G->pos[i].rn };
	L->npos = G->npos;
	return true;
}

static void ana_franges_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	struct ana_franges *x = ctx;
	struct ana_dctx *d = x->d;
	size_t nf = d->m->flows.n, lo, hi;
	struct ana_frange *g = &x->rg[t];
	uint32_t idx[ANA_PATH_MAXEV];
	uint8_t role[ANA_PATH_MAXEV];
	ana_franges_bounds(x, t, &lo, &hi);
	g->fa = calloc(nf ? nf : 1, sizeof(*g->fa));
	g->redo = !g->fa;
	for (size_t fi = 0; !g->redo && fi < nf; fi++)
		g->redo = !ana_frange_seed(&d->fa[fi], &g->fa[fi]);
	if (g->redo)
		return;
	struct ana_tpl *tpl = ana_decomp_tpl_on ? calloc(ANA_TPL_SLOTS, sizeof(*tpl)) : NULL;
	size_t hits = 0;
	ana_res_populate_share(d, t, x->n);
	if (d->gdeliv)         /* zeroed here for the sketch pass: on the main thread alone, ~1 ms */
		memset(d->gdeliv + lo, 0, hi - lo);
	/* counted in locals, stored once: the ranges' entries share cache
	 * lines, and a store per packet took the line from the other thread */
	struct ana_rcnt c = { 0, 0, true };
	bool redo = false, anygroup = false;
	for (size_t ci = t * x->k; ci < (t + 1) * x->k; ci++) {
		ana_chunk_bounds(d->p->npkts, (size_t)x->n * x->k, ci, &lo, &hi);
		for (size_t k = lo; k < hi; k++) {
			anygroup |= d->p->pkts[k].ngroup != 0;
			if (!ana_packet_one(d, k, idx, role, g->fa, &c, tpl, &hits))
				continue;
			redo |= !d->res[k].t;
		}
		for (size_t fi = 0; x->cpk && fi < nf; fi++)
			x->cpk[ci * nf + fi] = g->fa[fi].pkts;
	}
	ana_tpl_flush_all(tpl, g->fa);
	free(tpl);
	__atomic_fetch_add(&ana_decomp_tpl_hits, hits, __ATOMIC_RELAXED);
	for (size_t fi = 0; fi < nf; fi++)
		redo |= g->fa[fi].full;
	g->negative = c.negative;
	g->segsum = c.segsum;
	g->segbig = c.segsum >= (1ull << 53);
	g->redo = redo;
	g->anygroup = anygroup;
}

/* Range L's positions of one flow into G (the merged flow so far): their
 * numbers in G into L->order. False: not the serial result. */
static bool ana_frange_merge_pos(struct ana_fagg *G, struct ana_fagg *L, bool *remap)
{
	for (int i = 0; i < L->npos; i++) {
		const struct ana_pos *lp = &L->pos[i];
		int gi = 0;
		while (gi < G->npos && (G->pos[gi].host != lp->host || G->pos[gi].hook != lp->hook))
			gi++;
		if (gi == G->npos) {
			if (G->npos >= ANA_MAX_POS ||
			    (!G->pos && !(G->pos = calloc(ANA_MAX_POS, sizeof(*G->pos)))))
				return false;
			G->pos[G->npos++] = (struct ana_pos){ .host = lp->host, .hook = lp->hook };
		}
		struct ana_pos *gp = &G->pos[gi];
		L->order[i] = (uint8_t)gi;
		*remap |= gi != i;
		gp->n += lp->n;
		gp->hn += lp->hn;
		if (lp->hsum >= 0x1p53)
			return false;
		gp->hsum += lp->hsum;
		if (gp->hsum >= 0x1p53)
			return false;
		for (uint64_t j = lp->rn0; j < lp->rn && gp->rn < 64; j++) {
			gp->rsum += L->rk[i][j];
			gp->rn++;
		}
	}
	return true;
}

/* Range L's counts of one flow into G; false: not the serial result. */
static bool ana_frange_merge(struct ana_fagg *G, struct ana_fagg *L, bool *remap)
{
	if (!ana_frange_merge_pos(G, L, remap))
		return false;
	if (L->pkts) {       /* no packet at time 0 (then f->first is a plain minimum) */
		if (!G->first || L->first < G->first)
			G->first = L->first;
		if (L->last > G->last)
			G->last = L->last;
	}
	G->pkts += L->pkts;
	G->copies += L->copies;
	G->bytes += L->bytes;
	G->retx += L->retx;
	return true;
}

/* The position masks of a range's packets in the merged numbering. */
static void ana_franges_remap(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	struct ana_franges *x = ctx;
	struct ana_dctx *d = x->d;
	const struct ana_frange *g = &x->rg[t];
	size_t lo, hi;
	if (!g->remap)
		return;
	ana_franges_bounds(x, t, &lo, &hi);
	for (size_t k = lo; k < hi; k++) {
		struct ana_pres *r = &d->res[k];
		if (r->skip)
			continue;
		const struct ana_fagg *L = &g->fa[r->flow];
		uint32_t m = 0;
		for (uint32_t b = r->posmask; b; b &= b - 1)
			m |= 1u << L->order[__builtin_ctz(b)];
		r->posmask = m;
	}
}

static void ana_franges_free(struct ana_franges *x, size_t nf)
{
	for (unsigned t = 0; t < x->n; t++) {
		struct ana_fagg *fa = x->rg[t].fa;
		for (size_t fi = 0; fa && fi < nf; fi++)
			free(fa[fi].pos);
		free(fa);
	}
}

/* The flows' state as one pass leaves it, from the ranges' (false: it
 * cannot be, d->fa is then as the ranges found it). */
static bool ana_franges_merge(struct ana_dctx *d, struct ana_franges *x)
{
	for (unsigned t = 0; t < x->n; t++)
		if (x->rg[t].redo)
			return false;
	for (size_t fi = 0; fi < d->m->flows.n; fi++)
		for (unsigned t = 0; t < x->n; t++)
			if (!ana_frange_merge(&d->fa[fi], &x->rg[t].fa[fi], &x->rg[t].remap))
				return false;
	uint64_t segsum = 0;
	for (unsigned t = 0; t < x->n; t++) {
		d->anygroup |= x->rg[t].anygroup;
		d->negative += x->rg[t].negative;
		d->segbig |= x->rg[t].segbig || (segsum += x->rg[t].segsum) >= (1ull << 53);
	}
	return true;
}

/* The chunks' packet counts per flow, for the sketch pass's chunks (d->rpk
 * stays NULL without memory: that pass then splits by segment); x->cpk is
 * taken (the counts so far turned into each chunk's own). */
static void ana_franges_keep_counts(struct ana_dctx *d, struct ana_franges *x)
{
	size_t nf = d->m->flows.n, nc = (size_t)x->n * x->k;
	if (x->cpk) {
		for (size_t g = nc; g-- > 0;)
			for (size_t fi = 0; g % x->k && fi < nf; fi++)
				x->cpk[g * nf + fi] -= x->cpk[(g - 1) * nf + fi];
		d->rpk = x->cpk;
		x->cpk = NULL;
	} else if ((d->rpk = malloc(nc * (nf ? nf : 1) * sizeof(*d->rpk)))) {
		for (size_t g = 0; g < nc; g++)
			for (size_t fi = 0; fi < nf; fi++)
				d->rpk[g * nf + fi] = x->rg[g].fa[fi].pkts;
	}
	d->nrg = d->rpk ? (unsigned)nc : 0;
}

static void ana_results_serial(struct ana_dctx *d)
{
	uint32_t idx[ANA_PATH_MAXEV];
	uint8_t role[ANA_PATH_MAXEV];
	bool anygroup = false;
	struct ana_tpl *tpl = ana_decomp_tpl_on ? calloc(ANA_TPL_SLOTS, sizeof(*tpl)) : NULL;
	size_t hits = 0;
	struct ana_rcnt c = { 0, 0, false };
	ana_res_populate(d, 0, d->p->npkts);
	if (d->gdeliv)
		memset(d->gdeliv, 0, d->p->npkts);
	for (size_t k = 0; k < d->p->npkts; k++) {
		anygroup |= d->p->pkts[k].ngroup != 0;
		ana_packet_one(d, k, idx, role, d->fa, &c, tpl, &hits);
	}
	d->negative += c.negative;
	d->anygroup = anygroup;
	ana_tpl_flush_all(tpl, d->fa);
	free(tpl);
	__atomic_fetch_add(&ana_decomp_tpl_hits, hits, __ATOMIC_RELAXED);
}

/* Every packet's result. Flow state makes the order within a flow matter:
 * with threads, packet ranges each with their own flow state, merged in
 * range order (same result for any count). */
static void ana_results(struct ana_dctx *d, unsigned threads)
{
	size_t npk = d->p->npkts, nf = d->m->flows.n;
	if (threads <= 1 || npk < 65536) {
		ana_results_serial(d);
		return;
	}
	struct ana_frange rg[ANA_PAR_MAXT] = { 0 };
	/* fewer chunks with many flows (their counts per chunk) */
	size_t k = ANA_SK_CHUNK_COUNTS / ((size_t)threads * (nf ? nf : 1));
	struct ana_franges x = { d, rg, threads, k < ANA_SK_CHUNKS ? (unsigned)k : ANA_SK_CHUNKS, NULL };
	if (x.k > 1)
		x.cpk = malloc((size_t)threads * x.k * (nf ? nf : 1) * sizeof(*x.cpk));
	if (!x.cpk)
		x.k = 1;
	ana_par_tasks(threads, ana_franges_task, &x);
	bool ok = ana_franges_merge(d, &x);
	if (ok) {
		ana_par_tasks(threads, ana_franges_remap, &x);
		ana_franges_keep_counts(d, &x);
	}
	ana_franges_free(&x, nf);
	free(x.cpk);
	if (ok)
		return;
	/* rare (see struct ana_frange): once more in one pass, from the seeds */
	for (size_t fi = 0; fi < nf; fi++) {
		free(d->fa[fi].pos);
		d->fa[fi] = (struct ana_fagg){ 0 };
	}
	d->negative = 0;
	if (d->m->sacc)
		ana_stream_seed(d);
	ana_results_serial(d);
}

static void ana_retx_mark(struct ana_dctx *d)
{
	struct ana_paths *p = d->p;
	int64_t *gmin = NULL;
	if (!d->anygroup)
		return;
	gmin = malloc(p->npkts * sizeof(*gmin));
	if (!gmin)
		return;
	for (size_t k = 0; k < p->npkts; k++)
		gmin[k] = INT64_MAX;
	for (size_t k = 0; k < p->npkts; k++)
		if (p->pkts[k].ngroup && d->res[k].t < gmin[p->pkts[k].group])
			gmin[p->pkts[k].group] = d->res[k].t;
	for (size_t k = 0; k < p->npkts; k++) {
		struct ana_pres *r = &d->res[k];
		if (!p->pkts[k].ngroup || r->t <= gmin[p->pkts[k].group])
			continue;
		r->retx = 1;
		if (!r->skip && !(r->resent && !r->ctl) && ana_dc_inwin(d, r->t))
			d->fa[r->flow].retx++;      /* the others: ana_packet_count */
	}
	free(gmin);
}

/* Canonical position order per flow: by mean rank in the path. */
static void ana_flow_orders(struct ana_dctx *d)
{
	for (size_t fi = 0; fi < d->m->flows.n; fi++) {
		struct ana_fagg *f = &d->fa[fi];
		for (int i = 0; i < f->npos; i++)
			f->order[i] = (uint8_t)i;
		for (int i = 1; i < f->npos; i++) {
			uint8_t x = f->order[i];
			int j = i;
			while (j > 0) {
				const struct ana_pos *a = &f->pos[f->order[j - 1]], *b = &f->pos[x];
				if (a->rsum / (double)(a->rn ? a->rn : 1) <= b->rsum / (double)(b->rn ? b->rn : 1))
					break;
				f->order[j] = f->order[j - 1];
				j--;
			}
			f->order[j] = x;
		}
		for (int i = 0; i < f->npos; i++)
			f->rank[f->order[i]] = (uint8_t)i;
		f->deliver_mask = 0;
		for (int i = 0; i < f->npos; i++) {
			const struct ana_pos *ps = &f->pos[i];
			if (f->rank[i] == f->npos - 1 || ps->hook == PK_HOOK_TCP_RCV ||
			    ps->hook == PK_HOOK_COPY_TO_USER)
				f->deliver_mask |= 1u << i;
		}
		f->first_mask_bit = f->npos ? 1u << f->order[0] : 0;
		f->first_hdr_bit = 0;
		for (int i = 0; i < f->npos && !f->first_hdr_bit; i++)
			if (f->pos[f->order[i]].hook != PK_HOOK_SOCK_SEND)
				f->first_hdr_bit = 1u << f->order[i];
		/* loss counts what the sender's device path saw: sock_send events
		 * are byte ranges attached to some segments only, and a flow seen
		 * only on its receiving host says nothing about what was sent */
		f->sent_pos = -1;
		f->sent_mask = 0;
		for (int i = 0; i < f->npos; i++) {
			const struct ana_pos *ps = &f->pos[f->order[i]];
			if (ps->hook < PK_HOOK_DEV_QUEUE || ps->hook > PK_HOOK_DEV_XMIT)
				continue;
			if (f->sent_pos < 0)
				f->sent_pos = f->order[i];
			if (ps->host == f->pos[f->sent_pos].host)
				f->sent_mask |= 1u << f->order[i];
		}
		/* delivered = seen by tcp:tcp_probe, once per skb that reached the
		 * socket; copy_to_user takes its range from the receive queue,
		 * which covers data of other copies (a lost original inside a
		 * range its retransmission filled would look delivered). Without
		 * tcp_rcv (UDP, hook not recorded): the socket hooks and the last */
		f->recv_mask = 0;
		for (int i = 0; i < f->npos; i++)
			if (f->pos[i].hook == PK_HOOK_TCP_RCV)
				f->recv_mask |= 1u << i;
		if (!f->recv_mask)
			f->recv_mask = f->deliver_mask;
		if (f->npos) {
			f->snd_host = f->pos[f->order[0]].host;
			f->rcv_host = f->pos[f->order[f->npos - 1]].host;
		}
	}
}

static void ana_pick_top(struct ana_dctx *d)
{
	size_t nf = d->m->flows.n;
	d->ntop = 0;
	for (size_t fi = 0; fi < nf; fi++)
		d->fa[fi].top = -1;
	for (int t = 0; t < ANA_TOP_FLOWS; t++) {
		uint64_t best = 0;
		size_t bi = SIZE_MAX;
		for (size_t fi = 0; fi < nf; fi++)
			if (d->fa[fi].top < 0 && d->fa[fi].pkts > best) {
				best = d->fa[fi].pkts;
				bi = fi;
			}
		if (bi == SIZE_MAX)
			break;
		d->fa[bi].top = t;
		d->topflow[t] = (uint32_t)bi;
		d->ntop++;
	}
}

static void ana_time_grid(struct ana_dctx *d)
{
	struct ana_model *m = d->m;
	int64_t lo = INT64_MAX, hi = INT64_MIN, end_min = INT64_MAX;
	for (size_t h = 0; h < m->hosts.n; h++) {
		if (!ana_host_aligned(m, (int)h) || !m->hosts.v[h].pkt_events)
			continue;
		int64_t a = ana_to_ref(m, (int)h, m->hosts.v[h].t_min);
		int64_t b = ana_to_ref(m, (int)h, m->hosts.v[h].t_max);
		if (a < lo) lo = a;
		if (b > hi) hi = b;
		if (b < end_min) end_min = b;
	}
	if (lo == INT64_MAX) {
		lo = 0; hi = 1; end_min = INT64_MAX;
	}
	uint64_t iv = m->ref >= 0 && m->hosts.v[m->ref].interval_ns ? m->hosts.v[m->ref].interval_ns
								     : 1000000000ull;
	while ((uint64_t)(hi - lo) / iv + 1 > ANA_MAX_INTERVALS)
		iv *= 2;
	d->t_start = lo;
	d->iv = (int64_t)iv;
	d->nint = (size_t)((hi - lo) / (int64_t)iv) + 1;
	/* packets still in flight when a recording stopped are not losses */
	int64_t guard = (end_min - lo) / 10 < 100000000 ? (end_min - lo) / 10 : 100000000;
	d->t_end_cut = end_min == INT64_MAX ? INT64_MAX : end_min - guard;
}


/* Copies of packet k its sender put on the wire: the most events one
 * egress header hook of the sending host saw. Pure ACKs sent in one TSval
 * tick with the same ack (duplicate ACKs, window updates) share one key:
 * counting keys made a client's 5 872 ACKs 3 186 packets. */
static unsigned ana_copies(const struct ana_dctx *d, size_t k)
{
	const struct ana_pres *r = &d->res[k];
	const struct ana_fagg *f = &d->fa[r->flow];
	const struct ana_pkt *q = &d->p->pkts[k];
	/* all its events, not the first ANA_PATH_MAXEV of the path: a
	 * server's RST storm (170 copies of one key after iperf3 closed) has
	 * hundreds */
	uint32_t cnt[ANA_MAX_POS] = { 0 };
	unsigned best = 1;
	for (uint32_t i = 0; i < q->nev; i++) {
		const struct ana_pe *e = &d->p->pe[q->head + i];
		if ((e->flags & ANA_EVF_RANGE) || (r->len && (e->flags & ANA_PE_NOPAY)))
			continue;
		for (int pos = 0; pos < f->npos; pos++) {
			if (f->pos[pos].host != e->host || f->pos[pos].hook != e->hook)
				continue;
			if ((f->sent_mask & (1u << pos)) && ++cnt[pos] > best)
				best = cnt[pos];
			break;
		}
	}
	return best;
}

/* Jitter's packets: those with a full path (first to last hook of their
 * flow), in memory only the top flows' (the others make no row). Each
 * flow's go straight to its part of d->jit, sized by the flow's packet
 * count (a bound: those are its packets in the window); ana_jit_close
 * closes the parts up. d->jit NULL: no memory, no jitter. */
static void ana_jit_prep(struct ana_dctx *d)
{
	size_t nf = d->m->flows.n, n = 0;
	d->jit = malloc((d->p->npkts + 1) * sizeof(*d->jit));
	d->jat = malloc(2 * (nf + 1) * sizeof(*d->jat));
	if (!d->jit || !d->jat) {
		free(d->jit); free(d->jat);
		d->jit = NULL;
		d->jat = NULL;
		return;
	}
	d->jend = d->jat + nf + 1;
	for (size_t fi = 0; fi < nf; fi++) {
		d->jat[fi] = d->jend[fi] = n;
		if (d->m->sacc || d->fa[fi].top >= 0)
			n += d->fa[fi].pkts;
	}
	d->jat[nf] = n;
}

/* Packet r (not skipped nor retransmitted, in the window) for jitter;
 * jend: the ends of the flows' parts (a task's own copy). */
static void ana_jit_put(struct ana_dctx *d, size_t *jend, const struct ana_pres *r)
{
	const struct ana_fagg *f = &d->fa[r->flow];
	if (f->npos < 2 || !(r->posmask & f->first_hdr_bit) ||
	    !(r->posmask & (1u << f->order[f->npos - 1])) || (!d->m->sacc && f->top < 0))
		return;
	d->jit[jend[r->flow]++] = (struct ana_jit){ r->flow, r->t, r->transit };
}

static bool ana_maybe_lost(const struct ana_fagg *f, const struct ana_pres *r);

/* k appended to l (l->full when there is no memory). */
static void ana_klist_add(struct ana_klist *l, uint32_t k)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 4096;
		uint32_t *v = realloc(l->v, nc * sizeof(*v));
		if (!v) {
			l->full = true;
			return;
		}
		l->v = v;
		l->cap = nc;
	}
	l->v[l->n++] = k;
}

/* A packet's part besides the sketches (one task's): retransmission groups
 * delivered (every packet, window or not; a group's packets may be in two
 * ranges, hence the atomic store of the same 1) and the loss candidates,
 * into lc (for ana_loss_tables, which looks at these only). */
static void ana_loss_prep(struct ana_dctx *d, size_t k, const struct ana_pres *r,
			  const struct ana_fagg *f, struct ana_klist *lc)
{
	if (d->gdeliv && (r->posmask & f->recv_mask))
		__atomic_store_n(&d->gdeliv[r->gself ? k : d->p->pkts[k].group], 1, __ATOMIC_RELAXED);
	if (lc->full || !ana_dc_inwin(d, r->t) || r->t > d->t_end_cut || !ana_maybe_lost(f, r))
		return;
	ana_klist_add(lc, (uint32_t)k);
}

/* Where a task adds its segments: with several tasks a private copy of
 * the headers and sums (segment s of packet k and segment s + 1 sit in one
 * cache line: shared, every add of one task would take the line from the
 * other), copied back for the task's segments at the end. */
struct ana_sksink {
	struct np_sketch *all, allbuf[ANA_NSEGS];
	struct np_sketch (*top)[ANA_NSEGS], (*ivsk)[ANA_NSEGS];
	double (*whole)[ANA_NSEGS];
};

/* Segments t, t + nt, ... of every sketch and sum from src to dst (the
 * other task's segments are neither read nor written). */
static void ana_sksink_copy(const struct ana_dctx *d, const struct ana_sksink *dst,
			    const struct ana_sksink *src, size_t t, size_t nt)
{
	for (size_t s = t; s < ANA_NSEGS; s += nt) {
		dst->all[s] = src->all[s];
		for (int f = 0; f < d->ntop; f++)
			dst->top[f][s] = src->top[f][s];
		for (size_t i = 0; i < d->nint; i++)
			dst->ivsk[i][s] = src->ivsk[i][s];
		for (int f = 0; f <= d->ntop; f++)
			dst->whole[f][s] = src->whole[f][s];
	}
}

static void ana_sksink_shared(struct ana_sksink *k, struct ana_dctx *d)
{
	*k = (struct ana_sksink){ .all = d->all, .top = d->top, .ivsk = d->ivsk, .whole = d->whole };
}

/* Task t's private sink (the shared one when there is no memory for it). */
static void ana_sksink_open(struct ana_sksink *k, struct ana_dctx *d, size_t t, size_t nt)
{
	struct ana_sksink sh;
	ana_sksink_shared(&sh, d);
	ana_sksink_shared(k, d);
	if (nt <= 1)
		return;
	struct np_sketch (*top)[ANA_NSEGS] = calloc(d->ntop ? (size_t)d->ntop : 1, sizeof(*top));
	struct np_sketch (*ivsk)[ANA_NSEGS] = calloc(d->nint ? d->nint : 1, sizeof(*ivsk));
	double (*whole)[ANA_NSEGS] = calloc((size_t)d->ntop + 1, sizeof(*whole));
	if (!top || !ivsk || !whole) {
		free(top); free(ivsk); free(whole);
		return;
	}
	*k = (struct ana_sksink){ .top = top, .ivsk = ivsk, .whole = whole };
	k->all = k->allbuf;
	ana_sksink_copy(d, k, &sh, t, nt);
}

static void ana_sksink_close(struct ana_sksink *k, struct ana_dctx *d, size_t t, size_t nt)
{
	if (k->top == d->top)
		return;
	struct ana_sksink sh;
	ana_sksink_shared(&sh, d);
	ana_sksink_copy(d, &sh, k, t, nt);
	free(k->top); free(k->ivsk); free(k->whole);
}

/* The jitter packets go to the task of their flow (flow % nt): each flow's
 * part is written by one task in packet order, the ends counted in a copy
 * of the task's own (neighbouring flows' ends share cache lines). NULL: no
 * jitter. */
static size_t *ana_jend_open(struct ana_dctx *d, size_t t, size_t nt)
{
	size_t nf = d->m->flows.n;
	if (!d->jit || nt <= 1)
		return d->jit ? d->jend : NULL;
	size_t *je = malloc((nf + 1) * sizeof(*je));
	if (!je)
		return d->jend;   /* each flow's end still has one writer */
	for (size_t fi = t; fi < nf; fi += nt)   /* the other tasks' ends: neither read nor written */
		je[fi] = d->jend[fi];
	return je;
}

static void ana_jend_close(struct ana_dctx *d, size_t *je, size_t t, size_t nt)
{
	if (!je || je == d->jend)
		return;
	for (size_t fi = t; fi < d->m->flows.n; fi += nt)
		d->jend[fi] = je[fi];
	free(je);
}

/* What a task of the sketch pass adds to besides its sketches: the shared
 * counters, or with packet ranges a later range's own. */
struct ana_skout {
	struct ana_sksink sk;
	uint64_t *copies;                     /* per flow; NULL: the flows' own */
	uint64_t (*ivbytes)[ANA_TOP_FLOWS];
	uint32_t (*ivpkts)[ANA_TOP_FLOWS];
	size_t *jend;                         /* ends of the flows' jitter parts; NULL: no jitter */
	struct ana_klist lc;
};

/* Segments s0, s0 + ds, ... of result r (flow f, interval iv) into the
 * sums and sketches of sk. */
static inline __attribute__((always_inline)) void
ana_sk_segs(const struct ana_sksink *sk, const struct ana_pres *r, const struct ana_fagg *f,
	    size_t iv, size_t s0, size_t ds)
{
	double *wh0 = r->ctl || r->seg[ANA_SEG_TOTAL] < 0 ? NULL : sk->whole[0];
	double *wht = f->top < 0 || r->seg[ANA_SEG_TOTAL] < 0 ? NULL : sk->whole[f->top + 1];
	struct np_sketch *ivs = r->ctl ? NULL : sk->ivsk[iv];    /* "all" is data (ana_all_from_iv) */
	struct np_sketch *tops = f->top >= 0 ? sk->top[f->top] : NULL;
	for (size_t s = s0; s < ANA_NSEGS; s += ds) {
		int64_t x = r->seg[s];
		if (x < 0)
			continue;
		if (wh0 && x > 0)
			wh0[s] += (double)x;
		if (wht && x > 0)
			wht[s] += (double)x;
		uint64_t v = (uint64_t)x;
		uint32_t bi = np_sketch_index_fast(v);
		if (ivs)
			np_sketch_add_one(&ivs[s], v, bi);
		if (tops)
			np_sketch_add_one(&tops[s], v, bi);
	}
}

/* The jitter parts task t of the sketch pass by segment writes (those of
 * flows fi % nt == t), made present. A part under 64 KB faults in as it is
 * written (a call each would cost more than it saves). */
static void ana_jit_populate(const struct ana_dctx *d, const struct ana_sktask *st,
			     const size_t *jend, size_t t)
{
	for (size_t fi = t; jend && fi < d->m->flows.n; fi += st->nt) {
		size_t n = !d->m->sacc && d->fa[fi].top < 0 ? 0 : d->fa[fi].pkts;
		if (n * sizeof(*d->jit) >= (64u << 10))
			ana_populate(d->jit + jend[fi], n * sizeof(*d->jit));
	}
}

/* By chunks: share t of nt of the jitter parts and of totb made present
 * (each is written nearly in full, by whichever thread takes a chunk). */
static void ana_chunks_populate(const struct ana_dctx *d, const struct ana_sktask *st, size_t t)
{
	size_t nj = d->jit ? d->jat[d->m->flows.n] : 0;
	if (nj)
		ana_populate(d->jit + nj * t / st->nt, (nj * (t + 1) / st->nt - nj * t / st->nt) * sizeof(*d->jit));
	size_t npk = d->p->npkts;
	if (d->totb)
		ana_populate(d->totb + npk * t / st->nt, (npk * (t + 1) / st->nt - npk * t / st->nt) * sizeof(*d->totb));
}

/* Packets [lo, hi) of the sketch pass into o's sinks (o->jend, o->lc
 * unused: jend, lc), as task t (by segment) or for chunk t (st->rg). */
static void ana_sketch_range(const struct ana_sktask *st, struct ana_skout *o, size_t *jend,
			     struct ana_klist *lc, size_t lo, size_t hi, size_t t)
{
	struct ana_dctx *d = st->d;
	size_t s0 = st->rg ? 0 : t, ds = st->rg ? 1 : st->nt;
	bool own = st->rg || t == 0;
	const struct ana_sksink sk = o->sk;
	struct ana_ivq ivc = { 0, 0, 0 };
	uint32_t *totb = own ? d->totb : NULL;
	if (totb && !st->rg)
		ana_populate(totb + lo, (hi - lo) * sizeof(*totb));
	if (!st->rg)
		ana_jit_populate(d, st, jend, t);
	for (size_t k = lo; k < hi; k++) {
		const struct ana_pres *r = &d->res[k];
		if (totb)
			totb[k] = 0;
		if (r->skip)
			continue;
		struct ana_fagg *f = &d->fa[r->flow];
		if (own)
			ana_loss_prep(d, k, r, f, lc);
		if (!ana_dc_inwin(d, r->t))
			continue;
		int64_t ii = ana_ivq(d, &ivc, r->t);
		size_t iv = ii < 0 ? 0 : (size_t)ii >= d->nint ? d->nint - 1 : (size_t)ii;
		if (own && r->copies_later)
			*(o->copies ? &o->copies[r->flow] : &f->copies) += ana_copies(d, k);
		if (own && f->top >= 0) {
			o->ivbytes[iv][f->top] += r->len;
			if (r->posmask & f->first_hdr_bit)
				o->ivpkts[iv][f->top]++;
		}
		if (r->retx)
			continue;                       /* retransmissions: separate, not in latency */
		if (totb && r->seg[ANA_SEG_TOTAL] >= 0)
			totb[k] = ANA_TB_SET | np_sketch_index_fast((uint64_t)r->seg[ANA_SEG_TOTAL]) |
				  (uint32_t)(f->top + 1) << 12 | (r->ctl ? 0 : ANA_TB_DATA);
		if (jend && (st->rg || r->flow % st->nt == t))
			ana_jit_put(d, jend, r);
		if (ds == 1)        /* a constant stride: the loop unrolled */
			ana_sk_segs(&sk, r, f, iv, 0, 1);
		else
			ana_sk_segs(&sk, r, f, iv, s0, ds);
	}
}

/* By segment (rg NULL): task t adds the segments s with s % nt == t of
 * every packet to the sketches (each sketch gets its values in packet
 * order, as with one thread); task 0 also counts the interval bytes and
 * packets, the copies of the packets that may have more than one and the
 * loss candidates; the jitter packets go to the task of their flow. By
 * chunks of the results' ranges (rg): task t takes the next chunk not
 * taken and does all of that for it into rg[t], its jitter packets and
 * loss candidates into the chunk's own (a thread slowed down, as on a
 * loaded machine, takes fewer chunks: with a range each, one thread waited
 * a median 12 ms for the other at load 3). */
static void ana_sketch_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	struct ana_sktask *st = ctx;
	struct ana_dctx *d = st->d;
	if (st->rg) {
		size_t nf = d->m->flows.n, lo, hi;
		ana_chunks_populate(d, st, t);
		for (;;) {
			size_t g = __atomic_fetch_add(&st->next, 1, __ATOMIC_RELAXED);
			if (g >= d->nrg)
				return;
			ana_chunk_bounds(d->p->npkts, d->nrg, g, &lo, &hi);
			ana_sketch_range(st, &st->rg[t], st->coff ? st->coff + g * nf : NULL, &st->clc[g],
					 lo, hi, g);
		}
	}
	struct ana_skout seg = { .ivbytes = d->ivbytes, .ivpkts = d->ivpkts, .lc = d->lc };
	ana_sksink_open(&seg.sk, d, t, st->nt);
	seg.jend = ana_jend_open(d, t, st->nt);
	ana_sketch_range(st, &seg, seg.jend, &seg.lc, 0, d->p->npkts, t);
	ana_sksink_close(&seg.sk, d, t, st->nt);
	ana_jend_close(d, seg.jend, t, st->nt);
	if (t == 0)
		d->lc = seg.lc;
}

/* Chunks for the sketch pass: thread 0 adds into the shared sketches and
 * counters, thread t > 0 into its own, merged after. The same as one
 * pass: counts and extremes merge exactly, and the sums are of whole
 * nanoseconds in doubles, exact in any order while the results' segments
 * sum below 2^53 (d->segbig). Chunk g's jitter packets of flow f go after
 * the earlier chunks' packets of f (d->rpk: from coff[g * flows + f], its
 * end there after), closed up after; its loss candidates into clc[g],
 * joined in chunk order (packet order). */
static void ana_skrange_free(struct ana_dctx *d, struct ana_skout *o)
{
	for (int s = 0; o->sk.all && s < ANA_NSEGS; s++) {
		np_sketch_free(&o->sk.all[s]);
		for (int f = 0; o->sk.top && f < d->ntop; f++)
			np_sketch_free(&o->sk.top[f][s]);
		for (size_t i = 0; o->sk.ivsk && i < d->nint; i++)
			np_sketch_free(&o->sk.ivsk[i][s]);
	}
	free(o->sk.top); free(o->sk.ivsk); free(o->sk.whole);
	free(o->copies); free(o->ivbytes); free(o->ivpkts); free(o->jend); free(o->lc.v);
}

/* Thread t > 0's sinks; false: no memory. */
static bool ana_skrange_open(struct ana_dctx *d, struct ana_skout *o)
{
	size_t nf = d->m->flows.n, n1 = nf ? nf : 1;
	*o = (struct ana_skout){
		.sk = { .top = calloc(d->ntop ? (size_t)d->ntop : 1, sizeof(*o->sk.top)),
			.ivsk = calloc(d->nint, sizeof(*o->sk.ivsk)),
			.whole = calloc((size_t)d->ntop + 1, sizeof(*o->sk.whole)) },
		.copies = calloc(n1, sizeof(*o->copies)),
		.ivbytes = calloc(d->nint, sizeof(*o->ivbytes)),
		.ivpkts = calloc(d->nint, sizeof(*o->ivpkts)),
	};
	o->sk.all = o->sk.allbuf;
	for (int s = 0; s < ANA_NSEGS; s++)
		np_sketch_init(&o->sk.all[s]);
	return o->sk.top && o->sk.ivsk && o->sk.whole && o->copies && o->ivbytes && o->ivpkts;
}

/* The chunks' jitter starts (st->coff) and loss lists (st->clc). */
static bool ana_skchunks_open(struct ana_dctx *d, struct ana_sktask *st)
{
	size_t nf = d->m->flows.n;
	st->clc = calloc(d->nrg, sizeof(*st->clc));
	st->coff = d->jit ? malloc((size_t)d->nrg * (nf ? nf : 1) * sizeof(*st->coff)) : NULL;
	if (!st->clc || (d->jit && !st->coff))
		return false;
	st->clc[0] = d->lc;
	for (size_t fi = 0; st->coff && fi < nf; fi++) {
		size_t at = d->jat[fi];
		for (size_t g = 0; g < d->nrg; g++) {
			st->coff[g * nf + fi] = at;
			at += d->rpk[g * nf + fi];
		}
	}
	return true;
}

/* The threads' sinks and the chunks' lists; false (none left open): no memory. */
static bool ana_skranges_open(struct ana_dctx *d, struct ana_sktask *st)
{
	struct ana_skout *rg = st->rg;
	rg[0] = (struct ana_skout){ .ivbytes = d->ivbytes, .ivpkts = d->ivpkts };
	ana_sksink_shared(&rg[0].sk, d);
	bool ok = ana_skchunks_open(d, st);
	for (unsigned t = 1; ok && t < st->nt; t++)
		if (!ana_skrange_open(d, &rg[t])) {
			for (unsigned u = 1; u <= t; u++)
				ana_skrange_free(d, &rg[u]);
			ok = false;
		}
	if (!ok) {
		free(st->clc); free(st->coff);
		st->clc = NULL;
		st->coff = NULL;
	}
	return ok;
}

/* Task t merges segments s with s % n == t of every other thread's sinks
 * into the shared sketches and sums, and closes up the jitter parts of the
 * flows with fi % n == t. */
static void ana_skranges_merge(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	const struct ana_sktask *x = ctx;
	struct ana_dctx *d = x->d;
	size_t nf = d->m->flows.n;
	for (unsigned u = 1; u < x->nt; u++) {
		const struct ana_sksink *k = &x->rg[u].sk;
		for (size_t s = t; s < ANA_NSEGS; s += x->nt) {
			np_sketch_merge(&d->all[s], &k->all[s]);
			for (int f = 0; f < d->ntop; f++)
				np_sketch_merge(&d->top[f][s], &k->top[f][s]);
			for (size_t i = 0; i < d->nint; i++)
				np_sketch_merge(&d->ivsk[i][s], &k->ivsk[i][s]);
			for (int f = 0; f <= d->ntop; f++)
				d->whole[f][s] += k->whole[f][s];
		}
	}
	for (size_t fi = t; x->coff && fi < nf; fi += x->nt) {
		size_t at = d->jat[fi], from = d->jat[fi];
		for (size_t g = 0; g < d->nrg; g++) {
			size_t cnt = x->coff[g * nf + fi] - from;
			if (cnt && at != from)
				memmove(d->jit + at, d->jit + from, cnt * sizeof(*d->jit));
			at += cnt;
			from += d->rpk[g * nf + fi];
		}
		d->jend[fi] = at;
	}
}

/* The other threads' counters added, the chunks' loss candidates joined
 * in chunk order; their sinks and lists freed. */
static void ana_skranges_close(struct ana_dctx *d, struct ana_sktask *x)
{
	ana_par_tasks(x->nt, ana_skranges_merge, x);
	for (unsigned u = 1; u < x->nt; u++) {
		const struct ana_skout *o = &x->rg[u];
		for (size_t fi = 0; fi < d->m->flows.n; fi++)
			d->fa[fi].copies += o->copies[fi];
		for (size_t i = 0; i < d->nint; i++)
			for (int f = 0; f < d->ntop; f++) {
				d->ivbytes[i][f] += o->ivbytes[i][f];
				d->ivpkts[i][f] += o->ivpkts[i][f];
			}
		ana_skrange_free(d, &x->rg[u]);
	}
	d->lc = x->clc[0];
	for (size_t g = 1; g < d->nrg; g++) {
		const struct ana_klist *l = &x->clc[g];
		d->lc.full |= l->full;
		for (size_t c = 0; !d->lc.full && c < l->n; c++)
			ana_klist_add(&d->lc, l->v[c]);
		free(l->v);
	}
	free(x->clc); free(x->coff);
}

/* "all" of segment s, the serial way: its values added in packet order. */
static void ana_all_serial(struct ana_dctx *d, int s)
{
	np_sketch_reset(&d->all[s]);
	for (size_t k = 0; k < d->p->npkts; k++) {
		const struct ana_pres *r = &d->res[k];
		if (r->skip || r->retx || r->ctl || r->seg[s] < 0 || !ana_dc_inwin(d, r->t))
			continue;
		uint64_t v = (uint64_t)r->seg[s];
		np_sketch_add_one(&d->all[s], v, np_sketch_index_fast(v));
	}
}

/* Flow "all" holds the data packets' values, as the intervals together do:
 * merged from them rather than added per packet. Counts and extremes merge
 * exactly; the sums are of whole nanoseconds (values >= 0, the partial sums
 * rise), exact in any order while the total stays below 2^53, which the
 * merged sum tells. Past that: added the serial way (rare). */
static void ana_all_from_iv(struct ana_dctx *d)
{
	for (int s = 0; s < ANA_NSEGS; s++) {
		np_sketch_reset(&d->all[s]);
		for (size_t i = 0; i < d->nint; i++)
			np_sketch_merge(&d->all[s], &d->ivsk[i][s]);
		if (d->all[s].sum >= 0x1p53)
			ana_all_serial(d, s);
	}
}

static void ana_accumulate_pass(struct ana_dctx *d);

static void ana_accumulate(struct ana_dctx *d)
{
	ana_accumulate_pass(d);
	if (d->ivsk)
		ana_all_from_iv(d);
}

static void ana_accumulate_pass(struct ana_dctx *d)
{
	struct ana_paths *p = d->p;
	ana_pick_top(d);
	d->top = calloc(d->ntop ? d->ntop : 1, sizeof(*d->top));
	d->ivsk = calloc(d->nint, sizeof(*d->ivsk));
	d->ivbytes = calloc(d->nint, sizeof(*d->ivbytes));
	d->ivpkts = calloc(d->nint, sizeof(*d->ivpkts));
	d->ivlost = calloc(d->nint, sizeof(*d->ivlost));
	d->whole = calloc((size_t)d->ntop + 1, sizeof(*d->whole));
	d->totb = malloc((p->npkts ? p->npkts : 1) * sizeof(*d->totb));
	if (!d->top || !d->ivsk || !d->ivbytes || !d->ivpkts || !d->ivlost || !d->whole)
		return;
	ana_jit_prep(d);
	struct ana_skout rg[ANA_PAR_MAXT];
	struct ana_sktask ck = { d, ana_threads(d->m) < d->nrg ? ana_threads(d->m) : d->nrg, rg, 0, NULL, NULL };
	if (d->rpk && !d->segbig && ck.nt > 1 && ana_skranges_open(d, &ck)) {
		ana_par_tasks(ck.nt, ana_sketch_task, &ck);
		ana_skranges_close(d, &ck);
		return;
	}
	struct ana_sktask st = { d, ana_threads(d->m), NULL, 0, NULL, NULL };
	if (st.nt > ANA_NSEGS)
		st.nt = ANA_NSEGS;
	if (p->npkts < 65536)
		st.nt = 1;
	ana_par_tasks(st.nt, ana_sketch_task, &st);
}

static void ana_flow_name(const struct ana_model *m, uint32_t fi, char *buf, size_t n)
{
	ana_flow_key(&m->flows.v[fi], buf, n);
}

/* The hosts between the flow's sender and receiver (routers, balancers)
 * in path order, "b" or "r1,r2"; empty when none was recorded. */
static void ana_forward_hosts(const struct ana_dctx *d, const struct ana_fagg *f, char *buf, size_t n)
{
	size_t len = 0;
	int last = -1;
	buf[0] = 0;
	for (int i = 0; i < f->npos; i++) {
		const struct ana_pos *p = &f->pos[f->order[i]];
		if (p->host == f->snd_host || p->host == f->rcv_host || p->host == last)
			continue;
		last = p->host;
		int w = snprintf(buf + len, n - len, "%s%s", len ? "," : "", d->m->hosts.v[p->host].name);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
}

/* Where the latency is spent, one finding per (segment, host): eight
 * redis connections whose client read late pushed the balancer's queue
 * out of the three findings. The flow with the highest score speaks for
 * the others. */
#define ANA_DCANDS 128
struct ana_dcand {
	double score, sh, sh99;       /* share of the mean, of the p99 */
	int seg;
	double mean;
	uint64_t p99;
	unsigned more;                /* other flows where the same (segment, host) holds half the latency */
	char name[160], hb[300];
};

static void ana_dcand_add(struct ana_dcand *a, int *na, const struct ana_dcand *c, const char *name,
			  const char *hb)
{
	int i;
	for (i = 0; i < *na; i++)
		if (a[i].seg == c->seg && !strcmp(a[i].hb, hb))
			break;
	unsigned more = 0;
	if (i == *na) {
		if (*na == ANA_DCANDS)
			return;
		(*na)++;
	} else if (a[i].score >= c->score) {
		a[i].more += c->sh >= 50;
		return;
	} else
		more = a[i].more + (a[i].sh >= 50);   /* the flow it replaces */
	a[i] = *c;
	a[i].more = more;
	snprintf(a[i].name, sizeof(a[i].name), "%s", name);
	snprintf(a[i].hb, sizeof(a[i].hb), "%s", hb);
}

static void ana_dcand_emit(struct ana_out *o, const struct ana_dcand *a, int na)
{
	for (int i = 0; i < na; i++) {
		char key[200], more[48] = "";
		snprintf(key, sizeof(key), "%s|%s", a[i].name, ana_seg_name(a[i].seg));
		if (a[i].more)
			snprintf(more, sizeof(more), ", and of %u more flow%s,", a[i].more,
				 a[i].more > 1 ? "s" : "");
		ana_out_candidate(o, a[i].score, a[i].sh >= 50 ? 2 : 1, "decomp", key, "share_mean", a[i].sh,
				  "%.0f %% of the latency of flow %s (mean %.1f us; %.0f %% of its p99, %.1f us)%s "
				  "is spent in the %s on %s", a[i].sh, a[i].name, a[i].mean / 1e3, a[i].sh99,
				  (double)a[i].p99 / 1e3, more, ana_seg_phrase(a[i].seg), a[i].hb);
	}
}

/* columns of "decomp", in the order of the np_table_col_at calls below */
enum { DC_FLOW, DC_SEGMENT, DC_SK, DC_SHARE_MEAN = DC_SK + ANA_SK_NCOLS, DC_SHARE_P99,
       DC_HOST, DC_NCOLS };

static struct np_table *ana_decomp_table_new(void)
{
	struct np_table *t = np_table_new("decomp", "Latency decomposition per segment", 2);
	np_table_col_at(t, DC_FLOW, "flow", "str", "sender-side flow, or all");
	np_table_col_at(t, DC_SEGMENT, "segment", "str", "sender_stack qdisc device wire forward_stack forward_qdisc forward_device receiver_stack receiver_app total");
	ana_sketch_cols(t, DC_SK);
	np_table_col_at(t, DC_SHARE_MEAN, "share_mean", "pct", "segment mean as % of the total mean");
	np_table_col_at(t, DC_SHARE_P99, "share_p99", "pct", "% of the latency of the slowest 1 % of packets spent here");
	np_table_col_at(t, DC_HOST, "host", "str", "host the segment runs on (wire: sender>receiver)");
	return t;
}

/* The decomp rows of "all" (f < 0) or of top flow f: sketches sk, segment
 * sums wh of the packets with a whole path, tl of those at or above the
 * total's p99 (ntail of them; tl NULL: not known, share_p99 empty). dc NULL:
 * no findings. */
static void ana_decomp_rows(struct ana_dctx *d, struct np_table *t, int f, const char *name,
			    const struct np_sketch *sk, const double *wh, const double *tl, uint64_t ntail,
			    uint64_t p99, struct ana_dcand *dc, int *ndc)
{
	struct ana_model *m = d->m;
	for (int s = 0; s < ANA_NSEGS; s++) {
		if (!sk[s].n)
			continue;
		size_t r = np_table_row(t);
		np_table_set_str(t, r, DC_FLOW, name);
		np_table_set_str(t, r, DC_SEGMENT, ana_seg_name(s));
		ana_sketch_cells(t, r, DC_SK, &sk[s]);
		/* over the packets with a whole path: a segment seen on
		 * packets whose other host was not aligned has no total */
		if (wh[ANA_SEG_TOTAL] > 0)
			np_table_set_f64(t, r, DC_SHARE_MEAN, 100.0 * wh[s] / wh[ANA_SEG_TOTAL]);
		if (tl && ntail && tl[ANA_SEG_TOTAL] > 0)
			np_table_set_f64(t, r, DC_SHARE_P99, 100.0 * tl[s] / tl[ANA_SEG_TOTAL]);
		if (f >= 0) {
			const struct ana_fagg *fa = &d->fa[d->topflow[f]];
			char hb[300];
			if (s == ANA_SEG_WIRE || s == ANA_SEG_TOTAL)
				snprintf(hb, sizeof(hb), "%s>%s", m->hosts.v[fa->snd_host].name,
					 m->hosts.v[fa->rcv_host].name);
			else if (s >= ANA_SEG_FWD_STACK && s <= ANA_SEG_FWD_DEVICE)
				ana_forward_hosts(d, fa, hb, sizeof(hb));
			else
				snprintf(hb, sizeof(hb), "%s", m->hosts.v[s < ANA_SEG_WIRE ? fa->snd_host
									      : fa->rcv_host].name);
			np_table_set_str(t, r, DC_HOST, hb);
			int nseg = 0;
			for (int q = 0; q < ANA_SEG_TOTAL; q++)
				nseg += sk[q].n > 0;
			/* a one-segment path (e.g. pure ACKs seen at two hooks) says nothing */
			if (dc && s != ANA_SEG_TOTAL && wh[ANA_SEG_TOTAL] > 0 && nseg >= 2) {
				/* ranked by the time the segment holds of the
				 * flow's mean latency, 5 ms scoring 1 as a 2 %
				 * loss rate does: not by its share alone (100 %
				 * of a 0.3 ms tail in a client's read outranked
				 * 97 % of 17 ms in a balancer's queue), nor by its
				 * time in the p99 (a loaded machine's rare stalls
				 * of a reader or of a send buffer made the tail
				 * of whatever flow they hit). The p99 of fewer
				 * than 100 packets is one packet's latency (an
				 * iperf3 control connection's 10). */
				double tms = wh[s] / (double)sk[ANA_SEG_TOTAL].n / 1e6;
				double few = fmin(1.0, (double)sk[ANA_SEG_TOTAL].n / 100.0);
				ana_dcand_add(dc, ndc, &(struct ana_dcand){ .score = 2.0 * tms / (tms + 5.0) * few,
					      .sh = 100.0 * wh[s] / wh[ANA_SEG_TOTAL],
					      .sh99 = ntail && tl[ANA_SEG_TOTAL] > 0 ? 100.0 * tl[s] / tl[ANA_SEG_TOTAL] : NAN,
					      .seg = s, .mean = np_sketch_mean(&sk[ANA_SEG_TOTAL]), .p99 = p99 },
					      name, hb);
			}
		}
		char key[200];
		snprintf(key, sizeof(key), "%s|%s", name, ana_seg_name(s));
		np_sketchrec_pack(&d->o->rb, "decomp", key, "latency", "ns", &sk[s]);
	}
}

/* An interval's count, p50 and p99 (the decomp series' values). */
static void ana_iv_quantiles(const struct np_sketch *sk, double *q)
{
	q[0] = (double)sk->n;
	q[1] = (double)np_sketch_quantile(sk, 0.5);
	q[2] = (double)np_sketch_quantile(sk, 0.99);
}

/* The series of flow "all" per segment: q[interval][segment] = count, p50,
 * p99; intervals without packets are left out. */
static void ana_decomp_series(struct ana_dctx *d, double (*q)[ANA_NSEGS][3])
{
	uint64_t *ts = malloc(d->nint * sizeof(*ts));
	double *v50 = malloc(d->nint * sizeof(double)), *v99 = malloc(d->nint * sizeof(double));
	double *vn = malloc(d->nint * sizeof(double));
	if (ts && v50 && v99 && vn) {
		for (int s = 0; s < ANA_NSEGS; s++) {
			size_t k = 0;
			for (size_t i = 0; i < d->nint; i++) {
				if (!q[i][s][0])
					continue;
				ts[k] = (uint64_t)(d->t_start + (int64_t)i * d->iv);
				v50[k] = q[i][s][1];
				v99[k] = q[i][s][2];
				vn[k] = q[i][s][0];
				k++;
			}
			if (!k)
				continue;
			char key[64];
			snprintf(key, sizeof(key), "all|%s", ana_seg_name(s));
			np_series_pack(&d->o->rb, "decomp", key, "p50", "ns", ts, v50, k);
			np_series_pack(&d->o->rb, "decomp", key, "p99", "ns", ts, v99, k);
			np_series_pack(&d->o->rb, "decomp", key, "count", "count", ts, vn, k);
		}
	}
	free(ts); free(v50); free(v99); free(vn);
}

/* Tail decomposition: per segment sums over the packets at or above the
 * total p99 of "all" (group 0) and of each top flow (1 + top). */
struct ana_tail { double (*sum)[ANA_NSEGS]; uint64_t *p99, *n; };

static bool ana_tail_new(const struct ana_dctx *d, struct ana_tail *tl)
{
	size_t ng = (size_t)d->ntop + 1;
	tl->sum = calloc(ng, sizeof(*tl->sum));
	tl->p99 = calloc(ng, sizeof(uint64_t));
	tl->n = calloc(ng, sizeof(uint64_t));
	if (tl->sum && tl->p99 && tl->n)
		return true;
	free(tl->sum); free(tl->p99); free(tl->n);
	*tl = (struct ana_tail){ 0 };
	return false;
}

static void ana_tail_free(struct ana_tail *tl)
{
	free(tl->sum); free(tl->p99); free(tl->n);
}

/* The groups' p99 of the total, and their sketch buckets (lob). */
static void ana_tail_p99(const struct ana_dctx *d, struct ana_tail *tl, uint32_t *lob)
{
	for (size_t g = 0; g <= (size_t)d->ntop; g++) {
		const struct np_sketch *sk = g ? d->top[g - 1] : d->all;
		tl->p99[g] = sk[ANA_SEG_TOTAL].n ? np_sketch_quantile(&sk[ANA_SEG_TOTAL], 0.99) : UINT64_MAX;
		lob[g] = tl->p99[g] > INT64_MAX ? UINT32_MAX : np_sketch_index_fast(tl->p99[g]);
	}
}

/* Packets [lo, hi) into sum and n; on a thread beside the jitter flows.
 * The packets' entries in d->totb pass over those below their groups' p99
 * buckets (lob) without reading their results (the index is monotone: tot
 * >= p99 has index(tot) >= index(p99)). */
static void ana_tail_sums(const struct ana_dctx *d, const struct ana_tail *tl, const uint32_t *lob,
			  size_t lo, size_t hi, double (*sum)[ANA_NSEGS], uint64_t *n)
{
	const uint32_t *totb = d->totb;
	for (size_t k = lo; k < hi; k++) {
		if (totb) {
			uint32_t v = totb[k], b = v & 0xfff, g = v >> 12 & 0xff;
			if (!((v & ANA_TB_DATA) && b >= lob[0]) && !(g && b >= lob[g]))
				continue;
		}
		const struct ana_pres *r = &d->res[k];
		if (r->skip || r->retx || r->seg[ANA_SEG_TOTAL] < 0 || !ana_dc_inwin(d, r->t))
			continue;
		uint64_t tot = (uint64_t)r->seg[ANA_SEG_TOTAL];
		int top = d->fa[r->flow].top;
		size_t gs[2] = { 0, top >= 0 ? (size_t)top + 1 : 0 };
		for (int q = 0; q < (top >= 0 ? 2 : 1); q++) {
			size_t g = gs[q];
			if (g == 0 && r->ctl)
				continue;
			if (tot < tl->p99[g])
				continue;
			for (int s = 0; s < ANA_NSEGS; s++)
				if (r->seg[s] > 0)
					sum[g][s] += (double)r->seg[s];
			n[g]++;
		}
	}
}

static void ana_decomp_table(struct ana_dctx *d, const struct ana_tail *tl)
{
	struct ana_model *m = d->m;
	struct np_table *t = ana_decomp_table_new();
	double (*tail)[ANA_NSEGS] = tl->sum, (*whole)[ANA_NSEGS] = d->whole;
	const uint64_t *p99s = tl->p99, *ntails = tl->n;
	struct ana_dcand *dc = calloc(ANA_DCANDS, sizeof(*dc));
	int ndc = 0;
	if (!tail || !dc) {
		np_table_free(t);
		free(dc);
		return;
	}
	for (int s = 0; m->sacc && s < ANA_NSEGS; s++)
		m->sacc->whole[s] += whole[0][s];
	for (int f = -1; f < d->ntop; f++) {
		char name[160] = "all";
		if (f >= 0)
			ana_flow_name(m, d->topflow[f], name, sizeof(name));
		ana_decomp_rows(d, t, f, name, f < 0 ? d->all : d->top[f], whole[f + 1], tail[f + 1],
				ntails[f + 1], p99s[f + 1], dc, &ndc);
	}
	ana_dcand_emit(d->o, dc, ndc);
	free(dc);
	ana_out_table(d->o, t);
	/* per-interval series of the overall decomposition */
	double (*q)[ANA_NSEGS][3] = calloc(d->nint, sizeof(*q));
	for (size_t i = 0; q && i < d->nint; i++)
		for (int s = 0; s < ANA_NSEGS; s++)
			if (d->ivsk[i][s].n)
				ana_iv_quantiles(&d->ivsk[i][s], q[i][s]);
	if (q)
		ana_decomp_series(d, q);
	free(q);
	if (d->negative && !m->sacc)     /* streamed: summed over the windows */
		ana_warn(m, "%llu cross-host segments came out negative after clock correction "
			 "(clamped to 0): the clock error bound is larger than those segments",
			 (unsigned long long)d->negative);
}

/* ---- jitter ---- */


static int ana_jit_cmp(const void *a, const void *b)
{
	const struct ana_jit *x = a, *y = b;
	if (x->flow != y->flow) return x->flow < y->flow ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* Packets grouped by flow (each in packet order), by send time within a
 * flow: packets are created nearly in time order, so insertion sort is
 * linear; a badly ordered flow falls back to qsort. */
static void ana_jit_sort(struct ana_jit *j, size_t n)
{
	for (size_t a = 0; a < n;) {
		size_t b = a, moves = 0;
		while (b < n && j[b].flow == j[a].flow)
			b++;
		for (size_t i = a + 1; i < b && moves <= 16 * (b - a); i++) {
			struct ana_jit x = j[i];
			size_t k = i;
			while (k > a && j[k - 1].t > x.t) {
				j[k] = j[k - 1];
				k--;
				moves++;
			}
			j[k] = x;
		}
		if (moves > 16 * (b - a))
			qsort(j + a, b - a, sizeof(*j), ana_jit_cmp);
		a = b;
	}
}

/* One top flow's jitter: its packets j[a, b), the table's figures and the
 * series (ana_jitter_flow, on a thread), written out in flow order. */
struct ana_jres {
	size_t a, b, na;
	int64_t mn, mx, p50, p99;
	double J, Jsum;
	size_t nser;                  /* series points */
	uint64_t *ts;
	double *sp99, *rfc;
};

/* Per interval (by send time) of one flow: p99 |jitter| and the RFC 3550
 * estimate at the interval's end, into x. absj[i] belongs to packet
 * j[i + 1]; both are in send order. */
/* tmp: na entries of scratch (NULL: no series). Returns whether the RFC
 * 3550 estimate's run went over all packets: then its last value and sum
 * are in *Jend, *Jsum (the flow's, taken from here rather than run twice). */
static bool ana_jitter_series(const struct ana_dctx *d, const struct ana_jit *j, size_t nj,
			      const int64_t *absj, size_t na, int64_t *tmp, struct ana_jres *x,
			      double *Jend, double *Jsum)
{
	uint64_t *ts = malloc(d->nint * sizeof(*ts));
	double *p99 = malloc(d->nint * sizeof(double)), *rfc = malloc(d->nint * sizeof(double));
	size_t k = 0;
	double J = 0, Js = 0;
	bool ran = false;
	struct ana_ivq ivc = { 0, 0, 0 };
	if (!ts || !p99 || !rfc || !tmp || nj < 2)
		goto out;
	for (size_t a = 0; a < na;) {
		int64_t ii = ana_ivq(d, &ivc, j[a + 1].t);
		size_t b = a;
		while (b < na && ana_ivq(d, &ivc, j[b + 1].t) == ii) {
			J += ((double)absj[b] - J) / 16.0;
			Js += J;
			b++;
		}
		size_t m = b - a;
		size_t i99 = (size_t)ceil(0.99 * (double)m) - 1;
		int64_t v99 = ana_kth(absj + a, m, i99, tmp);
		if (k < d->nint) {
			ts[k] = (uint64_t)(d->t_start + ii * d->iv);
			p99[k] = (double)v99;
			rfc[k] = J;
			k++;
		}
		a = b;
	}
	ran = true;
	*Jend = J;
	*Jsum = Js;
out:
	if (!k) {
		free(ts); free(p99); free(rfc);
		ts = NULL; p99 = rfc = NULL;
	}
	x->nser = k;
	x->ts = ts;
	x->sp99 = p99;
	x->rfc = rfc;
	return ran;
}

/* Flow x's jitter from its packets j[x->a, x->b) (at least 2), with
 * absj[x->a ..] as its scratch. */
static void ana_jitter_flow(const struct ana_dctx *d, const struct ana_jit *j, int64_t *absj,
			    struct ana_jres *x)
{
	int64_t mn = INT64_MAX, mx = INT64_MIN;
	double J = 0, Jsum = 0;
	size_t na = 0;
	absj += x->a;
	if ((x->b - x->a) * sizeof(*absj) >= (64u << 10))
		ana_populate(absj, (x->b - x->a) * sizeof(*absj));
	for (size_t i = x->a + 1; i < x->b; i++) {
		int64_t dj = j[i].lat - j[i - 1].lat;
		if (dj < mn) mn = dj;
		if (dj > mx) mx = dj;
		absj[na++] = dj < 0 ? -dj : dj;
	}
	int64_t *w = malloc(na * sizeof(*w));
	if (!ana_jitter_series(d, j + x->a, x->b - x->a, absj, na, w, x, &J, &Jsum))
		for (size_t i = 0; i < na; i++) {
			J += ((double)absj[i] - J) / 16.0;
			Jsum += J;
		}
	size_t i99 = (size_t)ceil(0.99 * (double)na) - 1, i50 = (size_t)ceil(0.5 * (double)na) - 1;
	if (w) {
		ana_kth2(absj, na, i99, i50, w, &x->p99, &x->p50);
		free(w);
	} else {
		ana_select(absj, na, i99);
		ana_select(absj, i99 + 1, i50);
		x->p50 = absj[i50];
		x->p99 = absj[i99];
	}
	x->na = na;
	x->mn = mn;
	x->mx = mx;
	x->J = J;
	x->Jsum = Jsum;
}

/* Work items taken by the threads, largest first so that the last one
 * taken is small (both threads end together): the tail sums (when tail
 * is set) in ntail pieces of the packets, then the jitter flows by size
 * (each sorted in its part of d->jit first). Piece u > 0 sums into
 * sum1[u - 1], n1[u - 1], added after in piece order: the same sums while
 * the segments' total stays below 2^53, see ana_tables_compute. */
#define ANA_TAIL_PIECES 16
struct ana_jtask {
	const struct ana_dctx *d;
	struct ana_jit *j;
	int64_t *absj;
	struct ana_jres *v;
	size_t nv, next;
	uint8_t ord[ANA_TOP_FLOWS];   /* v by size, largest first */
	struct ana_tail *tail;
	uint32_t lob[ANA_TOP_FLOWS + 1];
	unsigned ntail;
	double (*sum1)[ANA_NSEGS];    /* (ntail - 1) * (ntop + 1) */
	uint64_t *n1;
};

static void ana_jitter_task(void *ctx, size_t t, size_t t1)
{
	(void)t; (void)t1;
	struct ana_jtask *jt = ctx;
	size_t npk = jt->d->p->npkts, ng = (size_t)jt->d->ntop + 1;
	for (;;) {
		size_t i = __atomic_fetch_add(&jt->next, 1, __ATOMIC_RELAXED);
		if (i >= jt->nv + jt->ntail)
			break;
		if (i < jt->ntail) {
			ana_tail_sums(jt->d, jt->tail, jt->lob, npk * i / jt->ntail, npk * (i + 1) / jt->ntail,
				      i ? jt->sum1 + (i - 1) * ng : jt->tail->sum,
				      i ? jt->n1 + (i - 1) * ng : jt->tail->n);
			continue;
		}
		struct ana_jres *x = &jt->v[jt->ord[i - jt->ntail]];
		ana_jit_sort(jt->j + x->a, x->b - x->a);
		ana_jitter_flow(jt->d, jt->j, jt->absj, x);
	}
}

/* columns of "jitter", in the order of the np_table_col_at calls below */
enum { JT_FLOW, JT_PACKETS, JT_JITTER_MIN, JT_JITTER_MAX, JT_JITTER_RANGE,
       JT_JITTER_P50_ABS, JT_JITTER_P99_ABS, JT_JITTER_RFC3550, JT_JITTER_RFC3550_MEAN,
       JT_NCOLS };

static struct np_table *ana_jitter_table_new(void)
{
	struct np_table *t = np_table_new("jitter", "Jitter per flow (vnettracer dT(i+1)-dT(i); RFC 3550)", 1);
	np_table_col_at(t, JT_FLOW, "flow", "str", NULL);
	np_table_col_at(t, JT_PACKETS, "packets", "count", "packets with a full path (first to last hook of the flow)");
	np_table_col_at(t, JT_JITTER_MIN, "jitter_min", "ns", "smallest dT(i+1)-dT(i)");
	np_table_col_at(t, JT_JITTER_MAX, "jitter_max", "ns", "largest dT(i+1)-dT(i)");
	np_table_col_at(t, JT_JITTER_RANGE, "jitter_range", "ns", "max - min");
	np_table_col_at(t, JT_JITTER_P50_ABS, "jitter_p50_abs", "ns", "median |dT(i+1)-dT(i)|");
	np_table_col_at(t, JT_JITTER_P99_ABS, "jitter_p99_abs", "ns", "99th percentile |dT(i+1)-dT(i)|");
	np_table_col_at(t, JT_JITTER_RFC3550, "jitter_rfc3550", "ns", "RFC 3550 interarrival jitter at the end");
	np_table_col_at(t, JT_JITTER_RFC3550_MEAN, "jitter_rfc3550_mean", "ns", "mean of the RFC 3550 estimate over packets");
	return t;
}

/* d->jit by flow, then by send time; returns how many. */
static size_t ana_jit_close(struct ana_dctx *d)
{
	size_t n = 0;
	struct ana_jit *j = d->jit;
	for (size_t fi = 0; fi < d->m->flows.n; fi++) {
		if (n != d->jat[fi])
			memmove(j + n, j + d->jat[fi], (d->jend[fi] - d->jat[fi]) * sizeof(*j));
		n += d->jend[fi] - d->jat[fi];
	}
	ana_jit_sort(j, n);
	return n;
}

static void ana_stream_jitter_add(struct ana_dctx *d, const struct ana_jit *j, size_t n);

/* The tail sums (tl, when the decomposition's table has memory) and, in
 * memory, the jitter of the top flows with 2 packets or more (each flow's
 * packets in its own part of d->jit, in flow order) on threads. */
static void ana_tables_compute(struct ana_dctx *d, struct ana_tail *tl, struct ana_jtask *jt)
{
	size_t nf = d->m->flows.n;
	*jt = (struct ana_jtask){ .d = d, .j = d->jit, .tail = tl->sum ? tl : NULL };
	if (!d->m->sacc && d->jit) {
		jt->absj = malloc((d->p->npkts + 1) * sizeof(*jt->absj));
		jt->v = jt->absj ? calloc(d->ntop ? d->ntop : 1, sizeof(*jt->v)) : NULL;
		for (size_t fi = 0; jt->v && fi < nf && jt->nv < (size_t)d->ntop; fi++)
			if (d->fa[fi].top >= 0 && d->jend[fi] - d->jat[fi] >= 2)
				jt->v[jt->nv++] = (struct ana_jres){ .a = d->jat[fi], .b = d->jend[fi] };
	}
	for (size_t i = 0; i < jt->nv; i++) {           /* by size, largest first */
		size_t at = i;
		for (; at && jt->v[jt->ord[at - 1]].b - jt->v[jt->ord[at - 1]].a <
			     jt->v[i].b - jt->v[i].a; at--)
			jt->ord[at] = jt->ord[at - 1];
		jt->ord[at] = (uint8_t)i;
	}
	unsigned nt = d->p->npkts < 65536 ? 1 : ana_threads(d->m);
	size_t ng = (size_t)d->ntop + 1;
	if (jt->tail) {
		ana_tail_p99(d, tl, jt->lob);
		jt->ntail = 1;
		/* pieces (two per thread, so that the flows after them even
		 * the threads out): their sums of whole nanoseconds, below
		 * 2^53 as the results' (d->segbig, known with packet ranges),
		 * add exactly */
		unsigned np = 2 * nt < ANA_TAIL_PIECES ? 2 * nt : ANA_TAIL_PIECES;
		if (nt > 1 && d->rpk && !d->segbig) {
			jt->sum1 = calloc((np - 1) * ng, sizeof(*jt->sum1));
			jt->n1 = calloc((np - 1) * ng, sizeof(*jt->n1));
			jt->ntail = jt->sum1 && jt->n1 ? np : 1;
		}
	}
	size_t items = jt->nv + jt->ntail;
	ana_par_tasks(nt < items ? nt : (unsigned)items, ana_jitter_task, jt);
	for (size_t u = 1; u < jt->ntail; u++)
		for (size_t g = 0; g < ng; g++) {
			for (int s = 0; s < ANA_NSEGS; s++)
				tl->sum[g][s] += jt->sum1[(u - 1) * ng + g][s];
			tl->n[g] += jt->n1[(u - 1) * ng + g];
		}
	free(jt->sum1);
	free(jt->n1);
	jt->sum1 = NULL;
	jt->n1 = NULL;
}

static void ana_jitter_table(struct ana_dctx *d, struct ana_jtask *jt)
{
	struct ana_model *m = d->m;
	struct ana_jit *j = d->jit;
	struct np_table *t = ana_jitter_table_new();
	if (m->sacc) {       /* streamed: the run's flows go on with this window's packets */
		if (j)
			ana_stream_jitter_add(d, j, ana_jit_close(d));
		goto out;
	}
	for (size_t i = 0; i < jt->nv; i++) {
		const struct ana_jres *x = &jt->v[i];
		uint32_t fl = j[x->a].flow;
		char name[160];
		ana_flow_name(m, fl, name, sizeof(name));
		if (x->nser) {
			np_series_pack(&d->o->rb, "jitter", name, "jitter_p99_abs", "ns", x->ts, x->sp99, x->nser);
			np_series_pack(&d->o->rb, "jitter", name, "jitter_rfc3550", "ns", x->ts, x->rfc, x->nser);
		}
		size_t r = np_table_row(t);
		np_table_set_str(t, r, JT_FLOW, name);
		np_table_set_u64(t, r, JT_PACKETS, x->b - x->a);
		np_table_set_i64(t, r, JT_JITTER_MIN, x->mn);
		np_table_set_i64(t, r, JT_JITTER_MAX, x->mx);
		np_table_set_i64(t, r, JT_JITTER_RANGE, x->mx - x->mn);
		np_table_set_i64(t, r, JT_JITTER_P50_ABS, x->p50);
		np_table_set_i64(t, r, JT_JITTER_P99_ABS, x->p99);
		np_table_set_f64(t, r, JT_JITTER_RFC3550, x->J);
		np_table_set_f64(t, r, JT_JITTER_RFC3550_MEAN, x->Jsum / (double)x->na);
		double med = (double)np_sketch_quantile(&d->top[d->fa[fl].top][ANA_SEG_TOTAL], 0.5);
		if (med > 0 && (double)x->p99 > med * 0.5)
			ana_out_candidate(d->o, 0.3 * fmin((double)x->p99 / med, 3.0), 1, "jitter", name,
					  "jitter_p99_abs", (double)x->p99,
					  "flow %s has a p99 jitter of %.1f us against a median latency of %.1f us",
					  name, (double)x->p99 / 1e3, med / 1e3);
	}
out:
	ana_out_table(d->o, t);
}

static void ana_jtask_free(struct ana_jtask *jt)
{
	for (size_t i = 0; i < jt->nv; i++) {
		free(jt->v[i].ts); free(jt->v[i].sp99); free(jt->v[i].rfc);
	}
	free(jt->v);
	free(jt->absj);
}

/* ---- loss ---- */

static const char *ana_drop_reason(const struct ana_model *m, uint16_t host, uint32_t flow)
{
	char key[160];
	ana_flow_key(&m->flows.v[flow], key, sizeof(key));
	const struct ana_drop *best = NULL, *any = NULL;
	for (size_t i = 0; i < m->drops.n; i++) {
		const struct ana_drop *dr = &m->drops.v[i];
		if (dr->host != host)
			continue;
		if (!any || dr->count > any->count)
			any = dr;
		if (!strcmp(dr->flowkey, key) && (!best || dr->count > best->count))
			best = dr;
	}
	return best ? best->reason : NULL;
}

/* Drop rows a lost packet can be joined to: flow key hashed once. */
static uint64_t ana_str_hash(const char *x)
{
	uint64_t h = 1469598103934665603ull;
	for (; *x; x++)
		h = (h ^ (uint8_t)*x) * 1099511628211ull;
	return h;
}

struct ana_dropjoin {
	uint64_t *hash;
	uint8_t *used;
	uint64_t *at;                 /* local time of the event the drop was joined to */
};

/* The kernel drop of a packet last seen at local time ts on host, flow
 * flow: the nearest unused one-drop row (a recorder that writes each drop
 * with its time, t_ns) of that host and flow from 1 ms before to 100 ms
 * after ts, consumed so each drop explains one packet, except that the
 * pieces of one GSO/GRO super-packet (its retransmissions were cut
 * differently, so each piece is a packet of its own) share its last event
 * and its drop; else the most frequent reason among that flow's count rows
 * (drops recorded without a time of their own). NULL when the recording
 * has neither. */
static const char *ana_drop_for(const struct ana_model *m, struct ana_dropjoin *dj, uint16_t host,
				uint32_t flow, uint64_t ts)
{
	char key[160];
	ana_flow_key(&m->flows.v[flow], key, sizeof(key));
	uint64_t h = ana_str_hash(key);
	size_t best = SIZE_MAX;
	int64_t bestdt = INT64_MAX;
	const struct ana_drop *cnt = NULL;
	for (size_t i = 0; dj->hash && i < m->drops.n; i++) {
		const struct ana_drop *dr = &m->drops.v[i];
		if (dr->host != host || dj->hash[i] != h || strcmp(dr->flowkey, key))
			continue;
		if (dr->count == 1 && dr->t) {
			if (dj->used[i] && dj->at[i] == ts)
				return dr->reason;  /* another piece of the same skb */
			int64_t dt = (int64_t)(dr->t - ts);
			if (!dj->used[i] && dt >= -1000000 && dt <= 100000000 && (dt < 0 ? -dt : dt) < bestdt) {
				bestdt = dt < 0 ? -dt : dt;
				best = i;
			}
		} else if (!cnt || dr->count > cnt->count) {
			cnt = dr;
		}
	}
	if (best != SIZE_MAX) {
		dj->used[best] = 1;
		dj->at[best] = ts;
		return m->drops.v[best].reason;
	}
	return cnt ? cnt->reason : NULL;
}

/* A copy that reached the receiving host (one whose kernel drops were
 * recorded) but not its socket while another copy of the same bytes did (same key, or an earlier member of its
 * retransmission group): a spurious retransmission the receiver discarded,
 * unless a drop other than TCP's own duplicate checks is joined to it (an
 * iptables drop of the original, repaired by a retransmission, is a loss).
 * The receiver's backlog coalesces such copies, or TCP frees them as old
 * or already-queued data, often with no drop event the join finds:
 * loss_locate.sh saw 6 of 92 "lost" rows of this kind, 1 run in ~20. */
static bool ana_dup_discard(const char *why)
{
	return !why || !strcmp(why, "TCP_OLD_DATA") || !strcmp(why, "TCP_OFO_DROP") ||
	       !strcmp(why, "TCP_OFODROP");
}

/* Whether packet r of flow f may have lost copies: its sender's device
 * path saw it and either some copy missed the delivery hooks or (control
 * packets) it never left the sending host. */
static bool ana_maybe_lost(const struct ana_fagg *f, const struct ana_pres *r)
{
	if (f->npos < 2 || !(r->posmask & f->sent_mask))
		return false;
	if (!r->dup && (r->posmask & f->recv_mask))
		return false;
	/* ACK-only, SYN, FIN, RST: the socket hooks may never see them;
	 * judged only up to the receiving host */
	if (r->ctl && (r->nhosts > 1 || (r->posmask & f->recv_mask)))
		return false;
	return true;
}

/* One lost copy of a packet: where it was last seen and when. */
struct ana_lcopy {
	int pos;                      /* the flow's position it reached last */
	uint32_t flow;                /* flow index of that event (its host's view) */
	uint64_t ts;                  /* local time there */
	int64_t t;                    /* first seen, reference timeline */
	bool retx;
	bool dup_of_delivered;        /* reached the receiving host, and a copy of the
				       * same bytes (same key, or its retransmission
				       * group) reached the socket */
	bool unrecorded;              /* delivered, its socket-hook events missing */
};

/* The lost copies of packet k. A copy is lost when the sender's device
 * path saw it and no socket hook (nor the flow's last hook) did. Copies
 * count: a retransmission sent in the same TSval tick as its original has
 * the same key and joins the same packet, so 2 copies at the receiver's
 * device and 1 at its socket is one loss there. The copies that got
 * furthest are taken as delivered; the earliest timestamps go to the lost
 * ones (the original goes out first and is what a retransmission repairs). */
static int ana_lost_copies(struct ana_dctx *d, size_t k, const uint8_t *gdeliv, uint32_t *idx,
			   struct ana_lcopy *out, int max)
{
	const struct ana_pres *r = &d->res[k];
	const struct ana_fagg *f = &d->fa[r->flow];
	if (!ana_maybe_lost(f, r))
		return 0;
	const struct ana_pe *ev = d->p->pe;
	size_t n = ana_dc_order(d, k, idx, NULL);
	uint8_t cnt[ANA_MAX_POS] = { 0 }, ranged[ANA_MAX_POS] = { 0 };
	uint64_t pts[ANA_MAX_POS][2];
	uint32_t pflow[ANA_MAX_POS];
	for (size_t i = 0; i < n; i++) {
		const struct ana_pe *e = &ev[idx[i]];
		int pos;
		for (pos = 0; pos < f->npos; pos++)
			if (f->pos[pos].host == e->host && f->pos[pos].hook == e->hook)
				break;
		if (pos < f->npos && (e->flags & ANA_EVF_RANGE))
			ranged[pos] = 1;
		if (pos == f->npos || (e->flags & ANA_EVF_RANGE) || (r->len && (e->flags & ANA_PE_NOPAY)))
			continue;
		int c = cnt[pos] < 255 ? cnt[pos]++ : 255;
		pflow[pos] = e->flow;
		if (c == 0) {
			pts[pos][0] = e->ts;
		} else if (e->ts < pts[pos][0]) {
			pts[pos][1] = pts[pos][0];
			pts[pos][0] = e->ts;
		} else if (c == 1 || e->ts < pts[pos][1]) {
			pts[pos][1] = e->ts;
		}
	}
	/* copies sent: the most any egress hook of the sender saw (a GSO
	 * super-packet before segmentation may not be attached to every piece) */
	int sent = 0, delivered = 0, s0 = -1;
	for (int i = 0; i < f->npos; i++) {
		/* copy_to_user ranges cover coalesced data and are attached to
		 * every packet inside them: at most one copy reaches the user */
		if (f->pos[i].hook == PK_HOOK_COPY_TO_USER && cnt[i] > 1)
			cnt[i] = 1;
		if ((f->sent_mask & (1u << i)) && cnt[i] > sent) {
			sent = cnt[i];
			s0 = i;
		}
		if ((f->recv_mask & (1u << i)) && cnt[i] > delivered)
			delivered = cnt[i];
		/* a range event at a socket hook that covers this packet (the
		 * receiver's backlog coalesces consecutive segments into one skb,
		 * which tcp_probe sees once) is one copy delivered there */
		if ((f->recv_mask & (1u << i)) && ranged[i] && !delivered)
			delivered = 1;
	}
	if (r->ctl)
		sent = sent ? 1 : 0;
	/* a lost copy was not seen at or after the delivery point (a range
	 * event there belongs to another copy) */
	int recv_rank = f->npos, rhost = -1;
	for (int i = 0; i < f->npos; i++)
		if ((f->recv_mask & (1u << i)) && f->rank[i] < recv_rank) {
			recv_rank = f->rank[i];
			rhost = f->pos[i].host;
		}
	bool data_delivered = delivered > 0 || (gdeliv && gdeliv[d->p->pkts[k].group]);
	int nl = 0;
	for (int j = 0; j < sent - delivered && nl < max; j++) {
		int need = delivered + 1 + j, last = -1;
		for (int i = 0; i < f->npos; i++)
			if (cnt[i] >= need && f->rank[i] < recv_rank && (last < 0 || f->rank[i] > f->rank[last]))
				last = i;
		if (last < 0)
			break;
		int c = j < 1 ? 0 : 1;
		uint16_t h0 = f->pos[s0].host;
		struct ana_lcopy *o = &out[nl++];
		o->pos = last;
		o->flow = pflow[last];
		o->ts = pts[last][cnt[last] > 1 ? c : 0];
		o->t = j == 0 || cnt[s0] < 2 ? r->t
		       : ana_host_aligned(d->m, h0) ? ana_to_ref(d->m, h0, pts[s0][1])
		       : (int64_t)pts[s0][1];
		o->retx = r->retx || j > 0;
		o->dup_of_delivered = data_delivered && f->pos[last].host == rhost &&
				      d->m->hosts.v[rhost].has_flows;
		/* One copy of TCP data, never retransmitted, that reached the
		 * receiving host: TCP delivers every byte it does not resend,
		 * so the receiver's socket got it and the kernel did not run
		 * (or we did not record) its tcp_probe event. Seen on real
		 * traffic: netif_receive and tcp_probe missing together for
		 * single skbs TC ingress saw, with no recursion miss and no
		 * ring-buffer loss counted (docs/ANALYSIS.md, "Unrecorded"). */
		o->unrecorded = sent == 1 && !r->ctl && r->len && !d->p->pkts[k].udp &&
				!d->p->pkts[k].ngroup && !r->resent && f->pos[last].host == rhost;
	}
	return nl;
}

/* Per-interval lost packets and loss rate of one top flow (loss over time). */
static void ana_loss_series(struct ana_dctx *d, int top, const char *name)
{
	uint64_t *ts = malloc(d->nint * sizeof(*ts));
	double *lost = malloc(d->nint * sizeof(double)), *rate = malloc(d->nint * sizeof(double));
	size_t k = 0;
	for (size_t i = 0; ts && lost && rate && i < d->nint; i++) {
		if (!d->ivpkts[i][top])
			continue;
		ts[k] = (uint64_t)(d->t_start + (int64_t)i * d->iv);
		lost[k] = d->ivlost[i][top];
		rate[k] = (double)d->ivlost[i][top] / (double)d->ivpkts[i][top];
		k++;
	}
	if (k) {
		np_series_pack(&d->o->rb, "loss", name, "lost", "count", ts, lost, k);
		np_series_pack(&d->o->rb, "loss", name, "loss_rate", "ratio", ts, rate, k);
	}
	free(ts); free(lost); free(rate);
}

/* Hooks that see only some of a flow's packets by design, left out of the
 * loss_hops chain (counts across them compare unlike things): sock_send
 * events are byte ranges attached to a few packets ("lost 3156 (99 %)"
 * then "-3156"). */
static bool ana_hop_partial(uint8_t hook)
{
	return hook == PK_HOOK_SOCK_SEND;
}

/* Lost packets with a recorded kernel drop, per (host, reason), over all
 * flows: one finding names where and why packets were dropped. */
#define ANA_DROPAGG 16
struct ana_dropagg { uint16_t host; const char *why; uint64_t n; unsigned nflows; };

static void ana_dropagg_add(struct ana_dropagg *a, int *na, struct ana_fagg *f, uint16_t host,
			    const char *why)
{
	int i;
	for (i = 0; i < *na; i++)
		if (a[i].host == host && !strcmp(a[i].why, why))
			break;
	if (i == *na) {
		if (*na == ANA_DROPAGG)
			return;
		a[(*na)++] = (struct ana_dropagg){ .host = host, .why = why };
	}
	a[i].n++;
	if (f->drop_mark != i + 1) {
		f->drop_mark = i + 1;
		a[i].nflows++;
	}
}

/* Kernel drops that made packets lost rank above where latency is spent:
 * each one stalls its flow until the retransmission (an RTO, 200 ms or
 * more, when it hits a SYN or the tail), which percentiles of the packets
 * that did arrive do not show. */
static void ana_dropagg_findings(struct ana_dctx *d, const struct ana_dropagg *a, int na)
{
	for (int i = 0; i < na; i++) {
		uint64_t sent = 0;
		for (size_t fi = 0; fi < d->m->flows.n; fi++)
			if (d->fa[fi].drop_mark == i + 1)
				sent += d->fa[fi].pkts;
		double rate = sent ? (double)a[i].n / (double)sent : 0;
		char key[200];
		snprintf(key, sizeof(key), "%s|%s", d->m->hosts.v[a[i].host].name, a[i].why);
		ana_out_candidate(d->o, 3.0 + fmin(rate * 100.0, 2.0), rate > 0.001 ? 2 : 1, "lost_packets",
				  key, "lost", (double)a[i].n,
				  "%llu packets of %u flows were dropped on %s (%s), %.2f %% of their packets: "
				  "each stalls its flow until it is retransmitted",
				  (unsigned long long)a[i].n, a[i].nflows, d->m->hosts.v[a[i].host].name,
				  a[i].why, rate * 100);
	}
}

/* columns of "loss", in the order of the np_table_col_at calls below */
enum { LS_FLOW, LS_SENT, LS_RECEIVED, LS_LOST, LS_LOSS_RATE, LS_RETRANS, LS_WORST_HOOK,
       LS_UNRECORDED, LS_NCOLS };

static struct np_table *ana_loss_table_new(void)
{
	struct np_table *t = np_table_new("loss", "Loss per flow (retransmissions counted apart)", 1);
	np_table_col_at(t, LS_FLOW, "flow", "str", NULL);
	np_table_col_at(t, LS_SENT, "sent", "count", "packets seen at the flow's first hook");
	np_table_col_at(t, LS_RECEIVED, "received", "count", "packets seen at the flow's last hook");
	np_table_col_at(t, LS_LOST, "lost", "count", "packets that never reached the receiver");
	np_table_col_at(t, LS_LOSS_RATE, "loss_rate", "ratio", "lost / sent");
	np_table_col_at(t, LS_RETRANS, "retrans", "count", "retransmitted packets");
	np_table_col_at(t, LS_WORST_HOOK, "worst_hook", "str", "host:hook after which most packets vanished");
	np_table_col_at(t, LS_UNRECORDED, "unrecorded", "count",
			"delivered (reached the receiver, never resent) but its socket-hook events missing");
	return t;
}

/* A flow's sent (the most any egress hook of its sender saw) and received
 * (its last position) packets; f->npos >= 1. */
static void ana_flow_sent_recv(const struct ana_fagg *f, uint64_t *sent, uint64_t *recv)
{
	*sent = f->sent_pos >= 0 ? 0 : f->pos[f->order[0]].n;
	for (int i = 0; i < f->npos; i++)
		if ((f->sent_mask & (1u << i)) && f->pos[i].n > *sent)
			*sent = f->pos[i].n;
	*recv = f->pos[f->order[f->npos - 1]].n;
}

static void ana_loss_flow_tables(struct ana_dctx *d);
static void ana_stream_lost_at(struct ana_dctx *d, uint32_t fi, int64_t t);
static void ana_stream_seed(struct ana_dctx *d);

/* columns of "lost_packets", in the order of the np_table_col_at calls below */
enum { LP_FLOW, LP_SEQ, LP_TIME, LP_LEN, LP_LAST_HOST, LP_LAST_HOOK, LP_LOST_IN,
       LP_NEXT_HOOK, LP_RETRANSMISSION, LP_DROP_REASON, LP_NCOLS };

static struct np_table *ana_lost_table_new(void)
{
	struct np_table *lp = np_table_new("lost_packets", "Every lost packet, located", 3);
	np_table_col_at(lp, LP_FLOW, "flow", "str", NULL);
	np_table_col_at(lp, LP_SEQ, "seq", "id", "TCP seq or UDP id");
	np_table_col_at(lp, LP_TIME, "time", "time_ns", "first seen, reference timeline");
	np_table_col_at(lp, LP_LEN, "len", "bytes", "payload");
	np_table_col_at(lp, LP_LAST_HOST, "last_host", "str", "last host that saw it");
	np_table_col_at(lp, LP_LAST_HOOK, "last_hook", "str", "last hook that saw it");
	np_table_col_at(lp, LP_LOST_IN, "lost_in", "str", "segment after the last hook (where it vanished)");
	np_table_col_at(lp, LP_NEXT_HOOK, "next_hook", "str", "the hook it never reached");
	np_table_col_at(lp, LP_RETRANSMISSION, "retransmission", "bool", "the lost packet was itself a retransmission");
	np_table_col_at(lp, LP_DROP_REASON, "drop_reason", "str", "kernel drop reason on that host, when recorded");
	return lp;
}

static void ana_loss_tables(struct ana_dctx *d)
{
	struct ana_dropagg dagg[ANA_DROPAGG];
	int ndagg = 0;
	struct ana_model *m = d->m;
	struct np_table *lp = m->sacc && m->sacc->lost_tab ? m->sacc->lost_tab : ana_lost_table_new();
	if (m->sacc)
		m->sacc->lost_tab = lp;
	size_t nrows = m->sacc ? m->sacc->lost_rows : 0;
	size_t nd = m->drops.n ? m->drops.n : 1;
	struct ana_dropjoin dj = { calloc(nd, sizeof(uint64_t)), calloc(nd, 1), calloc(nd, sizeof(uint64_t)) };
	if (!dj.hash || !dj.used || !dj.at) {
		free(dj.hash); free(dj.used); free(dj.at);
		dj.hash = NULL; dj.used = NULL; dj.at = NULL;
	}
	for (size_t i = 0; dj.hash && i < m->drops.n; i++)
		dj.hash[i] = ana_str_hash(m->drops.v[i].flowkey);
	uint32_t idx[ANA_PATH_MAXEV];
	const uint8_t *gdeliv = d->gdeliv;
	size_t nk = d->lc.full ? d->p->npkts : d->lc.n;
	for (size_t c = 0; c < nk; c++) {
		size_t k = d->lc.full ? c : d->lc.v[c];
		const struct ana_pres *r = &d->res[k];
		if (r->skip || !ana_in_window(m, r->t) || r->t > d->t_end_cut)
			continue;
		struct ana_fagg *f = &d->fa[r->flow];
		struct ana_lcopy lc[4];
		int nl = ana_lost_copies(d, k, gdeliv, idx, lc, 4);
		for (int c = 0; c < nl; c++) {
			int last = lc[c].pos;
			const struct ana_pos *lp_ = &f->pos[last];
			const char *why = ana_drop_for(m, &dj, lp_->host, lc[c].flow, lc[c].ts);
			if (lc[c].dup_of_delivered && ana_dup_discard(why))
				continue;
			if (lc[c].unrecorded) {   /* a drop joined to it is another packet's */
				f->unrec++;
				d->unrec++;
				continue;
			}
			f->lost++;
			f->pos[last].lost_here++;
			if (why) {
				ana_dropagg_add(dagg, &ndagg, f, lp_->host, why);
				f->lost_why++;
			}
			if (f->top >= 0) {
				int64_t ii = (lc[c].t - d->t_start) / d->iv;
				size_t iv = ii < 0 ? 0 : (size_t)ii >= d->nint ? d->nint - 1 : (size_t)ii;
				d->ivlost[iv][f->top]++;
			}
			if (m->sacc)
				ana_stream_lost_at(d, r->flow, lc[c].t);
			if (nrows >= ANA_LOST_ROWS)
				continue;
			int nxt = f->rank[last] + 1 < f->npos ? f->order[f->rank[last] + 1] : -1;
			char name[160];
			ana_flow_name(m, r->flow, name, sizeof(name));
			size_t row = np_table_row(lp);
			nrows++;
			np_table_set_str(lp, row, LP_FLOW, name);
			np_table_set_u64(lp, row, LP_SEQ, d->p->pkts[k].seq);
			np_table_set_i64(lp, row, LP_TIME, lc[c].t);
			np_table_set_u64(lp, row, LP_LEN, r->len);
			np_table_set_str(lp, row, LP_LAST_HOST, m->hosts.v[lp_->host].name);
			np_table_set_str(lp, row, LP_LAST_HOOK, ana_hook_name(lp_->hook));
			if (nxt >= 0) {
				const struct ana_pos *np_ = &f->pos[nxt];
				bool fwd = np_->host != f->snd_host && np_->host != f->rcv_host;
				np_table_set_str(lp, row, LP_LOST_IN, ana_seg_name(ana_path_segment(np_->hook,
									      np_->host != lp_->host, fwd)));
				np_table_set_str(lp, row, LP_NEXT_HOOK, ana_hook_name(np_->hook));
			}
			np_table_set_u64(lp, row, LP_RETRANSMISSION, lc[c].retx);
			if (why)
				np_table_set_str(lp, row, LP_DROP_REASON, why);
		}
	}
	free(dj.hash); free(dj.used); free(dj.at);
	ana_dropagg_findings(d, dagg, ndagg);
	if (d->unrec && !m->sacc)       /* streamed: summed over the windows */
		((double)d->unrec <= ANA_MINOR_MISSED_SHARE * (double)d->p->npkts ? ana_note : ana_warn)(
			m, "%llu packets reached their receiving host and were never resent, but "
			 "its socket hooks recorded no event for them: counted as unrecorded "
			 "events (loss.unrecorded), not as loss", (unsigned long long)d->unrec);
	if (nrows >= ANA_LOST_ROWS && !m->sacc)
		ana_warn(m, "more than %d lost packets: lost_packets lists the first %d",
			 ANA_LOST_ROWS, ANA_LOST_ROWS);
	ana_loss_flow_tables(d);
	if (m->sacc)
		m->sacc->lost_rows = nrows;
	else
		ana_out_table(d->o, lp);
}

/* The loss table (every flow with packets) and loss_hops (the top flows)
 * from the flows' counts and positions. */
static void ana_loss_flow_tables(struct ana_dctx *d)
{
	struct ana_model *m = d->m;
	struct np_table *t = ana_loss_table_new();
	/* columns of "loss_hops", in the order of the np_table_col_at calls below */
	enum { LH_FLOW, LH_FROM, LH_TO, LH_N_FROM, LH_N_TO, LH_LOST, LH_LOSS_RATE,
	       LH_LOST_HERE, LH_HOP_MEAN, LH_NCOLS };
	struct np_table *hp = np_table_new("loss_hops", "Packets between consecutive hook points", 3);
	np_table_col_at(hp, LH_FLOW, "flow", "str", NULL);
	np_table_col_at(hp, LH_FROM, "from", "str", "host:hook");
	np_table_col_at(hp, LH_TO, "to", "str", "host:hook");
	np_table_col_at(hp, LH_N_FROM, "n_from", "count", "packets seen at from (N_i)");
	np_table_col_at(hp, LH_N_TO, "n_to", "count", "packets seen at to (N_j)");
	np_table_col_at(hp, LH_LOST, "lost", "count", "N_i - N_j");
	np_table_col_at(hp, LH_LOSS_RATE, "loss_rate", "ratio", "(N_i - N_j) / N_i");
	np_table_col_at(hp, LH_LOST_HERE, "lost_here", "count", "packets whose last hook was from");
	np_table_col_at(hp, LH_HOP_MEAN, "hop_mean", "ns", "mean time from `from` to `to` (sum of the hops between)");
	for (size_t fi = 0; fi < m->flows.n; fi++) {
		struct ana_fagg *f = &d->fa[fi];
		if (!f->pkts || f->npos < 1)
			continue;
		char name[160];
		ana_flow_name(m, (uint32_t)fi, name, sizeof(name));
		uint64_t sent, recv;
		ana_flow_sent_recv(f, &sent, &recv);
		size_t r = np_table_row(t);
		np_table_set_str(t, r, LS_FLOW, name);
		np_table_set_u64(t, r, LS_SENT, sent);
		np_table_set_u64(t, r, LS_RECEIVED, recv);
		np_table_set_u64(t, r, LS_LOST, f->lost);
		if (sent)
			np_table_set_f64(t, r, LS_LOSS_RATE, (double)f->lost / (double)sent);
		np_table_set_u64(t, r, LS_RETRANS, f->retx);
		np_table_set_u64(t, r, LS_UNRECORDED, f->unrec);
		int worst = -1;
		for (int i = 0; i < f->npos; i++)
			if (f->pos[i].lost_here && (worst < 0 || f->pos[i].lost_here > f->pos[worst].lost_here))
				worst = i;
		if (worst >= 0) {
			char hk[200];
			snprintf(hk, sizeof(hk), "%s:%s", m->hosts.v[f->pos[worst].host].name,
				 ana_hook_name(f->pos[worst].hook));
			np_table_set_str(t, r, LS_WORST_HOOK, hk);
			double rate = sent ? (double)f->lost / (double)sent : 0;
			const char *why = ana_drop_reason(m, f->pos[worst].host, (uint32_t)fi);
			/* a flow whose every loss has a kernel drop reason is in the
			 * (host, reason) finding already: one connection's 1 of 16
			 * would push a queue holding 97 % of the latency out */
			if (f->lost_why < f->lost)
				ana_out_candidate(d->o, rate * 50.0 + (f->lost ? 0.1 : 0), rate > 0.01 ? 2 : 1,
						  "loss", name, "loss_rate", rate,
						  "flow %s lost %llu of %llu packets (%.2f %%), most after %s%s%s",
						  name, (unsigned long long)f->lost, (unsigned long long)sent,
						  rate * 100, hk, why ? ": " : "", why ? why : "");
		}
		if (f->top < 0)
			continue;
		if (d->ivpkts)
			ana_loss_series(d, f->top, name);
		for (int i = 0, j; i + 1 < f->npos; i = j) {
			const struct ana_pos *a = &f->pos[f->order[i]];
			j = i + 1;
			if (ana_hop_partial(a->hook))
				continue;
			while (j < f->npos && ana_hop_partial(f->pos[f->order[j]].hook))
				j++;
			if (j == f->npos)
				break;
			const struct ana_pos *b = &f->pos[f->order[j]];
			char fa[200], fb[200];
			snprintf(fa, sizeof(fa), "%s:%s", m->hosts.v[a->host].name, ana_hook_name(a->hook));
			snprintf(fb, sizeof(fb), "%s:%s", m->hosts.v[b->host].name, ana_hook_name(b->hook));
			size_t rr = np_table_row(hp);
			np_table_set_str(hp, rr, LH_FLOW, name);
			np_table_set_str(hp, rr, LH_FROM, fa);
			np_table_set_str(hp, rr, LH_TO, fb);
			np_table_set_u64(hp, rr, LH_N_FROM, a->n);
			np_table_set_u64(hp, rr, LH_N_TO, b->n);
			np_table_set_i64(hp, rr, LH_LOST, (int64_t)a->n - (int64_t)b->n);
			if (a->n)
				np_table_set_f64(hp, rr, LH_LOSS_RATE, ((double)a->n - (double)b->n) / (double)a->n);
			np_table_set_u64(hp, rr, LH_LOST_HERE, a->lost_here);
			/* through the hooks skipped between a and b too (the time
			 * queued in a qdisc ends at qdisc_deq) */
			double hm = 0;
			for (int k = i + 1; k <= j; k++) {
				const struct ana_pos *x = &f->pos[f->order[k]];
				hm += x->hn ? x->hsum / (double)x->hn : 0;
			}
			np_table_set_f64(hp, rr, LH_HOP_MEAN, hm);
		}
	}
	ana_out_table(d->o, t);
	ana_out_table(d->o, hp);
}

/* ---- throughput from packet paths ---- */

/* columns of "pkt_flows", in the order of the np_table_col_at calls below */
enum { PF_FLOW, PF_SENDER, PF_RECEIVER, PF_PACKETS, PF_BYTES, PF_FIRST, PF_LAST,
       PF_THROUGHPUT, PF_NCOLS };

static struct np_table *ana_pkt_flows_table_new(void)
{
	struct np_table *t = np_table_new("pkt_flows", "Traced flows (from packet paths)", 1);
	np_table_col_at(t, PF_FLOW, "flow", "str", NULL);
	np_table_col_at(t, PF_SENDER, "sender", "str", "host");
	np_table_col_at(t, PF_RECEIVER, "receiver", "str", "host");
	np_table_col_at(t, PF_PACKETS, "packets", "count", "sent on the wire (copies with the same key each count)");
	np_table_col_at(t, PF_BYTES, "bytes", "bytes", "payload");
	np_table_col_at(t, PF_FIRST, "first", "time_ns", NULL);
	np_table_col_at(t, PF_LAST, "last", "time_ns", NULL);
	np_table_col_at(t, PF_THROUGHPUT, "throughput", "bps", "payload bits / (last - first)");
	return t;
}

/* One flow's pkt_flows row; snd < 0: hosts unknown. */
static void ana_pkt_flow_row(struct np_table *t, const struct ana_model *m, const char *name,
			     int snd, int rcv, uint64_t copies, uint64_t bytes, int64_t first, int64_t last)
{
	size_t r = np_table_row(t);
	np_table_set_str(t, r, PF_FLOW, name);
	if (snd >= 0) {
		np_table_set_str(t, r, PF_SENDER, m->hosts.v[snd].name);
		np_table_set_str(t, r, PF_RECEIVER, m->hosts.v[rcv].name);
	}
	np_table_set_u64(t, r, PF_PACKETS, copies);
	np_table_set_u64(t, r, PF_BYTES, bytes);
	np_table_set_i64(t, r, PF_FIRST, first);
	np_table_set_i64(t, r, PF_LAST, last);
	if (last > first)
		np_table_set_f64(t, r, PF_THROUGHPUT, (double)bytes * 8e9 / (double)(last - first));
}

static void ana_pkt_flows_table(struct ana_dctx *d)
{
	struct ana_model *m = d->m;
	struct np_table *t = ana_pkt_flows_table_new();
	uint64_t *ts = malloc(d->nint * sizeof(*ts));
	double *v = malloc(d->nint * sizeof(*v));
	for (size_t fi = 0; fi < m->flows.n; fi++) {
		const struct ana_fagg *f = &d->fa[fi];
		if (!f->pkts)
			continue;
		char name[160];
		ana_flow_name(m, (uint32_t)fi, name, sizeof(name));
		ana_pkt_flow_row(t, m, name, f->npos ? f->snd_host : -1, f->npos ? f->rcv_host : -1,
				 f->copies, f->bytes, f->first, f->last);
		if (f->top < 0 || !ts || !v || !d->ivbytes)
			continue;
		size_t k = 0;
		/* the flow's first and last intervals are divided by the part of
		 * them it was active in, not by a whole interval (a 3 s iperf3
		 * run read 158 instead of 189 Mbit/s averaged over 1 s bins) */
		for (size_t i = 0; i < d->nint; i++) {
			int64_t a = d->t_start + (int64_t)i * d->iv, b = a + d->iv;
			int64_t lo = a > f->first ? a : f->first, hi = b < f->last ? b : f->last;
			if (hi <= lo)
				continue;
			ts[k] = (uint64_t)a;
			v[k++] = (double)d->ivbytes[i][f->top] * 8e9 / (double)(hi - lo);
		}
		np_series_pack(&d->o->rb, "pkt_flows", name, "throughput", "bps", ts, v, k);
	}
	free(ts); free(v);
	ana_out_table(d->o, t);
}

/* Segment sums inside the slow-RPC windows: the connection's own packets
 * (matched by its port pair, either direction) and all packets. */
static void ana_window_sums(struct ana_dctx *d)
{
	/* streamed: the run's windows, from the packets each window owns */
	struct ana_model *m = d->m->sacc && d->m->sacc->run ? d->m->sacc->run : d->m;
	if (!m->bwins.n)
		return;
	for (size_t k = 0; k < d->p->npkts; k++) {
		const struct ana_pres *r = &d->res[k];
		if (r->skip || r->retx || r->ctl || r->seg[ANA_SEG_TOTAL] < 0 ||
		    (d->m->sacc && !ana_dc_inwin(d, r->t)))
			continue;
		const struct ana_flow *fl = &d->m->flows.v[r->flow];
		for (size_t w = 0; w < m->bwins.n; w++) {
			struct ana_bwres *b = &m->bwins.v[w];
			if (r->t < b->a || r->t > b->b)
				continue;
			bool own = b->lport && ((fl->sport == b->lport && fl->dport == b->rport) ||
						(fl->sport == b->rport && fl->dport == b->lport));
			for (int s = 0; s < ANA_NSEGS; s++) {
				if (r->seg[s] < 0)
					continue;
				b->asum[s] += (double)r->seg[s];
				b->acnt[s]++;
				if (own) {
					b->sum[s] += (double)r->seg[s];
					b->cnt[s]++;
				}
			}
		}
	}
}

static void ana_export_ivseg(struct ana_dctx *d)
{
	struct ana_ivseg *v = &d->m->ivseg;
	free(v->sum); free(v->cnt);
	v->n = d->nint;
	v->t0 = d->t_start;
	v->len = d->iv;
	v->sum = calloc(d->nint * ANA_NSEGS, sizeof(double));
	v->cnt = calloc(d->nint * ANA_NSEGS, sizeof(uint64_t));
	if (!v->sum || !v->cnt) {
		v->n = 0;
		return;
	}
	for (size_t i = 0; i < d->nint; i++)
		for (int s = 0; s < ANA_NSEGS; s++) {
			v->sum[i * ANA_NSEGS + s] = d->ivsk[i][s].sum;
			v->cnt[i * ANA_NSEGS + s] = d->ivsk[i][s].n;
		}
	for (int s = 0; s < ANA_NSEGS; s++) {
		v->mean[s] = np_sketch_mean(&d->all[s]);
		v->pmean[s] = d->all[ANA_SEG_TOTAL].n ? d->all[s].sum / (double)d->all[ANA_SEG_TOTAL].n : 0;
	}
}

/* ---- streamed: the per-flow state of the run ---- */

/* The interval of time t, the first and last holding what lies outside. */
static size_t ana_iv_index(const struct ana_dctx *d, int64_t t)
{
	int64_t ii = (t - d->t_start) / d->iv;
	return ii < 0 ? 0 : (size_t)ii >= d->nint ? d->nint - 1 : (size_t)ii;
}

/* A sketch of one flow and segment kept across windows: its buckets sparse
 * (a flow's latencies fill a few hundred of the 3 776), min, max and sum
 * exact as np_sketch_add keeps them. */
struct ana_ssk {
	uint32_t n, cap;
	uint16_t *idx;
	uint64_t *cnt;
	uint64_t total, min, max;
	double sum;
};

/* The slot of bucket b in a sparse array sorted by bucket (idx, with
 * values of vsize bytes in *val), made (zeroed) if absent; -1: no memory. */
static int64_t ana_bucket_slot(uint16_t **idx, void **val, size_t vsize, uint32_t *n, uint32_t *cap,
			       uint16_t b)
{
	uint32_t lo = 0, hi = *n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if ((*idx)[mid] < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < *n && (*idx)[lo] == b)
		return lo;
	if (*n == *cap) {
		uint32_t c = *cap ? 2 * *cap : 16;
		uint16_t *ni = realloc(*idx, c * sizeof(*ni));
		if (ni)
			*idx = ni;
		void *nv = ni ? realloc(*val, c * vsize) : NULL;
		if (!nv)
			return -1;
		*val = nv;
		*cap = c;
	}
	char *v = *val;
	memmove(*idx + lo + 1, *idx + lo, (*n - lo) * sizeof(**idx));
	memmove(v + (lo + 1) * vsize, v + lo * vsize, (*n - lo) * vsize);
	(*idx)[lo] = b;
	memset(v + lo * vsize, 0, vsize);
	(*n)++;
	return lo;
}

static void ana_ssk_add(struct ana_ssk *s, uint64_t v)
{
	void *cnt = s->cnt;
	int64_t lo = ana_bucket_slot(&s->idx, &cnt, sizeof(*s->cnt), &s->n, &s->cap,
				     (uint16_t)np_sketch_index(v));
	s->cnt = cnt;
	if (lo < 0)
		return;
	s->cnt[lo]++;
	if (!s->total || v < s->min) s->min = v;
	if (!s->total || v > s->max) s->max = v;
	s->total++;
	s->sum += (double)v;
}

/* A dense sketch into a sparse one (its sum added whole). */
static void ana_ssk_merge(struct ana_ssk *s, const struct np_sketch *d)
{
	if (!d->n || !d->counts)
		return;
	for (uint32_t i = 0; i < NP_SK_NBUCKETS; i++) {
		if (!d->counts[i])
			continue;
		void *cnt = s->cnt;
		int64_t k = ana_bucket_slot(&s->idx, &cnt, sizeof(*s->cnt), &s->n, &s->cap, (uint16_t)i);
		s->cnt = cnt;
		if (k >= 0)
			s->cnt[k] += d->counts[i];
	}
	if (!s->total || d->min < s->min) s->min = d->min;
	if (!s->total || d->max > s->max) s->max = d->max;
	s->total += d->n;
	s->sum += d->sum;
}

/* The dense sketch np_sketch_add would have made of the same values. */
static void ana_ssk_dense(const struct ana_ssk *s, struct np_sketch *out)
{
	np_sketch_init(out);
	for (uint32_t i = 0; i < s->n; i++)
		np_sketch_add(out, np_sketch_bucket_lo(s->idx[i]), s->cnt[i]);
	if (out->n) {
		out->n = s->total;
		out->sum = s->sum;
		out->min = s->min;
		out->max = s->max;
	}
}

static void ana_ssk_free(struct ana_ssk *s)
{
	free(s->idx);
	free(s->cnt);
}

/* One flow's jitter over the windows: its packets come in send order
 * (windows partition the send times), so all but the quantiles are exact. */
struct ana_sjit {
	int64_t last, mn, mx;
	double J, Jsum;
	uint64_t pkts, na;
	struct ana_ssk abs;               /* |dT(i+1)-dT(i)| */
	/* the series: one point per interval with packets (by send time), its
	 * |jitter| sketched until the flow's next interval begins */
	int64_t ii;                       /* the open interval */
	struct ana_ssk cur;
	size_t k;
	uint64_t *ts;
	double *p99, *rfc;
};

/* The segment sums of one flow's packets by the sketch bucket of their
 * total, each bucket split at its midpoint (where np_sketch_quantile reads
 * a quantile): the packets at or above the run's p99 are then the buckets
 * above the p99's and the upper half of its own (share_p99). */
struct ana_stail {
	uint32_t n, cap;
	uint16_t *idx;
	struct ana_tailb { double sum[2][ANA_NSEGS]; uint64_t cnt[2]; } *b;
	/* the packets whose total is the largest so far: the p99 of a few
	 * packets is clamped to it (below its bucket's midpoint) */
	uint64_t max, nmax;
	double maxsum[ANA_NSEGS];
};

static void ana_stail_add(struct ana_stail *t, const int64_t *seg)
{
	uint64_t tot = (uint64_t)seg[ANA_SEG_TOTAL];
	uint16_t bk = (uint16_t)np_sketch_index(tot);
	void *bv = t->b;
	int64_t lo = ana_bucket_slot(&t->idx, &bv, sizeof(*t->b), &t->n, &t->cap, bk);
	t->b = bv;
	if (lo < 0)
		return;
	uint64_t blo = np_sketch_bucket_lo(bk), bhi = np_sketch_bucket_hi(bk);
	int half = tot >= blo + (bhi - blo) / 2;
	struct ana_tailb *b = &t->b[lo];
	if (!t->nmax || tot > t->max) {
		t->max = tot;
		t->nmax = 0;
		memset(t->maxsum, 0, sizeof(t->maxsum));
	}
	if (tot == t->max) {
		t->nmax++;
		for (int s = 0; s < ANA_NSEGS; s++)
			if (seg[s] > 0)
				t->maxsum[s] += (double)seg[s];
	}
	for (int s = 0; s < ANA_NSEGS; s++)
		if (seg[s] > 0)
			b->sum[half][s] += (double)seg[s];
	b->cnt[half]++;
}

/* The sums over the packets whose total is at least p99 (tl, their count
 * returned): p99 is a sketch quantile, its bucket's midpoint or clamped to
 * the extremes (to the minimum: above the midpoint, every packet counts;
 * to the maximum: below it, the packets at the maximum), so this is exact. */
static uint64_t ana_stail_sums(const struct ana_stail *t, uint64_t p99, double *tl)
{
	uint16_t b99 = (uint16_t)np_sketch_index(p99);
	uint64_t lo = np_sketch_bucket_lo(b99), hi = np_sketch_bucket_hi(b99);
	int from = p99 >= lo + (hi - lo) / 2 ? 1 : 0;
	uint64_t n = 0;
	memset(tl, 0, ANA_NSEGS * sizeof(*tl));
	if (!from && t->nmax && p99 == t->max) {
		memcpy(tl, t->maxsum, sizeof(t->maxsum));
		return t->nmax;
	}
	for (uint32_t i = 0; i < t->n; i++) {
		if (t->idx[i] < b99)
			continue;
		for (int h = t->idx[i] == b99 ? from : 0; h < 2; h++) {
			for (int s = 0; s < ANA_NSEGS; s++)
				tl[s] += t->b[i].sum[h][s];
			n += t->b[i].cnt[h];
		}
	}
	return n;
}

/* One flow's per-interval counts (throughput, loss series). */
struct ana_sfiv { uint64_t *bytes; uint32_t *pkts, *lost; };

struct ana_stream_flows {
	size_t n;                         /* flows of the run */
	struct ana_fagg *fa;              /* counts and positions merged */
	struct ana_ssk (*sk)[ANA_NSEGS];
	double (*whole)[ANA_NSEGS];       /* segment sums of packets with a whole path */
	struct ana_sjit *jit;
	struct ana_stail *tail, tail_all; /* per flow; of flow "all" (data only) */
	struct ana_sfiv *iv;              /* per flow, allocated with its first packet */
	int64_t t_start, ivlen;           /* the run's time grid (ana_time_grid) */
	size_t nint, ivdone;              /* intervals [0, ivdone) are final */
	struct np_sketch (*ivsk)[ANA_NSEGS]; /* flow "all" per interval until final (the
					    * windows' merged: a window's worth of them) */
	double (*ivq)[ANA_NSEGS][3];      /* then its count, p50, p99 */
	double (*ivsum)[ANA_NSEGS];       /* and its sums (m->ivseg) */
};

void ana_stream_acc_free(struct ana_stream_acc *a)
{
	struct ana_stream_flows *x = a->fl;
	for (size_t fi = 0; x && fi < x->n; fi++) {
		free(x->fa[fi].pos);
		for (int s = 0; s < ANA_NSEGS; s++)
			ana_ssk_free(&x->sk[fi][s]);
		ana_ssk_free(&x->jit[fi].abs);
		ana_ssk_free(&x->jit[fi].cur);
		free(x->jit[fi].ts); free(x->jit[fi].p99); free(x->jit[fi].rfc);
		free(x->iv[fi].bytes); free(x->iv[fi].pkts); free(x->iv[fi].lost);
		free(x->tail[fi].idx); free(x->tail[fi].b);
	}
	if (x) {
		free(x->tail_all.idx); free(x->tail_all.b);
	}
	for (size_t i = x ? x->ivdone : 0; x && i < x->nint; i++)
		for (int s = 0; s < ANA_NSEGS; s++)
			np_sketch_free(&x->ivsk[i][s]);
	if (x) {
		free(x->fa); free(x->sk); free(x->whole); free(x->jit); free(x->iv); free(x->tail);
		free(x->ivsk); free(x->ivq); free(x->ivsum);
	}
	free(x);
	a->fl = NULL;
	np_table_free(a->lost_tab);
	a->lost_tab = NULL;
}

/* The run's per-flow state, made with the first window (whose time grid
 * is the run's: the skeleton's hosts are copied into every window). */
static struct ana_stream_flows *ana_stream_flows_get(struct ana_stream_acc *a,
						     const struct ana_dctx *d)
{
	if (a->fl || !a->run)
		return a->fl;
	struct ana_stream_flows *x = calloc(1, sizeof(*x));
	size_t n = a->run->flows.n, k = n ? n : 1;
	if (!x)
		return NULL;
	a->fl = x;
	x->n = n;
	x->t_start = d->t_start;
	x->ivlen = d->iv;
	x->nint = d->nint;
	x->fa = calloc(k, sizeof(*x->fa));
	x->sk = calloc(k, sizeof(*x->sk));
	x->whole = calloc(k, sizeof(*x->whole));
	x->jit = calloc(k, sizeof(*x->jit));
	x->iv = calloc(k, sizeof(*x->iv));
	x->tail = calloc(k, sizeof(*x->tail));
	x->ivsk = calloc(x->nint, sizeof(*x->ivsk));
	x->ivq = calloc(x->nint, sizeof(*x->ivq));
	x->ivsum = calloc(x->nint, sizeof(*x->ivsum));
	if (!x->fa || !x->sk || !x->whole || !x->jit || !x->iv || !x->tail || !x->ivsk || !x->ivq ||
	    !x->ivsum) {
		x->n = 0;
		x->nint = 0;
		ana_stream_acc_free(a);
	}
	return a->fl;
}

/* Run flow gi's interval counts, allocated with its first packet. */
static struct ana_sfiv *ana_stream_flow_iv(struct ana_stream_flows *x, uint32_t gi)
{
	struct ana_sfiv *v = &x->iv[gi];
	if (!v->bytes) {
		v->bytes = calloc(x->nint, sizeof(*v->bytes));
		v->pkts = calloc(x->nint, sizeof(*v->pkts));
		v->lost = calloc(x->nint, sizeof(*v->lost));
		if (!v->bytes || !v->pkts || !v->lost) {
			free(v->bytes); free(v->pkts); free(v->lost);
			*v = (struct ana_sfiv){ 0 };
			return NULL;
		}
	}
	return v;
}

/* Interval i of flow "all" is final: its values kept, its sketches freed. */
static void ana_stream_iv_final(struct ana_stream_flows *x, size_t i)
{
	for (int s = 0; s < ANA_NSEGS; s++) {
		if (x->ivsk[i][s].n)
			ana_iv_quantiles(&x->ivsk[i][s], x->ivq[i][s]);
		x->ivsum[i][s] = x->ivsk[i][s].sum;
		np_sketch_free(&x->ivsk[i][s]);
	}
}

/* Streamed: each flow of the window starts with the positions the earlier
 * windows found and their rank sums, as one run's flow goes on with its
 * positions: the order the first 64 packets fixed holds in every window,
 * and a window that sees only part of a path (a host stopped recording)
 * still knows where the path ends. */
static void ana_stream_seed(struct ana_dctx *d)
{
	struct ana_stream_acc *a = d->m->sacc;
	struct ana_stream_flows *x = a->fl;
	for (size_t fi = 0; x && fi < d->m->flows.n; fi++) {
		const struct ana_flow *fl = &d->m->flows.v[fi];
		uint32_t gi = ana_flow_lookup(a->run, fl->host, fl->local_id, false);
		if (gi >= x->n || !x->fa[gi].npos)
			continue;
		struct ana_fagg *f = &d->fa[fi];
		if (!(f->pos = calloc(ANA_MAX_POS, sizeof(*f->pos))))
			continue;
		const struct ana_fagg *F = &x->fa[gi];
		for (int i = 0; i < F->npos; i++)
			f->pos[i] = (struct ana_pos){ .host = F->pos[i].host, .hook = F->pos[i].hook,
						      .rsum = F->pos[i].rsum, .rn = F->pos[i].rn };
		f->npos = F->npos;
	}
}

/* Streamed: a lost copy of window flow fi at t, in its run flow's interval. */
static void ana_stream_lost_at(struct ana_dctx *d, uint32_t fi, int64_t t)
{
	struct ana_stream_acc *a = d->m->sacc;
	struct ana_stream_flows *x = ana_stream_flows_get(a, d);
	const struct ana_flow *fl = &d->m->flows.v[fi];
	uint32_t gi = x ? ana_flow_lookup(a->run, fl->host, fl->local_id, false) : UINT32_MAX;
	struct ana_sfiv *v = x && gi < x->n ? ana_stream_flow_iv(x, gi) : NULL;
	if (v)
		v->lost[ana_iv_index(d, t)]++;
}

/* A window's flow f into the run's F: counts, and each position by its
 * (host, hook); the rank sums are the window's, which began with the
 * run's. */
static void ana_stream_fagg_add(struct ana_fagg *F, const struct ana_fagg *f)
{
	F->pkts += f->pkts;
	F->bytes += f->bytes;
	F->retx += f->retx;
	F->lost += f->lost;
	F->lost_why += f->lost_why;
	F->unrec += f->unrec;
	F->copies += f->copies;
	if (f->first && (!F->first || f->first < F->first))
		F->first = f->first;
	if (f->last > F->last)
		F->last = f->last;
	for (int i = 0; i < f->npos; i++) {
		const struct ana_pos *p = &f->pos[i];
		int j;
		for (j = 0; j < F->npos; j++)
			if (F->pos[j].host == p->host && F->pos[j].hook == p->hook)
				break;
		if (j == F->npos) {
			if (F->npos >= ANA_MAX_POS ||
			    (!F->pos && !(F->pos = calloc(ANA_MAX_POS, sizeof(*F->pos)))))
				continue;
			F->pos[F->npos++] = (struct ana_pos){ .host = p->host, .hook = p->hook };
		}
		struct ana_pos *P = &F->pos[j];
		P->n += p->n;
		P->lost_here += p->lost_here;
		P->hsum += p->hsum;
		P->hn += p->hn;
		/* the window started from the run's rank sums (ana_stream_seed) */
		P->rsum = p->rsum;
		P->rn = p->rn;
	}
}

/* Flow q's jitter series: the open interval closed (its p99 |jitter| and
 * the RFC 3550 estimate at its end) when packets of interval ii begin;
 * ii < 0: close it (the run's end). At most nint points, as in memory. */
static void ana_stream_jit_point(const struct ana_stream_flows *x, struct ana_sjit *q, int64_t ii)
{
	if (q->cur.total && ii != q->ii) {
		if (!q->ts) {
			q->ts = malloc(x->nint * sizeof(*q->ts));
			q->p99 = malloc(x->nint * sizeof(double));
			q->rfc = malloc(x->nint * sizeof(double));
		}
		if (q->ts && q->p99 && q->rfc && q->k < x->nint) {
			struct np_sketch sk;
			ana_ssk_dense(&q->cur, &sk);
			q->ts[q->k] = (uint64_t)(x->t_start + q->ii * x->ivlen);
			q->p99[q->k] = (double)np_sketch_quantile(&sk, 0.99);
			q->rfc[q->k] = q->J;
			q->k++;
			np_sketch_free(&sk);
		}
		ana_ssk_free(&q->cur);
		q->cur = (struct ana_ssk){ 0 };
	}
	q->ii = ii;
}

/* The window's full-path packets j (ana_jit_close: by flow, in send
 * order) continue each run flow's jitter sequence. */
static void ana_stream_jitter_add(struct ana_dctx *d, const struct ana_jit *j, size_t n)
{
	struct ana_stream_acc *a = d->m->sacc;
	struct ana_stream_flows *x = ana_stream_flows_get(a, d);
	uint32_t gi = UINT32_MAX;
	for (size_t i = 0; x && i < n; i++) {
		if (!i || j[i].flow != j[i - 1].flow) {
			const struct ana_flow *fl = &d->m->flows.v[j[i].flow];
			gi = ana_flow_lookup(a->run, fl->host, fl->local_id, false);
		}
		if (gi >= x->n)
			continue;
		struct ana_sjit *q = &x->jit[gi];
		if (q->pkts) {
			int64_t dj = j[i].lat - q->last, ab = dj < 0 ? -dj : dj;
			ana_stream_jit_point(x, q, (j[i].t - x->t_start) / x->ivlen);
			ana_ssk_add(&q->cur, (uint64_t)ab);
			if (!q->na || dj < q->mn) q->mn = dj;
			if (!q->na || dj > q->mx) q->mx = dj;
			ana_ssk_add(&q->abs, (uint64_t)ab);
			q->J += ((double)ab - q->J) / 16.0;
			q->Jsum += q->J;
			q->na++;
		}
		q->last = j[i].lat;
		q->pkts++;
	}
}

/* Streamed: the window's flows, per-flow sketches and jitter into the run's. */
static void ana_stream_flows_add(const struct ana_dctx *d, struct ana_stream_acc *a)
{
	struct ana_stream_flows *x = ana_stream_flows_get(a, d);
	if (!x)
		return;
	size_t nf = d->m->flows.n;
	uint32_t *gmap = malloc((nf ? nf : 1) * sizeof(*gmap));
	if (!gmap)
		return;
	for (size_t fi = 0; fi < nf; fi++) {
		const struct ana_flow *fl = &d->m->flows.v[fi];
		gmap[fi] = ana_flow_lookup(a->run, fl->host, fl->local_id, false);
		if (gmap[fi] < x->n)
			ana_stream_fagg_add(&x->fa[gmap[fi]], &d->fa[fi]);
	}
	/* as ana_sketch_task adds a top flow's and ana_decomp_table sums its segments */
	for (size_t k = 0; k < d->p->npkts; k++) {
		const struct ana_pres *r = &d->res[k];
		if (r->skip || !ana_dc_inwin(d, r->t) || gmap[r->flow] >= x->n)
			continue;
		uint32_t gi = gmap[r->flow];
		size_t iv = ana_iv_index(d, r->t);
		struct ana_sfiv *v = ana_stream_flow_iv(x, gi);
		if (v) {
			v->bytes[iv] += r->len;
			if (r->posmask & d->fa[r->flow].first_hdr_bit)
				v->pkts[iv]++;
		}
		if (r->retx)
			continue;
		/* the window's top flows' sketches are merged whole below */
		for (int s = 0; s < ANA_NSEGS && d->fa[r->flow].top < 0; s++)
			if (r->seg[s] >= 0)
				ana_ssk_add(&x->sk[gi][s], (uint64_t)r->seg[s]);
		if (r->seg[ANA_SEG_TOTAL] < 0)
			continue;
		for (int s = 0; s < ANA_NSEGS; s++)
			if (r->seg[s] > 0)
				x->whole[gi][s] += (double)r->seg[s];
		ana_stail_add(&x->tail[gi], r->seg);
		if (!r->ctl)
			ana_stail_add(&x->tail_all, r->seg);
	}
	for (int t = 0; t < d->ntop; t++)
		for (int s = 0; gmap[d->topflow[t]] < x->n && s < ANA_NSEGS; s++)
			ana_ssk_merge(&x->sk[gmap[d->topflow[t]]][s], &d->top[t][s]);
	for (size_t i = x->ivdone; i < x->nint; i++)
		for (int s = 0; s < ANA_NSEGS; s++)
			np_sketch_merge(&x->ivsk[i][s], &d->ivsk[i][s]);
	free(gmap);
	/* later windows own later packets only: intervals ending in this one are final */
	while (x->ivdone + 1 < x->nint &&
	       x->t_start + (int64_t)(x->ivdone + 1) * x->ivlen - 1 <= d->m->win_hi)
		ana_stream_iv_final(x, x->ivdone++);
}

/* Streamed: the jitter rows of the run's top flows (ordered by flow, as in
 * memory); the |jitter| quantiles from a sketch (0.79 %). */
static void ana_stream_jitter_table(struct ana_dctx *rd, const struct ana_stream_flows *x)
{
	struct np_table *t = ana_jitter_table_new();
	for (size_t fi = 0; fi < x->n; fi++) {
		struct ana_sjit *q = &x->jit[fi];
		if (q->pkts < 2 || rd->fa[fi].top < 0)
			continue;
		char name[160];
		ana_flow_name(rd->m, (uint32_t)fi, name, sizeof(name));
		struct np_sketch sk;
		ana_ssk_dense(&q->abs, &sk);
		size_t r = np_table_row(t);
		np_table_set_str(t, r, JT_FLOW, name);
		np_table_set_u64(t, r, JT_PACKETS, q->pkts);
		np_table_set_i64(t, r, JT_JITTER_MIN, q->mn);
		np_table_set_i64(t, r, JT_JITTER_MAX, q->mx);
		np_table_set_i64(t, r, JT_JITTER_RANGE, q->mx - q->mn);
		uint64_t p99 = np_sketch_quantile(&sk, 0.99);
		np_table_set_i64(t, r, JT_JITTER_P50_ABS, (int64_t)np_sketch_quantile(&sk, 0.5));
		np_table_set_i64(t, r, JT_JITTER_P99_ABS, (int64_t)p99);
		np_table_set_f64(t, r, JT_JITTER_RFC3550, q->J);
		np_table_set_f64(t, r, JT_JITTER_RFC3550_MEAN, q->Jsum / (double)q->na);
		np_sketch_free(&sk);
		/* the finding as in memory, from the flow's median latency */
		struct np_sketch tot;
		ana_ssk_dense(&x->sk[fi][ANA_SEG_TOTAL], &tot);
		double med = (double)np_sketch_quantile(&tot, 0.5);
		np_sketch_free(&tot);
		if (med > 0 && (double)p99 > med * 0.5)
			ana_out_candidate(rd->o, 0.3 * fmin((double)p99 / med, 3.0), 1, "jitter", name,
					  "jitter_p99_abs", (double)p99,
					  "flow %s has a p99 jitter of %.1f us against a median latency of %.1f us",
					  name, (double)p99 / 1e3, med / 1e3);
		ana_stream_jit_point(x, q, INT64_MIN);
		if (q->k) {
			np_series_pack(&rd->o->rb, "jitter", name, "jitter_p99_abs", "ns", q->ts, q->p99, q->k);
			np_series_pack(&rd->o->rb, "jitter", name, "jitter_rfc3550", "ns", q->ts, q->rfc, q->k);
		}
	}
	ana_out_table(rd->o, t);
}

/* Streamed, at the end: every interval final; the time grid, the top
 * flows' interval counts (loss and throughput series) and m->ivseg (for
 * the bottlenecks and the service graph) as in memory. */
static void ana_stream_intervals(struct ana_dctx *rd, struct ana_stream_flows *x,
				 const struct ana_stream_acc *a)
{
	while (x->ivdone < x->nint)
		ana_stream_iv_final(x, x->ivdone++);
	rd->t_start = x->t_start;
	rd->iv = x->ivlen;
	rd->nint = x->nint;
	rd->ivbytes = calloc(x->nint ? x->nint : 1, sizeof(*rd->ivbytes));
	rd->ivpkts = calloc(x->nint ? x->nint : 1, sizeof(*rd->ivpkts));
	rd->ivlost = calloc(x->nint ? x->nint : 1, sizeof(*rd->ivlost));
	for (int t = 0; rd->ivbytes && rd->ivpkts && rd->ivlost && t < rd->ntop; t++) {
		const struct ana_sfiv *v = &x->iv[rd->topflow[t]];
		for (size_t i = 0; v->bytes && i < x->nint; i++) {
			rd->ivbytes[i][t] = v->bytes[i];
			rd->ivpkts[i][t] = v->pkts[i];
			rd->ivlost[i][t] = v->lost[i];
		}
	}
	if (!rd->ivbytes || !rd->ivpkts || !rd->ivlost) {
		free(rd->ivbytes); free(rd->ivpkts); free(rd->ivlost);
		rd->ivbytes = NULL; rd->ivpkts = NULL; rd->ivlost = NULL;
	}
	struct ana_ivseg *g = &rd->m->ivseg;
	free(g->sum); free(g->cnt);
	g->n = x->nint;
	g->t0 = x->t_start;
	g->len = x->ivlen;
	g->sum = calloc(x->nint * ANA_NSEGS + 1, sizeof(double));
	g->cnt = calloc(x->nint * ANA_NSEGS + 1, sizeof(uint64_t));
	if (!g->sum || !g->cnt) {
		g->n = 0;
		return;
	}
	for (size_t i = 0; i < x->nint; i++)
		for (int s = 0; s < ANA_NSEGS; s++) {
			g->sum[i * ANA_NSEGS + s] = x->ivsum[i][s];
			g->cnt[i * ANA_NSEGS + s] = (uint64_t)x->ivq[i][s][0];
		}
	for (int s = 0; s < ANA_NSEGS; s++) {
		g->mean[s] = np_sketch_mean(&a->all[s]);
		g->pmean[s] = a->all[ANA_SEG_TOTAL].n ? a->all[s].sum / (double)a->all[ANA_SEG_TOTAL].n : 0;
	}
}

/* Streamed: the decomp rows of the run's top flows, chosen as in memory
 * (most packets, then the lower flow index) from the merged counts. */
static void ana_stream_decomp_flows(struct ana_dctx *rd, const struct ana_stream_flows *x,
				    struct np_table *t, struct ana_dcand *dc, int *ndc)
{
	for (int f = 0; f < rd->ntop; f++) {
		uint32_t fi = rd->topflow[f];
		struct np_sketch sk[ANA_NSEGS];
		for (int s = 0; s < ANA_NSEGS; s++)
			ana_ssk_dense(&x->sk[fi][s], &sk[s]);
		char name[160];
		ana_flow_name(rd->m, fi, name, sizeof(name));
		double tl[ANA_NSEGS];
		uint64_t p99 = sk[ANA_SEG_TOTAL].n ? np_sketch_quantile(&sk[ANA_SEG_TOTAL], 0.99) : UINT64_MAX;
		uint64_t ntail = ana_stail_sums(&x->tail[fi], p99, tl);
		ana_decomp_rows(rd, t, f, name, sk, x->whole[fi], tl, ntail, p99, dc, ndc);
		for (int s = 0; s < ANA_NSEGS; s++)
			np_sketch_free(&sk[s]);
	}
}

/* Streamed: this window's sketches and counts into the run's. */
static void ana_stream_add(struct ana_dctx *d, struct ana_stream_acc *a)
{
	for (int s = 0; s < ANA_NSEGS; s++)
		np_sketch_merge(&a->all[s], &d->all[s]);
	for (size_t fi = 0; fi < d->m->flows.n; fi++) {
		const struct ana_fagg *f = &d->fa[fi];
		a->pkts += f->pkts;
		a->bytes += f->bytes;
		a->retx += f->retx;
		a->lost += f->lost;
		a->copies += f->copies;
		a->unrec += f->unrec;
		if (f->pkts) {
			const struct ana_flow *fl = &d->m->flows.v[fi];
			uint32_t gi = a->run ? ana_flow_lookup(a->run, fl->host, fl->local_id, false)
					     : UINT32_MAX;
			a->active++;
			if (gi < a->run->flows.n && a->flow_seen && !a->flow_seen[gi]) {
				a->flow_seen[gi] = 1;
				a->flows++;
			}
			if (f->npos >= 1) {
				uint64_t sent, recv;
				ana_flow_sent_recv(f, &sent, &recv);
				a->sent += sent;
				a->received += recv;
			}
		}
	}
	a->negative += d->negative;
	ana_stream_flows_add(d, a);
}

/* The streamed run's decomp rows of flow "all" (sketch columns and
 * share_mean; share_p99 needs every packet's total against the run's p99,
 * left empty) and the stream table: totals, then one row per window. */
void ana_decomp_stream_tables(struct ana_model *m, struct ana_stream_acc *a,
			      const struct ana_stream_win *win, size_t nwin, struct ana_out *o)
{
	struct ana_stream_flows *x = a->fl;
	struct ana_dctx rd = { .m = m, .o = o, .fa = x ? x->fa : NULL };
	if (x) {
		ana_flow_orders(&rd);
		ana_pick_top(&rd);
	}
	if (x)
		ana_stream_intervals(&rd, x, a);
	struct np_table *t = ana_decomp_table_new();
	struct ana_dcand *dc = calloc(ANA_DCANDS, sizeof(*dc));
	int ndc = 0;
	double tl[ANA_NSEGS] = { 0 };
	uint64_t p99 = a->all[ANA_SEG_TOTAL].n ? np_sketch_quantile(&a->all[ANA_SEG_TOTAL], 0.99) : UINT64_MAX;
	uint64_t ntail = x ? ana_stail_sums(&x->tail_all, p99, tl) : 0;
	ana_decomp_rows(&rd, t, -1, "all", a->all, a->whole, tl, ntail, p99, NULL, NULL);
	if (x && dc)
		ana_stream_decomp_flows(&rd, x, t, dc, &ndc);
	if (dc)
		ana_dcand_emit(o, dc, ndc);
	free(dc);
	ana_out_table(o, t);
	if (x)
		ana_decomp_series(&rd, x->ivq);
	enum { SW_WINDOW, SW_FROM, SW_TO, SW_EVENTS, SW_PACKETS, SW_COPIES, SW_FLOWS, SW_SENT, SW_RECEIVED, SW_LOST,
	       SW_RETRANS, SW_BYTES, SW_NCOLS };
	t = np_table_new("stream", "Streamed analysis: totals and windows", 1);
	np_table_col_at(t, SW_WINDOW, "window", "str", "all, or the window's number");
	np_table_col_at(t, SW_FROM, "from", "time_ns", "window start, reference timeline");
	np_table_col_at(t, SW_TO, "to", "time_ns", "window end (excluded)");
	np_table_col_at(t, SW_EVENTS, "events", "count", "packet events read for the window (with its horizon)");
	np_table_col_at(t, SW_PACKETS, "packets", "count", "packets whose first hook lies in the window");
	np_table_col_at(t, SW_COPIES, "copies", "count", "sum of pkt_flows' packets (copies on the wire)");
	np_table_col_at(t, SW_FLOWS, "flows", "count", "flows with packets (all: distinct over the windows)");
	np_table_col_at(t, SW_SENT, "sent", "count", "sum of the loss table's sent");
	np_table_col_at(t, SW_RECEIVED, "received", "count", "sum of the loss table's received");
	np_table_col_at(t, SW_LOST, "lost", "count", "sum of the loss table's lost");
	np_table_col_at(t, SW_RETRANS, "retrans", "count", "sum of the loss table's retrans");
	np_table_col_at(t, SW_BYTES, "bytes", "bytes", "payload bytes of the packets");
	for (size_t i = 0; i <= nwin; i++) {
		const struct ana_stream_win *w = i ? &win[i - 1] : NULL;
		const struct ana_stream_acc *c = w ? &w->acc : a;
		size_t r = np_table_row(t);
		char name[32];
		snprintf(name, sizeof(name), "%zu", i - 1);
		np_table_set_str(t, r, SW_WINDOW, w ? name : "all");
		if (w) {
			np_table_set_i64(t, r, SW_FROM, w->lo);
			np_table_set_i64(t, r, SW_TO, w->hi);
			np_table_set_u64(t, r, SW_EVENTS, w->events);
		}
		np_table_set_u64(t, r, SW_PACKETS, c->pkts);
		np_table_set_u64(t, r, SW_COPIES, c->copies);
		np_table_set_u64(t, r, SW_FLOWS, w ? c->active : c->flows);
		np_table_set_u64(t, r, SW_SENT, c->sent);
		np_table_set_u64(t, r, SW_RECEIVED, c->received);
		np_table_set_u64(t, r, SW_LOST, c->lost);
		np_table_set_u64(t, r, SW_RETRANS, c->retx);
		np_table_set_u64(t, r, SW_BYTES, c->bytes);
	}
	ana_out_table(o, t);
	if (x) {
		ana_stream_jitter_table(&rd, x);
		ana_loss_flow_tables(&rd);
	}
	ana_out_table(o, a->lost_tab ? a->lost_tab : ana_lost_table_new());
	a->lost_tab = NULL;
	if (x)
		ana_pkt_flows_table(&rd);
	free(rd.ivbytes); free(rd.ivpkts); free(rd.ivlost);
	if (a->lost_rows >= ANA_LOST_ROWS)
		ana_warn(m, "more than %d lost packets: lost_packets lists the first %d",
			 ANA_LOST_ROWS, ANA_LOST_ROWS);
	if (a->unrec)
		((double)a->unrec <= ANA_MINOR_MISSED_SHARE * (double)a->pkts ? ana_note : ana_warn)(
			m, "%llu packets reached their receiving host and were never resent, but "
			 "its socket hooks recorded no event for them: counted as unrecorded "
			 "events (loss.unrecorded), not as loss", (unsigned long long)a->unrec);
	if (a->negative)
		ana_warn(m, "%llu cross-host segments came out negative after clock correction "
			 "(clamped to 0): the clock error bound is larger than those segments",
			 (unsigned long long)a->negative);
}

void ana_decomp_run(struct ana_model *m, struct ana_paths *p, struct ana_out *o)
{
	struct ana_dctx d = { .m = m, .p = p, .o = o };
	if (!p || !p->npkts)
		return;
	d.res = ana_res_alloc(p, p->npkts, &d.res_len, &d.res_spare);
	d.gdeliv = malloc(p->npkts);     /* zeroed by the results pass (NULL: every group undelivered) */
	d.fa = calloc(m->flows.n ? m->flows.n : 1, sizeof(*d.fa));
	d.clk = ana_dc_clocks(m);
	d.nclk = m->hosts.n;
	if (!d.res || !d.fa || !d.clk)
		goto out;
	for (int s = 0; s < ANA_NSEGS; s++)
		np_sketch_init(&d.all[s]);
	d.win_lo = m->win_lo;
	d.win_hi = m->win_hi;
	for (int h = 0; h < 256; h++)
		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 2; b++)
				d.segof[h][a][b] = (int8_t)ana_path_segment(h, a, b);
	ana_time_grid(&d);
	if (m->sacc)
		ana_stream_seed(&d);
	ana_results(&d, ana_threads(m));
	ana_retx_mark(&d);
	ana_window_sums(&d);
	ana_flow_orders(&d);
	ana_accumulate(&d);
	if (!d.top || !d.ivsk || !d.ivbytes || !d.ivpkts || !d.ivlost || !d.whole)
		goto out;
	ana_export_ivseg(&d);
	struct ana_tail tl;
	struct ana_jtask jt;
	ana_tail_new(&d, &tl);
	ana_tables_compute(&d, &tl, &jt);
	ana_decomp_table(&d, &tl);
	ana_jitter_table(&d, &jt);
	ana_tail_free(&tl);
	ana_jtask_free(&jt);
	ana_loss_tables(&d);
	ana_pkt_flows_table(&d);
	if (m->sacc)
		ana_stream_add(&d, m->sacc);
out:
	for (int s = 0; s < ANA_NSEGS; s++)
		np_sketch_free(&d.all[s]);
	for (int f = 0; d.top && f < d.ntop; f++)
		for (int s = 0; s < ANA_NSEGS; s++)
			np_sketch_free(&d.top[f][s]);
	for (size_t i = 0; d.ivsk && i < d.nint; i++)
		for (int s = 0; s < ANA_NSEGS; s++)
			np_sketch_free(&d.ivsk[i][s]);
	free(d.top); free(d.ivsk); free(d.ivbytes); free(d.ivpkts); free(d.ivlost);
	if (d.jit && !m->sacc && ana_threads(m) > 1)   /* see ana_par_zap; not between windows */
		ana_par_zap(d.jit, (p->npkts + 1) * sizeof(*d.jit), ana_threads(m));
	free(d.whole); free(d.gdeliv); free(d.totb); free(d.lc.v); free(d.rpk); free(d.clk); free(d.jit); free(d.jat);
	for (size_t fi = 0; d.fa && fi < m->flows.n; fi++)
		free(d.fa[fi].pos);
	if (d.res)
		ana_res_free(&d);
	free(d.fa);
}
