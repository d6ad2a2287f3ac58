/* The read-ahead worker's idle work (ana_read_populate, ana_read.c): at
 * --threads 2 the reading thread appends the events itself, and the worker,
 * when it has no chunk to start, makes the pages the appends reach next
 * present. Truth: mincore's residency of a fresh mapping that only the
 * request can have touched, and the bytes written before the request,
 * which populating must leave as they are. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include "tap.h"
#include "container.h"
#include "ana_read.h"

#define PG 4096u
#define NPG 64u

/* Pages of [p, p + npg pages) resident, after waiting up to 2 s for all. */
static unsigned resident_wait(uint8_t *p, unsigned npg)
{
	unsigned char v[4 * NPG];
	unsigned n = 0;
	for (int tries = 0; tries < 200; tries++) {
		if (mincore(p, (size_t)npg * PG, v))
			return 0;
		n = 0;
		for (unsigned i = 0; i < npg; i++)
			n += v[i] & 1;
		if (n == npg)
			break;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	return n;
}

static unsigned resident_now(uint8_t *p, unsigned npg)
{
	unsigned char v[4 * NPG];
	unsigned n = 0;
	if (mincore(p, (size_t)npg * PG, v))
		return 0;
	for (unsigned i = 0; i < npg; i++)
		n += v[i] & 1;
	return n;
}

static bool zero_but(const uint8_t *p, size_t len, size_t a, size_t b)
{
	for (size_t i = 0; i < len; i++)
		if (i != a && i != b && p[i])
			return false;
	return true;
}

int main(void)
{
	static uint8_t file[NP_FILE_HDR_LEN];
	memcpy(file, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
	file[8] = NP_FORMAT_VERSION;
	file[10] = NP_KIND_RECORDING;
	struct np_reader *r;
	CHECK(np_reader_open_mem(&r, file, sizeof(file), NULL, NULL) == 0, "a header-only file opens");
	struct ana_read *a = ana_read_new(r, 1, false);
	CHECK(a != NULL, "one read-ahead worker starts");

	uint8_t *m = mmap(NULL, 4 * NPG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mapping");
	if (!a || m == MAP_FAILED)
		return tap_done();
	m[0] = 0xab;                        /* written before: populating keeps it */
	m[5 * PG + 7] = 0xcd;
	CHECK_EQ_U(resident_now(m, 4 * NPG), 2);

	/* nothing to decode (no chunk): the worker takes the request */
	ana_read_populate(a, m, NPG * PG);
	CHECK_EQ_U(resident_wait(m, NPG), NPG);
	CHECK(m[0] == 0xab && m[5 * PG + 7] == 0xcd, "bytes written before kept");
	CHECK(zero_but(m, NPG * PG, 0, 5 * PG + 7), "the rest reads as zeros");
	CHECK_EQ_U(resident_now(m + NPG * PG, 3 * NPG), 0);   /* nothing past the request */

	/* a stale range (the array moved: unmapped) is harmless, and the worker
	 * serves the next request */
	uint8_t *gone = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(gone != MAP_FAILED && munmap(gone, NPG * PG) == 0, "a range unmapped");
	ana_read_populate(a, gone, NPG * PG);
	ana_read_populate(a, m + NPG * PG, NPG * PG);
	CHECK_EQ_U(resident_wait(m + NPG * PG, NPG), NPG);

	/* two requests that go on from each other: the second adds to the
	 * first when the worker has not started it, else it is one more
	 * request; either way both ranges end up present */
	ana_read_populate(a, m + 2 * NPG * PG, NPG * PG);
	ana_read_populate(a, m + 3 * NPG * PG, NPG * PG);
	CHECK_EQ_U(resident_wait(m + 2 * NPG * PG, 2 * NPG), 2 * NPG);
	CHECK(zero_but(m + NPG * PG, 3 * NPG * PG, SIZE_MAX, SIZE_MAX), "populated pages read as zeros");

	ana_read_populate(NULL, m, PG);     /* no reader: nothing */
	ana_read_free(a);
	np_reader_close(r);
	munmap(m, 4 * NPG * PG);
	return tap_done();
}
