/* The path hash of --redact-paths (record/families/pathhash.c) and the key
 * files of --redact-key / --sync-key (record/core/keyfile.c):
 *  - without redaction the hash is FNV-1a 64, as recordings always had it
 *    (standard vector);
 *  - with it, SipHash-2-4 (the reference vector of the SipHash paper), keyed
 *    from the file: the same file gives the same hashes (hosts stay
 *    comparable), another file others; without a file a random key per run;
 *  - key files that are too open, too short or not regular are refused with
 *    a message naming the option. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "keyfile.h"
#include "pathhash.h"
#include "tap.h"

static char ph_dir[] = "/tmp/np-test-pathhash.XXXXXX";

/* A key file of n bytes (each byte seed + i) with mode. */
static const char *ph_keyfile(const char *name, size_t n, int seed, mode_t mode)
{
	static char path[6][128];
	static int next;
	char *p = path[next++ % 6];
	unsigned char buf[64];
	snprintf(p, sizeof(path[0]), "%s/%s", ph_dir, name);
	for (size_t i = 0; i < n && i < sizeof(buf); i++)
		buf[i] = (unsigned char)(seed + (int)i);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, buf, n) == (ssize_t)n && fchmod(fd, mode) == 0, "write %s", p);
	if (fd >= 0)
		close(fd);
	return p;
}

static void test_unkeyed(void)
{
	struct rc_pathkey k;
	char err[256] = "";
	CHECK(rc_pathkey_init(&k, false, NULL, err, sizeof(err)) == 0 && !k.keyed, "no redaction: unkeyed");
	CHECK(rc_path_hash(&k, "a", 1) == 0xaf63dc4c8601ec8cull, "FNV-1a 64 of \"a\" (standard vector)");
}

static void test_siphash_vector(void)
{
	struct rc_pathkey k = { .keyed = true };
	char msg[15];
	for (int i = 0; i < 16; i++)
		k.k[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (char)i;
	uint64_t h = rc_path_hash(&k, msg, sizeof(msg));
	CHECK(h == 0xa129ca6149be45e5ull, "SipHash-2-4 reference vector: %016llx", (unsigned long long)h);
}

static void test_keyed(void)
{
	const char *f1 = ph_keyfile("k1", 32, 1, 0600), *f2 = ph_keyfile("k2", 32, 2, 0600);
	struct rc_pathkey a, b, c, r1, r2, plain;
	char err[256] = "";
	CHECK(rc_pathkey_init(&a, true, f1, err, sizeof(err)) == 0 && a.keyed, "key from file: %s", err);
	CHECK(rc_pathkey_init(&b, true, f1, err, sizeof(err)) == 0, "same file again: %s", err);
	CHECK(rc_pathkey_init(&c, true, f2, err, sizeof(err)) == 0, "another file: %s", err);
	CHECK(rc_pathkey_init(&r1, true, NULL, err, sizeof(err)) == 0 && r1.keyed, "random key: %s", err);
	CHECK(rc_pathkey_init(&r2, true, NULL, err, sizeof(err)) == 0, "another random key: %s", err);
	rc_pathkey_init(&plain, false, NULL, err, sizeof(err));
	const char *p = "/login";
	uint64_t ha = rc_path_hash(&a, p, 6), hb = rc_path_hash(&b, p, 6), hc = rc_path_hash(&c, p, 6);
	uint64_t h1 = rc_path_hash(&r1, p, 6), h2 = rc_path_hash(&r2, p, 6), hp = rc_path_hash(&plain, p, 6);
	CHECK(ha == hb, "same key file, same hash (hosts comparable)");
	CHECK(ha != hc, "another key file, another hash");
	CHECK(h1 != h2, "random keys differ between runs");
	CHECK(ha != hp && h1 != hp, "a keyed hash is not the guessable FNV-1a of the path");
	CHECK(rc_path_hash(&a, "/logon", 6) != ha, "another path, another hash");
	rc_pathkey_wipe(&a);
	CHECK(!a.keyed && a.k[0] == 0 && a.k[15] == 0, "wiped");
}

static void test_refused(void)
{
	struct rc_pathkey k;
	char err[256] = "";
	int rc = rc_pathkey_init(&k, true, ph_keyfile("open", 32, 3, 0644), err, sizeof(err));
	CHECK(rc == -EPERM && strstr(err, "--redact-key") && strstr(err, "too open"), "0644 refused: %s", err);
	rc = rc_pathkey_init(&k, true, ph_keyfile("short", 8, 3, 0600), err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "--redact-key"), "8 bytes refused: %s", err);
	rc = rc_pathkey_init(&k, true, ph_dir, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "not a regular file"), "a directory refused: %s", err);
	char missing[160];
	snprintf(missing, sizeof(missing), "%s/none", ph_dir);
	rc = rc_pathkey_init(&k, true, missing, err, sizeof(err));
	CHECK(rc == -ENOENT, "a missing file refused: %s", err);
	uint8_t key[16];
	rc = rc_keyfile_load("--sync-key", ph_keyfile("open2", 32, 4, 0640), key, sizeof(key), err, sizeof(err));
	CHECK(rc == -EPERM && strstr(err, "--sync-key"), "the message names the option given: %s", err);
}

int main(void)
{
	static void (*const tests[])(void) = {
		test_unkeyed, test_siphash_vector, test_keyed, test_refused, NULL
	};
	return tap_run_in(ph_dir, tests);
}
