/* PKT_EVENTS: columns decoded (possibly on workers), events appended in
 * record order. Decoding is pure (bytes in, events out): the worker builds
 * each record's ana_pev entries with a record-local flow number (flows in
 * order of first appearance) and per-flow time range and count. Everything
 * that touches the model (host counters, flow lookup, ana_model.pev)
 * happens in pd_commit on the caller's thread, in the order the records
 * were read: one lookup per flow of the record, then a copy of the events
 * with their flow numbers mapped. Columns are decoded in
 * pieces of PD_BLOCK events that stay in cache, not into whole-record
 * arrays. The queue is bounded (PD_DEPTH jobs per worker), so at most that
 * many record bodies are copied at once. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ana_pktdec.h"
#include "ana_read.h"
#include "pktcols.h"
#include "records.h"

#define PD_DEPTH 4              /* jobs in flight per worker */
#define PD_MAXTHREADS 64

#define PD_BLOCK 512           /* events decoded per piece: the columns stay in L1/L2 */
#define PD_DIRECT 4096         /* flow ids numbered by a table, not the hash */
#define PD_SLOW 16             /* rows decoded by pieces where pd_fast_rows stops */
#define PD_AHEAD (1u << 23)    /* bytes of the event array made present ahead of the reader */
#define PD_PEV_SMALL (1u << 16) /* events the event array holds before it is reserved large */
#define PD_PEV_RESERVE (1u << 24) /* events reserved then (512 MB of address space, not of memory) */

/* A flow of one record: its id in the recording and what its events add
 * to the host (counted here, added only when the flow is found). */
struct pd_flow { uint64_t id; uint64_t t_min, t_max, n; };

/* Per-flow delta state of seq_fd/ack_fd/tsval_fd. */
struct pd_prev { uint32_t seq, ack, tsv; };

/* One record's events, ready to append: ev[i].flow indexes fl. The
 * buffers are kept from record to record (fresh ones would be page faults
 * for every record). */
struct pd_evs {
	struct ana_pev *ev;
	size_t n, evcap;
	struct pd_flow *fl;         /* flows of kept events, in order of first appearance */
	size_t nfl, flcap;
	/* every flow id of the record's flow column, numbered in order of
	 * first appearance among all events (kept or not: the per-flow deltas
	 * run over all), and its number in fl (UINT32_MAX: none yet) */
	uint32_t *pre;              /* per event */
	size_t precap;
	uint64_t *pid;
	size_t npre, pcap;
	uint32_t *ploc;
	size_t plcap;
	struct pd_prev *prev;
	size_t pvcap;
	uint32_t *pslot;            /* open addressing over pid, index + 1 */
	size_t pscap;
	/* index + 1 by id for ids below PD_DIRECT (the recorders' ids are
	 * small): the flow column changes on almost every row, and the hash
	 * lookup was ~30 instructions a row. Zero again after each record. */
	uint32_t *pdir;
	/* The flow number each event gets, per flow of fl: fl's own index,
	 * or, appending in place (dm set), the model's index of the flow
	 * (found without creating it) or the one it will get when pd_commit
	 * creates it (fbase + its rank among the record's new flows). */
	uint32_t *fmod;
	size_t fmcap;
	/* In place: the events go straight to the model's event array, past
	 * its end (the reading thread only, no decoding workers): out there,
	 * with the host's number and the model's flow numbers; pd_commit
	 * then only checks the flows and counts them. No copy of the events
	 * through a per-record buffer (2 MB of 65536 events that left the
	 * cache before the copy read them back). */
	struct ana_model *dm;
	uint16_t host;              /* the events' host (0 when not in place) */
	uint32_t fbase, nnew;
	struct ana_pev *out;        /* where the events go: ev, or the model's array */
	uint64_t lost, seen, missed, prog_missed, capped;   /* summed over the body's "hooks" map */
};

struct pd_job {
	uint8_t *raw;               /* copy of the body (worker mode) */
	size_t len;
	/* the reader's pairs moved onto the copy (the body is not walked
	 * again); indexed false: the worker walks it (more than
	 * NP_RAW_PAIRS pairs) */
	struct pktcols_raw body;
	bool indexed;
	int host;
	bool done;
	struct pd_evs evs;
};

struct ana_pktdec {
	struct ana_model *m;
	unsigned nthreads;
	pthread_t th[PD_MAXTHREADS];
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct pd_evs inl;          /* the caller's own, for records decoded inline */
	struct pd_job *ring;
	size_t depth;
	size_t head, take, tail;    /* commit <= take <= tail, counters (not wrapped) */
	bool stop;
	/* Pages of the model's event array just past its end, made present
	 * by a worker (MADV_POPULATE_WRITE) before the reading thread
	 * appends there: clearing fresh pages was a large part of that
	 * thread's time. pop: the range handed to a worker (under mu; stale
	 * once the array moved, which is harmless: populating changes no
	 * data); popped: the end of what was handed out (reading thread).
	 * In memory without --mem only: streamed windows and --mem keep
	 * their predicted peak, which these pages are not in. */
	bool ahead;
	bool sync;                  /* no worker at all (--threads 1): populated here */
	struct ana_read *rd;        /* without workers: its idle workers populate */
	uint8_t *pop;
	size_t npop;
	uint8_t *popped;
};

