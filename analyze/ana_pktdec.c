/* PKT_EVENTS: columns decoded (possibly on workers), events appended in
 * record order. Decoding is pure (bytes in, events out): the worker builds
 * each record's ana_pev entries with a record-local flow number (flows in
 * order of first appearance) and per-flow time range and count. Everything
 * that touches the model (host counters, flow lookup, ana_model.pev)
 * happens in pd_commit on the caller's thread, in the order the records
 * were read: one lookup per flow of the record, then a copy of the events
 * with their flow numbers mapped. The queue is bounded (PD_DEPTH jobs per
 * worker), so at most that many record bodies are copied at once. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ana_pktdec.h"
#include "pktcols.h"
#include "records.h"

#define PD_DEPTH 4              /* jobs in flight per worker */
#define PD_MAXTHREADS 64

/* One record's columns after decoding. */
struct pd_cols {
	size_t n;                   /* 0: unusable (a column missing or of another length) */
	uint64_t *ts, *hook, *flow, *slen, *uid, *tfl, *efl;
	size_t nsl, nu, ntf, nef;
	uint32_t *seq, *ack, *tsv;
	uint64_t lost, seen, missed, prog_missed, capped;   /* summed over the body's "hooks" map */
};

/* A flow of one record: its id in the recording and what its events add
 * to the host (counted here, added only when the flow is found). */
struct pd_flow { uint64_t id; uint64_t t_min, t_max, n; };

/* One record's events, ready to append: ev[i].flow indexes fl. The
 * buffers are kept from record to record (fresh ones would be page faults
 * for every record). */
struct pd_evs {
	struct ana_pev *ev;
	size_t n, evcap;
	struct pd_flow *fl;
	size_t nfl, flcap;
	uint32_t *fslot;            /* open addressing over fl, index + 1 */
	size_t fscap;
	uint64_t lost, seen, missed, prog_missed, capped;
};

struct pd_job {
	uint8_t *raw;               /* copy of the body (worker mode) */
	size_t len;
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
};

/* Undoes the per-flow delta encoding of seq_fd/ack_fd/tsval_fd in place. */
static void pd_undelta_flow(uint32_t *v, const uint64_t *flow, size_t n)
{
	uint64_t maxf = 0;
	for (size_t i = 0; i < n; i++)
		if (flow[i] > maxf)
			maxf = flow[i];
	if (maxf >= (1u << 24))
		return;
	uint32_t *prev = calloc(maxf + 1, sizeof(*prev));
	if (!prev)
		return;
	for (size_t i = 0; i < n; i++) {
		prev[flow[i]] += v[i];
		v[i] = prev[flow[i]];
	}
	free(prev);
}

static void pd_lost(struct pd_cols *c, const struct pktcols_raw *body)
{
	struct pktcols_mapit it;
	size_t hl, kl, vl;
	const uint8_t *hk = pktcols_raw_get(body, "hooks", &hl), *k, *v;
	if (!hk || pktcols_map_begin(&it, hk, hl))
		return;
	while (pktcols_map_next(&it, &k, &kl, &v, &vl) == 1) {
		struct pktcols_raw one;
		uint64_t x;
		if (pktcols_raw_open(&one, v, vl))
			continue;
		if (pktcols_raw_u64(&one, "lost", &x) == 0) c->lost += x;
		if (pktcols_raw_u64(&one, "seen", &x) == 0) c->seen += x;
		if (pktcols_raw_u64(&one, "missed", &x) == 0) c->missed += x;
		if (pktcols_raw_u64(&one, "prog_missed", &x) == 0) c->prog_missed += x;
		if (pktcols_raw_u64(&one, "capped", &x) == 0) c->capped += x;
	}
}

static void pd_cols_free(struct pd_cols *c)
{
	free(c->ts); free(c->hook); free(c->flow); free(c->slen); free(c->uid); free(c->tfl);
	free(c->efl); free(c->seq); free(c->ack); free(c->tsv);
	memset(c, 0, sizeof(*c));
}

