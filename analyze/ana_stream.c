/* npanalyze --window: the streamed analysis. Memory is bounded by one
 * window of packet events (plus its horizon) and the per-host, per-flow
 * state, not by the recording's length (docs/ANALYSIS.md, "Scale").
 *
 *   skeleton  every input read once; packet events are counted and dropped
 *             (ana_model.pev_drop): hosts, flows, syncs, transactions ...
 *   pass 1    per window: its chunks read (ana_seek.c, --horizon
 *             around it), joined, the clock points of the packets it owns
 *   clock     one fit over every window's points, on the skeleton
 *   pass 2    per window again: joined and decomposed with that clock; the
 *             packets whose first hook lies in the window add to the run's
 *             "all" sketches and counts (ana_stream_acc), in window order
 *   families  the other tables, from the skeleton as the in-memory run does
 *
 * Windows are cut on the reference's clock as the HEADERs' wall-clock pairs
 * map the hosts (the fit is not known before pass 2), so each reads its
 * chunks through the chunk index; pass 2 assigns packets by the fitted
 * time, and the first and last windows are open-ended so none is lost. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "ana.h"

/* Read around each window: a packet's events span far less (the farthest
 * genfix hook is ~1 ms after the first), the HEADERs' wall clocks of
 * synchronised hosts agree within a few ms. */
#define ANA_STREAM_HORIZON_NS (200 * 1000000ll)   /* --horizon default */
#define ANA_STREAM_MIN_WINDOW_NS (10 * 1000000ll)
/* What a window holds besides its events (read and decode buffers, the
 * decomposition's tables): measured peaks passed resident + 64 B/event by
 * 4 MB (genfix, 6 hosts, 2 M events; 10 M events, 2 hosts) */
#define ANA_STREAM_FIXED (8ull << 20)
/* the share of --mem the automatic window plans for (chunks are read whole,
 * event rates vary along the run) */
#define ANA_STREAM_MEM_SHARE 0.7

struct ana_stream {
	struct ana_options *o;
	char **files;
	const char **aliases;
	int nfiles;
	struct ana_model g;            /* the skeleton: everything but the events */
	int64_t lo, hi;                /* the run on the reference's clock (HEADER mapping) */
	uint64_t events;               /* packet events of the whole run */
	uint64_t window_ns;
	int64_t horizon;               /* read around each window (--horizon) */
	size_t nwin;
	struct ana_stream_win *win;
	struct ana_stream_acc acc;
	struct stream_warn {           /* the windows' warnings, by text with numbers blanked */
		char *key, *first;     /* the first window's text */
		size_t nwin, win0, win1;
		bool major;            /* any window's was a warning, not a note */
	} *warn;
	size_t nwarn;
	uint64_t peak_pred;            /* the largest predicted window peak */
	size_t refused;                /* the window a refusal is about */
	double t, tm;                  /* CPU at the last mark */
};

