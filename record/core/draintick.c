/* The drain tick: see draintick.h. */
#include "draintick.h"

void rec_tick_init(struct rec_tick *t, bool fixed)
{
	t->tick = REC_TICK_NS;
	t->fixed = fixed;
}

uint64_t rec_tick_next(struct rec_tick *t, uint64_t drained, uint64_t now, uint64_t due)
{
	if (t->fixed || drained > REC_TICK_FEW)
		t->tick = REC_TICK_NS;
	else if (t->tick < REC_TICK_MAX_NS)
		t->tick = t->tick * 2 > REC_TICK_MAX_NS ? REC_TICK_MAX_NS : t->tick * 2;
	if (due > now && due - now < t->tick)
		return due - now;
	return t->tick;
}
