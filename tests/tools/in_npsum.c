/* in_npsum: one-screen summary of a recording for the incident e2e tests,
 * as key=value lines (shell: eval "$(in_npsum FILE)" after prefixing).
 *
 *   in_npsum [--port P] [--max-cpu PCT] FILE
 *                              container health, record counts, INTERVAL
 *                              seq/time range, header "output" map, END
 *                              reason, TRIGGER fields, FLOWS bytes on port P,
 *                              --max-cpu sampling changes (and, with PCT,
 *                              changes that disagree with the recorded CPU)
 *   in_npsum --now             CLOCK_MONOTONIC in ns (the recordings' clock)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "container.h"
#include "npmsg.h"
#include "records.h"

struct sum {
	uint64_t n_header, n_interval, n_end, n_trigger, n_flows, n_drops;
	uint64_t first_t0, last_t1, first_seq, last_seq, seq_gaps;
	int header_first;
	char mode[32], set[128], hostname[256], boot_id[64], end_reason[64];
	uint64_t rotation_index, dump_index;
	char trig_why[256], trig_expr[64], trig_source[32];
	uint64_t trig_t, trig_first, trig_last;
	uint64_t port_rx, port_tx, port_first_t, port_last_t, drops, retrans;
	uint64_t div_last, div_max, div_changes, div_changes_total, div_disagree, cpu_over;
};

static void s_str(const msgpack_object *m, const char *k, char *buf, size_t n)
{
	if (np_get_strbuf(m, k, buf, n) < 0)
		snprintf(buf, n, "-");
}

static void on_header(struct sum *s, const msgpack_object *b)
{
	s->n_header++;
	const msgpack_object *h = np_map_get(b, "host");
	if (h && h->type == MSGPACK_OBJECT_MAP) {
		s_str(h, "hostname", s->hostname, sizeof(s->hostname));
		s_str(h, "boot_id", s->boot_id, sizeof(s->boot_id));
	}
	const msgpack_object *o = np_map_get(b, "output");
	if (o && o->type == MSGPACK_OBJECT_MAP) {
		s_str(o, "mode", s->mode, sizeof(s->mode));
		s_str(o, "set", s->set, sizeof(s->set));
		np_get_u64(o, "rotation_index", &s->rotation_index);
		np_get_u64(o, "dump_index", &s->dump_index);
	}
}

/* --max-cpu: INTERVAL k holds the CPU measured over k and the divisor
 * chosen from it; it rises exactly when the CPU is over budget (below the
 * cap). */
static void on_ratectl(struct sum *s, const msgpack_object *b, double max_cpu)
{
	uint64_t div, prev, total;
	double cpu;
	if (np_get_u64(b, "sample_div", &div) || np_get_u64(b, "sample_div_prev", &prev))
		return;
	s->div_last = div;
	if (div > s->div_max)
		s->div_max = div;
	s->div_changes += div != prev;
	if (np_get_u64(b, "sample_div_changes", &total) == 0)
		s->div_changes_total = total;
	if (max_cpu > 0 && np_get_f64(b, "self_cpu_pct", &cpu) == 0) {
		bool over = cpu > max_cpu;
		s->cpu_over += over;
		if (over != (div > prev) && prev < 4096)
			s->div_disagree++;
	}
}

static void on_interval(struct sum *s, const msgpack_object *b)
{
	uint64_t seq = 0, t0 = 0, t1 = 0;
	np_get_u64(b, "seq", &seq);
	np_get_u64(b, "t0_ns", &t0);
	np_get_u64(b, "t1_ns", &t1);
	if (!s->n_interval++) {
		s->first_t0 = t0;
		s->first_seq = seq;
	} else if (seq != s->last_seq + 1) {
		s->seq_gaps++;
	}
	s->last_seq = seq;
	s->last_t1 = t1;
}

/* Bytes on one port: rx of the rows whose local port is P (the server
 * socket receiving), tx of the rows whose remote port is P (the client). */
static void on_flows(struct sum *s, const msgpack_object *b, uint64_t port)
{
	s->n_flows++;
	size_t n = 0, m;
	uint64_t *lp = np_get_u64_array(b, "lport", &n);
	uint64_t *rp = np_get_u64_array(b, "rport", &m);
	uint64_t *rx = np_get_u64_array(b, "rx_bytes", &m);
	uint64_t *tx = np_get_u64_array(b, "tx_bytes", &m);
	uint64_t *re = np_get_u64_array(b, "retrans", &m);
	uint64_t t0 = 0, t1 = 0, here = 0;
	np_get_u64(b, "t0_ns", &t0);
	np_get_u64(b, "t1_ns", &t1);
	for (size_t i = 0; lp && rp && rx && tx && i < n; i++) {
		if (re)
			s->retrans += re[i];
		if (!port)
			continue;
		if (lp[i] == port)
			here += rx[i], s->port_rx += rx[i];
		if (rp[i] == port)
			here += tx[i], s->port_tx += tx[i];
	}
	if (here) {
		if (!s->port_first_t)
			s->port_first_t = t0;
		s->port_last_t = t1;
	}
	free(lp); free(rp); free(rx); free(tx); free(re);
}

static void on_drops(struct sum *s, const msgpack_object *b)
{
	s->n_drops++;
	size_t n = 0;
	uint64_t *c = np_get_u64_array(b, "count", &n);
	for (size_t i = 0; c && i < n; i++)
		s->drops += c[i];
	free(c);
}

