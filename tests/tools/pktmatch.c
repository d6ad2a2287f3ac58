/* Checker for the packet-path e2e tests: reads nprec recordings directly
 * (np_reader + common/pktcols.h), independent of npanalyze.
 *
 *   pktmatch paths [-s HOOK] [-r HOOK] [-S ID_HOOK] SENDER.npr RECEIVER.npr
 *       matches every TCP data segment seen at the receiver's hook (default
 *       netif_receive) to the sender's events at its hook (default dev_xmit)
 *       by ack + TSval + sequence-range containment + IPv4-ID consistency
 *       (the GSO rule of docs/PACKET_IDS.md). Prints key=value lines.
 *   pktmatch sync CLIENT.npr SERVER.npr
 *       Cristian minimum-RTT offset from the client's SYNC exchanges and the
 *       number of exchanges both recordings hold.
 *   pktmatch stats FILE        events per hook, kernel counters, bytes/event
 *   pktmatch aids A.npr B.npr  active IDs: segments both sides tagged
 * Truth for "false" matches: the client port (DNAT keeps it) of the two
 * events must agree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/types.h>

#include "container.h"
#include "npmsg.h"
#include "records.h"
#include "pktcols.h"
#include "pktpath.h"

struct pm_file {
	struct pktcols_ev *ev;
	size_t n, cap;
	uint16_t *sport, *dport;     /* by flow index */
	uint32_t nflows;
	uint64_t hook_seen[PK_HOOK_MAX], hook_lost[PK_HOOK_MAX], hook_sampled_out[PK_HOOK_MAX];
	uint64_t hook_missed[PK_HOOK_MAX];
	uint64_t hook_prog_missed[PK_HOOK_MAX];
	/* SYNC */
	struct pm_sync { uint64_t t[4]; uint64_t seq; int server; } *sy;
	size_t nsy, capsy;
	uint64_t self_id;
};

static void pm_warn(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "pktmatch: %s\n", msg);
}

