/* np_crc32 (common/container.c: carry-less multiplication on x86-64
 * with PCLMULQDQ, zlib below 64 bytes and elsewhere) equals zlib's
 * crc32 on every length from 0 to 1100 and on large buffers, at every
 * alignment of the start, on random bytes and on runs of 0x00 and 0xff;
 * the check value of "123456789" is 0xcbf43926. */
#include "tap.h"
#include "xorshift.h"
#include "container.h"

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

static uint8_t rnd8(void)
{
	return (uint8_t)(xs_next() >> 24);
}

static uint32_t ref(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

int main(void)
{
	enum { BIG = 3 << 20 };
	uint8_t *buf = malloc(BIG + 64);
	for (size_t i = 0; i < BIG + 64; i++)
		buf[i] = rnd8();
	CHECK_EQ_U(np_crc32("123456789", 9), 0xcbf43926u);
	size_t bad = 0, runs = 0;
	for (size_t len = 0; len <= 1100; len++)
		for (size_t a = 0; a < 16; a += len < 200 ? 1 : 5) {
			runs++;
			bad += np_crc32(buf + a, len) != ref(buf + a, len);
		}
	CHECK(bad == 0, "%zu of %zu lengths/alignments differ from zlib", bad, runs);
	static const size_t big[] = { 4096, 65536, 65537, 1000003, BIG };
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		for (size_t a = 0; a < 3; a++)
			CHECK(np_crc32(buf + a, big[i]) == ref(buf + a, big[i]), "length %zu at +%zu", big[i], a);
	for (int v = 0; v < 2; v++) {
		for (size_t i = 0; i < 4096; i++)
			buf[i] = v ? 0xff : 0;
		for (size_t len = 60; len <= 4096; len += 37)
			CHECK(np_crc32(buf, len) == ref(buf, len), "%zu bytes of 0x%02x", len, v ? 0xff : 0);
	}
	free(buf);
	return tap_done();
}
