/* Client transactions named from their servers' recordings. A recorder
 * without a program on socket sends (nprec --no-send-calls) never sees a
 * client's request line: it was in the send. When the server of the same
 * connection was recorded too, its side has the line. The two sides of a
 * connection are each other's mirror (the client's local address and port
 * are the server's peer, and the other way round); a client's transaction
 * is the server transaction of that connection that overlaps it most on
 * the reference timeline (the server's lies inside it, up to the clock
 * error). TXN_STATS rows without a request line take the endpoint of the
 * server's row of the same connection nearest in time. Nothing is renamed
 * that had a request line of its own. Through a balancer's destination
 * NAT the mirror is not there; the server connection whose client is the
 * client's address and port is, when there is one (tn_sides_of). A
 * source NAT between them (the client's address rewritten) is not
 * followed. */
#include "ana.h"

#include <stdlib.h>
#include <string.h>

/* one server connection side, under a key: its connection ("local>peer",
 * TXN_STATS conn) or, for a destination NAT, its client ("peer:port") */
struct tn_side {
	const char *key;
	uint16_t host;
	uint64_t conn_id;
	size_t row;                 /* a TXN_STATS row of it (m->txns) */
};

/* sides sorted by key */
struct tn_index {
	struct tn_side *v;
	size_t n;
};

#define TN_BACK 8               /* events before a client's start looked at */

/* server events by (host, conn id, start) */
struct tn_ev {
	uint16_t host;
	uint64_t conn_id;
	uint64_t start;
	size_t i;                   /* m->txevs */
};

static int tn_side_cmp(const void *a, const void *b)
{
	const struct tn_side *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return (x->conn_id > y->conn_id) - (x->conn_id < y->conn_id);
}

static int tn_ev_cmp(const void *a, const void *b)
{
	const struct tn_ev *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->conn_id != y->conn_id)
		return x->conn_id < y->conn_id ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* "peer:pport>local:lport": the key the server's rows of this client row carry */
static void tn_mirror(const struct ana_txn *x, char *buf, size_t size)
{
	snprintf(buf, size, "%s:%u>%s:%u", x->peer_host_addr, x->peer_port, x->local_addr, x->local_port);
}

static bool tn_named(const char *method, const char *path)
{
	return method[0] || path[0];
}

