/* The retransmissions-over-time plot's data on hand-built series whose
 * answer is known: 10 flows on two hosts, flow i retransmitting i+1 segments
 * in each of 3 one-second intervals (3..30, 165 in all), intervals starting
 * 0.5 s apart on host b so that two land in one per-second bin. Expected:
 * 8 curves (the 7 largest flows by total, then "3 other flows" with the
 * sum of the 3 smallest), each curve's label with its total, every bin
 * count at its second, the whole file summing to 165; a throughput series
 * of the same table is not drawn. gnuplot is disabled (NP_GNUPLOT=""):
 * only the data and the script are checked. */
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
		s->t[k] = T0 + (i % 2 ? k * 500000000ull : k * 1000000000ull);
		s->v[k] = !strcmp(metric, "retrans") ? (double)(i + 1) : 1e9;
	}
	return s;
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
		snprintf(key, sizeof(key), "h/%c|tcp 10.0.0.%zu:4000%zu>10.0.1.2:80", i % 2 ? 'b' : 'a', i % 2 + 1, i);
		series[i] = mkseries(key, "retrans", i);
	}
	series[NFLOWS] = mkseries("h/a|tcp 10.0.0.1:1>10.0.1.2:80", "throughput", 0);
	struct np_analysis a = { .nseries = NFLOWS + 1, .series = series };
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
	/* flow 9 (host b, 10 per interval) first */
	CHECK(!strcmp(b[0].label, "h/b: tcp 10.0.0.2:40009>10.0.1.2:80 (30)"), "first: %s", b[0].label);
	CHECK_NEAR(b[0].bin[0], 20, 0);        /* host b: 0 and 0.5 s in second 0 */
	CHECK_NEAR(b[0].bin[1], 10, 0);
	CHECK(!strcmp(b[1].label, "h/a: tcp 10.0.0.1:40008>10.0.1.2:80 (27)"), "second: %s", b[1].label);
	CHECK(b[1].bin[0] == 9 && b[1].bin[1] == 9 && b[1].bin[2] == 9, "host a: one interval per second");
	for (size_t i = 0; i + 1 < n; i++)
		CHECK_NEAR(b[i].sum, 3.0 * (double)(NFLOWS - i), 0);
	CHECK(!strcmp(b[7].label, "3 other flows (18)"), "rest: %s", b[7].label);  /* 3 x (3+2+1) */
	CHECK_NEAR(b[7].sum, 18, 0);

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
	char dir2[] = "/tmp/test_report_plots.XXXXXX";
	CHECK(mkdtemp(dir2) != NULL, "temp dir 2");
	rpt_plots(dir2, &a, &res);
	snprintf(path, sizeof(path), "%s/retrans-time.dat", dir2);
	CHECK(access(path, F_OK) != 0, "no retrans series, no retrans-time plot");

	for (size_t i = 0; i <= NFLOWS; i++)
		np_series_free(series[i]);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir, dir2);
	CHECK(system(cmd) == 0, "cleanup");
	return tap_done();
}
