/* PKT_EVENTS decoding on workers (analyze/ana_pktdec.c): a genfix recording
 * (known packet count, 9 hook events per data packet and its ACK) read with
 * --threads 1, 2 and 3 gives the events genfix wrote, and the same model
 * (events, flows, host counters) byte for byte. Small records
 * (--chunk-events) so that many jobs are in flight and their buffers are
 * reused across records of different sizes. */
#include "anafix.h"

#define PACKETS 20000

struct loaded { struct ana_options o; struct ana_model m; };

static void load(struct loaded *l, const char *dir, unsigned threads)
{
	char a[DIRN + 32], b[DIRN + 32];
	memset(l, 0, sizeof(*l));
	l->o.quiet = true;
	l->o.threads = threads;
	snprintf(a, sizeof(a), "%s/hosta.npr", dir);
	snprintf(b, sizeof(b), "%s/hostb.npr", dir);
	ana_model_init(&l->m, &l->o);
	CHECK(ana_load_file(&l->m, a, NULL) == 0, "load %s, threads %u", a, threads);
	CHECK(ana_load_file(&l->m, b, NULL) == 0, "load %s, threads %u", b, threads);
}

static void same_model(const struct ana_model *x, const struct ana_model *y)
{
	CHECK_EQ_U(x->pev.n, y->pev.n);
	CHECK(x->pev.n == y->pev.n && !memcmp(x->pev.v, y->pev.v, x->pev.n * sizeof(*x->pev.v)),
	      "events differ between thread counts");
	CHECK_EQ_U(x->flows.n, y->flows.n);
	for (size_t f = 0; f < x->flows.n && f < y->flows.n; f++)
		if (x->flows.v[f].host != y->flows.v[f].host ||
		    x->flows.v[f].local_id != y->flows.v[f].local_id) {
			CHECK(0, "flow %zu differs", f);
			break;
		}
	CHECK_EQ_U(x->hosts.n, y->hosts.n);
	for (size_t h = 0; h < x->hosts.n && h < y->hosts.n; h++) {
		const struct ana_host *p = &x->hosts.v[h], *q = &y->hosts.v[h];
		CHECK_EQ_U(p->pkt_events, q->pkt_events);
		CHECK_EQ_U(p->t_min, q->t_min);
		CHECK_EQ_U(p->t_max, q->t_max);
		CHECK_EQ_U(p->pkt_seen, q->pkt_seen);
		CHECK_EQ_U(p->pkt_lost, q->pkt_lost);
	}
}

/* Ground truth from genfix's parameters: 9 events per data packet, all in
 * the flows genfix made (5 data flows, seen on both hosts). */
static void check_truth(const struct ana_model *m, unsigned threads)
{
	CHECK(m->pev.n == 9ull * PACKETS, "threads %u: %zu events, genfix wrote %d", threads,
	      m->pev.n, 9 * PACKETS);
	uint64_t sum = 0;
	for (size_t h = 0; h < m->hosts.n; h++)
		sum += m->hosts.v[h].pkt_events;
	CHECK_EQ_U(sum, 9ull * PACKETS);
	CHECK(m->hosts.n == 2, "threads %u: %zu hosts", threads, m->hosts.n);
	size_t tmin_ok = 0;
	for (size_t i = 0; i < m->pev.n; i++) {
		const struct ana_pev *e = &m->pev.v[i];
		const struct ana_host *h = &m->hosts.v[e->host];
		tmin_ok += e->ts >= h->t_min && e->ts <= h->t_max && e->flow < m->flows.n &&
			   m->flows.v[e->flow].host == e->host;
	}
	CHECK(tmin_ok == m->pev.n, "threads %u: %zu of %zu events inside their host's range and flow",
	      threads, tmin_ok, m->pev.n);
}

int main(int argc, char **argv)
{
	(void)argc;
	char dir[] = "/tmp/np-test-pktdec.XXXXXX", args[128];
	snprintf(args, sizeof(args), "--packets %d --flows 5 --chunk-events 700 --no-truth", PACKETS);
	if (anafix_genfix(argv[0], dir, args))
		return tap_done();
	struct loaded one, two, three;
	load(&one, dir, 1);
	load(&two, dir, 2);         /* read-ahead worker, columns on the reading thread */
	load(&three, dir, 3);       /* and a decoding worker */
	check_truth(&one.m, 1);
	check_truth(&two.m, 2);
	check_truth(&three.m, 3);
	same_model(&one.m, &two.m);
	same_model(&one.m, &three.m);
	ana_model_free(&one.m);
	ana_model_free(&two.m);
	ana_model_free(&three.m);
	anafix_remove(dir);
	return tap_done();
}
