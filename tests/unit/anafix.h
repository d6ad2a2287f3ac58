/* Unit tests that analyse genfix's recordings (tests/tools/genfix, found
 * next to the runner: $(O)/unit/../tools/genfix): make them in a temporary
 * directory, load both hosts with the events changed by a test, and compare
 * the .npa written by two runs byte for byte. */
#ifndef NP_ANAFIX_H
#define NP_ANAFIX_H
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ana.h"
#include "tap.h"

#define DIRN 512

typedef void (*mangle_fn)(struct ana_model *m);

/* Reads a whole file; NULL on error. */
static inline char *anafix_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	if (!fseek(f, 0, SEEK_END)) {
		long len = ftell(f);
		if (len > 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)len)) &&
		    fread(buf, 1, (size_t)len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		}
		*n = len > 0 ? (size_t)len : 0;
	}
	fclose(f);
	return buf;
}

/* The recordings in d, mangled, analysed on threads threads into out;
 * *npev (when not NULL) the events left after mangle. */
static inline int anafix_analyse(const char *d, mangle_fn mangle, unsigned threads,
				 const char *out, size_t *npev)
{
	char a[DIRN + 32], b[DIRN + 32];
	struct ana_options o = { .quiet = true, .threads = threads };
	struct ana_model m;
	snprintf(a, sizeof(a), "%s/hosta.npr", d);
	snprintf(b, sizeof(b), "%s/hostb.npr", d);
	ana_model_init(&m, &o);
	int rc = ana_load_file(&m, a, NULL) || ana_load_file(&m, b, NULL) ? -1 : 0;
	if (!rc) {
		mangle(&m);
		if (npev)
			*npev = m.pev.n;
		rc = ana_run(&m, out, NULL);
	}
	ana_model_free(&m);
	return rc;
}

/* One CHECK: the file out holds the n bytes x (the reference run, `ref`). */
static inline void anafix_check_same(const char *x, size_t n, const char *out, const char *what,
				     unsigned threads, const char *ref)
{
	size_t nt = 0;
	char *y = anafix_slurp(out, &nt);
	CHECK(x && y && n > 0 && n == nt && !memcmp(x, y, n),
	      "%s: %u threads: the .npa %s (%zu bytes, %zu)", what, threads, ref, n, nt);
	free(y);
}

static inline void anafix_unchanged(struct ana_model *m)
{
	(void)m;
}

/* Makes the directory dir (a mkdtemp template) and runs genfix -o dir args
 * in it (one CHECK). -1 (after a failed CHECK) when genfix is not built. */
static inline int anafix_genfix(const char *argv0, char *dir, const char *args)
{
	char self[DIRN], genfix[DIRN + 32], cmd[4 * DIRN];
	snprintf(self, sizeof(self), "%.400s", argv0);
	snprintf(genfix, sizeof(genfix), "%.400s/../tools/genfix", dirname(self));
	if (access(genfix, X_OK) || !mkdtemp(dir)) {
		CHECK(0, "genfix not found at %s (make tools)", genfix);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "%s -o %s %.1000s", genfix, dir, args);
	CHECK(system(cmd) == 0, "%s", cmd);
	return 0;
}

/* Removes what anafix_genfix made (one CHECK). */
static inline void anafix_remove(const char *dir)
{
	char cmd[DIRN + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %.500s", dir);
	CHECK(system(cmd) == 0, "%s", cmd);
}
#endif
