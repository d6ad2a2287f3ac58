/* Client transactions named from their servers' recordings
 * (analyze/ana_txname.c), on in-memory models with known answers: a
 * client recorded without send calls has no request lines; three
 * requests on one keep-alive connection take the paths of the server
 * transactions inside them across a 5 ms clock offset, in order, however
 * close together; a client event with a line of its own keeps it; a
 * connection whose server was not recorded, or whose client port two
 * server connections see, stays unnamed; through a balancer's DNAT the
 * server connection that saw the client's port names it, from its row's
 * request line when it kept no events; the client's
 * TXN_STATS row takes its server row's request line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "tap.h"

#define US 1000ull
#define MS 1000000ull
#define T0 (1000 * MS)
#define OFF (5 * MS)            /* srv's clock runs 5 ms ahead of cli's */

static void host(struct ana_model *m, const char *name, double b)
{
	struct ana_host *h = ANA_PUSH(m->hosts);
	if (!h)
		return;
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->clk_a = 1.0;
	h->clk_b = b;
	h->clk_quality = b == 0 ? ANA_CLK_REF : ANA_CLK_ACCURATE;
}

/* a TXN_STATS row as ana_load builds it: conn "local>peer", endpoint
 * "server ip:port[ METHOD PATH]" */
static void row(struct ana_model *m, int h, bool server, uint64_t conn, const char *la, unsigned lp,
		const char *ra, unsigned rp, uint64_t t, const char *line)
{
	struct ana_txn *x = ANA_PUSH(m->txns);
	if (!x)
		return;
	memset(x, 0, sizeof(*x));
	x->host = (uint16_t)h;
	x->server = server;
	x->conn_id = conn;
	x->t = t;
	snprintf(x->local_addr, sizeof(x->local_addr), "%s", la);
	snprintf(x->peer_host_addr, sizeof(x->peer_host_addr), "%s", ra);
	x->local_port = (uint16_t)lp;
	x->peer_port = (uint16_t)rp;
	snprintf(x->conn, sizeof(x->conn), "%s:%u>%s:%u", la, lp, ra, rp);
	snprintf(x->endpoint, sizeof(x->endpoint), "%s:%u%s%s", server ? la : ra, server ? lp : rp,
		 line[0] ? " " : "", line);
}

static size_t ev(struct ana_model *m, int h, bool server, uint64_t conn, uint64_t start, uint64_t dur,
		 const char *method, const char *path)
{
	struct ana_txev *x = ANA_PUSH(m->txevs);
	if (!x)
		return SIZE_MAX;
	memset(x, 0, sizeof(*x));
	x->host = (uint16_t)h;
	x->server = server;
	x->conn = conn;
	x->start = start;
	x->dur = dur;
	x->end = start + dur;
	snprintf(x->method, sizeof(x->method), "%s", method);
	snprintf(x->path, sizeof(x->path), "%s", path);
	return m->txevs.n - 1;
}

static void model_free(struct ana_model *m)
{
	for (size_t i = 0; i < m->warnings.n; i++)
		free(m->warnings.v[i]);
	free(m->warnings.v); free(m->warn_minor.v);
	free(m->hosts.v); free(m->txns.v); free(m->txevs.v);
}

static const char *path_of(const struct ana_model *m, size_t i)
{
	return m->txevs.v[i].path;
}

static void test_keepalive(void)
{
	struct ana_model m;
	memset(&m, 0, sizeof(m));
	host(&m, "cli", 0);
	host(&m, "srv", -(double)OFF);
	row(&m, 0, false, 7, "10.0.0.1", 40000, "10.0.0.2", 80, T0, "");
	row(&m, 1, true, 9, "10.0.0.2", 80, "10.0.0.1", 40000, T0 + OFF, "GET /c");
	/* three requests back to back: each client one 100 us, its server's
	 * 60 us inside it (20 us each way), the next request 5 us after */
	const char *paths[3] = { "/a", "/b", "/c" };
	size_t c[3];
	for (int k = 0; k < 3; k++) {
		uint64_t s = T0 + (uint64_t)k * 105 * US;
		c[k] = ev(&m, 0, false, 7, s, 100 * US, "", "");
		ev(&m, 1, true, 9, s + OFF + 20 * US, 60 * US, "GET", paths[k]);
	}
	/* a request with its own line, different from the server's */
	size_t own = ev(&m, 0, false, 7, T0 + 400 * US, 100 * US, "PUT", "/own");
	ev(&m, 1, true, 9, T0 + OFF + 420 * US, 60 * US, "GET", "/other");
	ana_txn_name_clients(&m);
	for (int k = 0; k < 3; k++)
		CHECK(!strcmp(path_of(&m, c[k]), paths[k]) && !strcmp(m.txevs.v[c[k]].method, "GET"),
		      "request %d named %s (%s %s)", k, paths[k], m.txevs.v[c[k]].method, path_of(&m, c[k]));
	CHECK(!strcmp(path_of(&m, own), "/own"), "a line of its own kept (%s)", path_of(&m, own));
	CHECK(!strcmp(m.txns.v[0].endpoint, "10.0.0.2:80 GET /c"), "client row's endpoint from its server's (%s)",
	      m.txns.v[0].endpoint);
	CHECK(m.warnings.n == 1 && strstr(m.warnings.v[0], "3 client transactions"), "a note says 3 were named (%s)",
	      m.warnings.n ? m.warnings.v[0] : "none");
	model_free(&m);
}

