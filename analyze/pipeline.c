/* The analysis pipeline: ana_run() runs npanalyze's phases in order, top to
 * bottom. Each phase reads only what the loader or an earlier phase filled
 * and hands its tables and candidate findings to the collector (ana_out.c),
 * which writes them at the end; the "in:" / "out:" lines below name those
 * fields. What passes between phases outside the model (the joined packet
 * paths, the clock points) lives in struct ana_pipe. A phase that takes the
 * model const only reads it; ana_txn_run writes just warnings.
 * docs/ANALYSIS.md ("Code: the pipeline") has the table of phases. */
#include <stdio.h>
#include <time.h>
#include <sys/resource.h>
#include "ana.h"
#include "ana_par.h"
#include "ana_path.h"

/* Products of one phase consumed by a later one that are not part of the model. */
struct ana_pipe {
	struct ana_paths *paths;    /* match -> clock points, path analysis */
	struct ana_clockpts *cpts;  /* match -> clock model */
	struct ana_out out;         /* every phase -> findings, write, summary */
	double t;                   /* process CPU at the end of the last phase */
	double tm;                  /* this (the main) thread's CPU then */
	double tw;                  /* monotonic wall clock then */
};

double ana_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double ana_thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double pipe_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU of all threads, of the main thread (the phase's critical path when
 * the others keep up: on a shared machine wall time says little), wall
 * time, and the peak resident memory so far (which phase set it). */
static void pipe_mark(const struct ana_model *m, struct ana_pipe *pp, const char *what)
{
	double now = ana_cpu_s(), main = ana_thread_cpu_s(), wall = pipe_wall_s();
	struct rusage ru;
	if (m->opt && !m->opt->quiet)
		fprintf(stderr, "npanalyze: %-28s %7.3f s CPU %7.3f s main %7.3f s wall, peak %ld MB\n",
			what, now - pp->t, main - pp->tm, wall - pp->tw,
			getrusage(RUSAGE_SELF, &ru) ? 0L : ru.ru_maxrss / 1024);
	pp->t = now;
	pp->tm = main;
	pp->tw = wall;
}

/* in: m->syncs, the one-way delays of the matched packets (pp->paths).
 * out: hosts[].t0, clk_a, clk_b, clk_err_ns, clk_quality, clk_via; tables
 * clock and clock_pairs. */
static void pipe_clock(struct ana_model *m, struct ana_pipe *pp)
{
	pp->cpts = ana_clock_pts_new(m);
	if (pp->paths && pp->cpts)
		ana_path_clock_points(m, pp->paths, pp->cpts);
	ana_clock_run(m, pp->cpts, &pp->out);
	ana_clock_pts_free(pp->cpts);
	pp->cpts = NULL;
}

/* The joined packets freed. At --threads >= 2 their two big arrays' pages
 * are handed back on the threads first: freed, they stay in the heap until
 * exit, where the kernel frees every page still mapped on one thread (on
 * the 10 M case ~240 MB, twice what is left at one thread, whose packet
 * array is a mapping of its own and unmapped here). */
static void pipe_paths_free(const struct ana_model *m, struct ana_paths *p)
{
	unsigned nt = m->opt ? m->opt->threads : 1;
	if (p && nt > 1) {
		if (p->pe)
			ana_par_zap(p->pe, p->norder * sizeof(*p->pe), nt);
		if (p->pkts)
			ana_par_zap(p->pkts, p->npkts * sizeof(*p->pkts), nt);
	}
	ana_path_free(p);
}

/* --from/--to: relative values count from the reference host's first event.
 * in: m->opt, m->ref, hosts[ref].t_min. out: m->win_lo, m->win_hi. */
static void pipe_window(struct ana_model *m)
{
	const struct ana_options *o = m->opt;
	if (!o)
		return;
	int64_t base = m->ref >= 0 && (size_t)m->ref < m->hosts.n ? (int64_t)m->hosts.v[m->ref].t_min : 0;
	if (o->from_set)
		m->win_lo = (int64_t)o->from_ns + (o->from_rel ? base : 0);
	if (o->to_set)
		m->win_hi = (int64_t)o->to_ns + (o->to_rel ? base : 0);
}

/* in: hosts[].clk_quality. out: a candidate finding per host left unaligned. */
static void pipe_clock_findings(const struct ana_model *m, struct ana_out *o)
{
	for (size_t i = 0; i < m->hosts.n; i++)
		if (m->hosts.v[i].clk_quality == ANA_CLK_UNALIGNED && m->hosts.n > 1)
			ana_out_candidate(o, 0.5, 1, "clock", m->hosts.v[i].name, "quality", 0,
					  "host %s could not be aligned with %s (no common exchange or traffic)",
					  m->hosts.v[i].name, m->hosts.v[m->ref].name);
}

void ana_run_families(struct ana_model *m, struct ana_out *o)
{
	/* families (ana_families.c): in the records of their family (fstats and
	 * drops, txns, netcpu and netrx, ewma), the clock, the window; out tables */
	ana_flows_run(m, o);
	ana_txn_run(m, o);
	ana_netcpu_run(m, o);
	ana_stack_run(m, o);
	/* bottlenecks and service graph (ana_graph.c): in m->ivseg and m->bwins of
	 * the path phase, txns, txevs, threads, cgroups, alerts; out tables */
	ana_bneck_run(m, o);
	ana_graph_run(m, o);
	pipe_clock_findings(m, o);
	ana_out_findings(o);
}

int ana_run(struct ana_model *m, const char *out_path, FILE *summary)
{
	struct ana_pipe pp = { .t = ana_cpu_s(), .tm = ana_thread_cpu_s(), .tw = pipe_wall_s() };
	ana_out_init(&pp.out);

	/* load: hosts grouped, peers of syncs and txns resolved (ana_load.c) */
	ana_load_finish(m);
	if (!m->hosts.n)
		ana_warn(m, "no readable input");

	/* match: in m->pev, m->flows; out pp.paths, the events joined into packets */
	pp.paths = ana_path_match(m);
	pipe_mark(m, &pp, "match (join by packet key)");

	pipe_clock(m, &pp);
	pipe_window(m);
	ana_txn_name_clients(m);
	/* slow-RPC windows: in m->txevs, the clock; out m->bwins (a, b, ev, ports, what) */
	ana_bneck_windows(m);
	pipe_mark(m, &pp, "clock model");

	/* paths: in pp.paths, the clock, the window, m->bwins; out tables decomp,
	 * jitter, loss ...; m->ivseg and the segment sums of m->bwins (ana_decomp.c) */
	ana_decomp_run(m, pp.paths, &pp.out);
	pipe_paths_free(m, pp.paths);
	pp.paths = NULL;
	pipe_mark(m, &pp, "decompose, jitter, loss");

	ana_run_families(m, &pp.out);
	pipe_mark(m, &pp, "other families");

	int rc = out_path ? ana_out_write(m, &pp.out, out_path) : 0;
	pipe_mark(m, &pp, "write");
	ana_out_summary(m, &pp.out, summary);
	ana_out_free(&pp.out);
	return rc;
}
