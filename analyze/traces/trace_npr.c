/* Request tables from nprec recordings, black-box: every server-side
 * transaction at the entry endpoint is a request; the client-side
 * transactions the same thread (the process when no thread id is known)
 * made inside its time span are its RPCs, one column per callee endpoint
 * (ADDR:PORT), the value their duration. A column "<entry> (self)" holds the
 * server's own time: its duration minus the union of those calls. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "container.h"
#include "npmsg.h"
#include "npwire.h"
#include "records.h"
#include "recschema.h"
#include "trace.h"

struct npr_conn { size_t file; uint64_t conn, lport, rport; char la[64], ra[64]; };
struct npr_ev { size_t file; uint64_t conn, role, key, start, dur; char path[96]; };

struct npr {
	struct npr_conn *c; size_t nc, capc;
	struct npr_ev *e;   size_t ne, cape;
};

static void obj_str(const msgpack_object *arr, size_t i, char *buf, size_t len)
{
	buf[0] = 0;
	if (!arr || arr->type != MSGPACK_OBJECT_ARRAY || i >= arr->via.array.size) return;
	const msgpack_object *o = &arr->via.array.ptr[i];
	if (o->type != MSGPACK_OBJECT_STR) return;
	size_t n = o->via.str.size < len - 1 ? o->via.str.size : len - 1;
	memcpy(buf, o->via.str.ptr, n);
	buf[n] = 0;
}

/* TXN_STATS and TXN_EVENTS through the schema's decoder (common/recschema.h):
 * rows whose columns are all there and n long. */
static bool npr_cols_full(const struct np_cols *c, const int *keys, size_t nkeys)
{
	for (size_t k = 0; k < nkeys; k++)
		if (!c->u64[keys[k]] || c->len[keys[k]] != c->len[keys[0]])
			return false;
	return true;
}

static int npr_stats(struct npr *s, size_t file, const msgpack_object *body)
{
	static const int keys[] = { NPK_TXN_STATS_CONN, NPK_TXN_STATS_ROLE, NPK_TXN_STATS_LPORT,
				    NPK_TXN_STATS_RPORT };
	struct np_cols t;
	int rc = np_cols_open(&t, NP_REC_TXN_STATS, body);
	if (rc || !npr_cols_full(&t, keys, 4))
		goto out;
	const msgpack_object *la = np_map_get(body, NPK(TXN_STATS, LADDR));
	const msgpack_object *ra = np_map_get(body, NPK(TXN_STATS, RADDR));
	for (size_t i = 0; i < t.len[NPK_TXN_STATS_CONN]; i++) {
		uint64_t role = t.u64[NPK_TXN_STATS_ROLE][i];
		if (role != TXN_ROLE_SERVER && role != TXN_ROLE_CLIENT) continue;
		if (s->nc == s->capc) {
			size_t cap = s->capc ? s->capc * 2 : 256;
			struct npr_conn *c = realloc(s->c, cap * sizeof(*c));
			if (!c) { rc = -ENOMEM; goto out; }
			s->c = c; s->capc = cap;
		}
		struct npr_conn *c = &s->c[s->nc++];
		c->file = file; c->conn = t.u64[NPK_TXN_STATS_CONN][i];
		c->lport = t.u64[NPK_TXN_STATS_LPORT][i]; c->rport = t.u64[NPK_TXN_STATS_RPORT][i];
		obj_str(la, i, c->la, sizeof(c->la));
		obj_str(ra, i, c->ra, sizeof(c->ra));
	}
out:
	np_cols_close(&t);
	return rc == -EINVAL ? 0 : rc;
}

