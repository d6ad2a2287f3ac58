/* The key join of ana_path_match on several threads, with the result of one.
 *
 * Events are visited in one fixed order (vis). The packet keys are split
 * into T partitions by hash; thread t joins the events of its partition in
 * visit order into packets of its own, remembering where in vis each packet
 * was first seen. A single join numbers packets by first sight, so the
 * partitions' packets merged by first sight get exactly those numbers:
 * pkts, npkts and evpkt come out the same for any T.
 *
 * Keys are partitioned by (seq, ack | 1) only, so a retransmission (same
 * start, another TSval) lands with its original: each thread also finds its
 * partition's retransmission groups, and counts each packet's events and
 * whether any packet has events of two lengths (super-packets), which
 * spares ana_path_match a pass over every event when none has. On one
 * thread the sock_send ranges are taken in the same pass (ana_ranges's
 * steps, in the same visit order). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ana.h"
#include "ana_par.h"
#include "ana_path.h"

#define PJ_MAXT 64
#define PJ_CACHE 4096           /* recent packets per partition (power of 2) */

struct pj_pkt {
	uint32_t seq, ack, xid, minlen;
	uint32_t first;             /* visit position of its first event */
	uint32_t nev;               /* events joined */
	uint8_t udp;
	uint16_t n0;                /* several partitions, two runs: those of run 0 (in the padding) */
};

/* A retransmission: local packet l belongs to the group of local packet
 * head (< l). Rare, so a list, not a field of every packet. */
struct pj_retx { uint32_t l, head; };

struct pj_part {
	const struct ana_model *m;
	const struct ana_pev *ev;
	const uint32_t *vis;
	size_t nvis;
	uint32_t *evpkt;            /* one partition: each event's packet */
	unsigned t, nt;
	struct pj_pkt *pk;
	size_t n, cap;
	uint64_t *slot;             /* open addressing: packet index + 1 | tag << 32 */
	size_t scap;
	void *smap;                 /* the slots' mapping (pj_slots_map) */
	size_t smaplen;
	struct { uint32_t seq, ack, xid, idx1; uint8_t udp; } cache[PJ_CACHE];
	struct ana_paths *paths;    /* one partition: the sock_send ranges too */
	uint32_t *rng;              /* then each packet's range event */
	size_t nrng, rngcap;
	const struct pj_split *split;   /* several partitions: the lists to join */
	struct pj_retx *retx;       /* in local packet order */
	size_t nretx, retxcap;
	struct pj_retx *sib;        /* a TCP packet created after others of its (seq, ack | 1):
				     * (it, the latest of them), in local packet order */
	size_t nsib, sibcap;
	bool super;                 /* a packet has events of two payload lengths */
	bool n0_over;               /* a packet's n0 wrapped */
	size_t njoined;             /* counted per event: ... */
	size_t nres;                /* several partitions: packets with payload (pj_merge) */
	int err;
	char pad[64];               /* ... kept off the next partition's line */
};

static inline uint64_t pj_h64(uint64_t x)
{
	x ^= x >> 31; x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27; x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return x;
}

/* Hash of the retransmission key (seq, ack | 1: ana_retx_groups's key,
 * whose low ack bit was its empty-slot marker). */
static inline uint64_t pj_hkey(uint32_t seq, uint32_t ack)
{
	return pj_h64((uint64_t)seq << 32 | (ack | 1));
}

/* The packet key's table hash from the retransmission key's: the table
 * takes the low bits, the cache the middle ones. */
static inline uint64_t pj_hpkt(uint64_t hk, uint32_t xid, uint8_t udp)
{
	return hk ^ ((uint64_t)xid * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)udp << 63);
}

/* The partition of the retransmission key (seq, ack | 1): the top 24 bits
 * of one multiply, scaled to [0, nt) (not the table's hash: the pieces
 * take it for every event, and any function of that key keeps a
 * retransmission with its original). */
static inline unsigned pj_part_of(uint32_t seq, uint32_t ack, unsigned nt)
{
	uint64_t x = ((uint64_t)seq << 32 | (ack | 1)) * 0x9e3779b97f4a7c15ULL;
	return (unsigned)(((x >> 40) * nt) >> 24);
}

/* Events that join a packet by key (ana_match_one's test). */
static inline bool pj_keyed(const struct ana_pev *e)
{
	return !(((e->flags & ANA_EVF_RANGE) != 0) | (e->hook == PK_HOOK_SOCK_SEND));
}

#define PJ_HUGE (2u << 20)

/* The slot table: nc empty slots in a mapping of their own, in
 * transparent huge pages when 2 MB or more (32 MB at 10 M events: the
 * inserts land on random slots, each a TLB miss in 4 KB pages), made
 * present later by pj_slots_present on the thread that joins. */
static uint64_t *pj_slots_map(struct pj_part *p, size_t nc)
{
	size_t bytes = (nc * sizeof(uint64_t) + 4095) & ~(size_t)4095;
	size_t len = bytes >= PJ_HUGE ? bytes + PJ_HUGE : bytes;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	uintptr_t a = (uintptr_t)m;
	if (bytes >= PJ_HUGE) {
		a = (a + PJ_HUGE - 1) & ~(uintptr_t)(PJ_HUGE - 1);
		(void)madvise((void *)a, bytes, MADV_HUGEPAGE);
	}
	p->smap = m;
	p->smaplen = len;
	return (uint64_t *)a;
}

static void pj_slots_unmap(struct pj_part *p)
{
	if (p->smap)
		munmap(p->smap, p->smaplen);
	p->smap = NULL;
	p->slot = NULL;
}

static void pj_slots_present(uint64_t *slot, size_t n);

/* After the join: an array of bytes in partition p's slot table, whose
 * pages are present and huge, when it holds them (else NULL: malloc).
 * The merge's packet numbers and cursors of the partition's packets (~14
 * MB each at 10 M events: ~7 k fresh pages on the main thread, in one
 * table ~4.5 k of them) and the scatter's random cursor updates (fewer
 * TLB misses). */
static void *pj_slots_take(struct pj_part *p, size_t bytes)
{
	if (!p->slot || bytes > p->scap * sizeof(*p->slot))
		return NULL;
	void *v = p->slot;
	/* the table's pages past the block back now: kept to the end of the
	 * join they raised the match's peak (~10 MB with two tables, 10 M
	 * events with losses) */
	uintptr_t pg = 4096, a = ((uintptr_t)v + bytes + pg - 1) & ~(pg - 1);
	uintptr_t b = (uintptr_t)(p->slot + p->scap) & ~(pg - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
	p->slot = NULL;             /* its mapping stays until pj_slots_unmap */
	return v;
}

/* A key's hashes: hv of the whole key (the recent cache's index), pos
 * where its probe starts. A TCP packet's probe starts at its
 * retransmission key's place, so a retransmission (or a duplicate ACK)
 * passes the slots of the packets before it with that key and the join
 * finds the groups as it inserts; a UDP packet's (seq and ack: its uid's)
 * at the whole key's. */
struct pj_h { uint64_t hv, pos; };

static inline struct pj_h pj_hashes(uint32_t seq, uint32_t ack, uint32_t xid, uint8_t udp)
{
	uint64_t hk = pj_hkey(seq, ack), hv = pj_hpkt(hk, xid, udp);
	return (struct pj_h){ hv, udp ? hv : hk };
}

/* A slot's tag: 16 bits of pos (alike in the packets of one
 * retransmission key) and 16 of hv (the packet's own), so that a probe
 * loads only the packets likely its own or its group's: each load is a
 * random one in an array far larger than the caches (perf: a quarter of
 * the join's samples on that load with untagged slots). */
#define PJ_KIN 0xffffu          /* the tag's retransmission-key half */

static inline uint32_t pj_tag(struct pj_h h)
{
	return (uint32_t)(h.pos >> 48) | (uint32_t)(h.hv >> 16 & 0xffff0000u);
}

static int pj_grow_slots(struct pj_part *p)
{
	size_t nc = p->scap ? p->scap * 2 : 1024;
	void *om = p->smap;
	size_t olen = p->smaplen;
	uint64_t *ns = pj_slots_map(p, nc);
	if (!ns)
		return -1;
	pj_slots_present(ns, nc);
	for (size_t i = 0; i < p->scap; i++) {
		uint64_t v = p->slot[i];
		if (!(uint32_t)v)
			continue;
		const struct pj_pkt *k = &p->pk[(uint32_t)v - 1];
		size_t j = pj_hashes(k->seq, k->ack, k->xid, k->udp).pos & (nc - 1);
		while ((uint32_t)ns[j])
			j = (j + 1) & (nc - 1);
		ns[j] = v;
	}
	if (om)
		munmap(om, olen);
	p->slot = ns;
	p->scap = nc;
	return 0;
}

/* New TCP packet r passed slots tagged like its retransmission key: the
 * latest packet before it with that key (seq, ack | 1), if one is, goes
 * with it into p->sib. Its probe passed every packet of the key: they
 * start at one place and the table never loses a slot. */
static __attribute__((noinline)) int pj_kin(struct pj_part *p, uint64_t pos, uint32_t tag, uint32_t r)
{
	const struct pj_pkt *q = &p->pk[r];
	size_t mask = p->scap - 1;
	uint32_t prev = UINT32_MAX;
	for (size_t j = pos & mask;; j = (j + 1) & mask) {
		uint64_t v = p->slot[j];
		uint32_t l = (uint32_t)v - 1;
		if (l == r || !(uint32_t)v)
			break;
		if (((uint32_t)(v >> 32) ^ tag) & PJ_KIN)
			continue;
		const struct pj_pkt *g = &p->pk[l];
		if (!g->udp && g->seq == q->seq && (g->ack | 1) == (q->ack | 1) &&
		    (prev == UINT32_MAX || l > prev))
			prev = l;
	}
	if (prev == UINT32_MAX)
		return 0;
	if (ana_vec_grow((void **)&p->sib, &p->sibcap, p->nsib + 1, sizeof(*p->sib)))
		return -1;
	p->sib[p->nsib++] = (struct pj_retx){ r, prev };
	return 0;
}

/* A new packet with this key at empty slot j. */
static inline uint32_t pj_new(struct pj_part *p, struct pj_h h, uint32_t tag, size_t j,
			      uint32_t seq, uint32_t ack, uint32_t xid, uint8_t udp, uint32_t pos,
			      bool kin)
{
	if (p->n + 1 > p->cap &&
	    ana_vec_grow((void **)&p->pk, &p->cap, p->n + 1, sizeof(*p->pk)))
		return UINT32_MAX;
	p->pk[p->n] = (struct pj_pkt){ .seq = seq, .ack = ack, .xid = xid,
				       .minlen = UINT32_MAX, .first = pos, .udp = udp };
	uint32_t r = (uint32_t)p->n++;
	p->slot[j] = (uint64_t)tag << 32 | (r + 1);
	if (kin && !udp && pj_kin(p, h.pos, tag, r))
		return UINT32_MAX;
	return r;
}

static inline __attribute__((always_inline)) uint32_t pj_get(struct pj_part *p, struct pj_h h,
							     uint32_t seq, uint32_t ack, uint32_t xid,
							     uint8_t udp, uint32_t pos)
{
	__typeof__(p->cache[0]) *c = &p->cache[(h.hv >> 24) & (PJ_CACHE - 1)];
	if (c->idx1 && c->seq == seq && c->ack == ack && c->xid == xid && c->udp == udp)
		return c->idx1 - 1;
	/* three quarters full at most: a tagged probe reads slots, not packets */
	if ((p->n + 1) * 4 > p->scap * 3 && pj_grow_slots(p))
		return UINT32_MAX;
	uint32_t tag = pj_tag(h), r = UINT32_MAX;
	size_t mask = p->scap - 1, j = h.pos & mask;
	bool kin = false;           /* a slot tagged like the retransmission key passed */
	for (;; j = (j + 1) & mask) {
		uint64_t v = p->slot[j];
		if (!(uint32_t)v)
			break;
		uint32_t vt = (uint32_t)(v >> 32);
		if (vt == tag) {
			const struct pj_pkt *k = &p->pk[(uint32_t)v - 1];
			if (k->seq == seq && k->ack == ack && k->xid == xid && k->udp == udp) {
				r = (uint32_t)v - 1;
				break;
			}
		}
		kin |= !((vt ^ tag) & PJ_KIN);
	}
	if (r == UINT32_MAX && (r = pj_new(p, h, tag, j, seq, ack, xid, udp, pos, kin)) == UINT32_MAX)
		return r;
	*c = (__typeof__(*c)){ seq, ack, xid, r + 1, udp };
	return r;
}

#define PJ_AHEAD 8              /* events between a probe's prefetch and its use */

/* A data packet: TCP with payload (the packets ana_path.c's
 * retransmission rule groups). */
static inline bool pj_data(const struct pj_pkt *q)
{
	return !q->udp && q->minlen != UINT32_MAX && q->minlen != 0;
}

/* The entry of p->sib[0 .. x) for local packet l (the list is in local
 * order), SIZE_MAX none. */
static size_t pj_sib_find(const struct pj_part *p, size_t x, uint32_t l)
{
	size_t lo = 0, hi = x;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->sib[mid].l < l)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x && p->sib[lo].l == l ? lo : SIZE_MAX;
}

