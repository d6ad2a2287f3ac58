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
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ana.h"
#include "tap.h"

#define DIRN 512

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len = -1;
	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc((size_t)len)) && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	*n = len > 0 ? (size_t)len : 0;
	fclose(f);
	return buf;
}

static int analyse(const char *d, unsigned threads, const char *out)
{
	char a[DIRN + 32], b[DIRN + 32];
	struct ana_options o = { .quiet = true, .threads = threads };
	struct ana_model m;
	snprintf(a, sizeof(a), "%s/hosta.npr", d);
	snprintf(b, sizeof(b), "%s/hostb.npr", d);
	ana_model_init(&m, &o);
	int rc = ana_load_file(&m, a, NULL) || ana_load_file(&m, b, NULL) ? -1 : 0;
	if (!rc)
		rc = ana_run(&m, out, NULL);
	ana_model_free(&m);
	return rc;
}

int main(int argc, char **argv)
{
	(void)argc;
	char self[DIRN], genfix[DIRN + 32], dir[] = "/tmp/np-test-tplp.XXXXXX";
	char cmd[4 * DIRN], ref[DIRN + 32], out[DIRN + 32];
	snprintf(self, sizeof(self), "%.400s", argv[0]);
	snprintf(genfix, sizeof(genfix), "%.400s/../tools/genfix", dirname(self));
	if (access(genfix, X_OK) || !mkdtemp(dir)) {
		CHECK(0, "genfix not found at %s (make tools)", genfix);
		return tap_done();
	}
	/* 200 000 data packets and their ACKs on 8 flows, every 50th lost and resent */
	snprintf(cmd, sizeof(cmd), "%s -o %s --packets 200000 --flows 8 --sync 100 --offset 3000000 "
		 "--drift 20 --loss 50 --retx", genfix, dir);
	CHECK(system(cmd) == 0, "%s", cmd);
	snprintf(ref, sizeof(ref), "%s/ref.npa", dir);
	ana_decomp_tpl_on = false;
	CHECK(analyse(dir, 1, ref) == 0, "analysis without templates");
	ana_decomp_tpl_on = true;
	size_t n1 = 0, nt = 0;
	char *x = slurp(ref, &n1);
	for (unsigned t = 1; t <= 2; t++) {
		ana_decomp_tpl_hits = 0;
		snprintf(out, sizeof(out), "%s/t%u.npa", dir, t);
		CHECK(analyse(dir, t, out) == 0, "analysis on %u threads", t);
		CHECK(ana_decomp_tpl_hits > 300000, "%u threads: %zu of 400 000 packets by template", t,
		      ana_decomp_tpl_hits);
		char *y = slurp(out, &nt);
		CHECK(x && y && n1 > 0 && n1 == nt && !memcmp(x, y, n1),
		      "%u threads: the .npa without templates (%zu bytes, %zu)", t, n1, nt);
		free(y);
	}
	free(x);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "%s", cmd);
	return tap_done();
}
