/* See csmsg.h. The MAC is libsodium's crypto_auth (HMAC-SHA512-256), checked
 * with its constant-time verify: a vetted implementation, not our own. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <endian.h>
#include <sys/stat.h>
#include <sodium.h>

#include "csmsg.h"
#include "keyfile.h"

static void put32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

/* Layout (little endian): magic u32 | type u8 | version u8 | flags u8 | 0 u8 |
 * seq u32 | 0 u32 | sender_id u64 | t1..t4 u64 | mac[32] (version 2). The
 * MAC covers bytes 0..55, so every field, the version and the flags. */
size_t cs_msg_encode(const struct cs_msg *m, const struct cs_key *key, uint8_t out[CS_MSG_LEN])
{
	memset(out, 0, CS_MSG_LEN);
	put32(out, CS_MAGIC);
	out[4] = m->type;
	out[5] = CS_WIRE_V2;
	out[6] = key && key->set ? CS_FLAG_MAC : 0;
	put32(out + 8, m->seq);
	put64(out + 16, m->sender_id);
	put64(out + 24, m->t1);
	put64(out + 32, m->t2);
	put64(out + 40, m->t3);
	put64(out + 48, m->t4);
	if (key && key->set)
		crypto_auth(out + CS_MSG_V1_LEN, out, CS_MSG_V1_LEN, key->k);
	return CS_MSG_LEN;
}

static void cs_fields(const uint8_t *buf, struct cs_msg *m)
{
	m->type = buf[4];
	m->version = buf[5] ? buf[5] : CS_WIRE_V1;    /* version 1 sent 0 there */
	m->flags = buf[6];
	m->seq = get32(buf + 8);
	m->sender_id = get64(buf + 16);
	m->t1 = get64(buf + 24);
	m->t2 = get64(buf + 32);
	m->t3 = get64(buf + 40);
	m->t4 = get64(buf + 48);
}

static bool cs_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Strict: padding zero, no unknown flag, an absent MAC all zero, so that
 * every accepted datagram is exactly what cs_msg_encode writes. */
enum cs_verdict cs_msg_decode(const uint8_t *buf, size_t len, const struct cs_key *key,
			      struct cs_msg *m)
{
	if (len != CS_MSG_V1_LEN && len != CS_MSG_LEN)
		return CS_MSG_MALFORMED;
	if (get32(buf) != CS_MAGIC || buf[4] < CS_REQ || buf[4] > CS_REPORT)
		return CS_MSG_MALFORMED;
	bool v2 = len == CS_MSG_LEN;
	if ((v2 && buf[5] != CS_WIRE_V2) || (!v2 && buf[5] != 0) || !cs_zero(buf + 7, 1) ||
	    !cs_zero(buf + 12, 4) || (buf[6] & ~CS_FLAG_MAC) || (!v2 && buf[6]))
		return CS_MSG_MALFORMED;
	bool has_mac = v2 && (buf[6] & CS_FLAG_MAC);
	if (v2 && !has_mac && !cs_zero(buf + CS_MSG_V1_LEN, CS_MAC_LEN))
		return CS_MSG_MALFORMED;
	if (key && key->set) {
		if (!has_mac)
			return CS_MSG_NO_MAC;
		if (crypto_auth_verify(buf + CS_MSG_V1_LEN, buf, CS_MSG_V1_LEN, key->k) != 0)
			return CS_MSG_BAD_MAC;
	}
	cs_fields(buf, m);
	return key && key->set ? CS_MSG_AUTH : CS_MSG_PLAIN;
}

int cs_key_load(const char *path, struct cs_key *key, char *err, size_t errlen)
{
	memset(key, 0, sizeof(*key));
	int rc = rc_keyfile_load("--sync-key", path, key->k, sizeof(key->k), err, errlen);
	key->set = rc == 0;
	return rc;
}

void cs_key_wipe(struct cs_key *key)
{
	sodium_memzero(key, sizeof(*key));
}
