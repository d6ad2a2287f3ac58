/* libFuzzer target: the clock-sync datagram parser (record/families/csmsg.c), which
 * reads what anyone on the network sends to --sync-listen, and the
 * listener's guard fed with whatever it accepts. The first input byte picks
 * keyed or unkeyed; the rest is the datagram. Whatever is accepted must be
 * exactly what the encoder writes for the decoded fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../record/families/csmsg.c"
#include "../../record/families/csguard.c"
#include "../../record/core/keyfile.c"

static struct cs_guard guard;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct cs_key key = { .set = data[0] & 1 };
	memset(key.k, 0x5a, sizeof(key.k));
	const uint8_t *d = data + 1;
	size_t n = size - 1;
	struct cs_msg m;
	enum cs_verdict v = cs_msg_decode(d, n, &key, &m);
	if (v != CS_MSG_AUTH && v != CS_MSG_PLAIN)
		return 0;
	if (v == CS_MSG_AUTH && !key.set)
		abort();
	uint8_t w[CS_MSG_LEN];
	cs_msg_encode(&m, &key, w);
	if (v == CS_MSG_PLAIN && n == CS_MSG_LEN && (d[6] & CS_FLAG_MAC)) {
		w[6] = d[6];        /* a MAC we have no key to check: taken as is */
		memcpy(w + CS_MSG_V1_LEN, d + CS_MSG_V1_LEN, CS_MAC_LEN);
	}
	if (n == CS_MSG_LEN && memcmp(w, d, n) != 0)
		abort();        /* accepted bytes the encoder would not write */
	if (n == CS_MSG_V1_LEN && (key.set || memcmp(w, d, 5) != 0 || memcmp(w + 6, d + 6, 50) != 0))
		abort();
	uint64_t src = csg_hash(d, n < 16 ? n : 16);
	csg_admit(&guard, src, m.t1);
	if (m.type == CS_REQ)
		csg_answered(&guard, m.sender_id, m.seq, src, m.t2, m.t3);
	else if (m.type == CS_REPORT)
		csg_report(&guard, m.sender_id, m.seq, src, m.t2, m.t3);
	return 0;
}
