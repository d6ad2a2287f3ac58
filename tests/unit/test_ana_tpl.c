/* The decomposition's packet templates (analyze/ana_decomp.c): a packet
 * whose events match the last one of its flow (same hosts, hooks and
 * flags, times in the same order) reuses that packet's path order, roles,
 * positions and hop segments. The .npa with templates must be byte for
 * byte the one without (every packet through the general path, the truth
 * here), on inputs made to break the match now and then:
 * - swapped: two events of one host trade times in some packets (their
 *   order on that host flips: the template's time check must refuse);
 * - equal: two events of one host get the same time (the order then
 *   comes from the hook, then from the stored order);
 * - flipped: one flow's two hooks stored the other way round, and in some
 *   packets at one time (where the hooks then order them the other way);
 * - control: some events flagged SYN/FIN/RST (another signature).
 * Each input also checks that templates were taken (most packets), so
 * that the comparison is not between two runs of the general path. */
#include "anafix.h"

/* Without templates and with them (1 and 2 threads): the same bytes. */
static void same_npa(const char *d, mangle_fn mangle, const char *what)
{
	char ref[DIRN + 32], out[DIRN + 32];
	snprintf(ref, sizeof(ref), "%s/ref.npa", d);
	ana_decomp_tpl_on = false;
	ana_decomp_tpl_hits = 0;
	CHECK(anafix_analyse(d, mangle, 1, ref, NULL) == 0, "%s: analysis without templates", what);
	CHECK(ana_decomp_tpl_hits == 0, "%s: no template taken when off", what);
	ana_decomp_tpl_on = true;
	size_t n1 = 0;
	char *x = anafix_slurp(ref, &n1);
	for (unsigned t = 1; t <= 2; t++) {
		ana_decomp_tpl_hits = 0;
		snprintf(out, sizeof(out), "%s/t%u.npa", d, t);
		CHECK(anafix_analyse(d, mangle, t, out, NULL) == 0, "%s: analysis on %u threads", what, t);
		/* 80 000 packets: all but each flow's first 64 or so and the mangled */
		CHECK(ana_decomp_tpl_hits > 60000, "%s: %u threads: %zu packets by template", what, t,
		      ana_decomp_tpl_hits);
		anafix_check_same(x, n1, out, what, t, "without templates");
	}
	free(x);
}

/* Every 40th event i of the first host followed by one of the same flow
 * and host at another hook: i, i + 1 trade times, or take i's. */
static size_t touched;

static void pairs(struct ana_model *m, bool swap)
{
	touched = 0;
	for (size_t i = 0; i + 1 < m->pev.n; i += 40) {
		struct ana_pev *a = &m->pev.v[i], *b = &m->pev.v[i + 1];
		if (a->host != m->pev.v[0].host || b->host != a->host || a->flow != b->flow ||
		    a->hook == b->hook || a->ts == b->ts)
			continue;
		uint64_t t = a->ts;
		a->ts = swap ? b->ts : t;
		b->ts = t;
		touched++;
	}
}

static void swapped(struct ana_model *m)
{
	pairs(m, true);
}

static void equal(struct ana_model *m)
{
	pairs(m, false);
}

/* One flow's first pair of hooks from the qdisc on at the first host (H1 then H2) stored
 * the other way round in all its packets (H2 first, at the earlier time),
 * and in every 10th of them both at the same time: then the hooks decide,
 * and H1 goes first. The template of the others must refuse these. */
static void flipped(struct ana_model *m)
{
	uint16_t h = m->pev.v[0].host;
	uint32_t fl = m->pev.v[0].flow;
	uint8_t h1 = 0, h2 = 0;
	touched = 0;
	for (size_t i = 0; i + 1 < m->pev.n; i++) {
		struct ana_pev *a = &m->pev.v[i], *b = &m->pev.v[i + 1];
		if (a->host != h || b->host != h || a->flow != fl || b->flow != fl || a->hook >= b->hook ||
		    a->hook < PK_HOOK_QDISC_ENQ)    /* hops into two segments: qdisc, device */
			continue;
		if (!h1) {
			h1 = a->hook;
			h2 = b->hook;
		}
		if (a->hook != h1 || b->hook != h2)
			continue;
		a->hook = h2;
		b->hook = h1;
		if (touched++ % 10 == 9)
			b->ts = a->ts;
		i++;
	}
}

/* Every 97th event flagged as control. */
static void control(struct ana_model *m)
{
	touched = 0;
	for (size_t i = 0; i < m->pev.n; i += 97, touched++)
		m->pev.v[i].flags |= ANA_EVF_CTL;
}

int main(int argc, char **argv)
{
	(void)argc;
	char dir[] = "/tmp/np-test-tpl.XXXXXX";
	/* 40 000 data packets and their ACKs on 4 flows, every 100th lost */
	if (anafix_genfix(argv[0], dir, "--packets 40000 --flows 4 --loss 100 --seed 5 --no-truth"))
		return tap_done();
	same_npa(dir, anafix_unchanged, "as recorded");
	same_npa(dir, swapped, "two times swapped");
	CHECK(touched > 1000, "%zu pairs swapped", touched);
	same_npa(dir, equal, "two times equal");
	CHECK(touched > 1000, "%zu pairs made equal", touched);
	same_npa(dir, flipped, "two hooks flipped, some at one time");
	CHECK(touched > 1000, "%zu pairs flipped", touched);
	same_npa(dir, control, "control flags");
	CHECK(touched > 1000, "%zu events flagged", touched);
	anafix_remove(dir);
	return tap_done();
}
