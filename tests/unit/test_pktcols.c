/* Packet-path columns and the packet-ID rules (common/pktcols.c,
 * bpf/pktpath.h): encode/decode round trip with per-flow deltas across
 * sequence wrap, malformed bodies refused, the GSO coverage rule, and IDs
 * that differ for a retransmission but not across NAT. */
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "tap.h"
#include "npmsg.h"
#include "pktcols.h"
#include "pktpath.h"

static msgpack_sbuffer pack(const struct pktcols_ev *ev, size_t n, const char *drop)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (!drop) {
		msgpack_pack_map(&pk, PKTCOLS_EVENT_KEYS);
		pktcols_pack_events(&pk, ev, n);
		return sb;
	}
	/* re-pack without one key: decode a full body, copy all others */
	msgpack_sbuffer full = pack(ev, n, NULL);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	msgpack_unpack_next(&u, full.data, full.size, NULL);
	msgpack_pack_map(&pk, PKTCOLS_EVENT_KEYS - 1);
	for (uint32_t i = 0; i < u.data.via.map.size; i++) {
		const msgpack_object_kv *kv = &u.data.via.map.ptr[i];
		if (kv->key.via.str.size == strlen(drop) && !memcmp(kv->key.via.str.ptr, drop, strlen(drop)))
			continue;
		msgpack_pack_object(&pk, kv->key);
		msgpack_pack_object(&pk, kv->val);
	}
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&full);
	return sb;
}

static int unpack(msgpack_sbuffer *sb, struct pktcols_ev **out, size_t *n)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	int rc = -1;
	if (msgpack_unpack_next(&u, sb->data, sb->size, NULL) == MSGPACK_UNPACK_SUCCESS)
		rc = pktcols_unpack_events(&u.data, out, n);
	msgpack_unpacked_destroy(&u);
	return rc;
}

int main(void)
{
	enum { N = 300 };
	struct pktcols_ev ev[N];
	memset(ev, 0, sizeof(ev));
	for (int i = 0; i < N; i++) {
		struct pktcols_ev *e = &ev[i];
		e->ts = 1000000000ull + (uint64_t)i * 1700;
		e->flow = i % 3;
		e->seq = 4294900000u + (uint32_t)(i / 3) * 1448;     /* wraps past 2^32 */
		e->end_seq = e->seq + (i % 5 ? 1448 : 0);
		e->ack = 77u + (uint32_t)(i % 3) * 1000000000u;
		e->tsval = 5000 + i / 30;
		e->ipid = (uint16_t)(65500 + i);                      /* wraps past 2^16 */
		e->hook = 1 + i % 12;
		e->doff = 8;
		e->tcpflags = 0x10;
		e->len = 1514;
		e->gso = i % 7 ? 0 : 1448;
		e->cpu = i & 1;
	}
	msgpack_sbuffer sb = pack(ev, N, NULL);
	struct pktcols_ev *out = NULL;
	size_t n = 0;
	CHECK(unpack(&sb, &out, &n) == 0, "decode");
	CHECK_EQ_U(n, N);
	int same = 0;
	for (size_t i = 0; out && i < n; i++)
		same += !memcmp(&ev[i], &out[i], sizeof(ev[i]));
	CHECK_EQ_U(same, N);
	CHECK(sb.size < (size_t)N * 40, "columnar body %zu bytes for %d events", sb.size, N);
	free(out);
	msgpack_sbuffer_destroy(&sb);

	static const char *const cols[] = { "ts_d", "hook", "seq_fd", "ipid_fd", "slen" };
	for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
		msgpack_sbuffer b = pack(ev, N, cols[k]);
		out = NULL;
		CHECK(unpack(&b, &out, &n) != 0 && out == NULL, "body without %s refused", cols[k]);
		msgpack_sbuffer_destroy(&b);
	}

	/* GSO rule: a 10-segment super-packet and its segments. */
	struct pktcols_ev s = { .seq = 4294960000u, .ack = 9, .tsval = 42, .doff = 8, .ipid = 65530,
				.gso = 1448, .tcpflags = 0x18 };
	s.end_seq = s.seq + 10 * 1448;
	int covered = 0, idsame = 0;
	for (uint32_t k = 0; k < 10; k++) {
		struct pktcols_ev r = s;
		r.seq = s.seq + k * 1448;
		r.end_seq = r.seq + 1448;
		r.ipid = (uint16_t)(s.ipid + k);
		r.gso = 0;
		r.tcpflags = k == 9 ? 0x18 : 0x10;
		covered += pktcols_covers(&s, &r);
		struct pktcols_ev v = s;
		v.seq = r.seq;
		v.ipid = r.ipid;
		idsame += pktcols_id(&v) == pktcols_id(&r);
	}
	CHECK_EQ_U(covered, 10);
	CHECK_EQ_U(idsame, 10);
	struct pktcols_ev first = s;
	first.end_seq = first.seq + 1448;
	first.gso = 0;
	CHECK(pktcols_id(&first) == pktcols_id(&s), "super-packet ID = first segment's ID");
	struct pktcols_ev rx = first;
	rx.ipid = (uint16_t)(s.ipid + 40);           /* a retransmission of segment 0 */
	CHECK(!pktcols_covers(&s, &rx), "retransmission not covered by the original");
	CHECK(pktcols_id(&rx) != pktcols_id(&first), "retransmission has another ID");
	struct pktcols_ev other = s;
	other.seq += 1448 * 3 + 100;                 /* not on a segment boundary */
	other.end_seq = other.seq + 1448;
	other.ipid = (uint16_t)(s.ipid + 3);
	CHECK(!pktcols_covers(&s, &other), "misaligned segment refused");
	struct pktcols_ev ack = first;
	ack.ack++;
	CHECK(!pktcols_covers(&s, &ack), "other ack refused");
	CHECK(pktcols_hook_name(PK_HOOK_DEV_XMIT) && !strcmp(pktcols_hook_name(PK_HOOK_DEV_XMIT), "dev_xmit"),
	      "hook names");
	CHECK(pktcols_hook_name(200) == NULL, "unknown hook");
	return tap_done();
}
