/* nprec's drain tick: how long the main loop sleeps before it drains the
 * ring buffers again. RC_TICK_NS while events come, doubling up to
 * REC_TICK_MAX_NS while the drains find few (REC_TICK_IDLE_MAX_NS while
 * they find next to nothing), never past the next
 * interval's end (docs/NPREC.md, "Drain tick"). Each wakeup costs the
 * loop 20-40 us on a VM: most of an idle or lightly loaded recorder's CPU. */
#ifndef NP_REC_DRAINTICK_H
#define NP_REC_DRAINTICK_H

#include <stdbool.h>
#include <stdint.h>

#define REC_TICK_NS     20000000ull
#define REC_TICK_MAX_NS 100000000ull
/* Records a tick's drains may find and still let the next tick be longer:
 * at REC_TICK_MAX_NS that is ~5 k events/s, a few per cent of the
 * smallest default ring (flows' 1 MiB of drops) per tick. */
#define REC_TICK_FEW    512
/* Up to REC_TICK_IDLE_MAX_NS while ticks find at most REC_TICK_NONE
 * records (~300 events/s at 200 ms, e.g. --txn-events auto's sampled
 * connections of a paced load): a wakeup costs 20-40 us and the drains of
 * such a tick find next to nothing. A burst from there has 200 ms before
 * the first drain: txn's ring (4 MiB, ~29 k events) holds ~145 k
 * events/s of it, 1.6 times the bench's saturated wrk with every
 * transaction's event on both ends (~92 k/s), against 3.2 times at
 * 100 ms (flows' drops that find their ring full are counted, not lost). */
#define REC_TICK_NONE        64
#define REC_TICK_IDLE_MAX_NS 200000000ull

struct rec_tick {
	uint64_t tick;           /* the current tick, REC_TICK_NS..REC_TICK_IDLE_MAX_NS */
	bool fixed;              /* a family's drain does not count: always REC_TICK_NS */
};

void rec_tick_init(struct rec_tick *t, bool fixed);

/* After a tick whose drains consumed `drained` records, at now: the next
 * sleep, ending at due at the latest (due <= now: a full tick). */
uint64_t rec_tick_next(struct rec_tick *t, uint64_t drained, uint64_t now, uint64_t due);

#endif
