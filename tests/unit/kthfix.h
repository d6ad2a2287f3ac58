/* test_ana_kth, test_ana_kth2: the value shapes that take the k-th value
 * selections' branches, and the sort that gives the truth. */
#ifndef NP_KTHFIX_H
#define NP_KTHFIX_H
#include <stdint.h>

#define KTH_SHAPES 7

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int64_t kth_value(int shape, uint64_t r)
{
	switch (shape) {
	case 0: return (int64_t)r;                                   /* whole range, signed */
	case 1: return 42;                                           /* one value */
	case 2: return (int64_t)(r % 7);                             /* few distinct */
	case 3: return (r & 1) ? INT64_MIN : INT64_MAX;              /* the extremes */
	case 4: return (int64_t)(r % 1000) - 500;                    /* around zero */
	case 5: return (int64_t)(r % 100000) * (r % 997 == 0 ? 100000 : 1);   /* a long tail */
	default: return r % 5000 == 0 ? INT64_MAX / 2 : (int64_t)(r % 3000);   /* one far outlier */
	}
}
#endif