/* Retransmission groups of the partition (ana_path.c's rule: data packets
 * with the same (seq, ack | 1), the first seen is the original), from the
 * packets of a key that had one before them (p->sib: each names the latest
 * before it, so a key's packets form a chain). first[x]: the first data
 * packet of sib entry x's chain up to its packet, UINT32_MAX none. */
static void pj_groups(struct pj_part *p)
{
	uint32_t *first = malloc((p->nsib ? p->nsib : 1) * sizeof(*first));
	if (!first) {
		p->err = -1;
		return;
	}
	for (size_t x = 0; x < p->nsib; x++) {
		uint32_t l = p->sib[x].l, prev = p->sib[x].head, f;
		size_t y = pj_sib_find(p, x, prev);
		if (y != SIZE_MAX)
			f = first[y];
		else
			f = pj_data(&p->pk[prev]) ? prev : UINT32_MAX;
		bool data = pj_data(&p->pk[l]);
		first[x] = f != UINT32_MAX ? f : data ? l : UINT32_MAX;
		if (f == UINT32_MAX || !data)
			continue;
		if (ana_vec_grow((void **)&p->retx, &p->retxcap, p->nretx + 1, sizeof(*p->retx)))
			p->err = -1;
		else
			p->retx[p->nretx++] = (struct pj_retx){ l, f };
	}
	free(first);
}

/* ana_ranges's step for a joined event, in the same (visit) order. */
static int pj_range(struct pj_part *p, const struct ana_pev *e, uint32_t k)
{
	if (k == p->nrng) {
		if (ana_vec_grow((void **)&p->rng, &p->rngcap, k + 1, sizeof(*p->rng)))
			return -1;
		p->rng[p->nrng++] = UINT32_MAX;
	}
	if (e->len && ana_is_egress(e->hook))
		ana_range_take(p->paths, e, k, &p->rng[k]);
	return 0;
}

/* Event e (keyed, of this partition, at visit position j, packet key
 * hash hv) into its packet: the packet's local index, UINT32_MAX on no
 * memory (p->err set). With nres, the packets with payload counted there
 * (a local: in memory, ~6 instructions a payload event, callgrind). */
static inline __attribute__((always_inline)) uint32_t pj_join_one(struct pj_part *p, const struct ana_pev *e, struct pj_h h,
				   uint32_t j, size_t *nres)
{
	uint8_t udp = p->m->flows.v[e->flow].proto == 17;
	uint32_t k = pj_get(p, h, e->seq, e->ack, e->xid, udp, j);
	if (k == UINT32_MAX) {
		p->err = -1;
		return k;
	}
	p->njoined++;
	struct pj_pkt *q = &p->pk[k];
	q->nev++;
	if (e->len) {
		/* two lengths in one packet: the longer is a super-packet */
		if (q->minlen != UINT32_MAX && e->len != q->minlen)
			p->super = true;
		if (nres)
			*nres += q->minlen == UINT32_MAX;
		if (e->len < q->minlen)
			q->minlen = e->len;
	}
	return k;
}

/* A table probe is two dependent cache misses, its slot and then the
 * packet the slot names (perf: ~40 % of the join's samples on the packet's
 * load when only the slot was fetched ahead). So the probes are a
 * pipeline: an event's key is hashed and its slot fetched PJ_RING events
 * early, the packet its slot names then fetched PJ_AHEAD events early (a
 * slot changed meanwhile makes it a wasted fetch, nothing else). */
#define PJ_RING (2 * PJ_AHEAD)

static inline struct pj_h pj_hv_ev(const struct ana_flow *fl, const struct ana_pev *e)
{
	return pj_hashes(e->seq, e->ack, e->xid, fl[e->flow].proto == 17);
}

static inline void pj_fetch_slot(const struct pj_part *p, struct pj_h h)
{
	__builtin_prefetch(&p->slot[h.pos & (p->scap - 1)]);
}

/* The packet its first slot names, when that slot's tag is its own. */
static inline void pj_fetch_pkt(const struct pj_part *p, struct pj_h h)
{
	uint64_t v = p->slot[h.pos & (p->scap - 1)];
	if ((uint32_t)(v >> 32) == pj_tag(h) && (uint32_t)v)
		__builtin_prefetch(&p->pk[(uint32_t)v - 1]);
}

/* One partition: every event in visit order, each event's packet (or
 * UINT32_MAX) into evpkt, and the sock_send ranges with p->rng. */
static void pj_run(struct pj_part *p)
{
	const struct ana_pev *ev = p->ev;
	const struct ana_flow *fl = p->m->flows.v;
	const uint32_t *vis = p->vis;
	size_t n = p->nvis;
	struct pj_h ring[PJ_RING];     /* key hashes of events j .. j + PJ_RING - 1 */
	for (size_t j = 0; j < PJ_RING && j < n; j++) {
		ring[j] = pj_hv_ev(fl, &ev[vis[j]]);
		pj_fetch_slot(p, ring[j]);
	}
	for (size_t j = 0; j < n; j++) {
		uint32_t i = vis[j];
		const struct ana_pev *e = &ev[i];
		struct pj_h hv = ring[j % PJ_RING];
		if (j + PJ_RING + PJ_AHEAD < n)
			__builtin_prefetch(&ev[vis[j + PJ_RING + PJ_AHEAD]]);
		if (j + PJ_AHEAD < n)
			pj_fetch_pkt(p, ring[(j + PJ_AHEAD) % PJ_RING]);
		if (j + PJ_RING < n) {
			struct pj_h fh = pj_hv_ev(fl, &ev[vis[j + PJ_RING]]);
			ring[j % PJ_RING] = fh;
			pj_fetch_slot(p, fh);
		}
		p->evpkt[i] = UINT32_MAX;
		if (!pj_keyed(e)) {
			if (p->rng)
				ana_range_open(p->paths, e, i);
			continue;
		}
		uint32_t k = pj_join_one(p, e, hv, (uint32_t)j, NULL);
		if (k == UINT32_MAX)
			continue;
		p->evpkt[i] = k;
		if (p->rng && pj_range(p, e, k))
			p->err = -1;
	}
	pj_slots_unmap(p);
	pj_groups(p);
}

/* Several partitions: the visit order is split once, not scanned by every
 * partition. Task r takes range r of it (vis[lo, hi)) and lists the visit
 * positions of its keyed events per partition t, in order, in list (r, t).
 * Partition t joins its lists in range order, so it sees its events in
 * visit order and no other's, and writes each event's local packet over
 * its entry: the lists then name the packet of every keyed event. Each
 * task writes only its own lists (no event's evpkt is written by two
 * threads in one cache line); evpkt is filled after the merge, range by
 * range. */
struct pj_split {
	const struct ana_model *m;
	const uint32_t *vis;
	unsigned nt;
	int err;
	size_t cut;                 /* two runs: run 1's first event (SIZE_MAX: not two runs) */
	size_t side;                /* how far a piece may pass the next one's start */
	size_t lo[PJ_MAXT + 1];     /* range r: vis[lo[r], lo[r + 1]) */
	uint8_t *pb;                /* per visit position: partition | PJ_EGRESS, or PJ_UNKEYED */
	uint32_t *list[PJ_MAXT][PJ_MAXT];   /* [r][t]: entries from off[r][t] on, cnt of them */
	size_t off[PJ_MAXT][PJ_MAXT], cnt[PJ_MAXT][PJ_MAXT], cap[PJ_MAXT][PJ_MAXT];
};

