/* Minimal unit-test harness: CHECK counts, the runner's last line is
 * "N passed, N failed". */
#ifndef NP_TAP_H
#define NP_TAP_H
#include <stdio.h>
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
static inline int tap_done(void)
{
	printf("%d passed, %d failed\n", tap_pass, tap_fail);
	return tap_fail ? 1 : 0;
}
#endif