static void on_trigger(struct sum *s, const msgpack_object *b)
{
	s->n_trigger++;
	s_str(b, "why", s->trig_why, sizeof(s->trig_why));
	s_str(b, "expr", s->trig_expr, sizeof(s->trig_expr));
	s_str(b, "source", s->trig_source, sizeof(s->trig_source));
	np_get_u64(b, "t_mono_ns", &s->trig_t);
	np_get_u64(b, "first_mono_ns", &s->trig_first);
	np_get_u64(b, "last_mono_ns", &s->trig_last);
}

int main(int argc, char **argv)
{
	uint64_t port = 0;
	int ai = 1;
	if (argc == 2 && strcmp(argv[1], "--now") == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("%" PRIu64 "\n", (uint64_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec));
		return 0;
	}
	double max_cpu = 0;
	while (ai + 2 < argc) {
		if (strcmp(argv[ai], "--port") == 0)
			port = strtoull(argv[ai + 1], NULL, 10);
		else if (strcmp(argv[ai], "--max-cpu") == 0)
			max_cpu = strtod(argv[ai + 1], NULL);
		else
			break;
		ai += 2;
	}
	if (ai != argc - 1) {
		fprintf(stderr, "usage: in_npsum [--port P] [--max-cpu PCT] FILE | in_npsum --now\n");
		return 2;
	}
	/* a missing file still prints every key (ok=0), so scripts under
	 * set -u see zeros rather than unbound variables */
	struct np_reader *r = NULL;
	int opened = np_reader_open(&r, argv[ai], NULL, NULL) == 0;
	struct sum s;
	memset(&s, 0, sizeof(s));
	strcpy(s.mode, "-"); strcpy(s.set, "-"); strcpy(s.hostname, "-"); strcpy(s.boot_id, "-");
	strcpy(s.end_reason, "-"); strcpy(s.trig_why, "-"); strcpy(s.trig_expr, "-");
	strcpy(s.trig_source, "-");
	struct np_record rec;
	uint64_t n = 0;
	while (opened && np_reader_next(r, &rec) == 1) {
		if (n++ == 0)
			s.header_first = rec.type == NP_REC_HEADER;
		switch (rec.type) {
		case NP_REC_HEADER: on_header(&s, rec.body); break;
		case NP_REC_INTERVAL:
			on_interval(&s, rec.body);
			on_ratectl(&s, rec.body, max_cpu);
			break;
		case NP_REC_END:
			s.n_end++;
			s_str(rec.body, "reason", s.end_reason, sizeof(s.end_reason));
			break;
		case NP_REC_FLOWS: on_flows(&s, rec.body, port); break;
		case NP_REC_DROPS: on_drops(&s, rec.body); break;
		case NP_REC_TRIGGER: on_trigger(&s, rec.body); break;
		}
	}
	struct np_reader_stats none;
	memset(&none, 0, sizeof(none));
	const struct np_reader_stats *st = opened ? np_reader_stats(r) : &none;
	printf("ok=%d\nchunks_ok=%" PRIu64 "\nchunks_bad=%" PRIu64 "\ntruncated=%d\n"
	       "bytes_skipped=%" PRIu64 "\nbad_file_header=%d\nrecords_bad=%" PRIu64 "\n",
	       opened, st->chunks_ok, st->chunks_bad, st->truncated, st->bytes_skipped,
	       st->bad_file_header, st->records_bad);
	printf("header_first=%d\nn_header=%" PRIu64 "\nn_interval=%" PRIu64 "\nn_end=%" PRIu64
	       "\nn_trigger=%" PRIu64 "\nn_flows=%" PRIu64 "\nn_drops=%" PRIu64 "\n",
	       s.header_first, s.n_header, s.n_interval, s.n_end, s.n_trigger, s.n_flows, s.n_drops);
	printf("first_t0=%" PRIu64 "\nlast_t1=%" PRIu64 "\nfirst_seq=%" PRIu64 "\nlast_seq=%" PRIu64
	       "\nseq_gaps=%" PRIu64 "\n", s.first_t0, s.last_t1, s.first_seq, s.last_seq, s.seq_gaps);
	printf("mode=%s\nset=%s\nrotation_index=%" PRIu64 "\ndump_index=%" PRIu64
	       "\nhostname=%s\nboot_id=%s\nend_reason=%s\n", s.mode, s.set, s.rotation_index,
	       s.dump_index, s.hostname, s.boot_id, s.end_reason);
	printf("trig_why='%s'\ntrig_expr='%s'\ntrig_source=%s\ntrig_t=%" PRIu64 "\ntrig_first=%" PRIu64
	       "\ntrig_last=%" PRIu64 "\n", s.trig_why, s.trig_expr, s.trig_source, s.trig_t,
	       s.trig_first, s.trig_last);
	printf("port_rx=%" PRIu64 "\nport_tx=%" PRIu64 "\nport_first_t=%" PRIu64
	       "\nport_last_t=%" PRIu64 "\ndrops=%" PRIu64 "\nretrans=%" PRIu64 "\n",
	       s.port_rx, s.port_tx, s.port_first_t, s.port_last_t, s.drops, s.retrans);
	printf("div_last=%" PRIu64 "\ndiv_max=%" PRIu64 "\ndiv_changes=%" PRIu64
	       "\ndiv_changes_total=%" PRIu64 "\ndiv_disagree=%" PRIu64 "\ncpu_over=%" PRIu64 "\n",
	       s.div_last, s.div_max, s.div_changes, s.div_changes_total, s.div_disagree, s.cpu_over);
	if (opened)
		np_reader_close(r);
	return opened ? 0 : 1;
}