#define PJ_UNKEYED 0xff         /* a sock_send range: opens one */
#define PJ_EGRESS  0x80         /* keyed, egress with payload: may take a range */

static inline uint32_t *pj_list(const struct pj_split *s, unsigned r, unsigned t)
{
	return s->list[r][t] + s->off[r][t];
}

/* A list found too short (keys skewed to one partition: a storm of one
 * packet's copies): half as much room again. */
static int pj_list_grow(struct pj_split *s, size_t r, unsigned t)
{
	size_t nc = s->cap[r][t] + s->cap[r][t] / 2 + 1024;
	uint32_t *v = realloc(s->list[r][t], nc * sizeof(*v));
	if (!v)
		return -1;
	s->list[r][t] = v;
	s->cap[r][t] = nc;
	return 0;
}

/* Event e's partition byte, without branches: the pieces take it for
 * every event, and which kind comes next is not predictable. */
static inline uint8_t pj_byte(const struct ana_pev *e, unsigned nt)
{
	unsigned eg = (e->len != 0) & ((unsigned)e->hook - PK_HOOK_DEV_QUEUE <=
				       PK_HOOK_DEV_XMIT - PK_HOOK_DEV_QUEUE);
	unsigned b = pj_part_of(e->seq, e->ack, nt) | eg << 7;
	return pj_keyed(e) ? (uint8_t)b : PJ_UNKEYED;
}

static void pj_split_task(void *ctx, size_t r, size_t r1)
{
	(void)r1;
	struct pj_split *s = ctx;
	const struct ana_pev *ev = s->m->pev.v;
	size_t n[PJ_MAXT] = { 0 };
	for (size_t j = s->lo[r]; j < s->lo[r + 1]; j++) {
		uint8_t b = pj_byte(&ev[s->vis[j]], s->nt);
		s->pb[j] = b;
		if (b == PJ_UNKEYED)
			continue;
		unsigned t = b & ~PJ_EGRESS;
		if (n[t] == s->cap[r][t] && pj_list_grow(s, r, t)) {
			s->err = -1;
			return;
		}
		s->list[r][t][n[t]++] = (uint32_t)j;
	}
	for (unsigned t = 0; t < s->nt; t++)
		s->cnt[r][t] = n[t];
}

/* Partition p's lists, one range after the other (the prefetch ring
 * restarts at each: nt times per partition). */
static void pj_run_lists(struct pj_part *p, const struct pj_split *s)
{
	const struct ana_pev *ev = p->ev;
	const struct ana_flow *fl = p->m->flows.v;
	/* SIZE_MAX: no event is below it, nothing counted */
	size_t cut = s->cut == SIZE_MAX ? 0 : s->cut, nres = 0;
	unsigned over = 0;
	for (unsigned r = 0; r < s->nt; r++) {
		uint32_t *en = pj_list(s, r, p->t);
		size_t n = s->cnt[r][p->t];
		struct pj_h ring[PJ_RING];
		for (size_t x = 0; x < PJ_RING && x < n; x++) {
			ring[x] = pj_hv_ev(fl, &ev[p->vis[en[x]]]);
			pj_fetch_slot(p, ring[x]);
		}
		for (size_t x = 0; x < n; x++) {
			uint32_t j = en[x];
			const struct ana_pev *e = &ev[p->vis[j]];
			struct pj_h hv = ring[x % PJ_RING];
			if (x + PJ_RING + PJ_AHEAD < n)
				__builtin_prefetch(&ev[p->vis[en[x + PJ_RING + PJ_AHEAD]]]);
			if (x + PJ_AHEAD < n)
				pj_fetch_pkt(p, ring[(x + PJ_AHEAD) % PJ_RING]);
			if (x + PJ_RING < n) {
				struct pj_h fh = pj_hv_ev(fl, &ev[p->vis[en[x + PJ_RING]]]);
				ring[x % PJ_RING] = fh;
				pj_fetch_slot(p, fh);
			}
			uint32_t k = pj_join_one(p, e, hv, j, &nres);
			en[x] = k;
			if (k != UINT32_MAX) {
				/* run 0's events of the packet, for pj_scatter */
				struct pj_pkt *q = &p->pk[k];
				uint16_t n0 = (uint16_t)(q->n0 + (p->vis[j] < cut));
				over |= n0 < q->n0;
				q->n0 = n0;
			}
		}
	}
	p->n0_over = over;
	p->nres = nres;
	pj_groups(p);               /* the slot table is kept: pj_slots_take */
}

/* The slot table's pages made present by writes, on the thread that joins
 * into it. calloc leaves a fresh block unmapped; the join's first touch of
 * a page is a probe (a read: the shared zero page is mapped), its insert
 * then a copy-on-write fault whose TLB flush interrupts every other core
 * running this process: with 2 threads 2 x 4096 such flushes took ~0.13 s
 * of CPU on the project VM (do_wp_page -> flush_tlb_mm_range, perf under
 * chrt). Whole pages only: zero either way; a failure leaves the faults. */
static void pj_slots_present(uint64_t *slot, size_t n)
{
	uintptr_t pg = 4096, a = ((uintptr_t)slot + pg - 1) & ~(pg - 1);
	uintptr_t b = ((uintptr_t)(slot + n)) & ~(pg - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);   /* Linux 5.14 */
}

static void pj_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	struct pj_part *p = &((struct pj_part *)ctx)[t];
	pj_slots_present(p->slot, p->scap);
	if (p->split)
		pj_run_lists(p, p->split);
	else
		pj_run(p);
}

static struct ana_pkt pj_pkt_out(const struct pj_pkt *s, uint32_t g)
{
	return (struct ana_pkt){ .seq = s->seq, .ack = s->ack, .xid = s->xid,
				 .minlen = s->minlen == UINT32_MAX && s->udp ? 0 : s->minlen,
				 .nev = s->nev, .group = g, .range_ev = UINT32_MAX, .udp = s->udp };
}

/* Retransmission groups onto the numbered packets: gmap NULL when local
 * numbers are global. */
static void pj_set_groups(struct ana_paths *p, const struct pj_part *part, const uint32_t *gmap)
{
	for (size_t r = 0; r < part->nretx; r++) {
		uint32_t k = part->retx[r].l, g = part->retx[r].head;
		if (gmap) {
			k = gmap[k];
			g = gmap[g];
		}
		p->pkts[k].group = g;
		p->pkts[k].ngroup = p->pkts[g].ngroup = 1;
	}
}

/* One partition: its packets are numbered already; they become p->pkts in
 * their own block, converted backwards (packet g's 36 bytes land at or
 * past the 28 of packets not converted yet), so the packets are not held
 * twice or faulted in twice. */
static int pj_take(struct ana_paths *p, struct pj_part *part)
{
	size_t n = part->n, need = (n ? n : 1) * sizeof(struct ana_pkt);
	if (need > part->cap * sizeof(struct pj_pkt)) {
		void *v = realloc(part->pk, need);
		if (!v)
			return -1;
		part->pk = v;
	}
	struct ana_pkt *out = (struct ana_pkt *)(void *)part->pk;
	for (size_t g = n; g-- > 0;) {
		struct pj_pkt s = part->pk[g];
		out[g] = pj_pkt_out(&s, (uint32_t)g);
		if (part->rng)
			out[g].range_ev = part->rng[g];
	}
	p->ranges_done = part->rng != NULL;
	free(p->pkts);
	p->pkts = out;
	p->pkcap = need / sizeof(struct ana_pkt);
	p->npkts = n;
	p->super = part->super;
	p->njoined = part->njoined;
	part->pk = NULL;
	pj_set_groups(p, part, NULL);
	return 0;
}

#define PJ_RELEASE (1u << 20)   /* bytes of merged packets given back at a time */

/* Gives the pages of [base, upto) (read, not read again) back to the
 * system, a megabyte or more at a time: the next array grows while this one
 * shrinks, so the two are not resident in full at once. Whole pages inside
 * the block only; a free() after writes its own header, faulting at most a
 * fresh zero page. */
static void pj_release(const void *base, const void *upto, uintptr_t *done)
{
	uintptr_t pg = 4096, lo = ((uintptr_t)base + pg - 1) & ~(pg - 1);
	uintptr_t hi = (uintptr_t)upto & ~(pg - 1);
	if (*done < lo)
		*done = lo;
	if (hi < *done + PJ_RELEASE)
		return;
	madvise((void *)*done, hi - *done, MADV_DONTNEED);
	*done = hi;
}

/* p->pkts in partition 0's block (ana_pjoin left it room), grown to
 * total packets when short: pj_merge converts in place. */
static int pj_pkts_in_part0(struct ana_paths *p, struct pj_part *part0, size_t total)
{
	size_t need = (total ? total : 1) * sizeof(struct ana_pkt);
	void *v = part0->pk;
	if (need > part0->cap * sizeof(struct pj_pkt) && !(v = realloc(part0->pk, need)))
		return -1;
	free(p->pkts);
	p->pkts = v;
	p->pkcap = need / sizeof(struct ana_pkt);
	part0->pk = NULL;
	return 0;
}

/* Numbers the partitions' packets by first sight into p->pkts; gmap[t][local]
 * is the global index. With cur, also pj_scatter's cursors, by packet id
 * (base[t] + local: the scatter needs no global number): each packet's
 * own events laid out in packet order from its head, its run-0 events from
 * cur[2 id], its run-1 events from cur[2 id + 1], and after them, when it
 * has payload (only such a packet takes a sock_send range), a slot for its
 * range (pj_place_ranges). Backwards (the last seen first), in
 * partition 0's block: packet g's 36 bytes land at or past the 28 of
 * partition 0's packets not read yet (its local index is at most g), so
 * its pages are not faulted in twice (~8 k faults on the main thread at
 * 10 M events, 2 threads). First sights are distinct visit positions. */
struct pj_mout {
	struct ana_paths *p;
	uint32_t **gmap, **cur;     /* cur NULL: no cursors */
	bool slots;                 /* a slot after each packet with payload */
	const size_t *base;
	uint64_t *res;
	size_t acc;
};

/* Local packet l of partition t (q, a copy: its bytes may be overwritten)
 * is packet g. */