static void pd_lost(struct pd_evs *o, const struct pktcols_raw *body)
{
	struct pktcols_mapit it;
	size_t hl, kl, vl;
	const uint8_t *hk = pktcols_raw_get(body, "hooks", &hl), *k, *v;
	o->lost = o->seen = o->missed = o->prog_missed = o->capped = 0;
	if (!hk || pktcols_map_begin(&it, hk, hl))
		return;
	while (pktcols_map_next(&it, &k, &kl, &v, &vl) == 1) {
		struct pktcols_raw one;
		uint64_t x;
		if (pktcols_raw_open(&one, v, vl))
			continue;
		if (pktcols_raw_u64(&one, "lost", &x) == 0) o->lost += x;
		if (pktcols_raw_u64(&one, "seen", &x) == 0) o->seen += x;
		if (pktcols_raw_u64(&one, "missed", &x) == 0) o->missed += x;
		if (pktcols_raw_u64(&one, "prog_missed", &x) == 0) o->prog_missed += x;
		if (pktcols_raw_u64(&one, "capped", &x) == 0) o->capped += x;
	}
}

static void pd_evs_free(struct pd_evs *o)
{
	free(o->ev); free(o->fl); free(o->pre); free(o->pid); free(o->ploc);
	free(o->prev); free(o->pslot); free(o->fmod); free(o->pdir);
	memset(o, 0, sizeof(*o));
}

/* The record's number of flow id (pd_evs.pre), added at its first event;
 * UINT32_MAX when out of memory. */
static uint32_t pd_pre_of(struct pd_evs *o, uint64_t id)
{
	if ((o->npre + 1) * 2 > o->pscap) {
		size_t nc = o->pscap ? o->pscap * 2 : 64;
		uint32_t *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return UINT32_MAX;
		for (size_t f = 0; f < o->npre; f++) {
			size_t j = (o->pid[f] * 0x9e3779b97f4a7c15ULL >> 32) & (nc - 1);
			while (ns[j])
				j = (j + 1) & (nc - 1);
			ns[j] = (uint32_t)f + 1;
		}
		free(o->pslot);
		o->pslot = ns;
		o->pscap = nc;
	}
	size_t j = (id * 0x9e3779b97f4a7c15ULL >> 32) & (o->pscap - 1);
	for (; o->pslot[j]; j = (j + 1) & (o->pscap - 1))
		if (o->pid[o->pslot[j] - 1] == id)
			return o->pslot[j] - 1;
	if (ana_vec_grow((void **)&o->pid, &o->pcap, o->npre + 1, sizeof(*o->pid)))
		return UINT32_MAX;
	o->pid[o->npre] = id;
	o->pslot[j] = (uint32_t)o->npre + 1;
	return (uint32_t)o->npre++;
}

/* Numbers the flow column (pd_evs.pre); its largest id in *maxid. */
static int pd_number_flows(struct pd_evs *o, struct pktcols_col *col, size_t n, uint64_t *maxid)
{
	uint64_t id[PD_BLOCK], last = 0;
	uint32_t last_pre = UINT32_MAX;
	o->npre = 0;
	if (o->pslot)
		memset(o->pslot, 0, o->pscap * sizeof(*o->pslot));
	*maxid = 0;
	if (ana_vec_grow((void **)&o->pre, &o->precap, n, sizeof(*o->pre)) ||
	    (!o->pdir && !(o->pdir = calloc(PD_DIRECT, sizeof(*o->pdir)))))
		return -1;
	uint32_t *dir = o->pdir;
	int rc = 0;
	for (size_t b = 0; b < n && !rc; b += PD_BLOCK) {
		size_t k = n - b < PD_BLOCK ? n - b : PD_BLOCK;
		if (pktcols_col_u64(col, id, k)) {
			rc = -1;
			break;
		}
		for (size_t i = 0; i < k; i++) {
			if (id[i] != last || last_pre == UINT32_MAX) {
				last = id[i];
				if (last < PD_DIRECT && dir[last]) {
					last_pre = dir[last] - 1;
				} else {
					if ((last_pre = pd_pre_of(o, last)) == UINT32_MAX) {
						rc = -1;
						break;
					}
					if (last < PD_DIRECT)
						dir[last] = last_pre + 1;
					if (last > *maxid)
						*maxid = last;
				}
			}
			o->pre[b + i] = last_pre;
		}
	}
	for (size_t f = 0; f < o->npre; f++)
		if (o->pid[f] < PD_DIRECT)
			dir[o->pid[f]] = 0;
	if (rc)
		return -1;
	if (ana_vec_grow((void **)&o->ploc, &o->plcap, o->npre, sizeof(*o->ploc)) ||
	    ana_vec_grow((void **)&o->prev, &o->pvcap, o->npre, sizeof(*o->prev)) ||
	    ana_vec_grow((void **)&o->fl, &o->flcap, o->npre, sizeof(*o->fl)) ||
	    ana_vec_grow((void **)&o->fmod, &o->fmcap, o->npre, sizeof(*o->fmod)))
		return -1;
	return 0;
}

