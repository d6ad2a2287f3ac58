/* Unit tests: a whole file into memory (damaging copies of written files). */
#ifndef NP_TFILE_H
#define NP_TFILE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct blob { uint8_t *data; size_t len; };

/* The file's bytes (data malloc'd), len 0 when it cannot be read. */
static inline struct blob slurp(const char *path)
{
	struct blob b = { 0 };
	FILE *f = fopen(path, "rb");
	if (!f)
		return b;
	fseek(f, 0, SEEK_END);
	b.len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	b.data = malloc(b.len ? b.len : 1);
	if (fread(b.data, 1, b.len, f) != b.len)
		b.len = 0;
	fclose(f);
	return b;
}

#endif