/* the first side with key (sorted by key), or n */
static size_t tn_side_first(const struct tn_side *s, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(s[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The sides under key on hosts other than host: *n of them from *s. */
static void tn_range(const struct tn_index *ix, const char *key, uint16_t host,
		     const struct tn_side **s, size_t *n)
{
	size_t k0 = tn_side_first(ix->v, ix->n, key), k1 = k0;
	bool other = false;
	while (k1 < ix->n && !strcmp(ix->v[k1].key, key))
		other |= ix->v[k1++].host != host;
	*s = ix->v + k0;
	*n = other ? k1 - k0 : 0;
}

/* The server sides of client row x's connection: its mirror on another
 * host, else the server connection on another host whose client is x's
 * address and port (a balancer's DNAT rewrote the server's address and
 * port, not the client's), when that is one connection (the same client
 * port towards two services is ambiguous: none). */
static void tn_sides_of(const struct ana_model *m, const struct tn_index *mir, const struct tn_index *nat,
			const struct ana_txn *x, const struct tn_side **s, size_t *n)
{
	char key[sizeof(x->conn)];
	tn_mirror(x, key, sizeof(key));
	tn_range(mir, key, x->host, s, n);
	if (*n)
		return;
	snprintf(key, sizeof(key), "%s:%u", x->local_addr, x->local_port);
	tn_range(nat, key, x->host, s, n);
	for (size_t k = 1; k < *n; k++)
		if (strcmp(m->txns.v[(*s)[k].row].conn, m->txns.v[(*s)[0].row].conn))
			*n = 0;
}

/* the first event of (host, conn id) in ev, or n */
static size_t tn_ev_first(const struct tn_ev *ev, size_t n, uint16_t host, uint64_t conn_id)
{
	struct tn_ev key = { .host = host, .conn_id = conn_id, .start = 0 };
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tn_ev_cmp(&ev[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The server event of side s that overlaps client event e most on the
 * reference timeline; NULL if none does. */
static const struct ana_txev *tn_best(const struct ana_model *m, const struct tn_ev *ev, size_t nev,
				      const struct tn_side *s, const struct ana_txev *e, bool *had_events)
{
	int64_t a = ana_to_ref(m, e->host, e->start), b = ana_to_ref(m, e->host, e->end);
	const struct ana_txev *best = NULL;
	int64_t best_ov = 0;
	size_t k0 = tn_ev_first(ev, nev, s->host, s->conn_id), lo = k0, hi = k0;
	while (hi < nev && ev[hi].host == s->host && ev[hi].conn_id == s->conn_id)
		hi++;
	*had_events |= hi > k0;
	/* the last event starting by a (the clock map is monotonic), then a
	 * few before it that may still overlap (pipelined requests): not the
	 * connection's whole history for each of its requests */
	for (size_t l = k0, h = hi; l < h;) {
		size_t mid = l + (h - l) / 2;
		if (ana_to_ref(m, s->host, ev[mid].start) <= a)
			lo = l = mid + 1;
		else
			h = mid;
	}
	lo = lo >= k0 + TN_BACK ? lo - TN_BACK : k0;
	for (size_t k = lo; k < hi; k++) {
		const struct ana_txev *x = &m->txevs.v[ev[k].i];
		int64_t xa = ana_to_ref(m, x->host, x->start), xb = ana_to_ref(m, x->host, x->end);
		if (xa >= b)
			break;
		int64_t ov = (xb < b ? xb : b) - (xa > a ? xa : a);
		if (ov > best_ov && tn_named(x->method, x->path)) {
			best_ov = ov;
			best = x;
		}
	}
	return best;
}

/* m->txns rows by (host, conn id): the row of a client event */
struct tn_row {
	uint16_t host;
	uint64_t conn_id;
	size_t row;
};

static int tn_row_cmp(const void *a, const void *b)
{
	const struct tn_row *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	return (x->conn_id > y->conn_id) - (x->conn_id < y->conn_id);
}

static const struct ana_txn *tn_row_of(const struct ana_model *m, const struct tn_row *r, size_t n,
				       uint16_t host, uint64_t conn_id)
{
	struct tn_row key = { .host = host, .conn_id = conn_id };
	const struct tn_row *f = bsearch(&key, r, n, sizeof(*r), tn_row_cmp);
	return f ? &m->txns.v[f->row] : NULL;
}

/* The server row of sides nearest in time to t (reference timeline), on
 * a host other than host; NULL if none. */
static const struct ana_txn *tn_nearest_row(const struct ana_model *m, const struct tn_side *side, size_t nside,
					    uint16_t host, int64_t t)
{
	int64_t best_d = INT64_MAX;
	const struct ana_txn *best = NULL;
	for (size_t k = 0; k < nside; k++) {
		const struct ana_txn *s = &m->txns.v[side[k].row];
		int64_t d = ana_to_ref(m, s->host, s->t) - t;
		if (d < 0)
			d = -d;
		if (s->host != host && d < best_d) {
			best_d = d;
			best = s;
		}
	}
	return best;
}

/* A client event whose server connection kept no events (sampled out
 * there: through a DNAT the two recorders hash different tuples, so they
 * keep different connections' events) takes the request line of that
 * connection's row nearest in time ("ip:port METHOD PATH"): its interval's
 * last request, exact for a connection serving one path. Returns 1 when
 * named. */
static size_t tn_event_from_row(const struct ana_model *m, const struct tn_side *side, size_t nside,
				struct ana_txev *e)
{
	const struct ana_txn *r = tn_nearest_row(m, side, nside, e->host, ana_to_ref(m, e->host, e->start));
	const char *line = r ? strchr(r->endpoint, ' ') : NULL;
	const char *path = line ? strchr(line + 1, ' ') : NULL;
	size_t ml = path ? (size_t)(path - line - 1) : 0;
	if (!path || !ml || ml >= sizeof(e->method) || strlen(path + 1) >= sizeof(e->path))
		return 0;
	memcpy(e->method, line + 1, ml);
	e->method[ml] = 0;
	snprintf(e->path, sizeof(e->path), "%s", path + 1);
	return 1;
}

/* Client events without a request line: method and path of their server's. */
static size_t tn_events(struct ana_model *m, const struct tn_index *mir, const struct tn_index *nat,
			const struct tn_row *rows, size_t nrows)
{
	struct tn_ev *ev = malloc((m->txevs.n + 1) * sizeof(*ev));
	size_t nev = 0, named = 0;
	if (!ev)
		return 0;
	for (size_t i = 0; i < m->txevs.n; i++) {
		const struct ana_txev *x = &m->txevs.v[i];
		if (x->server && tn_named(x->method, x->path) && ana_host_aligned(m, x->host))
			ev[nev++] = (struct tn_ev){ .host = x->host, .conn_id = x->conn, .start = x->start, .i = i };
	}
	qsort(ev, nev, sizeof(*ev), tn_ev_cmp);
	for (size_t i = 0; nev && i < m->txevs.n; i++) {
		struct ana_txev *e = &m->txevs.v[i];
		if (e->server || tn_named(e->method, e->path) || !ana_host_aligned(m, e->host))
			continue;
		const struct ana_txn *row = tn_row_of(m, rows, nrows, e->host, e->conn);
		if (!row)
			continue;
		const struct tn_side *side;
		size_t nside;
		tn_sides_of(m, mir, nat, row, &side, &nside);
		const struct ana_txev *best = NULL;
		bool had_events = false;
		for (size_t k = 0; !best && k < nside; k++) {
			/* a side has a row per interval: its events once */
			if (side[k].host == e->host || (k > 0 && side[k].host == side[k - 1].host &&
							 side[k].conn_id == side[k - 1].conn_id))
				continue;
			best = tn_best(m, ev, nev, &side[k], e, &had_events);
		}
		if (best) {
			memcpy(e->method, best->method, sizeof(e->method));
			memcpy(e->path, best->path, sizeof(e->path));
			named++;
		} else if (!had_events) {
			named += tn_event_from_row(m, side, nside, e);
		}
	}
	free(ev);
	return named;
}

/* Client TXN_STATS rows without a request line: their own endpoint (the
 * server's address and port as the client knew it, the balancer's through
 * a NAT) with the request line of their server's row nearest in time
 * (reference timeline). */
static void tn_rows(struct ana_model *m, const struct tn_index *mir, const struct tn_index *nat)
{
	for (size_t i = 0; i < m->txns.n; i++) {
		struct ana_txn *x = &m->txns.v[i];
		if (x->server || strchr(x->endpoint, ' ') || !ana_host_aligned(m, x->host))
			continue;
		const struct tn_side *side;
		size_t nside;
		tn_sides_of(m, mir, nat, x, &side, &nside);
		const struct ana_txn *best = tn_nearest_row(m, side, nside, x->host, ana_to_ref(m, x->host, x->t));
		const char *line = best ? strchr(best->endpoint, ' ') : NULL;
		size_t n = strlen(x->endpoint);
		if (line && n + strlen(line) < sizeof(x->endpoint))
			memcpy(x->endpoint + n, line, strlen(line) + 1);
	}
}

void ana_txn_name_clients(struct ana_model *m)
{
	if (m->hosts.n < 2 || !m->txns.n)
		return;
	struct tn_index mir = { malloc(m->txns.n * sizeof(struct tn_side)), 0 };
	struct tn_index nat = { malloc(m->txns.n * sizeof(struct tn_side)), 0 };
	char (*client)[sizeof(m->txns.v[0].conn)] = malloc(m->txns.n * sizeof(*client));
	struct tn_row *rows = malloc(m->txns.n * sizeof(*rows));
	size_t nrows = 0;
	if (!mir.v || !nat.v || !client || !rows)
		goto done;
	for (size_t i = 0; i < m->txns.n; i++) {
		const struct ana_txn *x = &m->txns.v[i];
		rows[nrows++] = (struct tn_row){ .host = x->host, .conn_id = x->conn_id, .row = i };
		if (!x->server || !strchr(x->endpoint, ' ') || !ana_host_aligned(m, x->host))
			continue;
		struct tn_side sd = { .key = x->conn, .host = x->host, .conn_id = x->conn_id, .row = i };
		mir.v[mir.n] = sd;
		snprintf(client[nat.n], sizeof(client[0]), "%s:%u", x->peer_host_addr, x->peer_port);
		sd.key = client[nat.n];
		nat.v[nat.n++] = sd;
		mir.n++;
	}
	qsort(rows, nrows, sizeof(*rows), tn_row_cmp);
	qsort(mir.v, mir.n, sizeof(*mir.v), tn_side_cmp);
	qsort(nat.v, nat.n, sizeof(*nat.v), tn_side_cmp);
	if (mir.n) {
		size_t named = tn_events(m, &mir, &nat, rows, nrows);
		tn_rows(m, &mir, &nat);
		if (named)
			ana_note(m, "%zu client transactions without a request line (recorded without send "
				 "calls) named from their servers' recordings", named);
	}
done:
	free(mir.v);
	free(nat.v);
	free(client);
	free(rows);
}
