/* Clock-sync wire messages (docs/CLOCKSYNC-EXCHANGE.md): the codec, the MAC
 * and the key file, shared by the clocksync family, its unit test and the
 * fuzz target. Nothing here touches a socket. */
#ifndef NP_REC_CSMSG_H
#define NP_REC_CSMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CS_MAGIC       0x4e505359u     /* "NPSY" */
#define CS_WIRE_V1     1               /* 56 bytes, no MAC (nprec before issue 25) */
#define CS_WIRE_V2     2               /* 88 bytes, 32-byte MAC field */
#define CS_MSG_V1_LEN  56
#define CS_MSG_LEN     88
#define CS_MAC_LEN     32              /* crypto_auth_BYTES (HMAC-SHA512-256) */
#define CS_KEY_LEN     32              /* crypto_auth_KEYBYTES */
#define CS_FLAG_MAC    0x01            /* the MAC field holds a MAC */

enum cs_type { CS_REQ = 1, CS_REPLY = 2, CS_REPORT = 3 };

struct cs_msg {
	uint8_t type, version, flags;
	uint32_t seq;
	uint64_t sender_id;
	uint64_t t1, t2, t3, t4;
};

/* What a received datagram turned out to be. */
enum cs_verdict {
	CS_MSG_AUTH,        /* well formed, MAC verified with our key */
	CS_MSG_PLAIN,       /* well formed, no key on our side: not verified */
	CS_MSG_MALFORMED,   /* wrong length, magic, version or type */
	CS_MSG_NO_MAC,      /* we have a key, the sender sent none */
	CS_MSG_BAD_MAC,     /* we have a key, the MAC does not verify */
};

struct cs_key {
	bool set;
	uint8_t k[CS_KEY_LEN];
};

/* Wire form of m (version 2; MAC over the first 56 bytes when key->set).
 * Returns the length to send. */
size_t cs_msg_encode(const struct cs_msg *m, const struct cs_key *key, uint8_t out[CS_MSG_LEN]);
/* Parses and checks one datagram; m is filled for AUTH and PLAIN. */
enum cs_verdict cs_msg_decode(const uint8_t *buf, size_t len, const struct cs_key *key,
			      struct cs_msg *m);
/* Loads --sync-key FILE: a regular file owned by us (or root), no access for
 * group or others (like ssh's private keys), 16..4096 bytes of secret; the
 * key is BLAKE2b-256 of its contents, so `head -c 32 /dev/urandom` and
 * `openssl rand -hex 32` both make one. Returns 0 or -errno (err filled). */
int cs_key_load(const char *path, struct cs_key *key, char *err, size_t errlen);
void cs_key_wipe(struct cs_key *key);

#endif
