/* genana: writes an analysis (.npa) with known, seeded content for the
 * npreport tests: every known section, an unknown wide table, per-interval
 * series, sketches and findings.
 *
 *   genana -o FILE [--seed N] [--intervals N] [--flows N] [--p99-scale X]
 *          [--sigma S] [--only-p99-series] [--no-series]
 *
 * Per-interval p99 samples of flow i are lognormal around (2 + i) ms with
 * sigma S (default 0.1); --p99-scale multiplies them (the table value is the
 * median of the samples, so it moves with them). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anatable.h"
#include "../unit/tabcols.h"
#include "container.h"
#include "npmsg.h"
#include "records.h"

struct gen_opts {
	const char *out;
	uint64_t seed;
	size_t intervals, flows;
	double p99_scale, sigma;
	bool only_p99_series, no_series;
};

static uint64_t gen_state;
/* --src: the flows' source address text (the plot-label injection test of
 * tests/e2e/sec_report_labels.sh puts gnuplot syntax there) */
static const char *gen_src = "10.77.1.1";
static uint64_t gen_next(void)
{
	gen_state ^= gen_state >> 12;
	gen_state ^= gen_state << 25;
	gen_state ^= gen_state >> 27;
	return gen_state * 2685821657736338717ULL;
}
static double gen_unif(void) { return ((double)(gen_next() >> 11) + 0.5) / 9007199254740992.0; }
static double gen_normal(void)
{
	return sqrt(-2.0 * log(gen_unif())) * cos(2 * M_PI * gen_unif());
}

static int gen_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double gen_median(const double *v, size_t n)
{
	double *s = malloc(n * sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), gen_cmp);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

#define GEN_T0 1000000000000ULL     /* reference timeline start, 1000 s */
#define GEN_IV 1000000000ULL

static const char *const gen_hosts[] = { "client", "front", "back" };
static const char *const gen_segs[] = { "snd_stack", "qdisc", "wire", "rcv_stack", "rcv_app" };
static const double gen_seg_us[] = { 12, 3, 40, 15, 900 };

static void gen_meta(struct np_recbuf *rb, const struct gen_opts *o)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_ANA_META, 1);
	msgpack_pack_map(pk, 4);
	np_pack_kv_str(pk, "generator", "genana");
	np_pack_kv_u64(pk, "seed", o->seed);
	np_pack_kv_str(pk, "reference", "client");
	np_pack_str(pk, "inputs");
	msgpack_pack_array(pk, 3);
	for (int i = 0; i < 3; i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s.npr", gen_hosts[i]);
		np_pack_str(pk, buf);
	}
}

static void gen_hosts_clock(struct np_recbuf *rb)
{
	struct np_table *h = TABLE("hosts", "Hosts", 1,
		{ "host", "str", NULL }, { "kernel", "str", NULL }, { "ncpus", "count", NULL },
		{ "events", "count", "packet-hook events" },
		{ "lost", "count", "events lost in the kernel" });
	struct np_table *c = TABLE("clock", "Clock corrections", 1,
		{ "host", "str", NULL }, { "offset", "ns", "added to the host's clock" },
		{ "err_bound", "ns", NULL }, { "drift", "ppm", NULL },
		{ "samples", "count", NULL });
	for (int i = 0; i < 3; i++) {
		size_t r = np_table_row(h);
		np_table_set_str(h, r, 0, gen_hosts[i]);
		np_table_set_str(h, r, 1, "6.18.0");
		np_table_set_u64(h, r, 2, 2);
		np_table_set_u64(h, r, 3, 100000 + 2500 * (uint64_t)i);
		np_table_set_u64(h, r, 4, (uint64_t)i * 3);
		r = np_table_row(c);
		np_table_set_str(c, r, 0, gen_hosts[i]);
		np_table_set_i64(c, r, 1, i == 2 ? -5000123 : i == 1 ? 1234 : 0);
		if (i)
			np_table_set_u64(c, r, 2, 8000 + 1000 * (uint64_t)i);
		np_table_set_f64(c, r, 3, i == 0 ? 0.0 : 0.25 * i);
		np_table_set_u64(c, r, 4, i ? 100 : 0);
	}
	np_table_pack(rb, h);
	np_table_pack(rb, c);
	np_table_free(h);
	np_table_free(c);
}

