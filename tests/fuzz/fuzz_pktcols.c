/* libFuzzer target: the packet-path column decoders (common/pktcols.c) on
 * arbitrary msgpack. Whatever decodes must re-encode to the same events. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pktcols.h"

static void fz_roundtrip(const struct pktcols_ev *ev, size_t n)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, PKTCOLS_EVENT_KEYS);
	pktcols_pack_events(&pk, ev, n);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	struct pktcols_ev *again = NULL;
	size_t m = 0;
	if (msgpack_unpack_next(&u, sb.data, sb.size, NULL) != MSGPACK_UNPACK_SUCCESS ||
	    pktcols_unpack_events(&u.data, &again, &m) || m != n)
		abort();
	for (size_t i = 0; i < n; i++) {
		/* the packer keeps the low bits the columns hold */
		if (again[i].ts != ev[i].ts || again[i].seq != ev[i].seq || again[i].ack != ev[i].ack ||
		    again[i].ipid != ev[i].ipid || again[i].end_seq != ev[i].end_seq)
			abort();
		(void)pktcols_id(&again[i]);
		if (i)
			(void)pktcols_covers(&again[i - 1], &again[i]);
	}
	free(again);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

/* msgpack-c allocates what a header claims before reading the elements;
 * the container reader checks lengths first (container.c), so does this:
 * an object whose element counts exceed the bytes left is refused. Returns
 * the object's length or 0. */
static uint64_t fz_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = (v << 8) | p[i];
	return v;
}

static size_t fz_len(const uint8_t *p, size_t n, int depth)
{
	if (!n || depth > 32)
		return 0;
	uint8_t b = p[0];
	uint64_t cnt = 0, fixed = 0;
	size_t hdr = 1;
	int kind = 0, lenbytes = 0;   /* kind: 0 scalar/bytes, 1 array, 2 map */
	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
		fixed = 0;
	else if (b >= 0x80 && b <= 0x8f)
		kind = 2, cnt = b & 15;
	else if (b >= 0x90 && b <= 0x9f)
		kind = 1, cnt = b & 15;
	else if (b >= 0xa0 && b <= 0xbf)
		fixed = b & 31;
	else if (b == 0xcc || b == 0xd0)
		fixed = 1;
	else if (b == 0xcd || b == 0xd1)
		fixed = 2;
	else if (b == 0xca || b == 0xce || b == 0xd2)
		fixed = 4;
	else if (b == 0xcb || b == 0xcf || b == 0xd3)
		fixed = 8;
	else if (b == 0xd9 || b == 0xc4)
		lenbytes = 1;
	else if (b == 0xda || b == 0xc5)
		lenbytes = 2;
	else if (b == 0xdb || b == 0xc6)
		lenbytes = 4;
	else if (b == 0xdc || b == 0xdd)
		kind = 1, lenbytes = b == 0xdc ? 2 : 4;
	else if (b == 0xde || b == 0xdf)
		kind = 2, lenbytes = b == 0xde ? 2 : 4;
	else
		return 0;     /* ext types: not used by np */
	if (lenbytes) {
		if (n < 1 + (size_t)lenbytes)
			return 0;
		hdr = 1 + lenbytes;
		if (kind)
			cnt = fz_be(p + 1, lenbytes);
		else
			fixed = fz_be(p + 1, lenbytes);
	}
	if (!kind)
		return fixed <= n - hdr ? hdr + fixed : 0;
	if (kind == 2)
		cnt *= 2;
	if (cnt > n - hdr)
		return 0;
	size_t off = hdr;
	for (uint64_t i = 0; i < cnt; i++) {
		size_t l = fz_len(p + off, n - off, depth + 1);
		if (!l)
			return 0;
		off += l;
	}
	return off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	int guard = 0;
	while (guard++ < 64 && off < size && fz_len(data + off, size - off, 0) &&
	       msgpack_unpack_next(&u, (const char *)data, size, &off) == MSGPACK_UNPACK_SUCCESS) {
		if (u.data.type != MSGPACK_OBJECT_MAP)
			continue;
		struct pktcols_ev *ev = NULL;
		size_t n = 0;
		if (pktcols_unpack_events(&u.data, &ev, &n) == 0) {
			fz_roundtrip(ev, n);
			free(ev);
		}
		struct pktcols_flow *fl = NULL;
		if (pktcols_unpack_flows(&u.data, &fl, &n) == 0)
			free(fl);
	}
	msgpack_unpacked_destroy(&u);
	return 0;
}
