/* The decomposition's packet templates count their packets' positions
 * (pos[].n) in the template and add them to the flow when the slot is
 * made again or the pass ends (ana_tpl_flush, analyze/ana_decomp.c). A
 * recording where slots are remade while they hold counts: lost packets
 * and their retransmissions (--loss 50 --retx) interleave another shape
 * into a flow. The .npa with templates must be byte for byte the one
 * without (every packet through the general path), at 1 and 2 threads,
 * with most packets taken by template. Without the flush on remaking a
 * slot, 2 checks fail (the options are bench's variant's: with
 * --no-truth genfix writes other events, where no slot is remade). */
#include <stdio.h>
#include "anafix.h"

int main(int argc, char **argv)
{
	(void)argc;
	char dir[] = "/tmp/np-test-tplp.XXXXXX", ref[DIRN + 32], out[DIRN + 32];
	/* 200 000 data packets and their ACKs on 8 flows, every 50th lost and resent */
	if (anafix_genfix(argv[0], dir, "--packets 200000 --flows 8 --sync 100 --offset 3000000 "
			  "--drift 20 --loss 50 --retx"))
		return tap_done();
	snprintf(ref, sizeof(ref), "%s/ref.npa", dir);
	ana_decomp_tpl_on = false;
	CHECK(anafix_analyse(dir, anafix_unchanged, 1, ref, NULL) == 0, "analysis without templates");
	ana_decomp_tpl_on = true;
	size_t n1 = 0;
	char *x = anafix_slurp(ref, &n1);
	for (unsigned t = 1; t <= 2; t++) {
		ana_decomp_tpl_hits = 0;
		snprintf(out, sizeof(out), "%s/t%u.npa", dir, t);
		CHECK(anafix_analyse(dir, anafix_unchanged, t, out, NULL) == 0, "analysis on %u threads", t);
		CHECK(ana_decomp_tpl_hits > 300000, "%u threads: %zu of 400 000 packets by template", t,
		      ana_decomp_tpl_hits);
		anafix_check_same(x, n1, out, "templates", t, "without templates");
	}
	free(x);
	anafix_remove(dir);
	return tap_done();
}
