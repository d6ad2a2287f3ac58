#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksyms.h"

/* The last symbol has no successor; assume no function is longer. */
#define NC_KSYMS_LAST_SPAN (64u << 10)

struct ksym {
	uint64_t addr;
	uint32_t name_off;
	uint32_t order;       /* position in the file, to keep the first alias */
};

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

static int ksyms_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 4096;
	while (nc < need)
		nc *= 2;
	void *np = realloc(*p, nc * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

static int ksyms_add(struct ksyms *k, uint64_t addr, const char *name)
{
	size_t len = strlen(name) + 1;
	if (ksyms_grow((void **)&k->syms, &k->cap, k->n + 1, sizeof(*k->syms)) ||
	    ksyms_grow((void **)&k->names, &k->names_cap, k->names_len + len, 1))
		return -ENOMEM;
	memcpy(k->names + k->names_len, name, len);
	k->syms[k->n] = (struct ksym){ .addr = addr, .name_off = (uint32_t)k->names_len,
					  .order = (uint32_t)k->n };
	k->names_len += len;
	k->n++;
	return 0;
}

static int ksyms_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool ksyms_is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Sorts and keeps one symbol per address (the first listed). */
static void ksyms_finish(struct ksyms *k)
{
	qsort(k->syms, k->n, sizeof(*k->syms), ksyms_cmp);
	size_t w = 0;
	for (size_t i = 0; i < k->n; i++)
		if (w == 0 || k->syms[w - 1].addr != k->syms[i].addr)
			k->syms[w++] = k->syms[i];
	k->n = w;
}

int ksyms_load(struct ksyms **out, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	struct ksyms *k = calloc(1, sizeof(*k));
	if (!k) {
		fclose(f);
		return -ENOMEM;
	}
	char line[512], name[256];
	unsigned long long addr;
	char type;
	size_t zero_addrs = 0;
	int rc = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !ksyms_is_text(type))
			continue;
		if (addr == 0) {
			zero_addrs++;
			continue;
		}
		if ((rc = ksyms_add(k, addr, name)) < 0)
			break;
	}
	fclose(f);
	if (rc == 0 && k->n == 0)
		rc = zero_addrs ? -EPERM : -ENOENT;
	if (rc < 0) {
		ksyms_free(k);
		return rc;
	}
	ksyms_finish(k);
	*out = k;
	return 0;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

size_t ksyms_count(const struct ksyms *k)
{
	return k ? k->n : 0;
}

const char *ksyms_lookup(const struct ksyms *k, uint64_t ip, uint64_t *start)
{
	if (!k || k->n == 0 || ip < k->syms[0].addr)
		return NULL;
	size_t lo = 0, hi = k->n;      /* last index with addr <= ip is in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	if (lo == k->n - 1 && ip - k->syms[lo].addr >= NC_KSYMS_LAST_SPAN)
		return NULL;
	if (start)
		*start = k->syms[lo].addr;
	return k->names + k->syms[lo].name_off;
}

uint64_t ksyms_addr(const struct ksyms *k, const char *name)
{
	for (size_t i = 0; k && name && i < k->n; i++)
		if (strcmp(k->names + k->syms[i].name_off, name) == 0)
			return k->syms[i].addr;
	return 0;
}