/* A flow of the record seen first among its kept events: its number in
 * fl, and the flow number its events get (pd_evs.fmod). */
static uint32_t pd_new_flow(struct pd_evs *o, uint32_t pf)
{
	uint32_t fi = (uint32_t)o->nfl++;
	uint64_t id = o->pid[pf];
	o->ploc[pf] = fi;
	o->fl[fi] = (struct pd_flow){ id, UINT64_MAX, 0, 0 };
	if (!o->dm)
		o->fmod[fi] = fi;
	else if ((o->fmod[fi] = ana_flow_lookup(o->dm, o->host, id, false)) == UINT32_MAX)
		o->fmod[fi] = o->fbase + o->nnew++;
	return fi;
}

/* The columns of one record (PD_C_*), each read piece by piece. */
enum { PD_C_TS, PD_C_HOOK, PD_C_SLEN, PD_C_UID, PD_C_TFL, PD_C_EFL,
       PD_C_SEQ, PD_C_ACK, PD_C_TSV, PD_NCOL };
static const char *const pd_keys[PD_NCOL] = {
	"ts_d", "hook", "slen", "uid", "tcpflags", "evflags", "seq_fd", "ack_fd", "tsval_fd" };

/* One piece of the columns; a column not in `has` reads as 0. */
struct pd_piece {
	uint64_t v[PD_C_EFL + 1][PD_BLOCK];
	uint32_t w[3][PD_BLOCK];    /* seq, ack, tsval */
};

/* Decodes the next k values of every column in has. -1 and the column in
 * *bad when one is malformed. */
static int pd_read_piece(struct pktcols_col *col, unsigned has, struct pd_piece *pc, size_t k, int *bad)
{
	const unsigned w3 = 1u << PD_C_SEQ | 1u << PD_C_ACK | 1u << PD_C_TSV;
	for (int c = 0; c < PD_NCOL; c++) {
		if (!(has & 1u << c))
			continue;
		if (c == PD_C_SEQ && (has & w3) == w3) {
			/* the three together: their decode chains overlap */
			uint32_t *const out[3] = { pc->w[0], pc->w[1], pc->w[2] };
			int j;
			if (pktcols_col_u32_3(&col[PD_C_SEQ], out, k, &j)) {
				*bad = PD_C_SEQ + j;
				return -1;
			}
			c = PD_C_TSV;
			continue;
		}
		if (c == PD_C_TS && has & 1u << PD_C_SLEN) {
			int j;
			if (pktcols_col_delta_u64(&col[PD_C_TS], &col[PD_C_SLEN], pc->v[PD_C_TS],
						  pc->v[PD_C_SLEN], k, &j)) {
				*bad = j ? PD_C_SLEN : PD_C_TS;
				return -1;
			}
			continue;
		}
		if (c == PD_C_SLEN && has & 1u << PD_C_TS)
			continue;           /* decoded with ts_d */
		int rc = c == PD_C_TS ? pktcols_col_delta(&col[c], pc->v[c], k)
		       : c < PD_C_SEQ ? pktcols_col_u64(&col[c], pc->v[c], k)
		       : pktcols_col_u32(&col[c], pc->w[c - PD_C_SEQ], k);
		if (rc) {
			*bad = c;
			return -1;
		}
	}
	return 0;
}

/* Undoes the per-flow delta encoding of seq_fd/ack_fd/tsval_fd in a piece. */
static void pd_undelta(struct pd_evs *o, struct pd_piece *pc, const uint32_t *pre, size_t k, unsigned has)
{
	if ((has >> PD_C_SEQ & 7) == 7) {
		/* the three in one loop: a flow's sums are chains through
		 * memory, the three chains overlap */
		for (size_t i = 0; i < k; i++) {
			struct pd_prev *p = &o->prev[pre[i]];
			pc->w[0][i] = p->seq += pc->w[0][i];
			pc->w[1][i] = p->ack += pc->w[1][i];
			pc->w[2][i] = p->tsv += pc->w[2][i];
		}
		return;
	}
	for (int c = PD_C_SEQ; c < PD_NCOL; c++) {
		if (!(has & 1u << c))
			continue;
		uint32_t *v = pc->w[c - PD_C_SEQ];
		for (size_t i = 0; i < k; i++) {
			struct pd_prev *p = &o->prev[pre[i]];
			uint32_t *acc = c == PD_C_SEQ ? &p->seq : c == PD_C_ACK ? &p->ack : &p->tsv;
			v[i] = *acc += v[i];
		}
	}
}