static void gen_flows(struct np_recbuf *rb, const struct gen_opts *o)
{
	struct np_table *t = TABLE("flows", "Flows", 1,
		{ "flow", "str", NULL }, { "bytes", "bytes", NULL }, { "packets", "count", NULL },
		{ "throughput", "bps", NULL }, { "retrans", "count", NULL },
		{ "p50", "ns", NULL }, { "p99", "ns", NULL }, { "p999", "ns", NULL });
	uint64_t ts[o->intervals + 1];
	double p99[o->intervals + 1], p50[o->intervals + 1], tput[o->intervals + 1];
	for (size_t k = 0; k < o->intervals; k++)
		ts[k] = GEN_T0 + k * GEN_IV;
	for (size_t f = 0; f < o->flows; f++) {
		char key[80];
		snprintf(key, sizeof(key), "tcp %s:%zu>10.77.1.2:8080", gen_src, 40000 + f);
		double base = (2.0 + (double)f) * 1e6;
		for (size_t k = 0; k < o->intervals; k++) {
			p99[k] = base * o->p99_scale * exp(o->sigma * gen_normal());
			p50[k] = base / 4 * exp(o->sigma * gen_normal());
			tput[k] = 8e6 * (1 + (double)f) * exp(0.05 * gen_normal());
		}
		size_t r = np_table_row(t);
		np_table_set_str(t, r, 0, key);
		np_table_set_u64(t, r, 1, 1000000 * (f + 1) + 17);
		np_table_set_u64(t, r, 2, 800 * (f + 1));
		np_table_set_f64(t, r, 3, gen_median(tput, o->intervals));
		np_table_set_u64(t, r, 4, f);
		np_table_set_f64(t, r, 5, gen_median(p50, o->intervals));
		np_table_set_f64(t, r, 6, gen_median(p99, o->intervals));
		np_table_set_f64(t, r, 7, gen_median(p99, o->intervals) * 1.5);
		if (o->no_series)
			continue;
		np_series_pack(rb, "flows", key, "p99", "ns", ts, p99, o->intervals);
		if (o->only_p99_series)
			continue;
		np_series_pack(rb, "flows", key, "p50", "ns", ts, p50, o->intervals);
		np_series_pack(rb, "flows", key, "throughput", "bps", ts, tput, o->intervals);
	}
	np_table_pack(rb, t);
	np_table_free(t);
}

static void gen_decomp(struct np_recbuf *rb, const struct gen_opts *o)
{
	struct np_table *t = TABLE("decomp", "Latency decomposition", 2,
		{ "flow", "str", NULL }, { "segment", "str", NULL }, { "packets", "count", NULL },
		{ "p50", "ns", NULL }, { "p99", "ns", NULL }, { "mean", "ns", NULL },
		{ "share", "ratio", "share of the end-to-end mean" });
	for (size_t f = 0; f < o->flows && f < 3; f++) {
		char flow[80];
		snprintf(flow, sizeof(flow), "tcp %s:%zu>10.77.1.2:8080", gen_src, 40000 + f);
		double total = 0;
		for (size_t s = 0; s < 5; s++)
			total += gen_seg_us[s] * 1e3 * (1 + (double)f);
		for (size_t s = 0; s < 5; s++) {
			struct np_sketch sk;
			np_sketch_init(&sk);
			double mu = gen_seg_us[s] * 1e3 * (1 + (double)f);
			for (int i = 0; i < 2000; i++)
				np_sketch_add(&sk, (uint64_t)(mu * exp(0.3 * gen_normal())), 1);
			size_t r = np_table_row(t);
			np_table_set_str(t, r, 0, flow);
			np_table_set_str(t, r, 1, gen_segs[s]);
			np_table_set_u64(t, r, 2, sk.n);
			np_table_set_u64(t, r, 3, np_sketch_quantile(&sk, 0.5));
			np_table_set_u64(t, r, 4, np_sketch_quantile(&sk, 0.99));
			np_table_set_f64(t, r, 5, np_sketch_mean(&sk));
			np_table_set_f64(t, r, 6, mu / total);
			char key[120];
			snprintf(key, sizeof(key), "%s|%s", flow, gen_segs[s]);
			if (f == 0)
				np_sketchrec_pack(rb, "decomp", key, "latency", "ns", &sk);
			np_sketch_free(&sk);
		}
	}
	np_table_pack(rb, t);
	np_table_free(t);
}

