/* Inputs the process-level fuzz (tests/fuzz/procfuzz.sh) found crashing a
 * sanitized binary, kept in fixtures/procfuzz/ (README.md there says what
 * each one broke). Each is analysed alone and with fixtures/multihost-b.npr
 * (as procfuzz runs npanalyze) through the same calls as npanalyze, then
 * its analysis is loaded back as npreport does; an analysis (.npa) mutant
 * is compared with itself and with fixtures/golden/basic.npa, as procfuzz
 * runs `npreport compare`. In the unit-asan build a regression stops with
 * the sanitizer's report. Run from the repository root. */
#include "tap.h"
#include "ana.h"
#include "anatable.h"
#include "compare.h"
#include "compare_gate.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void pf_run(const char *path, bool second, const char *out)
{
	struct ana_options opt = { .quiet = true };
	struct ana_model m;
	ana_model_init(&m, &opt);
	int rc = ana_load_file(&m, path, NULL);
	if (second)
		rc |= ana_load_file(&m, "fixtures/multihost-b.npr", NULL);
	CHECK(rc == 0 && m.hosts.n >= 1, "%s%s: loaded (%d, %zu hosts)", path,
	      second ? " + multihost-b" : "", rc, m.hosts.n);
	unlink(out);
	ana_run(&m, out, NULL);
	ana_model_free(&m);
	struct np_analysis a;
	CHECK(np_analysis_load(&a, out, NULL, NULL) == 0, "%s: analysis written and read back", path);
	np_analysis_free(&a);
}

/* Both orders against the golden analysis and the file with itself, every
 * output format: the gate and its statistics must hold on any analysis. */
static void pf_compare(const char *path)
{
	struct np_analysis m, g;
	/* damage is skipped, as npreport does: the mutant must load */
	CHECK(np_analysis_load(&m, path, NULL, NULL) == 0, "%s: read", path);
	CHECK(np_analysis_load(&g, "fixtures/golden/basic.npa", NULL, NULL) == 0, "golden basic.npa read");
	struct rpt_gate gate;
	rpt_gate_init(&gate);
	struct rpt_textopt to = { .width = 100, .max_rows = 40 };
	FILE *devnull = fopen("/dev/null", "w");
	enum rpt_cmpfmt fmts[] = { RPT_CMP_TEXT, RPT_CMP_CSV };
	for (size_t f = 0; devnull && f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		struct rpt_cmpopt o = { .alpha = 0.05, .gate = &gate, .format = fmts[f] };
		int r1 = rpt_compare(devnull, &g, 1, &m, 1, &o, &to, NULL);
		int r2 = rpt_compare(devnull, &m, 1, &m, 1, &o, &to, NULL);
		CHECK(r1 >= 0 && r2 >= 0, "%s: compared (format %zu: %d, %d)", path, f, r1, r2);
	}
	if (devnull)
		fclose(devnull);
	rpt_gate_free(&gate);
	np_analysis_free(&m);
	np_analysis_free(&g);
}

int main(void)
{
	glob_t g;
	char out[] = "/tmp/np-test-procfuzz.XXXXXX";
	int fd = mkstemp(out);
	CHECK(fd >= 0, "temp file");
	close(fd);
	CHECK(glob("fixtures/procfuzz/*.np[ra]", 0, NULL, &g) == 0 && g.gl_pathc >= 1,
	      "fixtures/procfuzz readable from the repository root");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i];
		if (!strcmp(p + strlen(p) - 4, ".npa")) {
			pf_compare(p);
			continue;
		}
		pf_run(p, false, out);
		pf_run(p, true, out);
	}
	globfree(&g);
	unlink(out);
	return tap_done();
}