/* Appends the piece's path events to o->ev (pure: the flows are numbered
 * per record, the model is not touched). */
static void pd_emit(struct pd_evs *o, const struct pd_piece *pc,
		    const uint32_t *pre, size_t k, unsigned has)
{
	for (size_t i = 0; i < k; i++) {
		uint64_t ts = pc->v[PD_C_TS][i], hook = pc->v[PD_C_HOOK][i];
		if (!ts || hook == 0 || hook >= ANA_NHOOKS)
			continue;
		if (hook == PK_HOOK_AID_TX || hook == PK_HOOK_AID_RX)
			continue;               /* active-ID bookkeeping, not a path hook */
		uint32_t fi = o->ploc[pre[i]];
		if (fi == UINT32_MAX)
			fi = pd_new_flow(o, pre[i]);
		struct ana_pev *e = &o->out[o->n++];
		e->ts = ts;
		e->hook = (uint8_t)hook;
		e->flags = (uint8_t)((has & 1u << PD_C_EFL ? pc->v[PD_C_EFL][i] : 0) & 0x7);
		if (has & 1u << PD_C_TFL && (pc->v[PD_C_TFL][i] & 0x07))     /* FIN | SYN | RST */
			e->flags |= ANA_EVF_CTL;
		e->host = o->host;
		e->flow = o->fmod[fi];
		uint64_t u = has & 1u << PD_C_UID ? pc->v[PD_C_UID][i] : 0;
		if (u) {                    /* UDP best-effort ID */
			e->seq = (uint32_t)u;
			e->len = 0; e->ack = 0; e->xid = 0;
		} else {
			e->seq = has & 1u << PD_C_SEQ ? pc->w[0][i] : 0;
			e->len = has & 1u << PD_C_SLEN ? (uint32_t)pc->v[PD_C_SLEN][i] : 0;
			e->ack = has & 1u << PD_C_ACK ? pc->w[1][i] : 0;
			e->xid = has & 1u << PD_C_TSV ? pc->w[2][i] : 0;
		}
		struct pd_flow *f = &o->fl[fi];
		if (ts < f->t_min) f->t_min = ts;
		if (ts > f->t_max) f->t_max = ts;
		f->n++;
	}
}

/* The columns of a fast piece not read in place (PD_C_TS, then slen,
 * seq, ack, tsval). */
struct pd_fast {
	uint64_t ts[PD_BLOCK];
	uint32_t w[4][PD_BLOCK];
	uint32_t hfu[PD_BLOCK];     /* hook | flags << 8 | uid << 16 (pd_fast_rows) */
};
static const int pd_fix[4] = { PD_C_HOOK, PD_C_UID, PD_C_TFL, PD_C_EFL };

/* Decodes the next rows (at most k) of the other columns into fb while
 * every value is of a fast form: how many. ts_d and slen in one loop,
 * seq, ack and tsval in another (pktcols.h); when the second stops
 * earlier, the first is decoded again from where it was to end there. */
static size_t pd_fast_cols(struct pktcols_col *col, struct pd_fast *fb, size_t k)
{
	struct pktcols_col ts = col[PD_C_TS], sl = col[PD_C_SLEN];
	size_t a = pktcols_col_fast_delta_u32(&col[PD_C_TS], &col[PD_C_SLEN], fb->ts, fb->w[0], k);
	uint32_t *const out[3] = { fb->w[1], fb->w[2], fb->w[3] };
	size_t b = a ? pktcols_col_fast_i32_3(&col[PD_C_SEQ], out, a) : 0;
	if (b < a) {
		col[PD_C_TS] = ts;
		col[PD_C_SLEN] = sl;
		a = pktcols_col_fast_delta_u32(&col[PD_C_TS], &col[PD_C_SLEN], fb->ts, fb->w[0], b);
	}
	return a;
}

/* Rows of a record with every column (the recorders' case) decoded in
 * runs of fast forms (pktcols.h; hook, uid, tcpflags and evflags:
 * positive fixints, read in place) straight into o->ev, with the per-flow
 * deltas undone on the way: no piece arrays of every column, no pass per
 * column over them. The run stops before the first row with a value of
 * another form, which pd_read_piece then decodes with its checks and
 * semantics. The number of rows done. */