static inline __attribute__((always_inline)) void pj_merge_one(struct pj_mout *o, const struct pj_pkt q,
							       unsigned t, uint32_t l, size_t g)
{
	o->gmap[t][l] = (uint32_t)g;
	o->p->pkts[g] = pj_pkt_out(&q, (uint32_t)g);
	if (o->cur) {
		size_t id = o->base[t] + l;
		uint64_t slot = o->slots && q.minlen != UINT32_MAX;
		o->acc -= q.nev + slot;
		o->cur[t][2 * (size_t)l] = (uint32_t)o->acc;
		o->cur[t][2 * (size_t)l + 1] = (uint32_t)(o->acc + q.n0);
		o->p->pkts[g].head = (uint32_t)o->acc;
		o->res[id >> 6] |= slot << (id & 63);
	}
}

static int pj_merge(struct ana_paths *p, struct pj_part *part, unsigned nt, uint32_t **gmap,
		    uint32_t **cur, const size_t *base, uint64_t *res, size_t nres)
{
	size_t total = 0, at[PJ_MAXT], acc = nres;      /* the packets' nev and range slots */
	for (unsigned t = 0; t < nt; t++) {
		total += part[t].n;
		acc += part[t].njoined;
		at[t] = part[t].n;
	}
	const struct pj_pkt *pk[PJ_MAXT];
	for (unsigned t = 0; t < nt; t++)
		pk[t] = part[t].pk;
	if (total >= UINT32_MAX || pj_pkts_in_part0(p, &part[0], total))
		return -1;
	pk[0] = (const struct pj_pkt *)(const void *)p->pkts;
	struct pj_mout o = { p, gmap, cur, nres > 0, base, res, acc };
	size_t g = total;
	if (nt == 2) {
		/* the later first sight of the two (~40 instructions a packet
		 * less than the loop over the partitions, callgrind) */
		size_t a0 = at[0], a1 = at[1];
		while (a0 && a1) {
			bool one = pk[1][a1 - 1].first > pk[0][a0 - 1].first;
			size_t l = one ? --a1 : --a0;
			pj_merge_one(&o, pk[one][l], one, (uint32_t)l, --g);
		}
		at[0] = a0;
		at[1] = a1;
	}
	while (g-- > 0) {
		unsigned best = nt;
		uint32_t bf = 0;
		for (unsigned t = 0; t < nt; t++)
			if (at[t] && (best == nt || pk[t][at[t] - 1].first > bf)) {
				bf = pk[t][at[t] - 1].first;
				best = t;
			}
		--at[best];
		pj_merge_one(&o, pk[best][at[best]], best, (uint32_t)at[best], g);
	}
	p->npkts = total;
	for (unsigned t = 0; t < nt; t++) {
		pj_set_groups(p, &part[t], gmap[t]);
		p->super |= part[t].super;
		p->njoined += part[t].njoined;
	}
	return 0;
}

/* An array of n uint32_t after the merge: the block of a partition other
 * than 0 when it holds them (its pages are present: the scatter's or
 * remap's ~10 k faults saved at 10 M events), else a fresh one; the other
 * partitions' packets freed. */
static uint32_t *pj_reuse_block(struct pj_part *part, unsigned nt, size_t n)
{
	uint32_t *v = NULL;
	for (unsigned u = 1; u < nt; u++)
		if (!v && part[u].pk && part[u].cap * sizeof(struct pj_pkt) >= n * sizeof(uint32_t)) {
			v = (uint32_t *)(void *)part[u].pk;
			part[u].pk = NULL;
		}
	for (unsigned u = 0; u < nt; u++) {
		free(part[u].pk);
		part[u].pk = NULL;
	}
	return v ? v : malloc((n ? n : 1) * sizeof(uint32_t));
}

/* A one-shot flag one task waits on (blocked: the waiting thread's CPU
 * stays the work it does). */
struct pj_flag { pthread_mutex_t mu; pthread_cond_t cv; int v; };

