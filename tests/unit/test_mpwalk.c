/* np_mp_walk on arrays of scalars of every fixed-size form in random
 * mixes (the columns of packet events), with objects of other forms,
 * 0xc1 and cut-short ends at random places: its length and object count
 * are those the generator wrote, msgpack-c agrees, and every prefix is
 * refused. The buffers are allocated at their exact length, so a walk
 * reading past the end shows under the sanitizers (make unit-asan). */
#include "tap.h"
#include "container.h"

#include <msgpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)((rng >> 16) % n);
}

/* First bytes of the fixed-size forms and their sizes. */
static const uint8_t fixed_b[] = { 0x05, 0x7f, 0xe3, 0xff, 0xc0, 0xc2, 0xc3, 0xca, 0xcb, 0xcc, 0xcd,
				   0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8 };
static const uint8_t fixed_n[] = { 1, 1, 1, 1, 1, 1, 1, 5, 9, 2, 3, 5, 9, 2, 3, 5, 9, 3, 4, 6, 10, 18 };
#define NFIXED (sizeof(fixed_b) / sizeof(fixed_b[0]))

struct gen {
	uint8_t *b;
	size_t n, cap;
	uint64_t objs;
};

static void put(struct gen *g, uint8_t v)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 256;
		g->b = realloc(g->b, g->cap);
	}
	g->b[g->n++] = v;
}

/* One scalar of a fixed form; its payload bytes random (they may look
 * like any first byte). mix: 0 fixints mostly, 1 the integer widths the
 * delta columns mix, 2 any fixed form. */
static void put_fixed(struct gen *g, int mix)
{
	size_t f;
	if (mix == 0)
		f = rnd(10) ? rnd(4) : rnd(NFIXED);
	else if (mix == 1)
		f = rnd(3) ? 9 + rnd(8) : rnd(4);
	else
		f = rnd(NFIXED);
	put(g, fixed_b[f]);
	for (unsigned i = 1; i < fixed_n[f]; i++)
		put(g, (uint8_t)rnd(256));
	g->objs++;
}

/* A short object of another form: a string, bin or small array. */
static void put_other(struct gen *g)
{
	unsigned n = rnd(4);
	switch (rnd(3)) {
	case 0:
		put(g, (uint8_t)(0xa0 | n));
		break;
	case 1:
		put(g, 0xc4);
		put(g, (uint8_t)n);
		break;
	default:
		put(g, (uint8_t)(0x90 | n));
		for (unsigned i = 0; i < n; i++)
			put(g, (uint8_t)rnd(128));
		g->objs += n + 1;
		return;
	}
	for (unsigned i = 0; i < n; i++)
		put(g, (uint8_t)rnd(256));
	g->objs++;
}

/* A column: array 16/32 of n scalars, one in `other` of another form (0:
 * none); where the 0xc1 goes when bad (its element index + 1, 0: none). */
static void put_column(struct gen *g, size_t n, int mix, size_t other, size_t bad)
{
	if (n < 65536) {
		put(g, 0xdc);
		put(g, (uint8_t)(n >> 8));
		put(g, (uint8_t)n);
	} else {
		put(g, 0xdd);
		for (int s = 24; s >= 0; s -= 8)
			put(g, (uint8_t)(n >> s));
	}
	g->objs++;
	for (size_t i = 0; i < n; i++) {
		if (bad && i + 1 == bad)
			put(g, 0xc1);
		else if (other && i % other == other - 1)
			put_other(g);
		else
			put_fixed(g, mix);
	}
}

static size_t mp_len(const uint8_t *b, size_t n)
{
	msgpack_unpacked u;
	size_t off = 0;
	msgpack_unpacked_init(&u);
	int rc = msgpack_unpack_next(&u, (const char *)b, n, &off);
	msgpack_unpacked_destroy(&u);
	return rc == MSGPACK_UNPACK_SUCCESS ? off : 0;
}

/* The walk of g's bytes at their exact length, and of every prefix. */
static void check_walk(const struct gen *g, bool bad, const char *what, size_t n)
{
	uint8_t *b = malloc(g->n);
	memcpy(b, g->b, g->n);
	uint64_t objs = 0;
	size_t len = np_mp_walk(b, g->n, &objs);
	size_t want = bad ? 0 : g->n;
	CHECK(len == want && (bad || objs == g->objs), "%s n=%zu: length %zu (want %zu), objects %llu (want %llu)",
	      what, n, len, want, (unsigned long long)objs, (unsigned long long)g->objs);
	CHECK(mp_len(b, g->n) == want, "%s n=%zu: msgpack-c disagrees", what, n);
	free(b);
	/* every prefix cut short: refused, never read past its end */
	size_t step = g->n > 600 ? g->n / 300 : 1;
	int cut_ok = 1;
	for (size_t l = 0; l < g->n; l += step) {
		uint8_t *c = malloc(l ? l : 1);
		memcpy(c, g->b, l);
		if (np_mp_walk(c, l, NULL) != 0)
			cut_ok = 0;
		free(c);
	}
	CHECK(cut_ok, "%s n=%zu: a prefix was taken as complete", what, n);
}

static void test_columns(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 31, 32, 33, 63, 64,
					65, 100, 127, 128, 129, 200, 333, 1000, 4099, 70000 };
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		for (int mix = 0; mix < 3; mix++)
			for (int rep = 0; rep < (sizes[si] > 1000 ? 2 : 12); rep++) {
				size_t n = sizes[si];
				struct gen g = { 0 };
				size_t other = rep % 3 == 1 && n ? 1 + rnd((uint32_t)n) : 0;
				size_t bad = rep % 4 == 3 && n ? 1 + rnd((uint32_t)n) : 0;
				/* a map of two columns, as a record body holds them;
				 * with integer keys every other time: a step over
				 * fixed objects must stop at the column's end, not
				 * only at an object of another form */
				bool ik = rep % 2;
				put(&g, 0x82);
				g.objs++;
				if (ik) put(&g, 0x01); else { put(&g, 0xa1); put(&g, 'a'); }
				g.objs++;
				put_column(&g, n, mix, other, 0);
				if (ik) put(&g, 0xcd), put(&g, 0), put(&g, 2); else { put(&g, 0xa1); put(&g, 'b'); }
				g.objs++;
				put_column(&g, n, mix, 0, bad);
				check_walk(&g, bad != 0, mix == 0 ? "fixints" : mix == 1 ? "integers" : "any fixed", n);
				free(g.b);
			}
}

/* A column whose count claims more elements than there are: refused,
 * whatever the forms of the bytes that follow. */
static void test_short_count(void)
{
	for (int rep = 0; rep < 200; rep++) {
		struct gen g = { 0 };
		size_t n = 1 + rnd(300);
		put_column(&g, n, rep % 3, 0, 0);
		g.b[1] = (uint8_t)((n + 1 + rnd(40)) >> 8);
		g.b[2] = (uint8_t)(n + 1 + rnd(40));
		uint8_t *b = malloc(g.n);
		memcpy(b, g.b, g.n);
		CHECK(np_mp_walk(b, g.n, NULL) == mp_len(b, g.n), "short count %zu: walk %zu, msgpack-c %zu", n,
		      np_mp_walk(b, g.n, NULL), mp_len(b, g.n));
		free(b);
		free(g.b);
	}
}

int main(void)
{
	/* every step this CPU has, the fastest first: CI runs on one machine */
	for (int level = np_mp_walk_cap(2); level >= 0; level--) {
		CHECK(np_mp_walk_cap(level) == level, "walk level %d", level);
		test_columns();
		test_short_count();
	}
	return tap_done();
}