static size_t pd_fast_rows(struct pd_evs *o, struct pktcols_col *col, const uint32_t *pre, size_t k,
			   struct pd_fast *fb)
{
	if (k > PD_BLOCK)
		k = PD_BLOCK;
	for (int j = 0; j < 4; j++)
		k = pktcols_col_fixints(&col[pd_fix[j]], k);
	k = pd_fast_cols(col, fb, k);
	const uint8_t *hk = col[PD_C_HOOK].p, *ud = col[PD_C_UID].p, *tf = col[PD_C_TFL].p,
		*ef = col[PD_C_EFL].p;
	/* hook, flags and uid of each row in one word first (a loop the
	 * compiler vectorises): the row loop then has few enough pointers
	 * live to keep them in registers */
	for (size_t i = 0; i < k; i++)
		fb->hfu[i] = hk[i] | ((ef[i] & 0x7u) | (tf[i] & 0x07 ? ANA_EVF_CTL : 0)) << 8 |
			     (uint32_t)ud[i] << 16;
	/* locals: a store through ev may alias what o points to */
	struct ana_pev *ev = o->out;
	struct pd_flow *fl = o->fl;
	struct pd_prev *prev = o->prev;
	const uint32_t *ploc = o->ploc, *fmod = o->fmod;
	const uint16_t host = o->host;
	size_t n = o->n;
	for (size_t i = 0; i < k; i++) {
		uint64_t ts = fb->ts[i];
		uint32_t hfu = fb->hfu[i];
		unsigned hook = hfu & 0xff, uid = hfu >> 16;
		uint32_t pf = pre[i];
		struct pd_prev *pp = &prev[pf];
		uint32_t seq = pp->seq += fb->w[1][i];
		uint32_t ack = pp->ack += fb->w[2][i];
		uint32_t tsv = pp->tsv += fb->w[3][i];
		if (!ts || hook == 0 || hook >= ANA_NHOOKS || hook == PK_HOOK_AID_TX || hook == PK_HOOK_AID_RX)
			continue;
		uint32_t fi = ploc[pf];
		if (fi == UINT32_MAX)
			fi = pd_new_flow(o, pf);
		ev[n++] = (struct ana_pev){ .ts = ts, .hook = (uint8_t)hook, .flow = fmod[fi], .host = host,
			.flags = (uint8_t)(hfu >> 8),
			.seq = uid ? uid : seq, .len = uid ? 0 : fb->w[0][i],
			.ack = uid ? 0 : ack, .xid = uid ? 0 : tsv };
		struct pd_flow *f = &fl[fi];
		if (ts < f->t_min) f->t_min = ts;
		if (ts > f->t_max) f->t_max = ts;
		f->n++;
	}
	o->n = n;
	for (int j = 0; j < 4; j++)
		pktcols_col_skip(&col[pd_fix[j]], k);
	return k;
}

/* Opens the columns: ts_d, hook and flow must hold n values (n from
 * ts_d, and "n" when present), the others are left out (read as 0) when
 * missing or of another length. 0, or -1: the record has no usable events. */
static int pd_open(const struct pktcols_raw *body, struct pktcols_col *col, struct pktcols_col *flow,
		   size_t *n, unsigned *has)
{
	uint64_t cnt[PD_NCOL], nf, n64;
	*has = 0;
	for (int c = 0; c < PD_NCOL; c++)
		if (pktcols_col_open(&col[c], body, pd_keys[c], &cnt[c]) == 0)
			*has |= 1u << c;
	if (!(*has & 1u << PD_C_TS) || !(*has & 1u << PD_C_HOOK) ||
	    pktcols_col_open(flow, body, "flow", &nf))
		return -1;
	*n = cnt[PD_C_TS];
	if ((pktcols_raw_u64(body, "n", &n64) == 0 && n64 != *n) || cnt[PD_C_HOOK] != *n || nf != *n)
		return -1;
	for (int c = PD_C_SLEN; c < PD_NCOL; c++)
		if (cnt[c] != *n)
			*has &= ~(1u << c);
	return 0;
}

static int pd_pev_grow(struct ana_model *m, size_t need);

/* Where the events of n go: past the end of the model's array when o is
 * in place and it has room (else not in place), else o->ev. 0 or -1. */
static int pd_out(struct pd_evs *o, size_t n)
{
	if (o->dm && pd_pev_grow(o->dm, o->dm->pev.n + n) == 0) {
		o->out = o->dm->pev.v + o->dm->pev.n;
		o->fbase = (uint32_t)o->dm->flows.n;
		return 0;
	}
	o->dm = NULL;
	o->host = 0;
	if (ana_vec_grow((void **)&o->ev, &o->evcap, n, sizeof(*o->ev)))
		return -1;
	o->out = o->ev;
	return 0;
}

/* The events of one PKT_EVENTS body into o->out, as pd_commit will append
 * them. A column found malformed half-way is unusable as a whole: the
 * build starts again without it (ts_d, hook, flow: the record has no
 * events). */