static void gen_loss_jitter(struct np_recbuf *rb, const struct gen_opts *o)
{
	struct np_table *j = TABLE("jitter", "Jitter", 1,
		{ "flow", "str", NULL }, { "jitter_rfc3550", "ns", NULL },
		{ "jitter_dt_p99", "ns", NULL });
	size_t r = np_table_row(j);
	np_table_set_str(j, r, 0, "tcp 10.77.1.1:40000>10.77.1.2:8080");
	np_table_set_u64(j, r, 1, 45210);
	np_table_set_u64(j, r, 2, 310000);
	np_table_pack(rb, j);
	np_table_free(j);

	struct np_table *l = TABLE("loss", "Loss by segment", 2,
		{ "from", "str", NULL }, { "to", "str", NULL }, { "sent", "count", NULL },
		{ "lost", "count", NULL }, { "loss_rate", "ratio", NULL },
		{ "reason", "str", NULL });
	static const char *const hops[][2] = { { "client:dev_xmit", "front:netif_receive" },
					       { "front:dev_xmit", "back:netif_receive" },
					       { "back:netif_receive", "back:tcp_rcv" } };
	static const uint64_t lost[] = { 0, 0, 41 };
	for (int i = 0; i < 3; i++) {
		r = np_table_row(l);
		np_table_set_str(l, r, 0, hops[i][0]);
		np_table_set_str(l, r, 1, hops[i][1]);
		np_table_set_u64(l, r, 2, 2000);
		np_table_set_u64(l, r, 3, lost[i]);
		np_table_set_f64(l, r, 4, (double)lost[i] / 2000.0);
		np_table_set_str(l, r, 5, lost[i] ? "NETFILTER_DROP" : "");
	}
	np_table_pack(rb, l);
	np_table_free(l);
	if (o->no_series || o->only_p99_series)
		return;
	uint64_t ts[o->intervals + 1];
	double v[o->intervals + 1];
	for (size_t k = 0; k < o->intervals; k++) {
		ts[k] = GEN_T0 + k * GEN_IV;
		v[k] = 0.02 * gen_unif();
	}
	np_series_pack(rb, "loss", "back:netif_receive|back:tcp_rcv", "loss_rate", "ratio", ts, v, o->intervals);
}

static void gen_txn_netcpu(struct np_recbuf *rb, const struct gen_opts *o)
{
	struct np_table *t = TABLE("txn", "Transactions by endpoint", 1,
		{ "endpoint", "str", NULL }, { "count", "count", NULL }, { "rate", "rate", NULL },
		{ "p50", "ns", NULL }, { "p99", "ns", NULL });
	struct np_sketch sk;
	np_sketch_init(&sk);
	for (int i = 0; i < 3000; i++)
		np_sketch_add(&sk, (uint64_t)((i % 5 == 0 ? 52e6 : 1.5e6) * exp(0.2 * gen_normal())), 1);
	size_t r = np_table_row(t);
	np_table_set_str(t, r, 0, "10.77.1.2:8080 GET /api/item");
	np_table_set_u64(t, r, 1, sk.n);
	np_table_set_f64(t, r, 2, 200.0);
	np_table_set_u64(t, r, 3, np_sketch_quantile(&sk, 0.5));
	np_table_set_u64(t, r, 4, np_sketch_quantile(&sk, 0.99));
	np_sketchrec_pack(rb, "txn", "10.77.1.2:8080 GET /api/item", "latency", "ns", &sk);
	np_sketch_free(&sk);
	np_table_pack(rb, t);
	np_table_free(t);

	struct np_table *c = TABLE("netcpu", "Network CPU cost", 1,
		{ "host", "str", NULL }, { "net_rx", "ns", NULL }, { "net_tx", "ns", NULL },
		{ "sock_send", "ns", NULL }, { "sock_recv", "ns", NULL },
		{ "cpu_share", "pct", NULL });
	for (int h = 0; h < 3; h++) {
		r = np_table_row(c);
		np_table_set_str(c, r, 0, gen_hosts[h]);
		for (int k = 1; k <= 4; k++)
			np_table_set_u64(c, r, (size_t)k, (uint64_t)(h + 1) * 10000000ULL * (uint64_t)k + 123);
		np_table_set_f64(c, r, 5, 1.5 * (h + 1));
		if (o->no_series || o->only_p99_series)
			continue;
		uint64_t ts[o->intervals + 1];
		double v[o->intervals + 1];
		for (size_t k = 0; k < o->intervals; k++) {
			ts[k] = GEN_T0 + k * GEN_IV;
			v[k] = (h + 1) * 2e6 * exp(0.1 * gen_normal());
		}
		np_series_pack(rb, "netcpu", gen_hosts[h], "net_rx", "ns", ts, v, o->intervals);
	}
	np_table_pack(rb, c);
	np_table_free(c);
}

