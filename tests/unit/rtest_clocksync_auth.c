/* record/families/csmsg.c and record/families/csguard.c: the clock-sync wire codec, its MAC,
 * the key file and the listener's replay/rate guard. The expected bytes,
 * MAC and key were computed independently with Python's struct, hmac
 * (HMAC-SHA512 cut to 32 bytes) and hashlib.blake2b:
 *   key = blake2b(KEYFILE, digest_size=32)
 *   hmac.new(key, struct.pack("<IBBBBIIQQQQQ", 0x4e505359, 1, 2, 1, 0,
 *            0x01020304, 0, 0x1122334455667788, 1000, 2000, 3000, 4000),
 *            hashlib.sha512).digest()[:32] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "csguard.h"
#include "csmsg.h"
#include "tap.h"

#define KEYFILE "np-test-key-file-contents-0123456789\n"
static const char key_hex[] = "c06a6b898b6e6d22189adc8a5efaf3e124c888c199516f2cfd67d9e1f8243b08";
static const char mac_hex[] = "458c4c254909fa9fc73e84db37ba92baede098fc43d0a38d2ee44890b65d0b41";

static void unhex(const char *h, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sscanf(h + 2 * i, "%2hhx", &out[i]);
}

static int write_key(const char *path, mode_t mode, const char *content)
{
	unlink(path);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(content, f);
	fclose(f);
	return chmod(path, mode);
}

static void test_key_file(struct cs_key *key)
{
	char path[] = "/tmp/np-rtest-cskey.XXXXXX", err[256];
	int fd = mkstemp(path);
	close(fd);
	CHECK(write_key(path, 0644, KEYFILE) == 0, "write key file");
	CHECK(cs_key_load(path, key, err, sizeof(err)) == -EPERM && strstr(err, "too open"),
	      "mode 0644 refused like ssh: %s", err);
	write_key(path, 0640, KEYFILE);
	CHECK(cs_key_load(path, key, err, sizeof(err)) == -EPERM, "mode 0640 refused");
	write_key(path, 0600, "short");
	CHECK(cs_key_load(path, key, err, sizeof(err)) == -EINVAL, "5-byte key refused: %s", err);
	write_key(path, 0600, KEYFILE);
	CHECK(cs_key_load(path, key, err, sizeof(err)) == 0, "mode 0600 loads: %s", err);
	uint8_t want[CS_KEY_LEN];
	unhex(key_hex, want, sizeof(want));
	CHECK(key->set && memcmp(key->k, want, CS_KEY_LEN) == 0, "key = BLAKE2b-256 of the file");
	unlink(path);
}

static const struct cs_msg ref = { .type = CS_REQ, .seq = 0x01020304,
	.sender_id = 0x1122334455667788ull, .t1 = 1000, .t2 = 2000, .t3 = 3000, .t4 = 4000 };

static void test_codec(const struct cs_key *key)
{
	uint8_t w[CS_MSG_LEN], mac[CS_MAC_LEN];
	struct cs_msg m;
	CHECK_EQ_U(cs_msg_encode(&ref, key, w), CS_MSG_LEN);
	unhex(mac_hex, mac, sizeof(mac));
	CHECK(memcmp(w + 56, mac, CS_MAC_LEN) == 0, "MAC equals Python's HMAC-SHA512-256");
	CHECK(w[0] == 0x59 && w[3] == 0x4e && w[5] == 2 && w[6] == 1 && w[8] == 4 && w[16] == 0x88,
	      "wire layout: magic, version 2, MAC flag, little-endian seq and id");
	CHECK(cs_msg_decode(w, sizeof(w), key, &m) == CS_MSG_AUTH, "own message verifies");
	CHECK(m.seq == ref.seq && m.sender_id == ref.sender_id && m.t1 == 1000 && m.t4 == 4000 &&
	      m.type == CS_REQ && m.version == CS_WIRE_V2, "fields round-trip");
	unsigned accepted = 0;
	for (size_t i = 0; i < sizeof(w); i++)
		for (int bit = 0; bit < 8; bit++) {
			uint8_t x[CS_MSG_LEN];
			memcpy(x, w, sizeof(x));
			x[i] ^= (uint8_t)(1u << bit);
			accepted += cs_msg_decode(x, sizeof(x), key, &m) == CS_MSG_AUTH;
		}
	CHECK(accepted == 0, "%u of 704 single-bit changes accepted", accepted);
	struct cs_key other = *key;
	other.k[0] ^= 1;
	CHECK(cs_msg_decode(w, sizeof(w), &other, &m) == CS_MSG_BAD_MAC, "another key: bad MAC");
	CHECK(cs_msg_decode(w, sizeof(w), NULL, &m) == CS_MSG_PLAIN, "no key: read, unverified");
}

static void test_unkeyed(const struct cs_key *key)
{
	uint8_t w[CS_MSG_LEN + 1];
	struct cs_msg m;
	cs_msg_encode(&ref, NULL, w);
	CHECK(cs_msg_decode(w, CS_MSG_LEN, key, &m) == CS_MSG_NO_MAC, "unkeyed sender vs keyed receiver");
	w[5] = 0;                       /* version 1: 56 bytes, 0 where the version is now */
	CHECK(cs_msg_decode(w, CS_MSG_V1_LEN, NULL, &m) == CS_MSG_PLAIN && m.version == CS_WIRE_V1,
	      "a version-1 message is still read without a key");
	CHECK(cs_msg_decode(w, CS_MSG_V1_LEN, key, &m) == CS_MSG_NO_MAC, "version 1 refused with a key");
	cs_msg_encode(&ref, NULL, w);
	size_t lens[] = { 0, 1, 55, 57, 87, 89 };
	unsigned bad = 0;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		bad += cs_msg_decode(w, lens[i], NULL, &m) != CS_MSG_MALFORMED;
	CHECK(bad == 0, "every other length is malformed");
	w[4] = 4;
	CHECK(cs_msg_decode(w, CS_MSG_LEN, NULL, &m) == CS_MSG_MALFORMED, "unknown type");
}