uint64_t ana_rss_now(void)
{
	unsigned long size, res;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	int n = fscanf(f, "%lu %lu", &size, &res);
	fclose(f);
	return n == 2 ? (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static void stream_mark(struct ana_stream *st, const char *what)
{
	double now = ana_cpu_s(), main = ana_thread_cpu_s();
	struct rusage ru;
	if (!st->o->quiet)
		fprintf(stderr, "npanalyze: %-28s %7.3f s CPU %7.3f s main, peak %ld MB\n", what,
			now - st->t, main - st->tm, getrusage(RUSAGE_SELF, &ru) ? 0L : ru.ru_maxrss / 1024);
	st->t = now;
	st->tm = main;
}

/* 0, or the first refusal of ana_load_file (over --mem, not a recording). */
static int stream_load(const struct ana_stream *st, struct ana_model *m, int *nread)
{
	for (int i = 0; i < st->nfiles; i++) {
		int rc = ana_load_file(m, st->files[i], st->aliases[i]);
		if (rc == ANA_LOAD_OVER_MEM || rc == ANA_LOAD_NOT_NP)
			return rc;
		if (nread && rc == 0)
			(*nread)++;
	}
	ana_load_finish(m);
	return 0;
}

/* The run's span on the reference's clock and its packet events. */
static void stream_span(struct ana_stream *st)
{
	st->lo = INT64_MAX;
	st->hi = INT64_MIN;
	for (size_t h = 0; h < st->g.hosts.n; h++) {
		const struct ana_host *x = &st->g.hosts.v[h];
		if (!x->pkt_events)
			continue;
		int64_t a = (int64_t)x->t_min - x->seek_d, b = (int64_t)x->t_max - x->seek_d;
		if (a < st->lo) st->lo = a;
		if (b > st->hi) st->hi = b;
		st->events += x->pkt_events;
	}
	if (st->lo > st->hi)
		st->lo = st->hi = 0;
}

static int stream_cut(struct ana_stream *st, uint64_t w);

/* --window, or the longest window whose predicted peak stays inside
 * ANA_STREAM_MEM_SHARE of what --mem leaves after the skeleton. -1: none fits. */
static int stream_windows(struct ana_stream *st)
{
	uint64_t span = (uint64_t)(st->hi - st->lo) + 1;
	uint64_t w = st->o->window_ns;
	if (!w) {
		uint64_t base = ana_rss_now() + ANA_STREAM_FIXED, lim = st->o->mem_limit;
		double budget = lim > base ? ANA_STREAM_MEM_SHARE * (double)(lim - base) : 0;
		double per_ns = (double)(st->events ? st->events : 1) * ANA_MEM_PER_EVENT / (double)span;
		double x = budget / per_ns - 2.0 * st->horizon;
		if (x < ANA_STREAM_MIN_WINDOW_NS)
			return -1;
		w = x > (double)span ? span : (uint64_t)x;
	}
	return stream_cut(st, w);
}

/* Windows of w ns over the run. */
static int stream_cut(struct ana_stream *st, uint64_t w)
{
	uint64_t span = (uint64_t)(st->hi - st->lo) + 1;
	st->window_ns = w;
	st->nwin = (size_t)((span + w - 1) / w);
	st->win = calloc(st->nwin, sizeof(*st->win));
	if (!st->win)
		return -ENOMEM;
	for (size_t i = 0; i < st->nwin; i++) {
		st->win[i].lo = st->lo + (int64_t)(i * w);
		st->win[i].hi = st->lo + (int64_t)((i + 1) * w);
	}
	return 0;
}

/* Window i's events into w (options in wo): 0, ANA_LOAD_OVER_MEM, -EIO
 * (the window found other hosts than the skeleton). */
static int stream_window_load(struct ana_stream *st, size_t i, struct ana_model *w,
			      struct ana_options *wo)
{
	struct ana_stream_win *x = &st->win[i];
	/* the last window's memory back to the system: the prediction starts
	 * from what is resident (npanalyze keeps freed memory in its heap) */
	malloc_trim(0);
	*wo = *st->o;
	wo->prog = NULL;
	wo->quiet = true;
	wo->from_set = i > 0;
	wo->from_ns = (uint64_t)x->lo;
	wo->to_set = i + 1 < st->nwin;
	wo->to_ns = (uint64_t)x->hi;
	wo->from_rel = wo->to_rel = false;
	wo->seek_margin_ns = st->horizon;
	wo->seek_first_clock = true;
	wo->mem_base = ana_rss_now() + ANA_STREAM_FIXED;
	ana_model_init(w, wo);
	int rc = stream_load(st, w, NULL);
	x->events = w->pev.n;
	uint64_t pred = ana_mem_predict(w);
	if (pred > st->peak_pred)
		st->peak_pred = pred;
	if (rc)
		return rc;
	if (w->hosts.n != st->g.hosts.n)
		return -EIO;
	for (size_t h = 0; h < w->hosts.n; h++)
		if (strcmp(w->hosts.v[h].name, st->g.hosts.v[h].name))
			return -EIO;
	return 0;
}

static void stream_refuse(const struct ana_stream *st, size_t i, int rc)
{
	if (rc == ANA_LOAD_OVER_MEM)
		fprintf(stderr, "npanalyze: window %zu/%zu: its %llu packet events would need about "
			"%.0f MB, more than --mem %.0f MB (use a shorter --window)\n", i + 1, st->nwin,
			(unsigned long long)st->win[i].events, (double)st->peak_pred / 1048576,
			(double)st->o->mem_limit / 1048576);
	else
		fprintf(stderr, "npanalyze: window %zu/%zu: %s\n", i + 1, st->nwin,
			rc == -EIO ? "the inputs changed between passes" : strerror(-rc));
}

/* Pass 1: clock points of each window's own packets. */
static int stream_clock_points(struct ana_stream *st, struct ana_clockpts *cp)
{
	for (size_t i = 0; i < st->nwin; i++) {
		struct ana_model w;
		struct ana_options wo;
		int rc = stream_window_load(st, i, &w, &wo);
		if (!rc) {
			w.own_set = true;
			w.own_lo = i ? st->win[i].lo : INT64_MIN;
			w.own_hi = i + 1 < st->nwin ? st->win[i].hi : INT64_MAX;
			struct ana_paths *p = ana_path_match(&w);
			if (p && cp)
				ana_path_clock_points(&w, p, cp);
			ana_path_free(p);
		}
		ana_model_free(&w);
		if (rc) {
			st->refused = i;
			return rc;
		}
	}
	return 0;
}

static void stream_acc_diff(struct ana_stream_acc *d, const struct ana_stream_acc *a,
			    const struct ana_stream_acc *b)
{
	d->pkts = a->pkts - b->pkts;
	d->bytes = a->bytes - b->bytes;
	d->retx = a->retx - b->retx;
	d->lost = a->lost - b->lost;
	d->copies = a->copies - b->copies;
	d->unrec = a->unrec - b->unrec;
	d->sent = a->sent - b->sent;
	d->received = a->received - b->received;
	d->active = a->active - b->active;
}

/* text with every run of digits (and the points inside numbers) as '#':
 * one window's "12 packets" and another's "7 packets" say the same */
static char *stream_warn_key(const char *text)
{
	char *k = malloc(strlen(text) + 1), *o = k;
	if (!k)
		return NULL;
	for (const char *c = text; *c; c++) {
		if (*c >= '0' && *c <= '9') {
			while ((c[1] >= '0' && c[1] <= '9') || (c[1] == '.' && c[2] >= '0' && c[2] <= '9'))
				c++;
			*o++ = '#';
		} else
			*o++ = *c;
	}
	*o = 0;
	return k;
}

/* Window i's warnings from w.warnings[from] on, into the run's list: one
 * entry per kind, with the windows that said it. A text the skeleton said
 * already (a damaged chunk read again) is not repeated. */
static void stream_warn_collect(struct ana_stream *st, const struct ana_model *w, size_t from,
				size_t i)
{
	for (size_t k = from; k < w->warnings.n; k++) {
		const char *text = w->warnings.v[k];
		bool said = false;
		for (size_t j = 0; j < st->g.warnings.n && !said; j++)
			said = !strcmp(st->g.warnings.v[j], text);
		char *key = said ? NULL : stream_warn_key(text);
		if (!key)
			continue;
		size_t e;
		for (e = 0; e < st->nwarn && strcmp(st->warn[e].key, key); e++)
			;
		if (e == st->nwarn) {
			struct stream_warn *nw = realloc(st->warn, (st->nwarn + 1) * sizeof(*nw));
			char *first = strdup(text);
			if (!nw || !first) {
				if (nw)
					st->warn = nw;
				free(key);
				free(first);
				continue;
			}
			st->warn = nw;
			st->warn[st->nwarn++] = (struct stream_warn){ .key = key, .first = first, .win0 = i };
		} else
			free(key);
		struct stream_warn *x = &st->warn[e];
		x->nwin++;
		x->win1 = i;
		x->major |= !w->warn_minor.v[k];
	}
}

/* The windows' warnings as the run's: a kind a single window said, with
 * that window; else how many said it, the first and the last, and the
 * first's text (its figures are that window's). */
static void stream_warn_emit(struct ana_stream *st)
{
	for (size_t e = 0; e < st->nwarn; e++) {
		const struct stream_warn *x = &st->warn[e];
		void (*say)(struct ana_model *, const char *, ...) = x->major ? ana_warn : ana_note;
		if (x->nwin == 1)
			say(&st->g, "streamed window %zu/%zu: %s", x->win0 + 1, st->nwin, x->first);
		else
			say(&st->g, "streamed windows: %zu of %zu (%zu to %zu) said, the first's figures: %s",
			    x->nwin, st->nwin, x->win0 + 1, x->win1 + 1, x->first);
	}
}

static void stream_warn_free(struct ana_stream *st)
{
	for (size_t e = 0; e < st->nwarn; e++) {
		free(st->warn[e].key);
		free(st->warn[e].first);
	}
	free(st->warn);
}

/* Pass 2: each window decomposed with the run's clock. */
static int stream_decompose(struct ana_stream *st)
{
	for (size_t i = 0; i < st->nwin; i++) {
		struct ana_model w;
		struct ana_options wo;
		int rc = stream_window_load(st, i, &w, &wo);
		if (!rc) {
			stream_warn_collect(st, &w, 0, i);
			size_t nw0 = w.warnings.n;
			for (size_t h = 0; h < w.hosts.n; h++)
				w.hosts.v[h] = st->g.hosts.v[h];     /* the clock, the run's span */
			w.ref = st->g.ref;
			/* the windows are on the first input's clock; the reference
			 * (--ref) may be another host's */
			w.win_lo = i ? ana_to_ref(&st->g, 0, (uint64_t)st->win[i].lo) : INT64_MIN;
			w.win_hi = i + 1 < st->nwin ? ana_to_ref(&st->g, 0, (uint64_t)st->win[i].hi) - 1
						     : INT64_MAX;
			w.sacc = &st->acc;
			struct ana_stream_acc before = st->acc;
			struct ana_paths *p = ana_path_match(&w);
			struct ana_out wo_out;
			ana_out_init(&wo_out);
			ana_decomp_run(&w, p, &wo_out);
			ana_out_free(&wo_out);
			ana_path_free(p);
			stream_acc_diff(&st->win[i].acc, &st->acc, &before);
			stream_warn_collect(st, &w, nw0, i);
			if (!st->o->quiet)
				fprintf(stderr, "npanalyze: window %zu/%zu: %llu events read, %llu packets\n",
					i + 1, st->nwin, (unsigned long long)st->win[i].events,
					(unsigned long long)st->win[i].acc.pkts);
		}
		ana_model_free(&w);
		if (rc) {
			stream_refuse(st, i, rc);
			return rc;
		}
	}
	return 0;
}

/* The windows were cut through the HEADERs' wall clocks: where the fit puts
 * a host farther from that than a quarter of the horizon, packets at the
 * windows' edges may have been read in part (counted twice or not at all). */
static void stream_check_horizon(struct ana_stream *st)
{
	for (size_t h = 0; h < st->g.hosts.n; h++) {
		const struct ana_host *x = &st->g.hosts.v[h];
		if (!x->pkt_events || !ana_host_aligned(&st->g, (int)h))
			continue;
		int64_t d = ana_to_ref(&st->g, (int)h, x->t_min) - ((int64_t)x->t_min - x->seek_d);
		if (d < 0)
			d = -d;
		if (d > st->horizon / 4)
			ana_warn(&st->g, "%s: its clock is %.3f ms from where its HEADER's wall clock "
				 "put it, more than a quarter of the streamed windows' horizon (%.0f ms): "
				 "packets at the windows' edges may be counted twice or missed; use a "
				 "larger --horizon", x->name, (double)d / 1e6, (double)st->horizon / 1e6);
	}
}

/* Skeleton, windows, pass 1 and the clock fit (its tables into out): 0 or
 * exit status 2 (said why). */
static int stream_prepare(struct ana_stream *st, struct ana_out *out)
{
	int nread = 0;
	st->g.pev_drop = true;
	int rc = stream_load(st, &st->g, &nread);
	if (rc == ANA_LOAD_NOT_NP || !nread) {
		fprintf(stderr, "npanalyze: %s\n", rc ? "an input is not an np recording"
						      : "no input could be read");
		return 2;
	}
	stream_span(st);
	stream_mark(st, "stream skeleton (all inputs)");
	if (stream_windows(st)) {
		fprintf(stderr, "npanalyze: no window fits --mem %.0f MB (%llu packet events over "
			"%.3f s; skeleton %.0f MB resident)\n", (double)st->o->mem_limit / 1048576,
			(unsigned long long)st->events, (double)(st->hi - st->lo) / 1e9,
			(double)ana_rss_now() / 1048576);
		return 2;
	}
	if (!st->o->quiet)
		fprintf(stderr, "npanalyze: %llu packet events from %zu host(s), streamed in %zu "
			"window(s) of %.3f s (+%.3f s read each side)\n", (unsigned long long)st->events,
			st->g.hosts.n, st->nwin, (double)st->window_ns / 1e9,
			(double)st->horizon / 1e9);
	st->acc.run = &st->g;
	st->acc.flow_seen = calloc(st->g.flows.n ? st->g.flows.n : 1, 1);
	if (!st->acc.flow_seen)
		return 2;
	struct ana_clockpts *cp = ana_clock_pts_new(&st->g);
	rc = stream_clock_points(st, cp);
	/* --window auto: chunks are read whole (a genfix chunk spans ~1 s), so a
	 * window over --mem is halved and pass 1 starts again */
	while (rc == ANA_LOAD_OVER_MEM && !st->o->window_ns &&
	       st->window_ns / 2 >= ANA_STREAM_MIN_WINDOW_NS) {
		ana_clock_pts_free(cp);
		cp = ana_clock_pts_new(&st->g);
		free(st->win);
		st->peak_pred = 0;
		if (stream_cut(st, st->window_ns / 2))
			break;
		if (!st->o->quiet)
			fprintf(stderr, "npanalyze: window over --mem: %zu window(s) of %.3f s\n",
				st->nwin, (double)st->window_ns / 1e9);
		rc = stream_clock_points(st, cp);
	}
	if (rc)
		stream_refuse(st, st->refused, rc);
	if (!rc) {
		stream_mark(st, "stream pass 1 (clock points)");
		ana_clock_run(&st->g, cp, out);
		stream_check_horizon(st);
		stream_mark(st, "clock model");
	}
	ana_clock_pts_free(cp);
	return rc ? 2 : 0;
}

static int stream_finish(struct ana_stream *st, struct ana_out *out, const char *out_path,
			 FILE *summary)
{
	ana_txn_name_clients(&st->g);
	/* the slow-RPC windows before pass 2, which adds their segment sums */
	ana_bneck_windows(&st->g);
	if (stream_decompose(st))
		return 2;
	stream_mark(st, "stream pass 2 (decompose)");
	ana_decomp_stream_tables(&st->g, &st->acc, st->win, st->nwin, out);
	stream_warn_emit(st);
	ana_run_families(&st->g, out);
	stream_mark(st, "other families");
	int rc = out_path ? ana_out_write(&st->g, out, out_path) : 0;
	if (rc) {
		fprintf(stderr, "npanalyze: cannot write %s: %s\n", out_path, strerror(-rc));
		return 2;
	}
	ana_out_summary(&st->g, out, summary);
	struct rusage ru;
	if (!st->o->quiet) {
		if (out_path)
			fprintf(stderr, "npanalyze: wrote %s\n", out_path);
		fprintf(stderr, "npanalyze: streamed: predicted peak %.0f MB (largest window's), "
			"peak memory %.0f MB (%.0f bytes per packet event)\n",
			(double)st->peak_pred / 1048576,
			getrusage(RUSAGE_SELF, &ru) ? 0.0 : (double)ru.ru_maxrss / 1024,
			st->events && !getrusage(RUSAGE_SELF, &ru)
				? (double)ru.ru_maxrss * 1024 / (double)st->events : 0.0);
	}
	return st->g.warnings.n > st->g.nminor ? 1 : 0;
}

int ana_stream_main(struct ana_options *o, char **files, const char **aliases, int nfiles,
		    const char *out_path, FILE *summary)
{
	struct ana_stream st = { .o = o, .files = files, .aliases = aliases, .nfiles = nfiles,
				 .t = ana_cpu_s(), .tm = ana_thread_cpu_s(),
				 .horizon = o->horizon_ns ? (int64_t)o->horizon_ns : ANA_STREAM_HORIZON_NS };
	struct ana_out out;
	ana_out_init(&out);
	ana_model_init(&st.g, o);
	for (int s = 0; s < ANA_NSEGS; s++)
		np_sketch_init(&st.acc.all[s]);
	int status = stream_prepare(&st, &out);
	if (!status)
		status = stream_finish(&st, &out, out_path, summary);
	ana_out_free(&out);
	for (int s = 0; s < ANA_NSEGS; s++)
		np_sketch_free(&st.acc.all[s]);
	free(st.win);
	free(st.acc.flow_seen);
	ana_stream_acc_free(&st.acc);
	stream_warn_free(&st);
	ana_model_free(&st.g);
	return status;
}