static void pm_add_flows(struct pm_file *f, const msgpack_object *body)
{
	struct pktcols_flow *fl;
	size_t n;
	if (pktcols_unpack_flows(body, &fl, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		if (fl[i].idx >= f->nflows) {
			uint32_t nn = fl[i].idx + 1024;
			f->sport = realloc(f->sport, nn * sizeof(*f->sport));
			f->dport = realloc(f->dport, nn * sizeof(*f->dport));
			memset(f->sport + f->nflows, 0, (nn - f->nflows) * sizeof(*f->sport));
			memset(f->dport + f->nflows, 0, (nn - f->nflows) * sizeof(*f->dport));
			f->nflows = nn;
		}
		f->sport[fl[i].idx] = fl[i].sport;
		f->dport[fl[i].idx] = fl[i].dport;
	}
	free(fl);
}

static unsigned pm_hook_by_name(const char *s)
{
	for (unsigned h = 1; h < PK_HOOK_MAX; h++)
		if (!strcmp(pktcols_hook_name(h), s))
			return h;
	return 0;
}

static void pm_add_counters(struct pm_file *f, const msgpack_object *body)
{
	const msgpack_object *hk = np_map_get(body, "hooks");
	if (!hk || hk->type != MSGPACK_OBJECT_MAP)
		return;
	for (uint32_t i = 0; i < hk->via.map.size; i++) {
		const msgpack_object_kv *kv = &hk->via.map.ptr[i];
		if (kv->key.type != MSGPACK_OBJECT_STR)
			continue;
		char name[32];
		snprintf(name, sizeof(name), "%.*s", (int)kv->key.via.str.size, kv->key.via.str.ptr);
		unsigned h = pm_hook_by_name(name);
		uint64_t v;
		if (!h)
			continue;
		if (!np_get_u64(&kv->val, "seen", &v)) f->hook_seen[h] += v;
		if (!np_get_u64(&kv->val, "lost", &v)) f->hook_lost[h] += v;
		if (!np_get_u64(&kv->val, "sampled_out", &v)) f->hook_sampled_out[h] += v;
		if (!np_get_u64(&kv->val, "missed", &v)) f->hook_missed[h] += v;
		if (!np_get_u64(&kv->val, "prog_missed", &v)) f->hook_prog_missed[h] += v;
	}
}

static void pm_add_events(struct pm_file *f, const msgpack_object *body)
{
	struct pktcols_ev *ev;
	size_t n;
	pm_add_counters(f, body);
	if (pktcols_unpack_events(body, &ev, &n))
		return;
	if (f->n + n > f->cap) {
		f->cap = (f->n + n) * 2;
		f->ev = realloc(f->ev, f->cap * sizeof(*ev));
	}
	memcpy(f->ev + f->n, ev, n * sizeof(*ev));
	f->n += n;
	free(ev);
}

static void pm_add_sync(struct pm_file *f, const msgpack_object *body)
{
	uint64_t n = 0;
	np_get_u64(body, "self_id", &f->self_id);
	if (np_get_u64(body, "n", &n) || !n)
		return;
	const msgpack_object_array *t[4] = { np_get_array(body, "t1"), np_get_array(body, "t2"),
					     np_get_array(body, "t3"), np_get_array(body, "t4") };
	const msgpack_object_array *role = np_get_array(body, "role"), *seq = np_get_array(body, "seq");
	for (int k = 0; k < 4; k++)
		if (!t[k] || t[k]->size != n)
			return;
	if (!role || role->size != n || !seq || seq->size != n)
		return;
	for (uint64_t i = 0; i < n; i++) {
		if (f->nsy == f->capsy) {
			f->capsy = f->capsy ? f->capsy * 2 : 256;
			f->sy = realloc(f->sy, f->capsy * sizeof(*f->sy));
		}
		struct pm_sync *s = &f->sy[f->nsy++];
		for (int k = 0; k < 4; k++)
			np_obj_u64(&t[k]->ptr[i], &s->t[k]);
		np_obj_u64(&seq->ptr[i], &s->seq);
		s->server = role->ptr[i].type == MSGPACK_OBJECT_STR && role->ptr[i].via.str.size == 6 &&
			    !memcmp(role->ptr[i].via.str.ptr, "server", 6);
	}
}

static int pm_load(const char *path, struct pm_file *f)
{
	memset(f, 0, sizeof(*f));
	struct np_reader *r;
	int rc = np_reader_open(&r, path, pm_warn, NULL);
	if (rc < 0) {
		fprintf(stderr, "pktmatch: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	struct np_record rec;
	while (np_reader_next(r, &rec) == 1) {
		if (rec.type == NP_REC_PKT_FLOWS)
			pm_add_flows(f, rec.body);
		else if (rec.type == NP_REC_PKT_EVENTS)
			pm_add_events(f, rec.body);
		else if (rec.type == NP_REC_SYNC)
			pm_add_sync(f, rec.body);
	}
	np_reader_close(r);
	return 0;
}

static uint16_t pm_sport(const struct pm_file *f, const struct pktcols_ev *e)
{
	return e->flow < f->nflows ? f->sport[e->flow] : 0;
}

static uint16_t pm_dport(const struct pm_file *f, const struct pktcols_ev *e)
{
	return e->flow < f->nflows ? f->dport[e->flow] : 0;
}

/* Sender events sorted by (ack, tsval) for candidate lookup. */
static int pm_cmp_key(const void *a, const void *b)
{
	const struct pktcols_ev *x = *(const struct pktcols_ev *const *)a;
	const struct pktcols_ev *y = *(const struct pktcols_ev *const *)b;
	if (x->ack != y->ack) return x->ack < y->ack ? -1 : 1;
	if (x->tsval != y->tsval) return x->tsval < y->tsval ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool pm_is_data(const struct pktcols_ev *e)
{
	return !e->uid && !(e->flags & PK_F_RANGE) && e->end_seq != e->seq &&
	       !(e->tcpflags & 0x03);
}

/* The GSO rule: r is (part of) super-packet s. */
static bool pm_covers(const struct pktcols_ev *s, const struct pktcols_ev *r)
{
	return pktcols_covers(s, r);
}

static size_t pm_lower(const struct pktcols_ev **v, size_t n, uint32_t ack, uint32_t tsval)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (v[m]->ack < ack || (v[m]->ack == ack && v[m]->tsval < tsval))
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

static int pm_paths(int argc, char **argv)
{
	unsigned sh = PK_HOOK_DEV_XMIT, rh = PK_HOOK_NETIF_RECEIVE;
	int i = 0;
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-s")) sh = pm_hook_by_name(argv[i + 1]);
		else if (!strcmp(argv[i], "-r")) rh = pm_hook_by_name(argv[i + 1]);
	}
	if (argc - i != 2 || !sh || !rh) {
		fprintf(stderr, "usage: pktmatch paths [-s HOOK] [-r HOOK] SENDER.npr RECEIVER.npr\n");
		return 2;
	}
	struct pm_file S, R;
	if (pm_load(argv[i], &S) || pm_load(argv[i + 1], &R))
		return 1;
	const struct pktcols_ev **sv = malloc((S.n ? S.n : 1) * sizeof(*sv));
	size_t ns = 0;
	for (size_t k = 0; k < S.n; k++)
		if (S.ev[k].hook == sh && pm_is_data(&S.ev[k]))
			sv[ns++] = &S.ev[k];
	qsort(sv, ns, sizeof(*sv), pm_cmp_key);
	uint8_t *s_hit = calloc(ns ? ns : 1, 1);
	uint64_t *s_bytes = calloc(ns ? ns : 1, sizeof(*s_bytes));
	size_t rdata = 0, matched = 0, ambiguous = 0, false_m = 0, split = 0, causal = 0, id_equal = 0;
	/* retransmission check: receiver copies of the same range */
	const struct pktcols_ev **rv = malloc((R.n ? R.n : 1) * sizeof(*rv));
	size_t *rmatch = malloc((R.n ? R.n : 1) * sizeof(*rmatch));
	size_t nr = 0;
	for (size_t k = 0; k < R.n; k++) {
		const struct pktcols_ev *r = &R.ev[k];
		if (r->hook != rh || !pm_is_data(r))
			continue;
		rdata++;
		size_t lo = pm_lower(sv, ns, r->ack, r->tsval), hit = SIZE_MAX, nhit = 0;
		for (size_t j = lo; j < ns && sv[j]->ack == r->ack && sv[j]->tsval == r->tsval; j++)
			if (pm_covers(sv[j], r)) {
				nhit++;
				hit = j;
			}
		rv[nr] = r;
		rmatch[nr++] = hit;
		if (!nhit && getenv("PKTMATCH_VERBOSE"))
			fprintf(stderr, "unmatched: ts %llu seq %u end %u ack %u tsval %u ipid %u flags %#x len %u\n",
				(unsigned long long)r->ts, r->seq, r->end_seq, r->ack, r->tsval, r->ipid,
				r->tcpflags, r->len);
		if (nhit > 1 && getenv("PKTMATCH_VERBOSE"))
			for (size_t j = lo; j < ns && sv[j]->ack == r->ack && sv[j]->tsval == r->tsval; j++)
				if (pm_covers(sv[j], r))
					fprintf(stderr, "ambiguous: r seq %u ipid %u / s seq %u end %u ipid %u gso %u\n",
						r->seq, r->ipid, sv[j]->seq, sv[j]->end_seq, sv[j]->ipid, sv[j]->gso);
		if (!nhit)
			continue;
		matched++;
		ambiguous += nhit > 1;
		const struct pktcols_ev *s = sv[hit];
		s_hit[hit] = 1;
		s_bytes[hit] += r->end_seq - r->seq;
		if (pm_sport(&S, s) != pm_sport(&R, r))
			false_m++;
		if (s->end_seq - s->seq > r->end_seq - r->seq)
			split++;
		if (r->ts > s->ts)
			causal++;
		struct pktcols_ev v = *s;
		v.seq = r->seq;
		v.ipid = (uint16_t)(s->ipid + (uint16_t)(r->ipid - s->ipid));
		if (pktcols_id(&v) == pktcols_id(r))
			id_equal++;
	}
	/* Received twice (original + retransmission both reached this hook):
	 * told apart when matched to different sender events. */
	size_t dups = 0, dups_apart = 0;
	for (size_t a = 0; a < nr; a++)
		for (size_t b = a + 1; b < nr && b < a + 4096; b++) {
			if (rv[a]->seq != rv[b]->seq || rv[a]->flow != rv[b]->flow)
				continue;
			dups++;
			if (rmatch[a] != SIZE_MAX && rmatch[b] != SIZE_MAX && rmatch[a] != rmatch[b] &&
			    pktcols_id(rv[a]) != pktcols_id(rv[b]))
				dups_apart++;
			break;
		}
	/* Sender retransmissions: same seq sent twice at the sender hook. */
	size_t s_retrans = 0, s_fully = 0;
	for (size_t j = 0; j < ns; j++)
		if (s_bytes[j] >= (uint64_t)(sv[j]->end_seq - sv[j]->seq))
			s_fully++;
	{
		const struct pktcols_ev **byseq = malloc((ns ? ns : 1) * sizeof(*byseq));
		memcpy(byseq, sv, ns * sizeof(*sv));
		for (size_t a = 0; a < ns; a++)
			for (size_t b = a + 1; b < ns; b++)
				if (byseq[b]->seq == byseq[a]->seq && byseq[b]->flow == byseq[a]->flow &&
				    b < a + 64) {
					s_retrans++;
					break;
				}
		free(byseq);
	}
	size_t s_hit_n = 0;
	for (size_t j = 0; j < ns; j++)
		s_hit_n += s_hit[j];
	printf("send_data=%zu\nrecv_data=%zu\nmatched=%zu\nunmatched=%zu\nambiguous=%zu\nfalse=%zu\n"
	       "gso_split=%zu\ncausal=%zu\nid_equal=%zu\nsend_hit=%zu\nsend_fully_seen=%zu\n"
	       "recv_dups=%zu\nrecv_dups_told_apart=%zu\nsend_same_seq=%zu\n",
	       ns, rdata, matched, rdata - matched, ambiguous, false_m, split, causal, id_equal,
	       s_hit_n, s_fully, dups, dups_apart, s_retrans);
	uint64_t lost = 0;
	for (unsigned h = 0; h < PK_HOOK_MAX; h++)
		lost += S.hook_lost[h] + R.hook_lost[h];
	printf("lost=%llu\n", (unsigned long long)lost);
	(void)pm_dport;
	return 0;
}

static int pm_sync(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pktmatch sync CLIENT.npr SERVER.npr\n");
		return 2;
	}
	struct pm_file C, S;
	if (pm_load(argv[0], &C) || pm_load(argv[1], &S))
		return 1;
	double best_rtt = 1e30, off = 0;
	size_t nc = 0, both = 0;
	for (size_t i = 0; i < C.nsy; i++) {
		const struct pm_sync *x = &C.sy[i];
		if (x->server)
			continue;
		nc++;
		double rtt = (double)(int64_t)(x->t[3] - x->t[0]) - (double)(int64_t)(x->t[2] - x->t[1]);
		if (rtt < best_rtt) {
			best_rtt = rtt;
			/* server clock - client clock (NTP offset) */
			off = ((double)(int64_t)(x->t[1] - x->t[0]) + (double)(int64_t)(x->t[2] - x->t[3])) / 2;
		}
		for (size_t j = 0; j < S.nsy; j++)
			if (S.sy[j].server && S.sy[j].seq == x->seq && S.sy[j].t[0] == x->t[0] &&
			    S.sy[j].t[3] == x->t[3]) {
				both++;
				break;
			}
	}
	printf("client_exchanges=%zu\nin_both=%zu\nmin_rtt_ns=%.0f\noffset_ns=%.0f\n", nc, both,
	       nc ? best_rtt : 0, off);
	return 0;
}

static int pm_stats(int argc, char **argv)
{
	if (argc != 1)
		return 2;
	struct pm_file F;
	if (pm_load(argv[0], &F))
		return 1;
	uint64_t per[PK_HOOK_MAX] = { 0 }, lost = 0, seen = 0, so = 0;
	for (size_t i = 0; i < F.n; i++)
		if (F.ev[i].hook < PK_HOOK_MAX)
			per[F.ev[i].hook]++;
	for (unsigned h = 1; h < PK_HOOK_MAX; h++) {
		printf("hook_%s=%llu\n", pktcols_hook_name(h), (unsigned long long)per[h]);
		if (F.hook_missed[h])
			printf("missed_%s=%llu\n", pktcols_hook_name(h), (unsigned long long)F.hook_missed[h]);
		if (F.hook_prog_missed[h])
			printf("prog_missed_%s=%llu\n", pktcols_hook_name(h),
			       (unsigned long long)F.hook_prog_missed[h]);
		lost += F.hook_lost[h];
		seen += F.hook_seen[h];
		so += F.hook_sampled_out[h];
	}
	struct stat st;
	stat(argv[0], &st);
	printf("events=%zu\nseen=%llu\nsampled_out=%llu\nlost=%llu\nfile_bytes=%lld\nbytes_per_event=%.2f\n",
	       F.n, (unsigned long long)seen, (unsigned long long)so, (unsigned long long)lost,
	       (long long)st.st_size, F.n ? (double)st.st_size / F.n : 0.0);
	return 0;
}

/* Active IDs: the sender's sock_ops TX events and the receiver's RX events
 * carry the ID in uid; the same segment (flow-free: seq + ack) must carry
 * the same ID on both sides. */
static int pm_aids(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	struct pm_file A, B;
	if (pm_load(argv[0], &A) || pm_load(argv[1], &B))
		return 1;
	size_t tx = 0, rx = 0, same = 0, differ = 0, nomatch = 0;
	for (size_t i = 0; i < A.n; i++)
		tx += A.ev[i].hook == PK_HOOK_AID_TX && A.ev[i].end_seq != A.ev[i].seq;
	/* Every ID the receiver read must be the one the sender wrote on the
	 * send whose range holds the received segment (GSO copies the option
	 * onto every segment). */
	for (size_t j = 0; j < B.n; j++) {
		const struct pktcols_ev *r = &B.ev[j];
		if (r->hook != PK_HOOK_AID_RX || r->end_seq == r->seq)
			continue;     /* data segments; pure ACKs carry IDs too */
		rx++;
		int found = 0;
		for (size_t i = 0; i < A.n && !found; i++) {
			const struct pktcols_ev *t = &A.ev[i];
			if (t->hook != PK_HOOK_AID_TX || t->ack != r->ack ||
			    (uint32_t)(r->seq - t->seq) >= (uint32_t)(t->end_seq - t->seq))
				continue;
			if (t->uid == r->uid) { same++; found = 1; }
		}
		if (!found) {
			for (size_t i = 0; i < A.n && !found; i++)
				if (A.ev[i].hook == PK_HOOK_AID_TX && A.ev[i].seq == r->seq)
					found = 1;
			if (found) differ++; else nomatch++;
			if (getenv("PKTMATCH_VERBOSE"))
				fprintf(stderr, "aid %s: rx ts %llu seq %u end %u ack %u id %08x\n",
					found ? "differs" : "unmatched", (unsigned long long)r->ts,
					r->seq, r->end_seq, r->ack, r->uid);
		}
	}
	printf("aid_tx=%zu\naid_rx=%zu\naid_same=%zu\naid_differ=%zu\naid_nomatch=%zu\n",
	       tx, rx, same, differ, nomatch);
	return 0;
}

/* stackmon: kept alerts per component and the last baseline record. */
static int pm_alerts(int argc, char **argv)
{
	if (argc != 1)
		return 2;
	struct np_reader *r;
	if (np_reader_open(&r, argv[0], pm_warn, NULL) < 0)
		return 1;
	static const char *const comps[4] = { "rtt", "rnst1", "cnst", "rnst2" };
	uint64_t kept[4] = { 0 }, raised = 0, filtered = 0, ewma_rows = 0;
	double p99[2][4] = { { 0 } };
	uint64_t pn[2][4] = { { 0 } };
	struct np_record rec;
	while (np_reader_next(r, &rec) == 1) {
		if (rec.type == NP_REC_ALERTS) {
			np_get_u64(rec.body, "raised", &raised);
			np_get_u64(rec.body, "filtered", &filtered);
			const msgpack_object_array *c = np_get_array(rec.body, "component");
			for (uint32_t i = 0; c && i < c->size; i++)
				for (int k = 0; k < 4; k++)
					if (c->ptr[i].type == MSGPACK_OBJECT_STR &&
					    c->ptr[i].via.str.size == strlen(comps[k]) &&
					    !memcmp(c->ptr[i].via.str.ptr, comps[k], strlen(comps[k])))
						kept[k]++;
		} else if (rec.type == NP_REC_STACK_EWMA) {
			uint64_t n = 0;
			np_get_u64(rec.body, "n", &n);
			ewma_rows += n;
		} else if (rec.type == NP_REC_BASELINE) {
			const msgpack_object *b = np_map_get(rec.body, "buckets");
			static const char *const bn[2] = { "intra", "inter" };
			for (int i = 0; b && i < 2; i++) {
				const msgpack_object *m = np_map_get(b, bn[i]);
				for (int k = 0; m && k < 4; k++) {
					char key[32];
					snprintf(key, sizeof(key), "%s_p99_ns", comps[k]);
					np_get_f64(m, key, &p99[i][k]);
					snprintf(key, sizeof(key), "%s_n", comps[k]);
					np_get_u64(m, key, &pn[i][k]);
				}
			}
		}
	}
	np_reader_close(r);
	for (int k = 0; k < 4; k++)
		printf("kept_%s=%llu\n", comps[k], (unsigned long long)kept[k]);
	printf("raised=%llu\nfiltered=%llu\newma_rows=%llu\n", (unsigned long long)raised,
	       (unsigned long long)filtered, (unsigned long long)ewma_rows);
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 4; k++)
			printf("%s_%s_p99_ns=%.0f\n%s_%s_n=%llu\n", i ? "inter" : "intra", comps[k],
			       p99[i][k], i ? "inter" : "intra", comps[k], (unsigned long long)pn[i][k]);
	return 0;
}

/* Lists events (optionally of one sequence number) for debugging. */
static int pm_events(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	struct pm_file F;
	if (pm_load(argv[0], &F))
		return 1;
	long long want = argc > 1 ? atoll(argv[1]) : -1;
	for (size_t i = 0; i < F.n; i++) {
		const struct pktcols_ev *e = &F.ev[i];
		if (want >= 0 && e->seq != (uint32_t)want)
			continue;
		printf("%llu %-14s flow %u sport %u cpu %u if %u len %u seq %u end %u ack %u tsval %u ipid %u fl %#x gso %u id %08x\n",
		       (unsigned long long)e->ts, pktcols_hook_name(e->hook), e->flow, pm_sport(&F, e),
		       e->cpu, e->ifindex, e->len, e->seq, e->end_seq, e->ack, e->tsval, e->ipid,
		       e->tcpflags, e->gso, pktcols_id(e));
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: pktmatch paths|sync|stats|aids ...\n");
		return 2;
	}
	if (!strcmp(argv[1], "paths")) return pm_paths(argc - 2, argv + 2);
	if (!strcmp(argv[1], "sync")) return pm_sync(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stats")) return pm_stats(argc - 2, argv + 2);
	if (!strcmp(argv[1], "aids")) return pm_aids(argc - 2, argv + 2);
	if (!strcmp(argv[1], "events")) return pm_events(argc - 2, argv + 2);
	if (!strcmp(argv[1], "alerts")) return pm_alerts(argc - 2, argv + 2);
	fprintf(stderr, "pktmatch: unknown mode %s\n", argv[1]);
	return 2;
}
