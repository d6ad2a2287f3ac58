/* Minimal unit-test harness: CHECK counts, the runner's last line is
 * "N passed, N failed". */
#ifndef NP_TAP_H
#define NP_TAP_H
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static int tap_pass, tap_fail;
#define CHECK(cond, ...) do { \
	if (cond) tap_pass++; \
	else { tap_fail++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
	       fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define CHECK_EQ_U(a, b) CHECK((unsigned long long)(a) == (unsigned long long)(b), \
	"%llu != %llu", (unsigned long long)(a), (unsigned long long)(b))
#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol), \
	"%.9g vs %.9g (tol %.3g)", (double)(a), (double)(b), (double)(tol))
/* mkdtemp(dir) for the runner's files: false after a failed CHECK. */
static inline bool tap_mkdtemp(char *dir)
{
	if (mkdtemp(dir))
		return true;
	CHECK(0, "mkdtemp %s: %s", dir, strerror(errno));
	return false;
}

/* Removes dir and all in it (a message, not a check, when it cannot);
 * with KEEP set in the environment it stays, to look at after a failure. */
static inline void tap_rmdir(const char *dir)
{
	char cmd[600];
	if (getenv("KEEP"))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%.500s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static inline int tap_done(void)
{
	printf("%d passed, %d failed\n", tap_pass, tap_fail);
	return tap_fail ? 1 : 0;
}

/* A runner's main: the NULL-terminated tests in order, in the temporary
 * directory dir made first and removed after. */
static inline int tap_run_in(char *dir, void (*const *tests)(void))
{
	if (!tap_mkdtemp(dir))
		return tap_done();
	for (; *tests; tests++)
		(*tests)();
	tap_rmdir(dir);
	return tap_done();
}
#endif