static void pj_flag_set(struct pj_flag *f, int v)
{
	pthread_mutex_lock(&f->mu);
	f->v = v;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static int pj_flag_wait(struct pj_flag *f)
{
	pthread_mutex_lock(&f->mu);
	while (!f->v)
		pthread_cond_wait(&f->cv, &f->mu);
	int v = f->v;
	pthread_mutex_unlock(&f->mu);
	return v;
}

/* Several partitions: after their joins, the merge and (with p->pending)
 * the sock_send ranges run side by side. The ranges take the events in
 * visit order as ana_ranges would, naming each packet by its partition's
 * base + its local index (id), as the global numbers are not known yet;
 * gmap maps them to global numbers after (pj_gnum). Each packet takes at most one
 * range, so p->extra holds them all: a bit per packet says which have one. */
struct pj_after {
	struct ana_model *m;
	struct ana_paths *p;
	struct pj_part *part;
	struct pj_split *split;
	unsigned nt;
	uint32_t *gmap[PJ_MAXT];    /* partition t's local packet -> global number */
	size_t base[PJ_MAXT], total;
	uint64_t *has_rng;          /* id -> a range taken (bits; NULL: no ranges) */
	uint64_t *res;              /* with cur: id -> a slot for a range (bits, pj_merge) */
	size_t nres;                /* the slots (packets with payload) */
	uint32_t *cur[PJ_MAXT];     /* partition t's: pj_scatter's cursors, two a local packet */
	bool own;                   /* the order (cur), not evpkt */
	uint32_t *blk[PJ_MAXT];     /* gmap[t] and cur[t] in one block */
	bool blk_heap[PJ_MAXT];     /* malloc'd, not a slot table */
	int rc;
	atomic_int merged;          /* task 0's merge is over (a->rc says how) */
	/* with cur: ana_path_match's next steps beside (pj_after_task) */
	uint32_t *vis;
	size_t nvis;
	unsigned threads;
	struct pj_flag ranged;      /* task 1's ranges are over */
	struct pj_flag go;          /* task 0's merge is over and order allocated: 1, else 2 */
	bool main_fix;              /* task 0 fixes the ranges' ids and places (set before go) */
	struct pj_flag upper;       /* task 1's first shrink step is over: 1 the lower half
				     * follows (in place), 2 not */
	size_t low_n;               /* the lower half's events (set before upper) */
	atomic_size_t low_next;     /* its next piece to shrink, on either thread */
	bool low;                   /* the lower half was shrunk here (ana_paths.pe_low_done) */
};

/* Range r's lists read along the visit order: li[t] is partition t's next
 * entry. */
static void pj_cursor(const struct pj_split *s, unsigned r, uint32_t **li)
{
	for (unsigned t = 0; t < s->nt; t++)
		li[t] = pj_list(s, r, t);
}

/* The range event at visit position j opens one. */
static inline void pj_range_open_at(struct pj_after *a, size_t j)
{
	uint32_t i = a->split->vis[j];
	ana_range_open(a->p, &a->m->pev.v[i], i);
}

/* The keyed egress event at visit position j, of partition t, local
 * packet l, may take one (its packet has none yet). */
static inline void pj_range_take_at(struct pj_after *a, size_t j, unsigned t, uint32_t l)
{
	size_t id = a->base[t] + l;
	uint64_t bit = 1ULL << (id & 63);
	if (a->has_rng[id >> 6] & bit)
		return;                 /* ana_range_take's first test */
	uint32_t rng = UINT32_MAX;
	ana_range_take(a->p, &a->m->pev.v[a->split->vis[j]], (uint32_t)id, &rng);
	if (rng != UINT32_MAX)
		a->has_rng[id >> 6] |= bit;
}

/* Range r's positions [j, hi) one at a time: the range events open, the
 * keyed ones move their list's cursor, the egress ones may take. */
static void pj_ranges_bytes(struct pj_after *a, size_t j, size_t hi, uint32_t **li)
{
	const uint8_t *pb = a->split->pb;
	for (; j < hi; j++) {
		uint8_t b = pb[j];
		if (b == PJ_UNKEYED) {
			pj_range_open_at(a, j);
			continue;
		}
		uint32_t l = *li[b & ~PJ_EGRESS]++;
		if (b & PJ_EGRESS)
			pj_range_take_at(a, j, b & ~PJ_EGRESS, l);
	}
}

/* Eight partition bytes at a time (a 64-bit word, byte k at bits 8 k ..):
 * the ones the ranges read (bit 7: PJ_EGRESS, or PJ_UNKEYED) by their
 * bits, and each partition's keyed bytes counted, not walked one by one.
 * About as many instructions as the walk (callgrind, 10 M case: 387 M
 * against 364 M), but no branch on each byte's kind and no cursor stored
 * and reloaded each position: 29 % fewer mispredicted branches (s150,
 * --branch-sim), the ranges ~116 -> ~95 ms on the 10 M case (instrumented,
 * chrt). A partition is below 64: bit 6 marks PJ_UNKEYED. Masks hold bit
 * 7 of each byte. */
#define PJ_H8 0x8080808080808080ULL
#define PJ_L7 0x7f7f7f7f7f7f7f7fULL
#define PJ_B8 0x0101010101010101ULL
#define PJ_SWAR_MAXT 8          /* partitions at most for the word-wise pass */

static inline unsigned pj_count8(uint64_t m)
{
	return (unsigned)(((m >> 7) * PJ_B8) >> 56);
}

/* The keyed bytes of partition t (their low 7 bits equal t). */
static inline uint64_t pj_part8(uint64_t w, unsigned t)
{
	uint64_t x = (w & PJ_L7) ^ (t * PJ_B8);
	return ~(x + PJ_L7) & PJ_H8;
}

static void pj_ranges_words(struct pj_after *a, size_t j, size_t hi, uint32_t **li)
{
	const uint8_t *pb = a->split->pb;
	unsigned nt = a->nt;
	for (; j + 8 <= hi; j += 8) {
		uint64_t w, part[PJ_SWAR_MAXT];
		memcpy(&w, pb + j, sizeof(w));
		uint64_t read = w & PJ_H8, unkeyed = (w << 1) & PJ_H8;
		for (unsigned t = 0; t < nt; t++)
			part[t] = pj_part8(w, t);
		while (read) {
			unsigned bit = (unsigned)__builtin_ctzll(read);
			read &= read - 1;
			if (unkeyed >> bit & 1) {
				pj_range_open_at(a, j + bit / 8);
				continue;
			}
			unsigned t = (unsigned)(w >> (bit - 7)) & 0x7f;
			uint64_t before = (1ULL << bit) - 1;
			pj_range_take_at(a, j + bit / 8, t, li[t][pj_count8(part[t] & before)]);
		}
		for (unsigned t = 0; t < nt; t++)
			li[t] += pj_count8(part[t]);
	}
	pj_ranges_bytes(a, j, hi, li);
}

/* The ranges in visit order, reading only the events that open or may
 * take one (the partition bytes say which); the others just move their
 * list's cursor. */
static void pj_ranges_by_id(struct pj_after *a)
{
	const struct pj_split *s = a->split;
	uint32_t *li[PJ_MAXT];
	bool words = a->nt <= PJ_SWAR_MAXT && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	for (unsigned r = 0; r < a->nt; r++) {
		pj_cursor(s, r, li);
		if (words)
			pj_ranges_words(a, s->lo[r], s->lo[r + 1], li);
		else
			pj_ranges_bytes(a, s->lo[r], s->lo[r + 1], li);
	}
}

static void pj_remap(struct pj_after *a, size_t r, bool release);

/* The global number of packet id (base[t] + local). */
static inline uint32_t pj_gnum(const struct pj_after *a, size_t id)
{
	unsigned t = a->nt - 1;
	while (id < a->base[t])
		t--;
	return a->gmap[t][id - a->base[t]];
}

/* The ranges' packet ids to global numbers, and each packet's range (a
 * packet takes one at most). A pass over every range, ~8 ms on the 10 M
 * case: on the ranges' thread, which is done sooner than the main one. */
static void pj_fix_range(struct pj_after *a);
static void pj_place_ranges(struct pj_after *a);
static size_t pj_order_len(const struct pj_after *a);

/* Every joined event's index into p->order, grouped by packet, each
 * packet's in ascending index (ana_group_order's order, the extras (its
 * range) in the slot after a packet's own events, pj_place_ranges): the
 * visit order takes each of the two runs by index, and run 0's events
 * come before run 1's, so a packet's run-0 events go from its first place
 * up (cursor cur[2 id]), its run-1 events from n0 places later (cur[2 id +
 * 1]; the run picks the cursor without a branch: the runs alternate every
 * few events). Replaces the remap into evpkt and ana_group_order's pass
 * over it (two passes over every event on the main thread). */
static void pj_scatter_range(struct pj_after *a, unsigned r)
{
	const struct pj_split *s = a->split;
	const uint32_t *vis = s->vis;
	const uint8_t *pb = s->pb;
	uint32_t *order = a->p->order, *li[PJ_MAXT], *ct[PJ_MAXT];
	size_t cut = s->cut, hi = s->lo[r + 1];
	pj_cursor(s, r, li);
	for (unsigned t = 0; t < a->nt; t++)
		ct[t] = a->cur[t];
	for (size_t j = s->lo[r]; j < hi; j++) {
		uint8_t b = pb[j];
		if (b == PJ_UNKEYED)
			continue;
		unsigned t = b & ~PJ_EGRESS;
		uint32_t l = *li[t]++, i = vis[j];
		order[ct[t][2 * (size_t)l + (i >= cut)]++] = i;
	}
}

static void pj_scatter(struct pj_after *a)
{
	for (unsigned r = 0; r < a->nt; r++)
		pj_scatter_range(a, r);
}

#define PJ_LOW_PIECE 65536u      /* events of the lower half a thread shrinks at a time */

/* The events' second shrink step (the lower half, in place), in pieces
 * taken by whichever thread is free: they write disjoint records and read
 * events nothing writes then, in any order. */
static void pj_shrink_low(struct pj_after *a)
{
	for (;;) {
		size_t lo = atomic_fetch_add(&a->low_next, PJ_LOW_PIECE);
		if (lo >= a->low_n)
			return;
		ana_pe_shrink_low(a->m, lo, lo + PJ_LOW_PIECE < a->low_n ? lo + PJ_LOW_PIECE : a->low_n);
	}
}

/* With cur, task 0 after its merge: it lets task 1 shrink the events once
 * its ranges are over (nothing here reads the events; only the merge or
 * the order's block can fail), scatters, puts the ranges into their slots
 * once the ranges are over, then takes pieces of the lower half's shrink
 * once the upper half's is over. So task 1 shrinks the upper half and
 * most of the lower one while task 0 scatters, and ana_path_match's
 * two-thread lower-half step goes. Only when task 1 has a thread: else it
 * runs after this and puts the ranges in and does the whole shrink. */
static void pj_after_merged(struct pj_after *a)
{
	a->main_fix = ana_par_concurrent();
	pj_flag_set(&a->go, 1);
	pj_scatter(a);
	if (!a->main_fix)
		return;
	pj_flag_wait(&a->ranged);
	pj_place_ranges(a);
	if (pj_flag_wait(&a->upper) == 1)
		pj_shrink_low(a);
}

/* With cur, task 1 after its ranges, once task 0 says go: the first
 * shrink step, then pieces of the second (in place). False: no go. */
static bool pj_after_ranged(struct pj_after *a)
{
	pj_flag_set(&a->ranged, 1);
	if (pj_flag_wait(&a->go) != 1)
		return false;
	bool in_place = ana_pe_in_place(a->m, pj_order_len(a), a->threads);
	a->p->pe_pre = ana_pe_shrink_first(a->m, in_place);
	a->low_n = in_place ? a->m->pev.n / 2 : 0;
	a->low = in_place;
	pj_flag_set(&a->upper, in_place ? 1 : 2);
	if (in_place)
		pj_shrink_low(a);
	return true;
}

/* Task 0 merges, then writes every event's packet number (evpkt) or, with
 * cur, each event into its packet's place (and pj_after_scattered); task 1
 * takes the ranges beside it, which need none of the merge's numbers. */
static void pj_after_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	struct pj_after *a = ctx;
	if (t == 0) {
		a->rc = pj_merge(a->p, a->part, a->nt, a->gmap, a->own ? a->cur : NULL, a->base, a->res,
				 a->own ? a->nres : 0);
		atomic_store_explicit(&a->merged, 1, memory_order_release);
		if (!a->rc && a->own) {
			/* the own events and the range slots */
			if (!(a->p->order = pj_reuse_block(a->part, a->nt, a->p->njoined + a->nres)))
				a->rc = -1;
		}
		if (a->rc || !a->has_rng) {  /* pj_finish goes on, or ana_pjoin frees */
			if (a->own)
				pj_flag_set(&a->go, 2);
			return;
		}
		if (a->own) {
			pj_after_merged(a);
			return;
		}
		if (!(a->p->evpkt = pj_reuse_block(a->part, a->nt, a->m->pev.n))) {
			a->rc = -1;
			return;
		}
		for (size_t r = 0; r < a->nt; r++)
			pj_remap(a, r, false);
	} else {
		pj_ranges_by_id(a);
		if (a->own) {
			if (!pj_after_ranged(a) || a->main_fix)
				return;
		}
		/* the ranges' ids to global numbers here, when the merge is
		 * over (it is sooner than the main thread's scatter or remap):
		 * task 0 runs first when there is no thread for this one */
		while (!atomic_load_explicit(&a->merged, memory_order_acquire))
			sched_yield();
		if (!a->rc && a->own)
			pj_place_ranges(a);
		else if (!a->rc)
			pj_fix_range(a);
	}
}

/* evpkt of the events of range r (every one: it was not set before). With
 * release, the range's lists are handed back as they are read, so that
 * they and evpkt are not resident in full at once; not while the ranges
 * read them beside. */
static void pj_remap(struct pj_after *a, size_t r, bool release)
{
	const struct pj_split *s = a->split;
	uint32_t *evpkt = a->p->evpkt, *li[PJ_MAXT];
	uintptr_t done[PJ_MAXT] = { 0 };
	pj_cursor(s, (unsigned)r, li);
	for (size_t j = s->lo[r]; j < s->lo[r + 1]; j++) {
		unsigned t = s->pb[j] & ~PJ_EGRESS;
		evpkt[s->vis[j]] = s->pb[j] == PJ_UNKEYED ? UINT32_MAX : a->gmap[t][*li[t]++];
		if (release && !(j & 0xffff))
			for (unsigned u = 0; u < a->nt; u++)
				pj_release(pj_list(s, (unsigned)r, u), li[u], &done[u]);
	}
}

static void pj_remap_task(void *ctx, size_t r, size_t r1)
{
	(void)r1;
	pj_remap(ctx, r, true);
}


static void pj_fix_range(struct pj_after *a)
{
	struct ana_paths *p = a->p;
	for (size_t j = 0; j < p->nextra; j++) {
		uint32_t k = pj_gnum(a, p->extra[j].pkt);
		p->extra[j].pkt = k;
		p->pkts[k].range_ev = p->extra[j].ev;
	}
}

/* The order's final length: with its unused entries while that is no
 * more than the events (the in-place gather's bound: ana_pe_in_place),
 * else closed up (more packets with payload than sock_send events, as
 * when one send makes several packets: as many entries as on 1 thread).
 * The same on both threads once the ranges are over. */
static size_t pj_order_len(const struct pj_after *a)
{
	size_t full = a->p->njoined + a->nres;
	return full <= a->nvis ? full : a->p->njoined + a->p->nextra;
}

/* The slots of packets without a range closed up from the first (g0):
 * every later packet's events move (a pass over them as the old placing
 * of the ranges made over all packets, only here). */
static void pj_close_slots(struct ana_paths *p, size_t g0)
{
	uint32_t *o = p->order;
	size_t acc = p->pkts[g0].head + p->pkts[g0].nev;
	for (size_t k = g0 + 1; k < p->npkts; k++) {
		struct ana_pkt *q = &p->pkts[k];
		memmove(o + acc, o + q->head, q->nev * sizeof(*o));
		q->head = (uint32_t)acc;
		acc += q->nev;
	}
}

/* With cur, once the scatter and the ranges are over: each range into
 * its packet's slot (pj_merge left one after the own events of every
 * packet with payload, as only such a packet takes one). A slot left
 * empty stays when the order may be that long (pj_order_len): it holds
 * no packet's events, and closing it up would move every later packet
 * (~25 ms at 10 M events, where a few packets' ranges were replaced); it
 * takes an event index for the gather to read. The empty ones are found
 * by the bits: a packet with payload (pj_merge) without a range (the
 * ranges). */
