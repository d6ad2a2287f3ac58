/* The retransmissions-over-time plot's data on hand-built series whose
 * answer is known: 10 flows, flow i retransmitting i+1 segments in each of
 * 3 one-second intervals (165 in all), sent from h/a (even i and 9) or h/b
 * (odd i < 9, intervals 0.5 s apart so two land in one per-second bin) to
 * 10.0.1.(i % 9):80. Flow 9 shares flow 0's host pair; the reverse of flow
 * 8 is in h/c's flows table, so its receiver is h/c. Expected: 9 host
 * pairs, 8 curves: h/a -> 10.0.1.0 (33, 2 flows), h/a -> h/c (27), h/b ->
 * 10.0.1.7 (24), 21, 18, 15, 12, then "2 other host pairs (15)"; every bin
 * count at its second; the file sums to 165; a throughput series of the
 * same table is not drawn. gnuplot is disabled (NP_GNUPLOT=""): only the
 * data and the script are checked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "anatable.h"
#include "plots.h"

#define NFLOWS 10
#define T0 1000000000000ull

static bool host_b(size_t i) { return i % 2 && i != 9; }

static struct np_series *mkseries(const char *key, const char *metric, size_t i)
{
	struct np_series *s = calloc(1, sizeof(*s));
	s->table = strdup("flows");
	s->key = strdup(key);
	s->metric = strdup(metric);
	s->unit = strdup(!strcmp(metric, "retrans") ? "count" : "bps");
	s->n = 3;
	s->t = calloc(3, sizeof(*s->t));
	s->v = calloc(3, sizeof(*s->v));
	for (size_t k = 0; k < 3; k++) {
		/* host a: whole seconds 0, 1, 2; host b: 0, 0.5, 1.0 s */
		s->t[k] = T0 + (host_b(i) ? k * 500000000ull : k * 1000000000ull);
		s->v[k] = !strcmp(metric, "retrans") ? (double)(i + 1) : 1e9;
	}
	return s;
}

/* h/c recorded the reverse of flow 8 (h/a's 10.0.0.1:40008 > 10.0.1.8:80) */
static struct np_table *flows_table(void)
{
	struct np_table *t = np_table_new("flows", "Flows", 2);
	np_table_col(t, "host", "str", NULL);
	np_table_col(t, "flow", "str", NULL);
	size_t r = np_table_row(t);
	np_table_set_str(t, r, 0, "h/c");
	np_table_set_str(t, r, 1, "tcp 10.0.1.8:80>10.0.0.1:40008");
	return t;
}

/* Blocks of the .dat: label, value sum, and the per-bin values. */
struct block { char label[200]; double sum, bin[4]; };

static size_t read_dat(const char *path, struct block *b, size_t max, double *total)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t n = 0;
	*total = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned bin;
		double v;
		if (line[0] == '#' && n < max) {
			memset(&b[n], 0, sizeof(b[n]));
			snprintf(b[n].label, sizeof(b[n].label), "%.199s", line + 2);
			b[n].label[strcspn(b[n].label, "\n")] = 0;
			n++;
		} else if (n && sscanf(line, "%u\t%lf", &bin, &v) == 2) {
			b[n - 1].sum += v;
			if (bin < 4)
				b[n - 1].bin[bin] = v;
			*total += v;
		}
	}
	if (f)
		fclose(f);
	return n;
}

int main(void)
{
	struct np_series *series[NFLOWS + 1];
	char key[128];
	for (size_t i = 0; i < NFLOWS; i++) {
		snprintf(key, sizeof(key), "h/%c|tcp 10.0.0.%d:4000%zu>10.0.1.%zu:80", host_b(i) ? 'b' : 'a',
			 host_b(i) ? 2 : 1, i, i % 9);
		series[i] = mkseries(key, "retrans", i);
	}
	series[NFLOWS] = mkseries("h/a|tcp 10.0.0.1:1>10.0.1.2:80", "throughput", 0);
	struct np_table *fl = flows_table();
	struct np_analysis a = { .nseries = NFLOWS + 1, .series = series, .ntables = 1, .tables = &fl };
	a.meta.type = MSGPACK_OBJECT_NIL;
	char dir[] = "/tmp/test_report_plots.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "temp dir");
	setenv("NP_GNUPLOT", "", 1);
	struct rpt_plotres res;
	CHECK(rpt_plots(dir, &a, &res) == 0, "rpt_plots");

	char path[300];
	snprintf(path, sizeof(path), "%s/retrans-time.dat", dir);
	struct block b[16];
	double total;
	size_t n = read_dat(path, b, 16, &total);
	CHECK_EQ_U(n, 8);
	CHECK_NEAR(total, 165, 0);             /* 3 x (1 + ... + 10) */
	static const char *const want[8] = {
		"h/a -> 10.0.1.0 (33, 2 flows)", "h/a -> h/c (27, 1 flow)", "h/b -> 10.0.1.7 (24, 1 flow)",
		"h/a -> 10.0.1.6 (21, 1 flow)", "h/b -> 10.0.1.5 (18, 1 flow)", "h/a -> 10.0.1.4 (15, 1 flow)",
		"h/b -> 10.0.1.3 (12, 1 flow)", "2 other host pairs (15)" };
	static const double sums[8] = { 33, 27, 24, 21, 18, 15, 12, 15 };
	for (size_t i = 0; i < n && i < 8; i++) {
		CHECK(!strcmp(b[i].label, want[i]), "curve %zu: %s", i, b[i].label);
		CHECK_NEAR(b[i].sum, sums[i], 0);
	}
	/* h/a -> 10.0.1.0: flows 0 and 9 (1 + 10 per whole second) */
	CHECK(b[0].bin[0] == 11 && b[0].bin[1] == 11 && b[0].bin[2] == 11, "host a: one interval per second");
	/* h/b -> 10.0.1.7: 8 per interval at 0, 0.5, 1.0 s */
	CHECK(b[2].bin[0] == 16 && b[2].bin[1] == 8 && b[2].bin[2] == 0, "host b: two intervals in second 0");

	snprintf(path, sizeof(path), "%s/retrans-time.gp", dir);
	FILE *g = fopen(path, "r");
	char buf[8192] = "";
	size_t len = g ? fread(buf, 1, sizeof(buf) - 1, g) : 0;
	buf[len] = 0;
	if (g)
		fclose(g);
	CHECK(strstr(buf, "index 7 using") && !strstr(buf, "index 8 using"), "8 curves in the script");
	CHECK(strstr(buf, "set xrange [0:3]") != NULL, "x axis over the 3 seconds");

	/* no retrans series: no plot */
	a.nseries = 0;
	a.ntables = 0;
	char dir2[] = "/tmp/test_report_plots.XXXXXX";
	CHECK(mkdtemp(dir2) != NULL, "temp dir 2");
	rpt_plots(dir2, &a, &res);
	snprintf(path, sizeof(path), "%s/retrans-time.dat", dir2);
	CHECK(access(path, F_OK) != 0, "no retrans series, no retrans-time plot");

	for (size_t i = 0; i <= NFLOWS; i++)
		np_series_free(series[i]);
	np_table_free(fl);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir, dir2);
	CHECK(system(cmd) == 0, "cleanup");
	return tap_done();
}