static int npr_events(struct npr *s, size_t file, const msgpack_object *body)
{
	static const int keys[] = { NPK_TXN_EVENTS_CONN, NPK_TXN_EVENTS_ROLE, NPK_TXN_EVENTS_TID,
				    NPK_TXN_EVENTS_PID, NPK_TXN_EVENTS_START_NS_D, NPK_TXN_EVENTS_DUR_NS };
	struct np_cols t;
	int rc = np_cols_open(&t, NP_REC_TXN_EVENTS, body);
	if (rc || !npr_cols_full(&t, keys, 6))
		goto out;
	const msgpack_object *path = np_map_get(body, NPK(TXN_EVENTS, PATH));
	for (size_t i = 0; i < t.len[NPK_TXN_EVENTS_CONN]; i++) {
		if (s->ne == s->cape) {
			size_t cap = s->cape ? s->cape * 2 : 1024;
			struct npr_ev *e = realloc(s->e, cap * sizeof(*e));
			if (!e) { rc = -ENOMEM; goto out; }
			s->e = e; s->cape = cap;
		}
		struct npr_ev *e = &s->e[s->ne++];
		uint64_t tid = t.u64[NPK_TXN_EVENTS_TID][i], pid = t.u64[NPK_TXN_EVENTS_PID][i];
		e->file = file; e->conn = t.u64[NPK_TXN_EVENTS_CONN][i];
		e->role = t.u64[NPK_TXN_EVENTS_ROLE][i];
		e->key = tid ? tid : pid;
		e->start = t.u64[NPK_TXN_EVENTS_START_NS_D][i]; e->dur = t.u64[NPK_TXN_EVENTS_DUR_NS][i];
		obj_str(path, i, e->path, sizeof(e->path));
	}
out:
	np_cols_close(&t);
	return rc == -EINVAL ? 0 : rc;
}

static int cmp_conn(const void *a, const void *b)
{
	const struct npr_conn *x = a, *y = b;
	if (x->file != y->file) return x->file < y->file ? -1 : 1;
	return (x->conn > y->conn) - (x->conn < y->conn);
}

static const struct npr_conn *find_conn(const struct npr *s, size_t file, uint64_t conn)
{
	struct npr_conn k = { .file = file, .conn = conn };
	if (!s->nc) return NULL;
	return bsearch(&k, s->c, s->nc, sizeof(*s->c), cmp_conn);
}