static void test_unnamed(void)
{
	struct ana_model m;
	memset(&m, 0, sizeof(m));
	host(&m, "cli", 0);
	host(&m, "srv", -(double)OFF);
	/* a server nobody recorded */
	row(&m, 0, false, 1, "10.0.0.1", 40001, "10.0.0.9", 80, T0, "");
	size_t lone = ev(&m, 0, false, 1, T0, 100 * US, "", "");
	/* the same client address and port seen by two server connections
	 * (a DNAT towards either, say): ambiguous */
	row(&m, 0, false, 6, "10.0.0.1", 40006, "10.0.0.8", 80, T0, "");
	row(&m, 1, true, 7, "10.0.0.2", 8080, "10.0.0.1", 40006, T0 + OFF, "GET /x");
	row(&m, 1, true, 8, "10.0.0.3", 8080, "10.0.0.1", 40006, T0 + OFF, "GET /y");
	size_t amb = ev(&m, 0, false, 6, T0, 100 * US, "", "");
	ev(&m, 1, true, 7, T0 + OFF + 20 * US, 60 * US, "GET", "/x");
	/* mirrored, but the server's transaction is at another time */
	row(&m, 0, false, 4, "10.0.0.1", 40004, "10.0.0.2", 80, T0, "");
	row(&m, 1, true, 5, "10.0.0.2", 80, "10.0.0.1", 40004, T0 + OFF, "GET /late");
	size_t early = ev(&m, 0, false, 4, T0, 100 * US, "", "");
	ev(&m, 1, true, 5, T0 + OFF + 300 * US, 60 * US, "GET", "/late");
	ana_txn_name_clients(&m);
	CHECK(!path_of(&m, lone)[0], "unrecorded server: unnamed (%s)", path_of(&m, lone));
	CHECK(!path_of(&m, amb)[0], "a client port two server connections see: unnamed (%s)", path_of(&m, amb));
	CHECK(!path_of(&m, early)[0], "no overlapping server transaction: unnamed (%s)", path_of(&m, early));
	CHECK(!strcmp(m.txns.v[0].endpoint, "10.0.0.9:80"), "unrecorded server's row unnamed (%s)",
	      m.txns.v[0].endpoint);
	CHECK(!strcmp(m.txns.v[1].endpoint, "10.0.0.8:80"), "ambiguous row unnamed (%s)", m.txns.v[1].endpoint);
	CHECK(m.warnings.n == 0, "no note when nothing was named (%zu)", m.warnings.n);
	model_free(&m);
}

/* Through a balancer's DNAT: the client talks to 10.0.0.8:80, the server
 * sees itself as 10.0.0.2:8080 and the client as it is. */
static void test_dnat(void)
{
	struct ana_model m;
	memset(&m, 0, sizeof(m));
	host(&m, "cli", 0);
	host(&m, "srv", -(double)OFF);
	row(&m, 0, false, 2, "10.0.0.1", 40002, "10.0.0.8", 80, T0, "");
	row(&m, 1, true, 3, "10.0.0.2", 8080, "10.0.0.1", 40002, T0 + OFF, "GET /n");
	size_t nat = ev(&m, 0, false, 2, T0, 100 * US, "", "");
	ev(&m, 1, true, 3, T0 + OFF + 20 * US, 60 * US, "GET", "/n");
	/* a second connection whose server kept no events (sampled out there:
	 * the two recorders hash different tuples through a DNAT) */
	row(&m, 0, false, 4, "10.0.0.1", 40004, "10.0.0.8", 80, T0, "");
	row(&m, 1, true, 5, "10.0.0.2", 8080, "10.0.0.1", 40004, T0 + OFF, "POST /r");
	size_t norow = ev(&m, 0, false, 4, T0, 100 * US, "", "");
	ana_txn_name_clients(&m);
	CHECK(!strcmp(path_of(&m, nat), "/n"), "DNAT: named from the server its client port reached (%s)",
	      path_of(&m, nat));
	CHECK(!strcmp(path_of(&m, norow), "/r") && !strcmp(m.txevs.v[norow].method, "POST"),
	      "server without events: the line of its row (%s %s)", m.txevs.v[norow].method, path_of(&m, norow));
	CHECK(!strcmp(m.txns.v[0].endpoint, "10.0.0.8:80 GET /n"),
	      "DNAT row: the address the client used, the server's line (%s)", m.txns.v[0].endpoint);
	model_free(&m);
}

/* 300 requests on one connection: each named from its own server event
 * (the search starts near the client's start, not at the connection's
 * first event) */
static void test_long(void)
{
	struct ana_model m;
	memset(&m, 0, sizeof(m));
	host(&m, "cli", 0);
	host(&m, "srv", -(double)OFF);
	row(&m, 0, false, 7, "10.0.0.1", 40000, "10.0.0.2", 80, T0, "");
	row(&m, 1, true, 9, "10.0.0.2", 80, "10.0.0.1", 40000, T0 + OFF, "GET /p0");
	size_t c[300];
	char p[16];
	for (int k = 0; k < 300; k++) {
		uint64_t st = T0 + (uint64_t)k * 105 * US;
		c[k] = ev(&m, 0, false, 7, st, 100 * US, "", "");
		snprintf(p, sizeof(p), "/p%d", k);
		ev(&m, 1, true, 9, st + OFF + 20 * US, 60 * US, "GET", p);
	}
	ana_txn_name_clients(&m);
	int bad = 0;
	for (int k = 0; k < 300; k++) {
		snprintf(p, sizeof(p), "/p%d", k);
		bad += strcmp(path_of(&m, c[k]), p) != 0;
	}
	CHECK(bad == 0, "300 requests on one connection each named from its own (%d wrong)", bad);
	model_free(&m);
}

int main(void)
{
	test_keepalive();
	test_dnat();
	test_long();
	test_unnamed();
	return tap_done();
}
