/* See csguard.h. */
#include <string.h>
#include "csguard.h"

uint64_t csg_hash(const void *addr, unsigned len)
{
	const uint8_t *p = addr;
	uint64_t h = 1469598103934665603ull;          /* FNV-1a */
	for (unsigned i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h ? h : 1;
}

static struct csg_source *csg_source(struct cs_guard *g, uint64_t a, uint64_t now)
{
	struct csg_source *lru = &g->src[0];
	for (unsigned i = 0; i < CSG_SOURCES; i++) {
		struct csg_source *s = &g->src[i];
		if (s->addr == a)
			return s;
		if (s->last_ns < lru->last_ns)
			lru = s;
	}
	/* a new source takes the least recently seen slot with a full bucket:
	 * a flood from many addresses cannot starve a known peer for longer
	 * than it takes to refill */
	lru->addr = a;
	lru->last_ns = now;
	lru->tokens = CSG_BURST;
	return lru;
}

bool csg_admit(struct cs_guard *g, uint64_t src_addr, uint64_t now_ns)
{
	struct csg_source *s = csg_source(g, src_addr, now_ns);
	if (now_ns > s->last_ns) {
		s->tokens += (double)(now_ns - s->last_ns) * CSG_RATE_PER_S / 1e9;
		if (s->tokens > CSG_BURST)
			s->tokens = CSG_BURST;
	}
	s->last_ns = now_ns;
	if (s->tokens < 1)
		return false;
	s->tokens -= 1;
	return true;
}

static struct csg_answered *csg_slot(struct cs_guard *g, uint64_t sender_id, uint32_t seq)
{
	uint64_t h = csg_hash(&sender_id, sizeof(sender_id)) + seq;
	return &g->ans[h % CSG_ANSWERED];
}

void csg_answered(struct cs_guard *g, uint64_t sender_id, uint32_t seq, uint64_t src,
		  uint64_t t2, uint64_t t3)
{
	*csg_slot(g, sender_id, seq) = (struct csg_answered){
		.sender_id = sender_id, .seq = seq, .src = src, .t2 = t2, .t3 = t3, .state = 1 };
}

enum csg_match csg_report(struct cs_guard *g, uint64_t sender_id, uint32_t seq, uint64_t src,
			  uint64_t t2, uint64_t t3)
{
	struct csg_answered *a = csg_slot(g, sender_id, seq);
	if (!a->state || a->sender_id != sender_id || a->seq != seq || a->src != src ||
	    a->t2 != t2 || a->t3 != t3)
		return CSG_UNMATCHED;
	if (a->state == 2)
		return CSG_REPLAYED;
	a->state = 2;
	return CSG_MATCHED;
}