/* Clients sorted by (file, key, start) so one thread's calls are a range. */
static int cmp_ev(const void *a, const void *b)
{
	const struct npr_ev *x = a, *y = b;
	if (x->file != y->file) return x->file < y->file ? -1 : 1;
	if (x->key != y->key) return x->key < y->key ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

struct npr_entry { char host[64]; uint64_t port; const char *path; };

static int parse_entry(const char *entry, struct npr_entry *en)
{
	memset(en, 0, sizeof(*en));
	if (!entry) return -1;
	const char *slash = strchr(entry, '/');
	size_t hl = slash ? (size_t)(slash - entry) : strlen(entry);
	const char *colon = NULL;
	for (size_t i = 0; i < hl; i++) if (entry[i] == ':') colon = entry + i;
	if (!colon) return -1;
	size_t h = (size_t)(colon - entry);
	if (h >= sizeof(en->host)) return -1;
	memcpy(en->host, entry, h);
	if (h >= 2 && en->host[0] == '[' && en->host[h - 1] == ']') { memmove(en->host, en->host + 1, h - 2); en->host[h - 2] = 0; }
	char *end;
	en->port = strtoull(colon + 1, &end, 10);
	if (end != entry + hl || en->port == 0 || en->port > 65535) return -1;
	en->path = slash;
	return 0;
}

static bool entry_match(const struct npr_entry *en, const struct npr_conn *c, const struct npr_ev *e)
{
	if (c->lport != en->port) return false;
	if (en->host[0] && strcmp(en->host, "*") && strcmp(en->host, c->la)) return false;
	return !en->path || !strncmp(e->path, en->path, strlen(en->path));
}

/* One row for server transaction S: its thread's client calls inside it. */
static int npr_request(const struct npr *s, const struct npr_ev *S, const struct npr_ev *cl, size_t ncl,
		       const char *self, struct pat_table *t)
{
	char id[96];
	snprintf(id, sizeof(id), "%zu:%llu@%llu", S->file, (unsigned long long)S->conn, (unsigned long long)S->start);
	long row = pat_table_row(t, id, (double)S->dur / 1e6);
	if (row < 0) return -ENOMEM;
	uint64_t end = S->start + S->dur, covered = 0, cur_end = S->start;
	struct npr_ev k = { .file = S->file, .key = S->key, .start = S->start };
	size_t lo = 0, hi = ncl;                       /* first client call at or after S */
	while (lo < hi) { size_t m = (lo + hi) / 2; if (cmp_ev(&cl[m], &k) < 0) lo = m + 1; else hi = m; }
	for (size_t i = lo; i < ncl && cl[i].file == S->file && cl[i].key == S->key && cl[i].start < end; i++) {
		if (cl[i].start + cl[i].dur > end) continue;
		const struct npr_conn *c = find_conn(s, cl[i].file, cl[i].conn);
		char name[160];
		if (c) snprintf(name, sizeof(name), "%s:%llu", c->ra, (unsigned long long)c->rport);
		else snprintf(name, sizeof(name), "conn %llu", (unsigned long long)cl[i].conn);
		int col = pat_table_rpc(t, name);
		if (col < 0) return -ENOMEM;
		pat_table_add(t, (size_t)row, col, (double)cl[i].dur / 1e6);
		uint64_t a = cl[i].start > cur_end ? cl[i].start : cur_end, b = cl[i].start + cl[i].dur;
		if (b > a) { covered += b - a; cur_end = b; }
	}
	int col = pat_table_rpc(t, self);
	if (col < 0) return -ENOMEM;
	pat_table_add(t, (size_t)row, col, (double)(S->dur - (covered < S->dur ? covered : S->dur)) / 1e6);
	return 0;
}

static int npr_read(struct npr *s, char *const *paths, size_t npaths, char *err, size_t errlen)
{
	for (size_t f = 0; f < npaths; f++) {
		struct np_reader *r;
		int rc = np_reader_open(&r, paths[f], NULL, NULL);
		if (rc) { snprintf(err, errlen, "cannot open %s: %s", paths[f], strerror(-rc)); return rc; }
		struct np_record rec;
		while (!rc && np_reader_next(r, &rec) == 1) {
			if (rec.type == NP_REC_TXN_STATS) rc = npr_stats(s, f, rec.body);
			else if (rec.type == NP_REC_TXN_EVENTS) rc = npr_events(s, f, rec.body);
		}
		np_reader_close(r);
		if (rc) { snprintf(err, errlen, "out of memory reading %s", paths[f]); return rc; }
	}
	return 0;
}

int trace_npr_load(char *const *paths, size_t npaths, const char *entry, struct pat_table *t,
		   char *err, size_t errlen)
{
	struct npr_entry en;
	if (parse_entry(entry, &en)) {
		snprintf(err, errlen, "recordings need --entry HOST:PORT[/PATH] (the server endpoint of the requests)");
		return -EINVAL;
	}
	struct npr s = { 0 };
	int rc = npr_read(&s, paths, npaths, err, errlen);
	if (rc) goto out;
	if (s.nc) qsort(s.c, s.nc, sizeof(*s.c), cmp_conn);
	/* servers at the entry, clients sorted for range lookups */
	size_t ncl = 0;
	struct npr_ev *cl = malloc((s.ne + 1) * sizeof(*cl)), *sv = malloc((s.ne + 1) * sizeof(*sv));
	size_t nsv = 0;
	if (!cl || !sv) { rc = -ENOMEM; free(cl); free(sv); snprintf(err, errlen, "out of memory"); goto out; }
	for (size_t i = 0; i < s.ne; i++) {
		const struct npr_conn *c = find_conn(&s, s.e[i].file, s.e[i].conn);
		if (s.e[i].role == TXN_ROLE_SERVER) {
			if (c && entry_match(&en, c, &s.e[i])) sv[nsv++] = s.e[i];
		} else {
			cl[ncl++] = s.e[i];
		}
	}
	if (ncl) qsort(cl, ncl, sizeof(*cl), cmp_ev);
	char self[128];
	snprintf(self, sizeof(self), "%s (self)", entry);
	for (size_t i = 0; i < nsv && !rc; i++) rc = npr_request(&s, &sv[i], cl, ncl, self, t);
	if (rc) snprintf(err, errlen, "out of memory");
	else if (nsv == 0) {
		snprintf(err, errlen, "no server transaction at %s in %zu recording(s) (%zu transaction events; "
			 "were they recorded with the transactions family?)", entry, npaths, s.ne);
		rc = -ENOENT;
	}
	free(cl); free(sv);
out:
	free(s.c); free(s.e);
	return rc;
}
