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
/* Each operand evaluated once: the FAIL line shows the values compared
 * (evaluated again, a counter that moved printed "0 != 0"). */
#define TAP_FAIL_(...) do { tap_fail++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)
#define CHECK_EQ_U(a, b) do { \
	unsigned long long tap_a_ = (unsigned long long)(a), tap_b_ = (unsigned long long)(b); \
	if (tap_a_ == tap_b_) tap_pass++; \
	else TAP_FAIL_("%s == %s: %llu != %llu", #a, #b, tap_a_, tap_b_); } while (0)
#define CHECK_NEAR(a, b, tol) do { \
	double tap_a_ = (double)(a), tap_b_ = (double)(b), tap_t_ = (double)(tol); \
	if (fabs(tap_a_ - tap_b_) <= tap_t_) tap_pass++; \
	else TAP_FAIL_("|%s - %s| <= %s: %.9g vs %.9g (tol %.3g)", #a, #b, #tol, tap_a_, tap_b_, tap_t_); } while (0)
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
