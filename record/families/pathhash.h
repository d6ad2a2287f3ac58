/* The hash of an HTTP path kept with every transaction (TXN_STATS and
 * TXN_EVENTS path_hash). */
#ifndef NP_REC_PATHHASH_H
#define NP_REC_PATHHASH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RC_PATHKEY_LEN 16   /* crypto_shorthash_KEYBYTES */

struct rc_pathkey {
	bool keyed;
	uint8_t k[RC_PATHKEY_LEN];
};

/* Without --redact-paths the path itself is stored and the hash only
 * groups: FNV-1a 64, unkeyed. With it, the hash is all that is stored, and
 * an unkeyed hash of "/login" can be confirmed by anyone who hashes
 * "/login": SipHash-2-4 keyed by --redact-key FILE (the same file on every
 * host keeps their paths comparable) or else by a random key of this run,
 * which is never written. Returns 0 or -errno with err filled. */
int rc_pathkey_init(struct rc_pathkey *key, bool redact, const char *keyfile,
		    char *err, size_t errlen);
uint64_t rc_path_hash(const struct rc_pathkey *key, const char *s, size_t n);
void rc_pathkey_wipe(struct rc_pathkey *key);

#endif