static void pj_place_ranges(struct pj_after *a)
{
	struct ana_paths *p = a->p;
	for (size_t j = 0; j < p->nextra; j++) {
		uint32_t k = pj_gnum(a, p->extra[j].pkt);
		struct ana_pkt *q = &p->pkts[k];
		p->extra[j].pkt = k;
		q->range_ev = p->extra[j].ev;
		p->order[q->head + q->nev++] = q->range_ev;
	}
	p->norder = pj_order_len(a);
	bool close = p->norder < p->njoined + a->nres;
	size_t g0 = SIZE_MAX;
	for (size_t w = 0; p->nextra < a->nres && w <= a->total / 64; w++)
		for (uint64_t e = a->res[w] & ~a->has_rng[w]; e; e &= e - 1) {
			size_t g = pj_gnum(a, w * 64 + (size_t)__builtin_ctzll(e));
			const struct ana_pkt *q = &p->pkts[g];
			p->order[q->head + q->nev] = p->order[q->head];
			g0 = g < g0 ? g : g0;
		}
	if (close && g0 != SIZE_MAX)
		pj_close_slots(p, g0);
}

/* Merge, ranges, then every event's packet number. */
static int pj_finish(struct pj_after *a)
{
	struct ana_paths *p = a->p;
	ana_par_tasks(a->has_rng ? 2 : 1, pj_after_task, a);
	if (a->rc)
		return -1;
	p->pe_low_done = a->low;
	if (!a->has_rng) {
		if (!(p->evpkt = pj_reuse_block(a->part, a->nt, a->m->pev.n)))
			return -1;
		ana_par_tasks(a->nt, pj_remap_task, a);
		return 0;
	}
	p->ranges_done = true;
	return 0;
}

/* ---- the visit order and its split, in pieces on threads ----
 *
 * Piece k walks the visit order (ana_vstep) from a state S_k guessed by
 * time (the events of each run up to one instant taken), writing the visit
 * positions it reaches, their partition bytes and range k's lists as it
 * goes. The walk of piece k - 1 reaches S_k's position with a state of its
 * own; from the first step that it starts in a state in which piece k
 * started a step, the two walks are one (a step depends on the state
 * only): piece k - 1 stops there, and its positions past S_k's (kept
 * aside meanwhile) replace piece k's. Piece 0 starts where the single walk
 * does, so every position ends up the single walk's. A piece that does
 * not meet the next within s->side positions (runs not in time order, or
 * ties in time that keep the two walks out of step) goes on alone to the
 * end, and the later pieces' work is dropped. */
#define PJ_SIDE (1u << 16)      /* positions a piece may run past the next one's start, at most */
#define PJ_SIDE_MIN 1024u       /* and at least (fewer events: the single walk) */
#define PJ_PIECE_RUNS 16        /* runs at most for pieces (the records hold a state each) */

struct pj_piece {
	struct ana_vruns v;         /* its walk's state */
	size_t pos, from, to;       /* next position; its start; the next piece's (n: last) */
	size_t nrec, *rpos;         /* the steps started below from + side: positions */
	uint32_t *rat;              /* and states (v.n run positions each) */
	uint32_t *svis;             /* positions [to, to + side + 256) */
	uint8_t *spb;
	size_t n[PJ_MAXT];          /* its lists' lengths */
	size_t meet;                /* where it joined the next piece's walk */
	bool lost;                  /* it did not */
	unsigned bad;               /* it took an event not of its guessed run's host */
};

struct pj_pieces {
	struct pj_split *s;
	uint32_t *vis;
	size_t nvis;
	size_t side;                /* = s->side */
	unsigned npc;               /* pieces in play */
	bool recording;             /* the first pass: side positions each, states kept */
	unsigned guessed;           /* the runs are ana_vruns_guess's: host h[0] below cut, h[1] from it */
	size_t cut;
	uint16_t h[2];
	struct pj_piece pc[PJ_MAXT];
};

/* Where piece k writes, in locals of its task (the byte stores could
 * alias any field read through a pointer). */
struct pj_out {
	uint32_t *vis, *svis, *l[PJ_MAXT];
	uint8_t *pb, *spb;
	size_t pos, to, n[PJ_MAXT], cap[PJ_MAXT];
	size_t cut;
	unsigned guessed, bad;
	uint16_t h[2];
};

static void pj_out_load(struct pj_out *o, const struct pj_pieces *ps, unsigned k)
{
	const struct pj_split *s = ps->s;
	const struct pj_piece *c = &ps->pc[k];
	*o = (struct pj_out){ .vis = ps->vis, .svis = c->svis, .pb = s->pb, .spb = c->spb,
			      .pos = c->pos, .to = c->to, .cut = ps->cut, .guessed = ps->guessed,
			      .h = { ps->h[0], ps->h[1] } };
	for (unsigned t = 0; t < s->nt; t++) {
		o->l[t] = s->list[k][t];
		o->n[t] = c->n[t];
		o->cap[t] = s->cap[k][t];
	}
}

static void pj_out_store(const struct pj_out *o, struct pj_pieces *ps, unsigned k)
{
	struct pj_piece *c = &ps->pc[k];
	c->pos = o->pos;
	c->bad |= o->bad;
	for (unsigned t = 0; t < ps->s->nt; t++)
		c->n[t] = o->n[t];
}

/* Events [lo, hi) at positions o->pos on, written at index pos - off of
 * vis and pb, and into the lists (room made for them). A stretch is of
 * one run: h, the host its events must have when the runs were guessed. */
static inline __attribute__((always_inline)) void pj_emit_at(struct pj_out *o,
							     const struct ana_pev *ev, unsigned nt,
							     size_t lo, size_t hi, uint32_t *vis,
							     uint8_t *pb, size_t off, uint16_t h)
{
	unsigned bad = 0;
	for (size_t i = lo; i < hi; i++, o->pos++) {
		uint8_t b = pj_byte(&ev[i], nt);
		bad |= ev[i].host != h;
		vis[o->pos - off] = (uint32_t)i;
		pb[o->pos - off] = b;
		/* a range event's position is written past list 0's end, not
		 * counted (no branch on the kind) */
		unsigned keyed = b != PJ_UNKEYED, t = keyed ? b & ~PJ_EGRESS : 0;
		o->l[t][o->n[t]] = (uint32_t)o->pos;
		o->n[t] += keyed;
	}
	o->bad |= o->guessed & bad;
}

#define PJ_STEP 256             /* events of a step at most (ana_vstep's stretch) */

/* The stretch [lo, hi) of piece k at its next positions: the lists' room
 * made once for the stretch (at most 256 events), then its part before
 * the next piece's start into vis, the rest aside. */
static inline int pj_piece_emit(struct pj_out *o, struct pj_split *s, unsigned k, size_t lo,
				size_t hi)
{
	const struct ana_pev *ev = s->m->pev.v;
	unsigned nt = s->nt;
	for (unsigned t = 0; t < nt; t++)
		while (o->n[t] + (hi - lo) + PJ_STEP > o->cap[t]) {
			if (pj_list_grow(s, k, t))
				return -1;
			o->l[t] = s->list[k][t];
			o->cap[t] = s->cap[k][t];
		}
	uint16_t h = o->h[lo >= o->cut];
	size_t mid = o->pos >= o->to ? lo : o->to - o->pos < hi - lo ? lo + (o->to - o->pos) : hi;
	pj_emit_at(o, ev, nt, lo, mid, o->vis, o->pb, 0, h);
	pj_emit_at(o, ev, nt, mid, hi, o->svis, o->spb, o->to, h);
	return 0;
}

#define PJ_VFETCH 64            /* events ahead of a run's next step (ana_visit_two's) */

/* Event e at position pos of a fused step (pj_walk2_nt): pj_byte and
 * pj_emit_at's writes, with the lists' cursors in locals (c0, c1 for two
 * partitions: registers, no index into the lists each event). */
static inline __attribute__((always_inline)) void pj_emit_fast(const struct ana_pev *e, uint32_t i,
							       size_t x, uint32_t *vis, uint8_t *pb,
							       uint32_t off, uint32_t **lc, uint32_t **c0,
							       uint32_t **c1, const unsigned NT)
{
	uint32_t pos = (uint32_t)x + off;
	unsigned part = pj_part_of(e->seq, e->ack, NT);
	unsigned eg = (e->len != 0) & ((unsigned)e->hook - PK_HOOK_DEV_QUEUE <=
				       PK_HOOK_DEV_XMIT - PK_HOOK_DEV_QUEUE);
	unsigned keyed = pj_keyed(e);
	vis[x] = i;
	pb[x] = (uint8_t)(part | eg << 7 | (keyed - 1));   /* PJ_UNKEYED when not keyed */
	/* a range event's position is written past its list's end, not
	 * counted (no branch on the kind) */
	if (NT == 2) {
		uint32_t *d = part ? *c1 : *c0;
		*d = pos;
		*c0 += keyed & (part ^ 1);
		*c1 += keyed & part;
	} else {
		*lc[part] = pos;
		lc[part] += keyed;
	}
}

/* A step of one run fused: its events from i while their time (less
 * base) is at most limit, PJ_STEP at most, emitted at pos on as they are
 * read (the step's room checked by the caller). Returns where it stopped. */
static inline __attribute__((always_inline)) size_t pj_step_fused(const struct ana_pev *ev, size_t i,
								  size_t end, uint64_t base,
								  uint64_t limit, uint16_t h, size_t pos,
								  uint32_t *vis, uint8_t *pb, uint32_t **lc,
								  uint32_t **c0, uint32_t **c1,
								  unsigned *bad, const unsigned NT)
{
	size_t lim = end - i < PJ_STEP ? end : i + PJ_STEP, stop = i, off = pos - i;
	/* event stop at position stop + off: one counter */
	uint32_t *vo = vis + off;
	uint8_t *po = pb + off;
	__builtin_prefetch(&ev[i + PJ_VFETCH < end ? i + PJ_VFETCH : i]);
	for (;;) {
		const struct ana_pev *e = &ev[stop];
		*bad |= e->host != h;
		pj_emit_fast(e, (uint32_t)stop, stop, vo, po, (uint32_t)off, lc, c0, c1, NT);
		if (++stop >= lim || ev[stop].ts - base > limit)
			break;
	}
	return stop;
}

/* The fused walk's list cursors (in c0, c1 when nt is 2, else in lc) and
 * its visit position written back into o, for pj_piece_emit or the end.
 * Out of line: inlined, it moved the registers of the fused steps around
 * (+3 % instructions in the pieces, callgrind). */
