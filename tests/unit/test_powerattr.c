/* Power attribution arithmetic on synthetic counters and energies, with
 * results worked out by hand from deep-mon eq. 1-2 and netto §4.4. */
#include <errno.h>
#include <stdint.h>
#include "powerattr.h"
#include "tap.h"

static void test_eq1(void)
{
	/* alone cycles count fully, overlapped ones HT_r/2 each */
	CHECK_NEAR(np_powerattr_weighted_cycles(1000, 0, 1.1), 1000.0, 1e-9);
	CHECK_NEAR(np_powerattr_weighted_cycles(0, 1000, 1.1), 550.0, 1e-9);
	CHECK_NEAR(np_powerattr_weighted_cycles(600, 400, 1.1), 600.0 + 220.0, 1e-9);
	/* HT_r = 2: sharing a core costs as much as running alone */
	CHECK_NEAR(np_powerattr_weighted_cycles(600, 400, 2.0), 1000.0, 1e-9);
}

static void test_eq2_one_socket(void)
{
	/* thread A alone 3e9 cycles, B and C share a core 1e9 each: weights
	 * 3e9, 0.55e9, 0.55e9 of 4.1e9; 41 J split 30 / 5.5 / 5.5 */
	double w[3] = {
		np_powerattr_weighted_cycles(3000000000u, 0, 1.1),
		np_powerattr_weighted_cycles(0, 1000000000u, 1.1),
		np_powerattr_weighted_cycles(0, 1000000000u, 1.1),
	};
	double e = 41.0, out[3], lost = -1;
	CHECK(np_powerattr_attribute(w, 3, 1, &e, out, &lost) == 0, "attribute failed");
	CHECK_NEAR(out[0], 30.0, 1e-9);
	CHECK_NEAR(out[1], 5.5, 1e-9);
	CHECK_NEAR(out[2], 5.5, 1e-9);
	CHECK_NEAR(lost, 0.0, 1e-12);
	CHECK_NEAR(out[0] + out[1] + out[2], e, 1e-9);   /* energy conserved */
}

static void test_eq2_sockets(void)
{
	/* 2 threads x 2 sockets: row-major [thread][socket] */
	double w[4] = { 1.0, 0.0,     /* thread 0 only on socket 0 */
			1.0, 3.0 };   /* thread 1 on both */
	double e[2] = { 10.0, 8.0 }, out[2], lost;
	CHECK(np_powerattr_attribute(w, 2, 2, e, out, &lost) == 0, "attribute failed");
	CHECK_NEAR(out[0], 5.0, 1e-9);          /* half of socket 0 */
	CHECK_NEAR(out[1], 5.0 + 8.0, 1e-9);    /* other half + all of socket 1 */
	CHECK_NEAR(lost, 0.0, 1e-12);

	/* a socket where no thread ran keeps its energy unattributed */
	double w2[2] = { 2.0, 0.0 }, out2[1];
	CHECK(np_powerattr_attribute(w2, 1, 2, e, out2, &lost) == 0, "attribute failed");
	CHECK_NEAR(out2[0], 10.0, 1e-9);
	CHECK_NEAR(lost, 8.0, 1e-9);

	double bad[1] = { -1.0 };
	CHECK(np_powerattr_attribute(bad, 1, 1, e, out2, NULL) == -EINVAL, "negative accepted");
	CHECK(np_powerattr_attribute(NULL, 1, 1, e, out2, NULL) == -EINVAL, "NULL accepted");
}

static void test_net_share(void)
{
	/* 2 CPUs, 1 s: 0.5 s of networking = a quarter of the CPU time */
	CHECK_NEAR(np_powerattr_net_share(100.0, 500000000, 1000000000, 2), 25.0, 1e-9);
	CHECK_NEAR(np_powerattr_net_share(100.0, 0, 1000000000, 2), 0.0, 1e-12);
	CHECK_NEAR(np_powerattr_net_share(100.0, 5000000000ull, 1000000000, 2), 100.0, 1e-9);
	CHECK_NEAR(np_powerattr_net_share(100.0, 1, 0, 2), 0.0, 1e-12);
}

static void test_counter_delta(void)
{
	CHECK_EQ_U(np_powerattr_counter_delta(100, 250, 1000), 150);
	/* energy_uj wraps at max_energy_range_uj */
	CHECK_EQ_U(np_powerattr_counter_delta(900, 50, 1000), 150);
	CHECK_EQ_U(np_powerattr_counter_delta(900, 50, 0), 0);        /* no range known */
	CHECK_EQ_U(np_powerattr_counter_delta(5000, 50, 1000), 0);    /* not a wrap */
}

int main(void)
{
	test_eq1();
	test_eq2_one_socket();
	test_eq2_sockets();
	test_net_share();
	test_counter_delta();
	return tap_done();
}
