/* record/core/draintick.c: the loop's sleep grows while drains find few
 * records, falls back at once when they find many, stays fixed when a
 * family's drain does not count, and never runs past the interval's end. */
#include "draintick.h"
#include "tap.h"

static const uint64_t ms = 1000000ull;

static void test_grow_and_fall(void)
{
	struct rec_tick t;
	rec_tick_init(&t, false);
	uint64_t far = 10000 * ms;   /* the interval's end far away */
	CHECK_EQ_U(rec_tick_next(&t, 0, 0, far), 40 * ms);
	CHECK_EQ_U(rec_tick_next(&t, REC_TICK_FEW, 0, far), 80 * ms);
	CHECK_EQ_U(rec_tick_next(&t, 3, 0, far), REC_TICK_MAX_NS);
	CHECK_EQ_U(rec_tick_next(&t, 0, 0, far), REC_TICK_MAX_NS);
	/* one busy tick: back to the short one at once */
	CHECK_EQ_U(rec_tick_next(&t, REC_TICK_FEW + 1, 0, far), REC_TICK_NS);
	CHECK_EQ_U(rec_tick_next(&t, 0, 0, far), 2 * REC_TICK_NS);
}

static void test_fixed(void)
{
	struct rec_tick t;
	rec_tick_init(&t, true);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_U(rec_tick_next(&t, 0, 0, 10000 * ms), REC_TICK_NS);
}

static void test_interval_end(void)
{
	struct rec_tick t;
	rec_tick_init(&t, false);
	rec_tick_next(&t, 0, 0, 10000 * ms);
	rec_tick_next(&t, 0, 0, 10000 * ms);   /* tick 80 ms */
	/* the interval ends in 30 ms: sleep exactly that, the tick kept */
	CHECK_EQ_U(rec_tick_next(&t, 0, 1000 * ms, 1030 * ms), 30 * ms);
	CHECK_EQ_U(t.tick, REC_TICK_MAX_NS);
	/* already past the end (a late tick): a full tick, not 0 */
	CHECK_EQ_U(rec_tick_next(&t, 0, 1000 * ms, 990 * ms), REC_TICK_MAX_NS);
}

int main(void)
{
	test_grow_and_fall();
	test_fixed();
	test_interval_end();
	return tap_done();
}
