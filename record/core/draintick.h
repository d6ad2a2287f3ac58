/* nprec's drain tick: how long the main loop sleeps before it drains the
 * ring buffers again. RC_TICK_NS while events come, doubling up to
 * REC_TICK_MAX_NS while the drains find few, never past the next
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

struct rec_tick {
	uint64_t tick;           /* the current tick, REC_TICK_NS..REC_TICK_MAX_NS */
	bool fixed;              /* a family's drain does not count: always REC_TICK_NS */
};

void rec_tick_init(struct rec_tick *t, bool fixed);

/* After a tick whose drains consumed `drained` records, at now: the next
 * sleep, ending at due at the latest (due <= now: a full tick). */
uint64_t rec_tick_next(struct rec_tick *t, uint64_t drained, uint64_t now, uint64_t due);

#endif