static void gen_patterns_wide(struct np_recbuf *rb)
{
	struct np_table *p = TABLE("patterns", "Degradation patterns", 1,
		{ "pattern", "id", NULL }, { "condition", "str", NULL }, { "lat_lo", "ns", NULL },
		{ "lat_hi", "ns", NULL }, { "requests", "count", NULL },
		{ "fscore", "ratio", NULL });
	size_t r = np_table_row(p);
	np_table_set_u64(p, r, 0, 1);
	np_table_set_str(p, r, 1, "rpc GET 10.77.2.2:9002/orders/checkout > 50.0 ms");
	np_table_set_u64(p, r, 2, 50000000);
	np_table_set_u64(p, r, 3, 70000000);
	np_table_set_u64(p, r, 4, 600);
	np_table_set_f64(p, r, 5, 0.97);
	np_table_pack(rb, p);
	np_table_free(p);

	/* A table npreport does not know, wider than 80 columns. */
	struct np_table *w = np_table_new("zz_custom", "A table no section knows", 1);
	np_table_col(w, "name", "str", NULL);
	for (int c = 0; c < 14; c++) {
		char col[32];
		snprintf(col, sizeof(col), "metric_%02d", c);
		np_table_col(w, col, c % 3 == 0 ? "bytes" : c % 3 == 1 ? "ns" : "count", NULL);
	}
	for (int row = 0; row < 3; row++) {
		r = np_table_row(w);
		np_table_set_str(w, r, 0, row == 2 ? "a, \"quoted\" name\nwith newline" : row ? "beta" : "alpha");
		for (int c = 0; c < 14; c++)
			np_table_set_u64(w, r, (size_t)c + 1, (uint64_t)(row + 1) * 123456789ULL * (uint64_t)(c + 1));
	}
	np_table_pack(rb, w);
	np_table_free(w);
}

static void gen_findings(struct np_recbuf *rb)
{
	np_finding_pack(rb, 1, "3 packets lost between front and back (0.15 %), all in back's netfilter",
			"loss", "front:dev_xmit|back:netif_receive", "lost", 3);
	np_finding_pack(rb, 2, "78 % of p99 latency of flow tcp 10.77.1.1:40000>10.77.1.2:8080 is spent "
			"in the receiver's application on host front", "decomp",
			"tcp 10.77.1.1:40000>10.77.1.2:8080|rcv_app", "share", 0.78);
	np_finding_pack(rb, 0, "clock of host back corrected by -5.000 ms (error bound 10 us)",
			"clock", "back", "offset", -5000123);
	np_finding_pack(rb, 2, "requests whose call to 10.77.2.2:9002/orders/checkout takes > 50 ms are "
			"the slow ones (F = 0.97)", "patterns", "1", "fscore", 0.97);
}

static int gen_parse(struct gen_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' }, { "intervals", required_argument, NULL, 'n' },
		{ "flows", required_argument, NULL, 'f' }, { "p99-scale", required_argument, NULL, 'x' },
		{ "sigma", required_argument, NULL, 'g' }, { "only-p99-series", no_argument, NULL, 'P' },
		{ "no-series", no_argument, NULL, 'N' }, { "src", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		case 'n': o->intervals = strtoul(optarg, NULL, 0); break;
		case 'f': o->flows = strtoul(optarg, NULL, 0); break;
		case 'x': o->p99_scale = strtod(optarg, NULL); break;
		case 'g': o->sigma = strtod(optarg, NULL); break;
		case 'P': o->only_p99_series = true; break;
		case 'N': o->no_series = true; break;
		case 'S': gen_src = optarg; break;
		default: return -1;
		}
	}
	if (!o->out || o->intervals < 1 || o->intervals > 100000 || o->flows < 1 || o->flows > 1000)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct gen_opts o = { .seed = 1, .intervals = 30, .flows = 3, .p99_scale = 1, .sigma = 0.1 };
	if (gen_parse(&o, argc, argv) < 0) {
		fprintf(stderr, "usage: genana -o FILE [--seed N] [--intervals N] [--flows N] "
			"[--p99-scale X] [--sigma S] [--only-p99-series] [--no-series]\n");
		return 2;
	}
	gen_state = o.seed * 0x9E3779B97F4A7C15ULL + 1;
	struct np_writer *w;
	remove(o.out);
	int err = np_writer_open(&w, o.out, NP_KIND_ANALYSIS, NULL);
	if (err < 0) {
		fprintf(stderr, "genana: cannot create %s: %s\n", o.out, strerror(-err));
		return 1;
	}
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	gen_meta(&rb, &o);
	gen_hosts_clock(&rb);
	gen_flows(&rb, &o);
	gen_decomp(&rb, &o);
	gen_loss_jitter(&rb, &o);
	gen_txn_netcpu(&rb, &o);
	gen_patterns_wide(&rb);
	gen_findings(&rb);
	err = np_writer_commit(w, &rb);
	int cerr = np_writer_close(w);
	np_recbuf_free(&rb);
	if (err < 0 || cerr < 0) {
		fprintf(stderr, "genana: cannot write %s: %s\n", o.out, strerror(-(err ? err : cerr)));
		return 1;
	}
	return 0;
}