static void pd_decode(struct pd_cols *c, const struct pktcols_raw *body)
{
	uint64_t n64 = 0;
	size_t nts = 0, nh = 0, nf = 0;
	memset(c, 0, sizeof(*c));
	pd_lost(c, body);
	c->ts = pktcols_raw_u64_delta(body, "ts_d", &nts);
	c->hook = pktcols_raw_u64_array(body, "hook", &nh);
	c->flow = pktcols_raw_u64_array(body, "flow", &nf);
	c->slen = pktcols_raw_u64_array(body, "slen", &c->nsl);
	c->uid = pktcols_raw_u64_array(body, "uid", &c->nu);
	c->tfl = pktcols_raw_u64_array(body, "tcpflags", &c->ntf);
	c->efl = pktcols_raw_u64_array(body, "evflags", &c->nef);
	size_t n = nts;
	if (pktcols_raw_u64(body, "n", &n64) == 0 && n64 != n)
		n = 0;
	if (!c->ts || !c->hook || !c->flow || nh != n || nf != n)
		return;
	c->seq = pktcols_raw_u32_mod(body, "seq_fd", n);
	c->ack = pktcols_raw_u32_mod(body, "ack_fd", n);
	c->tsv = pktcols_raw_u32_mod(body, "tsval_fd", n);
	if (c->seq) pd_undelta_flow(c->seq, c->flow, n);
	if (c->ack) pd_undelta_flow(c->ack, c->flow, n);
	if (c->tsv) pd_undelta_flow(c->tsv, c->flow, n);
	c->n = n;
}

static void pd_evs_free(struct pd_evs *o)
{
	free(o->ev); free(o->fl); free(o->fslot);
	memset(o, 0, sizeof(*o));
}

/* The record-local number of flow id, added at its first event. */
static void pd_evs_reset(struct pd_evs *o, const struct pd_cols *c)
{
	o->n = 0;
	o->nfl = 0;
	if (o->fslot)
		memset(o->fslot, 0, o->fscap * sizeof(*o->fslot));
	o->lost = c->lost; o->seen = c->seen; o->missed = c->missed;
	o->prog_missed = c->prog_missed; o->capped = c->capped;
}

static uint32_t pd_flow_of(struct pd_evs *o, uint64_t id)
{
	if ((o->nfl + 1) * 2 > o->fscap) {
		size_t nc = o->fscap ? o->fscap * 2 : 64;
		uint32_t *ns = calloc(nc, sizeof(*ns));
		if (!ns || ana_vec_grow((void **)&o->fl, &o->flcap, o->nfl + 1, sizeof(*o->fl))) {
			free(ns);
			return UINT32_MAX;
		}
		for (size_t f = 0; f < o->nfl; f++) {
			size_t j = (o->fl[f].id * 0x9e3779b97f4a7c15ULL >> 32) & (nc - 1);
			while (ns[j])
				j = (j + 1) & (nc - 1);
			ns[j] = (uint32_t)f + 1;
		}
		free(o->fslot);
		o->fslot = ns;
		o->fscap = nc;
	}
	size_t j = (id * 0x9e3779b97f4a7c15ULL >> 32) & (o->fscap - 1);
	for (; o->fslot[j]; j = (j + 1) & (o->fscap - 1))
		if (o->fl[o->fslot[j] - 1].id == id)
			return o->fslot[j] - 1;
	if (ana_vec_grow((void **)&o->fl, &o->flcap, o->nfl + 1, sizeof(*o->fl)))
		return UINT32_MAX;
	o->fl[o->nfl] = (struct pd_flow){ id, UINT64_MAX, 0, 0 };
	o->fslot[j] = (uint32_t)o->nfl + 1;
	return (uint32_t)o->nfl++;
}

/* The events of decoded columns, as pd_commit will append them (pure: the
 * flows are numbered per record, the model is not touched). */
static void pd_build(struct pd_evs *o, const struct pd_cols *c)
{
	size_t n = c->n;
	pd_evs_reset(o, c);
	if (!n || ana_vec_grow((void **)&o->ev, &o->evcap, n, sizeof(*o->ev)))
		return;
	uint32_t last_fi = UINT32_MAX;
	uint64_t last_flow = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t hook = c->hook[i];
		if (!c->ts[i] || hook == 0 || hook >= ANA_NHOOKS)
			continue;
		if (hook == PK_HOOK_AID_TX || hook == PK_HOOK_AID_RX)
			continue;               /* active-ID bookkeeping, not a path hook */
		uint32_t fi = c->flow[i] == last_flow ? last_fi : pd_flow_of(o, c->flow[i]);
		if (fi == UINT32_MAX)
			continue;
		last_flow = c->flow[i]; last_fi = fi;
		struct ana_pev *e = &o->ev[o->n++];
		e->ts = c->ts[i];
		e->hook = (uint8_t)hook;
		e->flags = (uint8_t)((c->efl && c->nef == n ? c->efl[i] : 0) & 0x7);
		if (c->tfl && c->ntf == n && (c->tfl[i] & 0x07))     /* FIN | SYN | RST */
			e->flags |= ANA_EVF_CTL;
		e->host = 0;                /* set by pd_commit */
		e->flow = fi;
		uint64_t u = c->uid && c->nu == n ? c->uid[i] : 0;
		if (u) {                    /* UDP best-effort ID */
			e->seq = (uint32_t)u;
			e->len = 0; e->ack = 0; e->xid = 0;
		} else {
			e->seq = c->seq ? c->seq[i] : 0;
			e->len = c->slen && c->nsl == n ? (uint32_t)c->slen[i] : 0;
			e->ack = c->ack ? c->ack[i] : 0;
			e->xid = c->tsv ? c->tsv[i] : 0;
		}
		struct pd_flow *f = &o->fl[fi];
		if (e->ts < f->t_min) f->t_min = e->ts;
		if (e->ts > f->t_max) f->t_max = e->ts;
		f->n++;
	}
}