static __attribute__((noinline)) void pj_cursors_store(struct pj_out *o, uint32_t **lc, uint32_t *c0,
							uint32_t *c1, size_t pos, unsigned nt)
{
	if (nt == 2) {
		lc[0] = c0;
		lc[1] = c1;
	}
	for (unsigned t = 0; t < nt; t++)
		o->n[t] = (size_t)(lc[t] - o->l[t]);
	o->pos = pos;
}

/* The main stretch of a piece's walk over two runs (the usual input):
 * ana_vstep2's steps, started below position until, with the runs' places
 * in registers. While both runs have events, a step that cannot pass
 * o->to and has room in every list is emitted as it is scanned, on a path
 * of its own per run (scanning first and emitting after, with the run's
 * values picked each step, the pieces took ~100 instructions an event
 * against the single walk's ~33, callgrind); other steps (near o->to,
 * short of room, a run over) take pj_piece_emit, which grows the lists. */
static inline __attribute__((always_inline)) int pj_walk2_nt(struct pj_out *o, struct pj_split *s,
							     unsigned k, struct ana_vruns *v,
							     size_t until, const unsigned NT)
{
	const struct ana_pev *ev = s->m->pev.v;
	size_t a = v->at[0], ea = v->end[0], b = v->at[1], eb = v->end[1], pos = o->pos;
	size_t fast = 0;            /* a fused step may start below it */
	uint64_t ba = v->base[0], bb = v->base[1];
	uint32_t *lc[PJ_MAXT], *c0 = NULL, *c1 = NULL, *vis = o->vis;
	uint8_t *pb = o->pb;
	unsigned bad = 0;
	int rc = 0;
	for (unsigned t = 0; t < NT; t++)
		lc[t] = o->l[t] + o->n[t];
	if (NT == 2) {
		c0 = lc[0];
		c1 = lc[1];
	}
	while (pos < until) {
		if (pos < fast && a < ea && b < eb) {
			uint64_t ka = ev[a].ts - ba, kb = ev[b].ts - bb;
			size_t stop;
			if (ka <= kb && ka < UINT64_MAX) {
				stop = pj_step_fused(ev, a, ea, ba, kb, o->h[0], pos, vis, pb, lc,
						     &c0, &c1, &bad, NT);
				pos += stop - a;
				a = stop;
			} else {
				stop = pj_step_fused(ev, b, eb, bb, ka, o->h[1], pos, vis, pb, lc,
						     &c0, &c1, &bad, NT);
				pos += stop - b;
				b = stop;
			}
			continue;
		}
		bool ha = a < ea, hb = b < eb;
		uint64_t ka = ha ? ev[a].ts - ba : UINT64_MAX, kb = hb ? ev[b].ts - bb : UINT64_MAX;
		bool one = !(ka < UINT64_MAX && ka <= kb);   /* ana_vstep2's choice */
		if (one && kb == UINT64_MAX)
			break;
		size_t i = one ? b : a, end = one ? eb : ea, stop = i + 1;
		uint64_t limit = one ? ka : kb, base = one ? bb : ba;
		while (stop < end && stop - i < PJ_STEP && ev[stop].ts - base <= limit)
			stop++;
		/* the cursors back into o, pj_piece_emit, and back */
		pj_cursors_store(o, lc, c0, c1, pos, NT);
		if ((rc = pj_piece_emit(o, s, k, i, stop)))
			break;
		if (one)
			b = stop;
		else
			a = stop;
		pos = o->pos;
		size_t room = SIZE_MAX;
		for (unsigned t = 0; t < NT; t++) {
			lc[t] = o->l[t] + o->n[t];
			if (o->cap[t] - o->n[t] < room)
				room = o->cap[t] - o->n[t];
		}
		if (NT == 2) {
			c0 = lc[0];
			c1 = lc[1];
		}
		/* each event adds to one list at most: room for a step at
		 * every position up to fast */
		size_t upto = o->to - pos < room ? o->to : pos + room;
		fast = pos < o->to && upto >= pos + PJ_STEP ? upto - PJ_STEP + 1 : 0;
	}
	if (!rc)
		pj_cursors_store(o, lc, c0, c1, pos, NT);
	o->bad |= o->guessed & bad;
	v->at[0] = a;
	v->at[1] = b;
	return rc;
}

static int pj_walk2(struct pj_out *o, struct pj_split *s, unsigned k, struct ana_vruns *v,
		    size_t until)
{
	if (s->nt == 2)
		return pj_walk2_nt(o, s, k, v, until, 2);
	return pj_walk2_nt(o, s, k, v, until, s->nt);
}

/* Whether piece c, about to step at c->pos, is in a state the next piece
 * x stepped from (*cur: x's first record not behind). */
static bool pj_piece_meets(const struct pj_piece *c, const struct pj_piece *x, size_t *cur)
{
	while (*cur < x->nrec && x->rpos[*cur] < c->pos)
		(*cur)++;
	if (*cur == x->nrec || x->rpos[*cur] != c->pos)
		return false;
	const uint32_t *at = x->rat + *cur * x->v.n;
	for (size_t r = 0; r < c->v.n; r++)
		if (at[r] != c->v.at[r])
			return false;
	return true;
}

static void pj_piece_task(void *ctx, size_t k, size_t k1)
{
	(void)k1;
	struct pj_pieces *ps = ctx;
	struct pj_piece *c = &ps->pc[k], *x = k + 1 < ps->npc ? &ps->pc[k + 1] : NULL;
	const struct ana_pev *ev = ps->s->m->pev.v;
	size_t lo, hi, cur = 0;
	struct pj_out o;
	pj_out_load(&o, ps, (unsigned)k);
	/* up to the next piece's start nothing is checked between steps */
	if (!ps->recording && c->v.n == 2 &&
	    pj_walk2(&o, ps->s, (unsigned)k, &c->v, x ? c->to : SIZE_MAX)) {
		ps->s->err = -1;
		c->lost = true;
		pj_out_store(&o, ps, (unsigned)k);
		return;
	}
	for (;;) {
		c->pos = o.pos;
		if (ps->recording) {
			if (c->pos >= c->from + ps->side)
				break;
			c->rpos[c->nrec] = c->pos;
			for (size_t r = 0; r < c->v.n; r++)
				c->rat[c->nrec * c->v.n + r] = (uint32_t)c->v.at[r];
			c->nrec++;
		} else if (x && c->pos >= c->to) {
			if (pj_piece_meets(c, x, &cur)) {
				c->meet = c->pos;
				break;
			}
			if (c->pos >= c->to + ps->side || cur == x->nrec) {
				c->lost = true;
				break;
			}
		}
		hi = c->v.n == 2 ? ana_vstep2(ev, &c->v, &lo) : ana_vstep(ev, &c->v, &lo);
		if (!hi) {
			c->lost = x != NULL;
			c->meet = c->pos;
			break;
		}
		if (pj_piece_emit(&o, ps->s, (unsigned)k, lo, hi)) {
			ps->s->err = -1;
			c->lost = true;
			break;
		}
	}
	pj_out_store(&o, ps, (unsigned)k);
}

/* Events of run [a, e) up to relative time tt (the run taken as in time
 * order: a guess, checked by the walks meeting). */
static size_t pj_run_upto(const struct ana_pev *ev, size_t a, size_t e, uint64_t base, uint64_t tt)
{
	while (a < e) {
		size_t mid = a + (e - a) / 2;
		if (ev[mid].ts - base <= tt)
			a = mid + 1;
		else
			e = mid;
	}
	return a;
}

/* Piece c's start: the state after every run's events up to the first
 * instant by which about goal positions are taken. */
static void pj_piece_start(const struct ana_pev *ev, const struct ana_vruns *v0, size_t goal,
			   struct pj_piece *c)
{
	uint64_t lo = 0, hi = UINT64_MAX;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, got = 0;
		for (size_t r = 0; r < v0->n; r++)
			got += pj_run_upto(ev, v0->at[r], v0->end[r], v0->base[r], mid) - v0->at[r];
		if (got >= goal)
			hi = mid;
		else
			lo = mid + 1;
	}
	c->v = *v0;
	c->from = 0;
	for (size_t r = 0; r < v0->n; r++) {
		c->v.at[r] = pj_run_upto(ev, v0->at[r], v0->end[r], v0->base[r], lo);
		c->from += c->v.at[r] - v0->at[r];
	}
	c->pos = c->from;
}

static int pj_pieces_alloc(struct pj_pieces *ps, const struct ana_vruns *v0)
{
	const struct ana_pev *ev = ps->s->m->pev.v;
	unsigned nt = ps->s->nt;
	for (unsigned k = 0; k < nt; k++) {
		struct pj_piece *c = &ps->pc[k];
		if (k)
			pj_piece_start(ev, v0, ps->nvis * k / nt, c);
		else
			c->v = *v0;
		c->rpos = malloc(ps->side * sizeof(*c->rpos));
		c->rat = malloc(ps->side * (v0->n ? v0->n : 1) * sizeof(*c->rat));
		c->svis = malloc((ps->side + 256) * sizeof(*c->svis));
		c->spb = malloc(ps->side + 256);
		if (!c->rpos || !c->rat || !c->svis || !c->spb)
			return -1;
	}
	for (unsigned k = 0; k < nt; k++) {
		struct pj_piece *c = &ps->pc[k];
		c->to = k + 1 < nt ? ps->pc[k + 1].from : ps->nvis;
		/* room for the pass past the next start, and for the next to meet it */
		if (c->to < c->from + 2 * ps->side + 512 && k + 1 < nt)
			return 1;
	}
	return 0;
}

/* Piece k did not meet the next: its walk (the single walk's) goes on to
 * the end here, over the positions of the pieces after it, whose lists are
 * dropped. */
static int pj_pieces_alone(struct pj_pieces *ps, unsigned k)
{
	struct pj_piece *c = &ps->pc[k];
	if (c->pos > c->to) {
		memcpy(ps->vis + c->to, c->svis, (c->pos - c->to) * sizeof(*ps->vis));
		memcpy(ps->s->pb + c->to, c->spb, c->pos - c->to);
	}
	c->to = ps->nvis;
	c->lost = false;
	ps->npc = k + 1;
	pj_piece_task(ps, k, k + 1);
	for (unsigned j = k + 1; j < ps->s->nt; j++) {
		ps->pc[j].to = ps->pc[j].meet = ps->nvis;
		memset(ps->pc[j].n, 0, sizeof(ps->pc[j].n));
	}
	return ps->s->err;
}

