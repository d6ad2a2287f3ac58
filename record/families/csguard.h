/* What a clock-sync listener remembers to refuse forged and replayed
 * reports and floods (docs/CLOCKSYNC-EXCHANGE.md, "Authentication"): the
 * requests it answered, and a token bucket per source address. Pure state,
 * no sockets, so the unit test drives it directly. */
#ifndef NP_REC_CSGUARD_H
#define NP_REC_CSGUARD_H

#include <stdbool.h>
#include <stdint.h>

/* Requests answered and not yet reported: a burst is 100 per peer and the
 * report follows its reply within a round trip, so 4096 slots hold every
 * open request of the 8 peers a recorder may have many times over. */
#define CSG_ANSWERED   4096
#define CSG_SOURCES    64
/* Per source address: a peer in a start burst sends 10 requests and 10
 * reports per 20 ms tick (1000/s); several recorders may share an address. */
#define CSG_RATE_PER_S 5000
#define CSG_BURST      2000

enum csg_match { CSG_MATCHED, CSG_UNMATCHED, CSG_REPLAYED };

struct csg_answered {
	uint64_t sender_id, src, t2, t3;
	uint32_t seq;
	uint8_t state;              /* 0 free, 1 answered, 2 reported */
};

struct csg_source {
	uint64_t addr;              /* hash of the source address, 0 free */
	uint64_t last_ns;
	double tokens;
};

struct cs_guard {
	struct csg_answered ans[CSG_ANSWERED];
	struct csg_source src[CSG_SOURCES];
};

/* Hash of a source address (and port, for the answered table). */
uint64_t csg_hash(const void *addr, unsigned len);
/* False when the source is over its rate (the datagram is to be dropped). */
bool csg_admit(struct cs_guard *g, uint64_t src_addr, uint64_t now_ns);
void csg_answered(struct cs_guard *g, uint64_t sender_id, uint32_t seq, uint64_t src,
		  uint64_t t2, uint64_t t3);
/* A report must name a request we answered, from the same source, with the
 * T2/T3 we sent; each answer is accepted once. */
enum csg_match csg_report(struct cs_guard *g, uint64_t sender_id, uint32_t seq, uint64_t src,
			  uint64_t t2, uint64_t t3);

#endif
