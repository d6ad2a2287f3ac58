/* Inputs the process-level fuzz (tests/fuzz/procfuzz.sh) found crashing a
 * sanitized binary, kept in fixtures/procfuzz/ (README.md there says what
 * each one broke). Each is analysed alone and with fixtures/multihost-b.npr
 * (as procfuzz runs npanalyze) through the same calls as npanalyze, then
 * its analysis is loaded back as npreport does; in the unit-asan build a
 * regression stops with the sanitizer's report. Run from the repository
 * root. */
#include "tap.h"
#include "ana.h"
#include "anatable.h"

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
		pf_run(g.gl_pathv[i], false, out);
		pf_run(g.gl_pathv[i], true, out);
	}
	globfree(&g);
	unlink(out);
	return tap_done();
}
