/* The decomposition's packet ranges (analyze/ana_decomp.c, ana_results):
 * with --threads 2 each half of the packets is finished against a flow
 * state of its own and the halves are merged. Two of the merge's paths
 * are rare on recorded traffic, so the inputs here are made to take them,
 * and the .npa must be byte for byte the one thread's (the serial pass,
 * the truth here):
 * - renumbering: the first host's events at one hook are dropped from the
 *   first 2 % of its events, so the first half of the packets meets that
 *   hook of every flow last while the second half meets it in path order:
 *   the second half's position masks are renumbered (without that, 2
 *   checks here fail);
 * - fallback: one receiver event moved 2^54 ns later makes a hop sum past
 *   2^53 (no longer exact in a double): the results are taken again in
 *   one serial pass (merged anyway, 2 checks here fail).
 * More than 65 536 packets, so that the ranges run. */
#include "anafix.h"

/* One thread against two (and three): the same bytes. */
static void same_npa(const char *d, mangle_fn mangle, const char *what, size_t *npev)
{
	char one[DIRN + 32], more[DIRN + 32];
	snprintf(one, sizeof(one), "%s/t1.npa", d);
	CHECK(anafix_analyse(d, mangle, 1, one, npev) == 0, "%s: analysis on 1 thread", what);
	size_t n1 = 0;
	char *x = anafix_slurp(one, &n1);
	for (unsigned t = 2; t <= 3; t++) {
		size_t ev = 0;
		snprintf(more, sizeof(more), "%s/t%u.npa", d, t);
		CHECK(anafix_analyse(d, mangle, t, more, &ev) == 0, "%s: analysis on %u threads", what, t);
		anafix_check_same(x, n1, more, what, t, "of 1 thread");
	}
	free(x);
}

/* The first host's events at its first data hook after sock_send, in the
 * first 2 % of its events, dropped. */
static size_t dropped;

static void drop_early_hook(struct ana_model *m)
{
	size_t na = 0, w = 0;
	while (na < m->pev.n && m->pev.v[na].host == m->pev.v[0].host)
		na++;
	uint8_t hook = 0;
	for (size_t i = 0; i < na && !hook; i++)
		if (m->pev.v[i].hook != PK_HOOK_SOCK_SEND && m->pev.v[i].len)
			hook = m->pev.v[i].hook;
	dropped = 0;
	for (size_t i = 0; i < m->pev.n; i++) {
		if (i < na / 50 && m->pev.v[i].hook == hook) {
			dropped++;
			continue;
		}
		m->pev.v[w++] = m->pev.v[i];
	}
	m->pev.n = w;
}

/* One event of the second host, at a hook after its first (a hop, not
 * a path's start) in the middle of its run, 2^54 ns later. */
static int64_t moved = -1;

static void move_one_event(struct ana_model *m)
{
	size_t nb = 0;
	while (nb < m->pev.n && m->pev.v[nb].host == m->pev.v[0].host)
		nb++;
	moved = -1;
	for (size_t i = nb + (m->pev.n - nb) / 2; i < m->pev.n && moved < 0; i++)
		if (m->pev.v[i].len && m->pev.v[i].hook > PK_HOOK_GRO_ENTRY) {
			m->pev.v[i].ts += 1ULL << 54;
			moved = (int64_t)i;
		}
}

int main(int argc, char **argv)
{
	(void)argc;
	char dir[] = "/tmp/np-test-dranges.XXXXXX";
	/* 40 000 data packets and their ACKs on 4 flows: 80 000 packets; every
	 * 100th lost at one hop, so that position masks differ by packet (with
	 * every position in every mask a numbering would not show) */
	if (anafix_genfix(argv[0], dir, "--packets 40000 --flows 4 --loss 100 --seed 9 --no-truth"))
		return tap_done();
	size_t n0 = 0, n = 0;
	same_npa(dir, anafix_unchanged, "as recorded", &n0);
	/* 9 events per data packet (4 at the sender, 3 at the receiver, the ACK
	 * at 2), less those past the hop where each 100th packet was lost */
	CHECK(n0 < 360000 && n0 > 360000 - 400 * 9, "events: %zu", n0);
	same_npa(dir, drop_early_hook, "renumbered", &n);
	CHECK(dropped > 500 && n == n0 - dropped, "%zu events dropped (%zu left of %zu)", dropped,
	      n, n0);
	same_npa(dir, move_one_event, "hop sum past 2^53", &n);
	CHECK(moved >= 0 && n == n0, "one event moved (%lld)", (long long)moved);
	anafix_remove(dir);
	return tap_done();
}