static void pd_build(struct pd_evs *o, const struct pktcols_raw *body)
{
	struct pktcols_col col[PD_NCOL], flow;
	struct pd_piece pc;
	struct pd_fast fb;
	unsigned has, drop = 0;
	size_t n;
	uint64_t maxid;
	pd_lost(o, body);
again:
	o->n = 0;
	o->nfl = 0;
	o->nnew = 0;
	if (pd_open(body, col, &flow, &n, &has) || !n || pd_number_flows(o, &flow, n, &maxid) ||
	    pd_out(o, n))
		return;
	has &= ~drop;
	/* ids as written by no recorder: the deltas are left as they are */
	bool undelta = maxid < (1u << 24);
	memset(o->ploc, 0xff, o->npre * sizeof(*o->ploc));
	memset(o->prev, 0, o->npre * sizeof(*o->prev));
	bool fast = undelta && has == (1u << PD_NCOL) - 1;
	/* fast: a few rows by pieces where pd_fast_rows stopped, then fast again */
	const size_t piece = fast ? PD_SLOW : PD_BLOCK;
	for (size_t b = 0, k; b < n; b += k) {
		if (fast && (b += pd_fast_rows(o, col, o->pre + b, n - b, &fb)) == n)
			break;
		k = n - b < piece ? n - b : piece;
		int bad;
		if (pd_read_piece(col, has, &pc, k, &bad)) {
			o->n = 0;
			o->nfl = 0;
			if (bad <= PD_C_HOOK)
				return;
			drop |= 1u << bad;
			goto again;
		}
		if (undelta)
			pd_undelta(o, &pc, o->pre + b, k, has);
		pd_emit(o, &pc, o->pre + b, k, has);
	}
}
/* Room for need events in the model's event array. Past PD_PEV_SMALL the
 * array is reserved at PD_PEV_RESERVE events at once: a block that large
 * is its own mapping in malloc (over M_MMAP_THRESHOLD, which npanalyze
 * sets to 256 MB), so it grows by mremap afterwards instead of being
 * copied (a block in the heap is copied whenever it is not the heap's
 * last, and the step past 256 MB copied it into a fresh mapping: ~0.1 s
 * of the 10 M-event case), and untouched pages of it are neither memory
 * nor counted. Not marked for transparent huge pages: on the VMs measured
 * (free page reporting to the host) a fresh huge page cost more to clear
 * than the 512 faults it saves (docs/BENCHMARKS.md). 0, or -ENOMEM. */
static int pd_pev_grow(struct ana_model *m, size_t need)
{
	if (need <= m->pev.cap)
		return 0;
	size_t nc = m->pev.cap ? m->pev.cap : 16;
	while (nc < need)
		nc *= 2;
	if (nc > PD_PEV_SMALL && nc < PD_PEV_RESERVE)
		nc = PD_PEV_RESERVE;
	void *p = realloc(m->pev.v, nc * sizeof(struct ana_pev));
	if (!p)
		return -ENOMEM;
	m->pev.v = p;
	m->pev.cap = nc;
	return 0;
}

/* Appends one record's events to the model (the caller's thread only).
 * Flows are looked up (and created) in order of first appearance, as a
 * walk over the events would; an event whose flow cannot be had is left
 * out, as is its count. */
static void pd_commit(struct ana_model *m, int host, const struct pd_evs *o)
{
	const struct ana_pev *src = o->ev;
	struct ana_host *h = &m->hosts.v[host];
	h->pkt_lost += o->lost;
	h->pkt_seen += o->seen;
	h->pkt_missed += o->missed;
	h->pkt_prog_missed += o->prog_missed;
	h->capped_events += o->capped;
	uint32_t map1[64], *map = o->nfl <= 64 ? map1 : malloc(o->nfl * sizeof(*map));
	if (!o->n || !map ||
	    pd_pev_grow(m, m->pev.n + o->n)) {
		if (map != map1)
			free(map);
		return;
	}
	for (size_t f = 0; f < o->nfl; f++) {
		map[f] = ana_flow_lookup(m, (uint16_t)host, o->fl[f].id, true);
		if (map[f] == UINT32_MAX)
			continue;
		if (o->fl[f].t_min < h->t_min) h->t_min = o->fl[f].t_min;
		if (o->fl[f].t_max > h->t_max) h->t_max = o->fl[f].t_max;
		h->pkt_events += o->fl[f].n;
	}
	struct ana_pev *out = m->pev.v + m->pev.n;
	size_t k = 0;
	for (size_t i = 0; i < o->n; i++) {
		uint32_t fi = map[src[i].flow];
		if (fi == UINT32_MAX)
			continue;
		out[k] = src[i];
		out[k].flow = fi;
		out[k].host = (uint16_t)host;
		k++;
	}
	m->pev.n += k;
	if (map != map1)
		free(map);
}

/* pd_commit of events built in place (pd_evs.dm): the flows are looked
 * up (created) in the same order, and when each has the number its
 * events got, the events are appended by counting them. Otherwise (a
 * flow not had, two ids of one model flow) the record is built again
 * into o->ev for pd_commit: what it does then is what it would have done. */