/* Appends one record's events to the model (the caller's thread only).
 * Flows are looked up (and created) in order of first appearance, as a
 * walk over the events would; an event whose flow cannot be had is left
 * out, as is its count. */
static void pd_commit(struct ana_model *m, int host, const struct pd_evs *o)
{
	struct ana_host *h = &m->hosts.v[host];
	h->pkt_lost += o->lost;
	h->pkt_seen += o->seen;
	h->pkt_missed += o->missed;
	h->pkt_prog_missed += o->prog_missed;
	h->capped_events += o->capped;
	uint32_t map1[64], *map = o->nfl <= 64 ? map1 : malloc(o->nfl * sizeof(*map));
	if (!o->n || !map ||
	    ana_vec_grow((void **)&m->pev.v, &m->pev.cap, m->pev.n + o->n, sizeof(struct ana_pev))) {
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
		uint32_t fi = map[o->ev[i].flow];
		if (fi == UINT32_MAX)
			continue;
		out[k] = o->ev[i];
		out[k].flow = fi;
		out[k].host = (uint16_t)host;
		k++;
	}
	m->pev.n += k;
	if (map != map1)
		free(map);
}

static void pd_inline(struct ana_pktdec *d, int host, const struct np_record *rec)
{
	struct pktcols_raw body;
	struct pd_cols c;
	if (pktcols_raw_from_record(&body, rec))
		return;
	pd_decode(&c, &body);
	pd_build(&d->inl, &c);
	pd_cols_free(&c);
	pd_commit(d->m, host, &d->inl);
}

static void *pd_worker(void *arg)
{
	struct ana_pktdec *d = arg;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (!d->stop && d->take == d->tail)
			pthread_cond_wait(&d->work, &d->mu);
		if (d->take == d->tail)
			break;
		struct pd_job *j = &d->ring[d->take++ % d->depth];
		pthread_mutex_unlock(&d->mu);
		struct pktcols_raw body;
		struct pd_cols c = { 0 };
		if (pktcols_raw_open(&body, j->raw, j->len) == 0)
			pd_decode(&c, &body);
		pd_build(&j->evs, &c);
		pd_cols_free(&c);
		free(j->raw);
		j->raw = NULL;
		pthread_mutex_lock(&d->mu);
		j->done = true;
		pthread_cond_broadcast(&d->done);
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
	if (threads <= 1)
		return d;
	if (threads > PD_MAXTHREADS)
		threads = PD_MAXTHREADS;
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

/* Appends the oldest job once a worker finished it. */
static void pd_commit_head(struct ana_pktdec *d)
{
	struct pd_job *j = &d->ring[d->head % d->depth];
	pthread_mutex_lock(&d->mu);
	while (!j->done)
		pthread_cond_wait(&d->done, &d->mu);
	pthread_mutex_unlock(&d->mu);
	pd_commit(d->m, j->host, &j->evs);
	j->done = false;
	d->head++;
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

int ana_pktdec_submit(struct ana_pktdec *d, int host, const struct np_record *rec)
{
	if (!d->nthreads || !rec->raw) {
		ana_pktdec_drain(d);
		pd_inline(d, host, rec);
		return 0;
	}
	if (d->tail - d->head == d->depth)
		pd_commit_head(d);
	uint8_t *copy = malloc(rec->raw_len ? rec->raw_len : 1);
	if (!copy) {
		ana_pktdec_drain(d);
		pd_inline(d, host, rec);
		return -ENOMEM;
	}
	memcpy(copy, rec->raw, rec->raw_len);
	pthread_mutex_lock(&d->mu);
	struct pd_job *j = &d->ring[d->tail % d->depth];
	j->raw = copy;              /* j->evs keeps its buffers */
	j->len = rec->raw_len;
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