static void test_guard(void)
{
	struct cs_guard *g = calloc(1, sizeof(*g));
	uint64_t src = csg_hash("10.0.0.1:5000", 13), other = csg_hash("10.0.0.9:5000", 13);
	csg_answered(g, 7, 42, src, 100, 200);
	CHECK(csg_report(g, 7, 43, src, 100, 200) == CSG_UNMATCHED, "other seq: unmatched");
	CHECK(csg_report(g, 8, 42, src, 100, 200) == CSG_UNMATCHED, "other sender: unmatched");
	CHECK(csg_report(g, 7, 42, other, 100, 200) == CSG_UNMATCHED, "other source: unmatched");
	CHECK(csg_report(g, 7, 42, src, 100, 201) == CSG_UNMATCHED, "forged T3: unmatched");
	CHECK(csg_report(g, 7, 42, src, 100, 200) == CSG_MATCHED, "the answered request matches");
	CHECK(csg_report(g, 7, 42, src, 100, 200) == CSG_REPLAYED, "the same report again: replayed");
	unsigned admitted = 0;
	for (int i = 0; i < 3 * CSG_BURST; i++)
		admitted += csg_admit(g, src, 1000000000ull);
	CHECK_EQ_U(admitted, CSG_BURST);
	CHECK(csg_admit(g, other, 1000000000ull), "another source has its own bucket");
	admitted = 0;
	for (int i = 0; i < CSG_BURST; i++)     /* 100 ms later: 500 tokens back */
		admitted += csg_admit(g, src, 1100000000ull);
	CHECK_EQ_U(admitted, CSG_RATE_PER_S / 10);
	free(g);
}

int main(void)
{
	struct cs_key key;
	test_key_file(&key);
	test_codec(&key);
	test_unkeyed(&key);
	test_guard();
	return tap_done();
}