static void pd_commit_direct(struct ana_model *m, int host, struct pd_evs *o,
			     const struct pktcols_raw *body)
{
	for (size_t f = 0; f < o->nfl; f++) {
		uint32_t fi = ana_flow_lookup(m, (uint16_t)host, o->fl[f].id, true);
		if (fi == UINT32_MAX || fi != o->fmod[f]) {
			o->dm = NULL;
			o->host = 0;
			pd_build(o, body);
			pd_commit(m, host, o);
			return;
		}
	}
	struct ana_host *h = &m->hosts.v[host];
	h->pkt_lost += o->lost;
	h->pkt_seen += o->seen;
	h->pkt_missed += o->missed;
	h->pkt_prog_missed += o->prog_missed;
	h->capped_events += o->capped;
	for (size_t f = 0; f < o->nfl; f++) {
		if (o->fl[f].t_min < h->t_min) h->t_min = o->fl[f].t_min;
		if (o->fl[f].t_max > h->t_max) h->t_max = o->fl[f].t_max;
		h->pkt_events += o->fl[f].n;
	}
	m->pev.n += o->n;
}

/* A record decoded and appended on the reading thread: in place (no
 * worker reads the model meanwhile). */
static void pd_inline(struct ana_pktdec *d, int host, const struct np_record *rec)
{
	struct pktcols_raw body;
	if (pktcols_raw_from_record(&body, rec))
		return;
	d->inl.dm = d->m;
	d->inl.host = (uint16_t)host;
	pd_build(&d->inl, &body);
	if (d->inl.dm)
		pd_commit_direct(d->m, host, &d->inl, &body);
	else
		pd_commit(d->m, host, &d->inl);
}

/* Decodes the oldest job no thread took yet (mu held, released while
 * decoding). Run by the workers, and by the reading thread instead of
 * waiting for a worker to finish the job it appends next. */
static void pd_run_next(struct ana_pktdec *d)
{
	struct pd_job *j = &d->ring[d->take++ % d->depth];
	pthread_mutex_unlock(&d->mu);
	if (j->indexed || pktcols_raw_open(&j->body, j->raw, j->len) == 0)
		pd_build(&j->evs, &j->body);
	else
		j->evs.n = j->evs.nfl = 0, j->evs.lost = j->evs.seen = j->evs.missed =
			j->evs.prog_missed = j->evs.capped = 0;
	free(j->raw);               /* not kept: the slots' copies would add to the peak */
	j->raw = NULL;
	pthread_mutex_lock(&d->mu);
	j->done = true;
	pthread_cond_broadcast(&d->done);
}

static void *pd_worker(void *arg)
{
	struct ana_pktdec *d = arg;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (!d->stop && d->take == d->tail && !d->npop)
			pthread_cond_wait(&d->work, &d->mu);
		if (d->npop) {
			uint8_t *a = d->pop;
			size_t n = d->npop;
			d->npop = 0;
			pthread_mutex_unlock(&d->mu);
			(void)madvise(a, n, MADV_POPULATE_WRITE);   /* Linux 5.14; else pages fault in */
			pthread_mutex_lock(&d->mu);
			continue;
		}
		if (d->take == d->tail)
			break;
		pd_run_next(d);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

struct ana_pktdec *ana_pktdec_new(struct ana_model *m, unsigned threads)
{
	struct ana_pktdec *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->m = m;
	if (threads <= 1 && m->opt && m->opt->threads <= 1) {
		/* one thread: the pages made present in batches all the same,
		 * which saves a fault's entry and exit per page */
		d->ahead = d->sync = !m->opt->mem_limit && !m->opt->window_ns;
		return d;
	}
	if (threads <= 1)
		return d;
	if (threads > PD_MAXTHREADS)
		threads = PD_MAXTHREADS;
	d->ahead = m->opt && !m->opt->mem_limit && !m->opt->window_ns;
	d->depth = PD_DEPTH * threads;
	d->ring = calloc(d->depth, sizeof(*d->ring));
	if (!d->ring)
		return d;               /* inline decoding */
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->work, NULL);
	pthread_cond_init(&d->done, NULL);
	/* the caller reads, decompresses and appends: threads - 1 decode */
	for (unsigned i = 0; i + 1 < threads; i++) {
		if (pthread_create(&d->th[i], NULL, pd_worker, d))
			break;
		d->nthreads++;
	}
	return d;
}

/* Hands the pages from the event array's end to PD_AHEAD bytes past it
 * (within its capacity) not handed out yet to a worker. */
