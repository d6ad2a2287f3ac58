/* Secret key files named on nprec's command line (--sync-key, --redact-key). */
#ifndef NP_REC_KEYFILE_H
#define NP_REC_KEYFILE_H
#include <stddef.h>
#include <stdint.h>

#define RC_KEYFILE_MIN 16
#define RC_KEYFILE_MAX 4096

/* Loads the key file path given with option opt (for the messages): a
 * regular file owned by us (or root), no access for group or others (like
 * ssh's private keys), RC_KEYFILE_MIN..MAX bytes of secret. key receives
 * keylen (16..64) bytes of BLAKE2b of its contents, so `head -c 32
 * /dev/urandom` and `openssl rand -hex 32` both make one. Returns 0 or
 * -errno with err filled. */
int rc_keyfile_load(const char *opt, const char *path, uint8_t *key, size_t keylen,
		    char *err, size_t errlen);

#endif
