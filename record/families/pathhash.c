// SPDX-License-Identifier: GPL-2.0
/* See pathhash.h. The keyed hash is libsodium's crypto_shorthash (a vetted
 * SipHash-2-4, 64-bit output), not our own. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sodium.h>
#include "keyfile.h"
#include "pathhash.h"

_Static_assert(RC_PATHKEY_LEN == crypto_shorthash_KEYBYTES, "SipHash key size");
_Static_assert(crypto_shorthash_BYTES == 8, "SipHash output: 64 bits");

int rc_pathkey_init(struct rc_pathkey *key, bool redact, const char *keyfile,
		    char *err, size_t errlen)
{
	memset(key, 0, sizeof(*key));
	if (!redact)
		return 0;
	if (keyfile) {
		int rc = rc_keyfile_load("--redact-key", keyfile, key->k, sizeof(key->k), err, errlen);
		if (rc)
			return rc;
	} else {
		if (sodium_init() < 0) {
			snprintf(err, errlen, "--redact-paths: libsodium failed to initialise");
			return -EIO;
		}
		randombytes_buf(key->k, sizeof(key->k));
	}
	key->keyed = true;
	return 0;
}

uint64_t rc_path_hash(const struct rc_pathkey *key, const char *s, size_t n)
{
	if (!key->keyed) {
		/* the standard offset basis: recordings before 2026-11-26 used
		 * one digit short of it (1469598103934665603), so their unredacted
		 * path_hash values differ from these; nothing reads them */
		uint64_t h = 14695981039346656037ull;
		for (size_t i = 0; i < n; i++)
			h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
		return h;
	}
	uint8_t out[crypto_shorthash_BYTES];
	uint64_t h;
	crypto_shorthash(out, (const unsigned char *)s, n, key->k);
	memcpy(&h, out, sizeof(h));
	return le64toh(h);
}

void rc_pathkey_wipe(struct rc_pathkey *key)
{
	sodium_memzero(key, sizeof(*key));
}
