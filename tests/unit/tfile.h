/* Unit tests: a whole file into memory (damaging copies of written files),
 * and records built in memory wrapped as a recording file. */
#ifndef NP_TFILE_H
#define NP_TFILE_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#ifdef NP_CONTAINER_H
/* The records of rb as one in-memory recording file (malloc'd, NULL when
 * the chunk cannot be built); *len its size. Frees rb. */
static inline uint8_t *tfile_recording(struct np_recbuf *rb, size_t *len)
{
	struct np_chunk c;
	uint8_t *buf = NULL;
	if (np_chunk_build(&c, rb, 1) == 0) {
		buf = calloc(1, NP_FILE_HDR_LEN + c.len);
		memcpy(buf, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
		buf[8] = NP_FORMAT_VERSION;
		buf[10] = NP_KIND_RECORDING;
		memcpy(buf + NP_FILE_HDR_LEN, c.data, c.len);
		*len = NP_FILE_HDR_LEN + c.len;
		np_chunk_free(&c);
	}
	np_recbuf_free(rb);
	return buf;
}
#endif

/* A reader's warning callback: counts them, keeps the last. */
static int nwarn;
static char lastwarn[512];
static inline void count_warn(void *ctx, const char *msg)
{
	(void)ctx;
	nwarn++;
	snprintf(lastwarn, sizeof(lastwarn), "%s", msg);
}

#if defined(NP_ANA_H) && defined(NP_TAP_H)
/* The in-memory recording rec (len bytes, from tfile_recording) loaded into
 * m as name and finished: two CHECKs (built, loaded). */
static inline void tfile_load(struct ana_model *m, const struct ana_options *opt,
			      const uint8_t *rec, size_t len, const char *name)
{
	CHECK(rec != NULL, "recording built");
	ana_model_init(m, opt);
	CHECK_EQ_U(ana_load_mem(m, rec, len, name), 0);
	ana_load_finish(m);
}
#endif

#endif