/* The pieces met: their positions past the next start into place, ranges
 * cut where they met, each range's lists from its first position on. */
static void pj_pieces_close(struct pj_pieces *ps)
{
	struct pj_split *s = ps->s;
	for (unsigned k = 0; k < s->nt; k++) {
		struct pj_piece *c = &ps->pc[k];
		if (c->meet > c->to) {
			memcpy(ps->vis + c->to, c->svis, (c->meet - c->to) * sizeof(*ps->vis));
			memcpy(s->pb + c->to, c->spb, c->meet - c->to);
		}
		s->lo[k + 1] = c->meet;
	}
	s->lo[0] = 0;
	for (unsigned k = 0; k < s->nt; k++)
		for (unsigned t = 0; t < s->nt; t++) {
			size_t o = 0, n = ps->pc[k].n[t];
			while (o < n && s->list[k][t][o] < s->lo[k])
				o++;
			s->off[k][t] = o;
			s->cnt[k][t] = n - o;
		}
}

/* 0: the visit order and the split made in pieces; 1: not (too few events
 * or too many runs for pieces); 2: the runs were guessed (scan false) and
 * the guess was wrong; -1: no memory. */
static int pj_pieces_run(struct pj_split *s, uint32_t *vis, size_t nvis, bool scan)
{
	struct ana_vruns v0;
	bool guessed = !scan && ana_vruns_guess(s->m, &v0);
	if (!guessed)
		ana_vruns_find(s->m, &v0, s->nt);
	if (v0.n > PJ_PIECE_RUNS || s->side < PJ_SIDE_MIN)
		return 1;
	struct pj_pieces *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -1;
	if (guessed) {
		ps->guessed = 1;
		ps->cut = v0.at[1];
		ps->h[0] = s->m->pev.v[0].host;
		ps->h[1] = s->m->pev.v[nvis - 1].host;
	}
	ps->s = s;
	ps->vis = vis;
	ps->nvis = nvis;
	ps->side = s->side;
	ps->npc = s->nt;
	int rc = pj_pieces_alloc(ps, &v0);
	if (!rc) {
		ps->recording = true;
		ana_par_tasks(s->nt, pj_piece_task, ps);
		ps->recording = false;
		ana_par_tasks(s->nt, pj_piece_task, ps);
		rc = s->err;
		for (unsigned k = 0; !rc && k < s->nt; k++)
			if (ps->pc[k].lost) {
				rc = pj_pieces_alone(ps, k);
				break;
			}
		for (unsigned k = 0; !rc && k < s->nt; k++)
			if (ps->pc[k].bad)
				rc = 2;
		if (!rc) {
			pj_pieces_close(ps);
			/* the runs [0, cut) and [cut, n): each run's events are in
			 * the visit order by index */
			if (v0.n == 2)
				s->cut = v0.at[1];
		}
	}
	for (unsigned k = 0; k < s->nt; k++) {
		free(ps->pc[k].rpos);
		free(ps->pc[k].rat);
		free(ps->pc[k].svis);
		free(ps->pc[k].spb);
	}
	free(ps);
	return rc;
}

/* The visit order into vis and its split: in pieces, else the single walk
 * and then the split by range. The lists' room: a partition's share of the
 * range and an eighth more (keys hash evenly), and a piece's pass past its
 * end, grown when short. */
static int pj_split_init(struct pj_split *s, const struct ana_model *m, uint32_t *vis,
			 size_t nvis, unsigned nt)
{
	s->m = m;
	s->vis = vis;
	s->nt = nt;
	s->cut = SIZE_MAX;
	for (unsigned r = 0; r <= nt; r++)
		s->lo[r] = nvis * r / nt;
	/* an eighth of a piece: the pieces run on inputs as small as the unit
	 * tests' */
	s->side = nvis / nt / 8 < PJ_SIDE ? nvis / nt / 8 : PJ_SIDE;
	if (!(s->pb = malloc(nvis ? nvis : 1)))
		return -1;
	for (unsigned r = 0; r < nt; r++)
		for (unsigned t = 0; t < nt; t++) {
			size_t len = s->lo[r + 1] - s->lo[r];
			s->cap[r][t] = len / nt + len / 8 + 1024 + (r + 1 < nt ? s->side + 256 : 0);
			if (!(s->list[r][t] = malloc(s->cap[r][t] * sizeof(uint32_t))))
				return -1;
		}
	/* the runs guessed first (ana_vruns_find reads every event: ~40 ms of
	 * CPU at 10 M), found by that scan when the walks saw the guess wrong */
	int rc = pj_pieces_run(s, vis, nvis, false);
	if (rc == 2)
		rc = pj_pieces_run(s, vis, nvis, true);
	if (rc <= 0)
		return rc;
	for (unsigned r = 0; r <= nt; r++)
		s->lo[r] = nvis * r / nt;
	memset(s->off, 0, sizeof(s->off));
	ana_visit_fill(m, vis);
	ana_par_tasks(nt, pj_split_task, s);
	return s->err;
}

static void pj_split_free(struct pj_split *s)
{
	free(s->pb);
	for (unsigned r = 0; r < s->nt; r++)
		for (unsigned t = 0; t < s->nt; t++)
			free(s->list[r][t]);
}

int ana_pjoin(struct ana_model *m, struct ana_paths *p, uint32_t *vis, size_t nvis,
	      unsigned threads)
{
	unsigned nt = threads < 1 ? 1 : threads > PJ_MAXT ? PJ_MAXT : threads;
	struct pj_part *part = calloc(nt, sizeof(*part));
	struct pj_split *split = nt > 1 ? calloc(1, sizeof(*split)) : NULL;
	struct pj_after a = { .m = m, .p = p, .part = part, .split = split, .nt = nt,
			      .vis = vis, .nvis = nvis, .threads = threads,
			      .ranged = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 },
			      .go = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 },
			      .upper = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 } };
	int rc = -1;
	if (!part || (nt > 1 && !split)) {
		free(part);
		free(split);
		return -1;
	}
	/* one partition writes every event's packet as it goes (before the
	 * tables: in this order the join ran fastest) */
	if (nt == 1 && !(p->evpkt = malloc((nvis ? nvis : 1) * sizeof(uint32_t))))
		goto out;
	for (unsigned t = 0; t < nt; t++) {
		part[t] = (struct pj_part){ .m = m, .ev = m->pev.v, .vis = vis, .nvis = nvis,
					    .evpkt = p->evpkt,
					    .split = split, .t = t, .nt = nt };
		/* sized for the expected packets: about one per 4 events */
		part[t].scap = 1024;
		while (part[t].scap < nvis / 3 / nt)
			part[t].scap <<= 1;
		part[t].slot = pj_slots_map(&part[t], part[t].scap);
		/* reserved once for up to one packet per two events: a large block
		 * is mapped, only its used pages are resident, and growing by
		 * doubling next to the other partitions would leave holes */
		part[t].cap = nvis / 2 / nt + 1024;
		/* several: partition 0's block has room for every partition's
		 * packets as ana_pkt, which pj_merge converts into it (in the
		 * heap, as npanalyze sets malloc: grown it would be copied) */
		if (t == 0 && nt > 1)
			part[t].cap = (nvis / 2 + 1024 * nt) * sizeof(struct ana_pkt) / sizeof(*part[t].pk);
		part[t].pk = malloc(part[t].cap * sizeof(*part[t].pk));
		if (!part[t].slot || !part[t].pk)
			goto out;
		if (nt == 1 && p->pending) {
			part[t].paths = p;
			part[t].rngcap = part[t].cap;
			part[t].rng = malloc(part[t].rngcap * sizeof(*part[t].rng));
			if (!part[t].rng)
				goto out;
		}
	}
	if (split && pj_split_init(split, m, vis, nvis, nt))
		goto out;
	if (!split)
		ana_visit_fill(m, vis);
	ana_par_tasks(nt, pj_task, part);
	for (unsigned t = 0; t < nt; t++)
		if (part[t].err)
			goto out;
	if (nt == 1) {
		if (pj_take(p, &part[0]))
			goto out;
	} else {
		size_t nkeyed = 0;
		for (unsigned t = 0; t < nt; t++) {
			a.base[t] = a.total;
			a.total += part[t].n;
			a.nres += part[t].nres;
			nkeyed += part[t].njoined;
		}
		/* no sock_send event: no packet takes a range, no slots */
		if (nkeyed == nvis)
			a.nres = 0;
		a.has_rng = p->pending ? calloc(a.total / 64 + 1, sizeof(*a.has_rng)) : NULL;
		if (p->pending && !a.has_rng)
			goto out;
		/* the order without evpkt: two runs, ranges taken here, no
		 * super-packet (its walk reads evpkt), no n0 wrapped */
		bool own = split->cut != SIZE_MAX && a.has_rng;
		for (unsigned t = 0; t < nt; t++)
			own &= !part[t].super && !part[t].n0_over;
		a.own = own;
		if (own && !(a.res = calloc(a.total / 64 + 1, sizeof(*a.res))))
			goto out;
		/* each partition's packet numbers, and cursors, in its table */
		for (unsigned t = 0; t < nt; t++) {
			size_t nl = part[t].n ? part[t].n : 1, bytes = nl * (own ? 3 : 1) * sizeof(uint32_t);
			if (!(a.blk[t] = pj_slots_take(&part[t], bytes))) {
				a.blk_heap[t] = true;
				if (!(a.blk[t] = malloc(bytes)))
					goto out;
			}
			a.gmap[t] = a.blk[t];
			a.cur[t] = own ? a.blk[t] + nl : NULL;
			if (part[t].slot)           /* not taken: its pages back now */
				pj_slots_unmap(&part[t]);
		}
		if (pj_finish(&a))
			goto out;
	}
	rc = 0;
out:
	for (unsigned t = 0; t < nt; t++) {
		pj_slots_unmap(&part[t]);
		free(part[t].pk);
		free(part[t].retx);
		free(part[t].sib);
		free(part[t].rng);
	}
	free(part);
	if (split) {
		pj_split_free(split);
		free(split);
	}
	for (unsigned t = 0; t < nt; t++)
		if (a.blk_heap[t])
			free(a.blk[t]);
	free(a.has_rng);
	free(a.res);
	return rc;
}