static void pd_populate_ahead(struct ana_pktdec *d)
{
	const struct ana_model *m = d->m;
	if (!d->ahead)
		return;
	uintptr_t pg = 4096;
	uint8_t *v = (uint8_t *)m->pev.v, *end = v + m->pev.n * sizeof(struct ana_pev);
	uint8_t *cap = v + m->pev.cap * sizeof(struct ana_pev);
	uint8_t *a = (uint8_t *)(((uintptr_t)end + pg - 1) & ~(pg - 1));
	uint8_t *b = (uint8_t *)(((uintptr_t)(cap - end > PD_AHEAD ? end + PD_AHEAD : cap)) & ~(pg - 1));
	if (d->popped > a && d->popped <= b)
		a = d->popped;      /* the array did not move: the rest of the range only */
	if (!v || b <= a || b - a < PD_AHEAD / 8)
		return;
	d->popped = b;
	if (d->sync) {
		(void)madvise(a, (size_t)(b - a), MADV_POPULATE_WRITE);
		return;
	}
	if (d->rd) {
		ana_read_populate(d->rd, a, (size_t)(b - a));
		return;
	}
	pthread_mutex_lock(&d->mu);
	d->pop = a;
	d->npop = (size_t)(b - a);
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->mu);
}

/* Appends the oldest job once a worker finished it. */
static void pd_commit_head(struct ana_pktdec *d)
{
	struct pd_job *j = &d->ring[d->head % d->depth];
	pthread_mutex_lock(&d->mu);
	while (!j->done) {
		if (d->take < d->tail)
			pd_run_next(d);     /* a later job, while a worker finishes this one */
		else
			pthread_cond_wait(&d->done, &d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	pd_commit(d->m, j->host, &j->evs);
	j->done = false;
	d->head++;
	pd_populate_ahead(d);
}

/* Appends finished jobs at the head without waiting. */
static void pd_commit_ready(struct ana_pktdec *d)
{
	while (d->head < d->tail) {
		pthread_mutex_lock(&d->mu);
		bool ready = d->ring[d->head % d->depth].done;
		pthread_mutex_unlock(&d->mu);
		if (!ready)
			return;
		pd_commit_head(d);
	}
}

/* The pairs the reader's walk found, pointing into copy (of rec->raw);
 * false when the walk left none (the worker walks the copy). */
static bool pd_index_copy(struct pktcols_raw *m, const struct np_record *rec, const uint8_t *copy)
{
	if (!rec->raw_pairs || rec->raw_npairs > PKTCOLS_RAW_KEYS || pktcols_raw_from_record(m, rec))
		return false;
	const uint8_t *from = rec->raw;
	for (uint32_t i = 0; i < m->n; i++) {
		if (m->kv[i].key)
			m->kv[i].key = copy + (m->kv[i].key - from);
		m->kv[i].val = copy + (m->kv[i].val - from);
	}
	m->rest = copy + (m->rest - from);
	m->end = copy + (m->end - from);
	return true;
}

void ana_pktdec_ahead_by(struct ana_pktdec *d, struct ana_read *a)
{
	if (d->nthreads)
		return;
	const struct ana_model *m = d->m;
	d->rd = m->opt && !m->opt->mem_limit && !m->opt->window_ns ? a : NULL;
	d->ahead = d->rd != NULL;
	d->popped = NULL;
}

int ana_pktdec_submit(struct ana_pktdec *d, int host, const struct np_record *rec)
{
	if (!d->nthreads || !rec->raw) {
		ana_pktdec_drain(d);
		pd_inline(d, host, rec);
		if (d->rd || d->sync)
			pd_populate_ahead(d);
		return 0;
	}
	if (d->tail - d->head == d->depth)
		pd_commit_head(d);
	struct pd_job *j = &d->ring[d->tail % d->depth];
	if (!(j->raw = malloc(rec->raw_len ? rec->raw_len : 1))) {
		ana_pktdec_drain(d);
		pd_inline(d, host, rec);
		return -ENOMEM;
	}
	memcpy(j->raw, rec->raw, rec->raw_len);
	j->len = rec->raw_len;
	j->indexed = pd_index_copy(&j->body, rec, j->raw);
	pthread_mutex_lock(&d->mu);
	j->host = host;
	j->done = false;
	d->tail++;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->mu);
	pd_commit_ready(d);
	return 0;
}

void ana_pktdec_drain(struct ana_pktdec *d)
{
	while (d && d->nthreads && d->head < d->tail)
		pd_commit_head(d);
}

void ana_pktdec_free(struct ana_pktdec *d)
{
	if (!d)
		return;
	ana_pktdec_drain(d);
	if (d->nthreads) {
		pthread_mutex_lock(&d->mu);
		d->stop = true;
		pthread_cond_broadcast(&d->work);
		pthread_mutex_unlock(&d->mu);
		for (unsigned i = 0; i < d->nthreads; i++)
			pthread_join(d->th[i], NULL);
	}
	if (d->ring) {
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->work);
		pthread_cond_destroy(&d->done);
	}
	for (size_t i = 0; d->ring && i < d->depth; i++)
		pd_evs_free(&d->ring[i].evs);
	pd_evs_free(&d->inl);
	free(d->ring);
	free(d);
}
