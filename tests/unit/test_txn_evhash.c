/* The connection hash that decides which connections' transaction events
 * are kept (bpf/txn.h, txn_ev_hash): both ends of a connection compute the
 * same value (the client's local endpoint is the server's remote one), and
 * a 1-in-N threshold keeps about 1 in N of many connections. */
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include "txn.h"
#include "tap.h"

static void ep(uint32_t a[4], uint32_t v4)
{
	a[0] = a[1] = 0;
	a[2] = htonl(0xffff);
	a[3] = htonl(v4);
}

int main(void)
{
	uint32_t cl[4], sv[4];
	unsigned asym = 0, kept16 = 0, kept2 = 0, n = 0;
	ep(sv, 0x0a4d0902);                       /* 10.77.9.2 */
	for (uint32_t host = 1; host <= 16; host++) {
		ep(cl, 0x0a4d0900 + host);
		for (uint32_t port = 32768; port < 32768 + 4096; port++, n++) {
			uint16_t c = txn_ev_hash(cl, (uint16_t)port, sv, 8080);
			uint16_t s = txn_ev_hash(sv, 8080, cl, (uint16_t)port);
			asym += c != s;
			kept16 += c < TXN_EV_ALL / 16;
			kept2 += c < TXN_EV_ALL / 2;
		}
	}
	CHECK_EQ_U(asym, 0);
	/* binomial sd of 65536 draws at 1/16: 62; 5 sd either side */
	CHECK(kept16 > n / 16 - 310 && kept16 < n / 16 + 310, "1 in 16: %u of %u kept", kept16, n);
	CHECK(kept2 > n / 2 - 640 && kept2 < n / 2 + 640, "1 in 2: %u of %u kept", kept2, n);
	/* the two directions of one endpoint pair are one connection; swapping
	 * the ports of the ends is another */
	ep(cl, 0x0a4d0901);
	CHECK(txn_ev_hash(cl, 40000, sv, 8080) != txn_ev_hash(cl, 8080, sv, 40000), "ports bound to their address");
	return tap_done();
}
