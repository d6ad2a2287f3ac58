/* record/core/rcdelta.c: the table that turns cumulative per-CPU map values into
 * per-interval deltas. Checked against a plain array model over random
 * keys, growth far past the initial size, and the rebuild-by-swap cycle the
 * families use every snapshot. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rcdelta.h"
#include "tap.h"

struct key { uint32_t a[4]; uint16_t port; uint8_t pad[2]; };

static struct key mk(unsigned i)
{
	struct key k;
	memset(&k, 0, sizeof(k));
	k.a[0] = i * 2654435761u;
	k.a[3] = i;
	k.port = (uint16_t)(i % 65536);
	return k;
}

int main(void)
{
	struct rc_dtab t, next;
	enum { N = 20000 };
	CHECK(rc_dtab_init(&t, sizeof(struct key), sizeof(uint64_t)) == 0, "init");
	unsigned notzero = 0;
	for (unsigned i = 0; i < N; i++) {
		struct key k = mk(i);
		uint64_t *v = rc_dtab_put(&t, &k);
		if (!v || *v != 0 || ((uintptr_t)v & 7))
			notzero++;
		if (v) *v = i * 10ull;
	}
	CHECK(notzero == 0, "%u new values not zeroed or not 8-byte aligned", notzero);
	CHECK_EQ_U(t.n, N);
	unsigned bad = 0;
	for (unsigned i = 0; i < N; i++) {
		struct key k = mk(i);
		uint64_t *v = rc_dtab_find(&t, &k);
		if (!v || *v != i * 10ull) bad++;
	}
	CHECK(bad == 0, "%u keys lost or wrong after growth", bad);
	struct key absent = mk(N + 5);
	CHECK(rc_dtab_find(&t, &absent) == NULL, "absent key");
	struct key k7 = mk(7);
	uint64_t *v7 = rc_dtab_put(&t, &k7);
	CHECK(v7 && *v7 == 70 && t.n == N, "put of an existing key keeps its value");

	/* snapshot cycle: only even keys survive into the next table */
	CHECK(rc_dtab_init(&next, sizeof(struct key), sizeof(uint64_t)) == 0, "init next");
	uint64_t delta_sum = 0;
	for (unsigned i = 0; i < N; i += 2) {
		struct key k = mk(i);
		uint64_t cur = i * 10ull + 3, *p = rc_dtab_find(&t, &k);
		delta_sum += cur - (p ? *p : 0);
		*(uint64_t *)rc_dtab_put(&next, &k) = cur;
	}
	CHECK_EQ_U(delta_sum, 3ull * (N / 2));
	rc_dtab_swap(&t, &next);
	rc_dtab_free(&next);
	struct key k1 = mk(1), k2 = mk(2);
	CHECK(rc_dtab_find(&t, &k1) == NULL, "odd key gone after the swap");
	CHECK(rc_dtab_find(&t, &k2) && *(uint64_t *)rc_dtab_find(&t, &k2) == 23, "even key carried");
	CHECK_EQ_U(t.n, N / 2);
	rc_dtab_free(&t);
	return tap_done();
}
