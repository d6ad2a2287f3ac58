#include "rcdelta.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A word at a time (keys are 8 or 16 bytes: a connection, a connection
 * and a sketch bucket): byte-wise FNV-1a was most of the user-space part
 * of txn's sketch read, thousands of keys an interval (docs/BENCHMARKS.md). */
static uint64_t rc_hash(const void *k, size_t n)
{
	const uint8_t *p = k;
	uint64_t h = 1469598103934665603ull, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static int rc_dtab_alloc(struct rc_dtab *t, size_t cap)
{
	/* used flag, key and value each start 8-byte aligned */
	t->slotsz = 8 + ((t->keysz + 7) & ~(size_t)7) + ((t->valsz + 7) & ~(size_t)7);
	t->slots = calloc(cap, t->slotsz);
	if (!t->slots)
		return -ENOMEM;
	t->cap = cap;
	t->n = 0;
	return 0;
}

int rc_dtab_init(struct rc_dtab *t, size_t keysz, size_t valsz)
{
	return rc_dtab_init_for(t, keysz, valsz, 0);
}

int rc_dtab_init_for(struct rc_dtab *t, size_t keysz, size_t valsz, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->keysz = keysz;
	t->valsz = valsz;
	size_t cap = 64;
	while (n * 4 > cap * 3)
		cap *= 2;
	return rc_dtab_alloc(t, cap);
}

static uint8_t *rc_slot(const struct rc_dtab *t, size_t i) { return t->slots + i * t->slotsz; }
static uint8_t *rc_kof(const struct rc_dtab *t, uint8_t *s) { (void)t; return s + 8; }
static uint8_t *rc_vof(const struct rc_dtab *t, uint8_t *s) { return s + 8 + ((t->keysz + 7) & ~(size_t)7); }

static uint8_t *rc_lookup(const struct rc_dtab *t, const void *key)
{
	size_t i = rc_hash(key, t->keysz) & (t->cap - 1);
	for (;;) {
		uint8_t *s = rc_slot(t, i);
		if (!s[0] || memcmp(rc_kof(t, s), key, t->keysz) == 0)
			return s;
		i = (i + 1) & (t->cap - 1);
	}
}

void *rc_dtab_find(const struct rc_dtab *t, const void *key)
{
	uint8_t *s = rc_lookup(t, key);
	return s[0] ? rc_vof(t, s) : NULL;
}

static int rc_grow(struct rc_dtab *t)
{
	struct rc_dtab n = *t;
	if (rc_dtab_alloc(&n, t->cap * 2))
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		uint8_t *s = rc_slot(t, i);
		if (!s[0])
			continue;
		uint8_t *d = rc_lookup(&n, rc_kof(t, s));
		memcpy(d, s, t->slotsz);
		n.n++;
	}
	free(t->slots);
	*t = n;
	return 0;
}

void *rc_dtab_put(struct rc_dtab *t, const void *key)
{
	if ((t->n + 1) * 4 > t->cap * 3 && rc_grow(t))
		return NULL;
	uint8_t *s = rc_lookup(t, key);
	if (!s[0]) {
		s[0] = 1;
		memcpy(rc_kof(t, s), key, t->keysz);
		memset(rc_vof(t, s), 0, t->valsz);
		t->n++;
	}
	return rc_vof(t, s);
}

void rc_dtab_free(struct rc_dtab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}

void rc_dtab_swap(struct rc_dtab *a, struct rc_dtab *b)
{
	struct rc_dtab tmp = *a;
	*a = *b;
	*b = tmp;
}
