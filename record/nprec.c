/* nprec: the eBPF recorder. Opens every family of record/core/families.c, writes
 * a HEADER, then every interval an INTERVAL record, each family's snapshot
 * and a LOST record, until the duration ends or a signal stops it. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "cpuslice.h"
#include "draintick.h"
#include "family.h"
#include "hookhub.h"
#include "hostinfo.h"
#include "kfs.h"
#include "npmsg.h"
#include "output.h"
#include "privdrop.h"
#include "progtab.h"
#include "recheader.h"
#include "selfcost.h"
#include "recprio.h"
#include "records.h"

/* Exit codes (documented in docs/NPREC.md and --help). */
enum {
	RC_EXIT_OK = 0, RC_EXIT_RUNTIME = 1, RC_EXIT_USAGE = 2, RC_EXIT_PRIV = 3,
	RC_EXIT_KERNEL = 4, RC_EXIT_OUTPUT = 5,
};

#define RC_TICK_NS REC_TICK_NS   /* the drain tick's shortest: record/core/draintick.h */
#define RC_MAX_FAMILIES 16

static volatile sig_atomic_t rc_stop_sig, rc_hup, rc_usr1;

static void rc_on_signal(int sig)
{
	if (sig == SIGHUP) rc_hup = 1;
	else if (sig == SIGUSR1) rc_usr1 = 1;
	else rc_stop_sig = sig;
}

struct rc_fam {
	const struct rec_family *f;
	void *state;
	uint64_t lost_prev;
};

struct rc_run {
	struct rec_config cfg;
	struct rec_ctx ctx;
	struct rc_fam fams[RC_MAX_FAMILIES];
	unsigned nfams;
	struct rec_output *out;
	struct np_recbuf rb;
	uint64_t intervals;
	struct rec_selfcost self;
	struct rec_ratectl ratectl;
	struct rec_prio prio;
	struct rec_aff aff;         /* NPREC_TEST_AVOID_BUSY=1: off the busiest CPU (recprio.h) */
	struct rec_kfs kfs;
	struct rec_progtab progs;   /* every loaded program, its skipped runs */
	bool progress;
	bool progress_dirty;
	bool drain_counts;          /* every drain says what it consumed: adaptive tick */
	uint64_t drained;           /* records the drains consumed since the last tick */
	uint64_t drain_last, drain_gap_max;   /* start-up: the longest stretch without a drain */
	/* start-up drainer (rc_drainer_start): drains under drain_mu */
	pthread_mutex_t drain_mu;
	pthread_cond_t drain_cv;
	pthread_t drainer;
	bool drainer_stop;
};

/* ---- environment checks ---- */

static bool rc_has_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	uint64_t eff = d[0].effective | ((uint64_t)d[1].effective << 32);
#ifndef CAP_BPF
#define CAP_BPF 39
#define CAP_PERFMON 38
#endif
	if (eff & (1ull << CAP_SYS_ADMIN))
		return true;
	return (eff & (1ull << CAP_BPF)) && (eff & (1ull << CAP_PERFMON));
}

static int rc_check_env(void)
{
	if (!rc_has_caps()) {
		fprintf(stderr, "nprec: need root or CAP_BPF+CAP_PERFMON (+CAP_NET_ADMIN for TC hooks) to load eBPF programs: run it with sudo\n");
		return RC_EXIT_PRIV;
	}
	/* NPREC_TEST_BTF (tests only) points the check elsewhere */
	const char *btf = getenv("NPREC_TEST_BTF") ? getenv("NPREC_TEST_BTF") : "/sys/kernel/btf/vmlinux";
	if (access(btf, R_OK) != 0) {
		fprintf(stderr, "nprec: kernel BTF missing (%s: %s): use a kernel built with CONFIG_DEBUG_INFO_BTF=y (5.8 or later)\n",
			btf, strerror(errno));
		return RC_EXIT_KERNEL;
	}
	return 0;
}

static bool rc_libbpf_verbose;

/* libbpf's own messages only with -v (or NPREC_LIBBPF_DEBUG=1 for all):
 * failures are reported once, with context, by the family that saw them. */
static int rc_libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	static int debug = -1;
	if (debug < 0)
		debug = getenv("NPREC_LIBBPF_DEBUG") != NULL;
	if (debug || (rc_libbpf_verbose && lvl != LIBBPF_DEBUG))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* ---- self cost (netto's user-space overhead metric) ---- */

static uint64_t rc_self_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- families ---- */

static void rc_drain(struct rc_run *r);
static void rc_drain_locked(struct rc_run *r)
{
	pthread_mutex_lock(&r->drain_mu);
	rc_drain(r);
	pthread_mutex_unlock(&r->drain_mu);
}

static void rc_drain_cb(void *arg)
{
	rc_drain_locked(arg);
}

/* Start-up drainer. Loading the families after the first one takes 0.3-1.3 s
 * on the loaded 2-CPU bench VM (the verifier), uninterruptible stretches
 * of it hundreds of ms: a load already running fills txn's 4 MiB ring
 * meanwhile (~28 k events, 0.2 s of a saturating loopback wrk), and only
 * a drain lowers --txn-events auto. So a thread drains the families opened
 * so far every RC_TICK_NS/2 until the main loop starts. It stops before
 * the privilege drop: capabilities are per thread. */
static void *rc_drainer(void *arg)
{
	struct rc_run *r = arg;
	pthread_mutex_lock(&r->drain_mu);
	while (!r->drainer_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(RC_TICK_NS / 2);
		if (ts.tv_nsec >= 1000000000l) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000l;
		}
		if (pthread_cond_timedwait(&r->drain_cv, &r->drain_mu, &ts) == ETIMEDOUT && !r->drainer_stop)
			rc_drain(r);
	}
	pthread_mutex_unlock(&r->drain_mu);
	return NULL;
}

/* 0 when the thread runs (signals stay with the main thread, whose
 * sleeps they end). */
static int rc_drainer_start(struct rc_run *r)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&r->drainer, NULL, rc_drainer, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void rc_drainer_stop(struct rc_run *r)
{
	pthread_mutex_lock(&r->drain_mu);
	r->drainer_stop = true;
	pthread_cond_signal(&r->drain_cv);
	pthread_mutex_unlock(&r->drain_mu);
	pthread_join(r->drainer, NULL);
}

static int rc_open_families(struct rc_run *r)
{
	char err[256], why[300] = "";
	bool kernel_off = false;
	for (unsigned i = 0; rec_families[i] && r->nfams < RC_MAX_FAMILIES; i++) {
		const struct rec_family *f = rec_families[i];
		void *st = NULL;
		err[0] = 0;
		int rc = f->open(&r->ctx, &st, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "nprec: %s: %s\n", f->name, err[0] ? err : strerror(-rc));
			return rc == -EPERM || rc == -EACCES ? RC_EXIT_PRIV : RC_EXIT_KERNEL;
		}
		if (rc > 0) {
			/* the header says which families were off and why */
			rec_probe(&r->ctx, f->name, "(family)", REC_PROBE_SKIPPED, err[0] ? err : "off");
			if (rc == REC_FAM_OFF_KERNEL) {
				kernel_off = true;
				snprintf(why, sizeof(why), "%s: %s", f->name, err);
				if (!r->cfg.quiet)
					fprintf(stderr, "nprec: %s family off: %s\n", f->name, err);
			}
			continue;
		}
		pthread_mutex_lock(&r->drain_mu);
		r->fams[r->nfams++] = (struct rc_fam){ .f = f, .state = st };
		if (f->drain && !f->drain_counts)
			r->drain_counts = false;
		pthread_mutex_unlock(&r->drain_mu);
		rec_progtab_scan(&r->progs, &r->ctx, f->name);
		rc_drain_locked(r);   /* attached: its ring buffers fill while the next ones open */
	}
	if (r->nfams == 0) {
		if (kernel_off)
			fprintf(stderr, "nprec: nothing to record: every family is off; %s\n", why);
		else
			fprintf(stderr, "nprec: nothing to record: every family is off (turned off by the --no-* options)\n");
		return kernel_off ? RC_EXIT_KERNEL : RC_EXIT_USAGE;
	}
	return 0;
}

static void rc_close_families(struct rc_run *r)
{
	for (unsigned i = 0; i < r->nfams; i++)
		r->fams[i].f->close(r->fams[i].state);
	r->nfams = 0;
}

static void rc_drain(struct rc_run *r)
{
	uint64_t now = np_mono_ns();
	if (r->drain_last && now - r->drain_last > r->drain_gap_max)
		r->drain_gap_max = now - r->drain_last;
	r->drain_last = now;
	for (unsigned i = 0; i < r->nfams; i++)
		if (r->fams[i].f->drain) {
			int n = r->fams[i].f->drain(r->fams[i].state);
			if (n > 0)
				r->drained += (uint64_t)n;
			cpuslice_point();
		}
}

static uint64_t rc_total(struct rc_run *r, bool lost)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < r->nfams; i++) {
		const struct rec_family *f = r->fams[i].f;
		uint64_t (*fn)(void *) = lost ? f->lost : f->events;
		if (fn)
			n += fn(r->fams[i].state);
	}
	return n;
}

/* ---- records of the core ---- */

static uint64_t rc_shift(const struct rc_run *r, uint64_t t)
{
	return t + (uint64_t)r->ctx.shift_ns;
}

static void rc_interval_record(struct rc_run *r, uint64_t t0, uint64_t t1)
{
	struct np_clockref clk;
	bool ctl = r->cfg.max_cpu_pct > 0;
	np_clockref_read(&clk);
	clk.mono_ns = rc_shift(r, clk.mono_ns);
	rec_selfcost_sample(&r->self);
	if (ctl)
		r->ctx.sample_div = rec_ratectl_update(&r->ratectl, r->self.cpu_pct);
	msgpack_packer *pk = np_recbuf_begin(&r->rb, NP_REC_INTERVAL, 1);
	msgpack_pack_map(pk, 6 + REC_SELFCOST_NKEYS + (ctl ? REC_RATECTL_NKEYS : 0));
	np_pack_kv_u64(pk, "seq", r->intervals);
	np_pack_kv_u64(pk, "t0_ns", rc_shift(r, t0));
	np_pack_kv_u64(pk, "t1_ns", rc_shift(r, t1));
	np_pack_str(pk, "clock");
	np_clockref_pack(pk, &clk);
	np_pack_kv_u64(pk, "self_cpu_ns", rc_self_cpu_ns());
	rec_selfcost_pack(pk, &r->self);
	if (ctl)
		rec_ratectl_pack(pk, &r->ratectl);
	np_pack_kv_u64(pk, "bytes_written", r->out ? rec_output_bytes(r->out) : 0);
}

/* Per family: lost events in this interval and since start. */
static void rc_lost_record(struct rc_run *r, uint64_t t0, uint64_t t1)
{
	msgpack_packer *pk = np_recbuf_begin(&r->rb, NP_REC_LOST, 1);
	msgpack_pack_map(pk, 5);
	np_pack_kv_u64(pk, "t0_ns", rc_shift(r, t0));
	np_pack_kv_u64(pk, "t1_ns", rc_shift(r, t1));
	uint64_t total[RC_MAX_FAMILIES], delta[RC_MAX_FAMILIES];
	np_pack_str(pk, "family");
	msgpack_pack_array(pk, r->nfams);
	for (unsigned i = 0; i < r->nfams; i++) {
		struct rc_fam *fm = &r->fams[i];
		np_pack_str(pk, fm->f->name);
		total[i] = fm->f->lost ? fm->f->lost(fm->state) : 0;
		delta[i] = total[i] - fm->lost_prev;
		fm->lost_prev = total[i];
	}
	np_pack_kv_u64_array(pk, "lost", delta, r->nfams);
	np_pack_kv_u64_array(pk, "lost_total", total, r->nfams);
}

static void rc_end_record(struct rc_run *r, uint64_t t_end, const char *reason)
{
	uint64_t ev[RC_MAX_FAMILIES], lost[RC_MAX_FAMILIES];
	msgpack_packer *pk = np_recbuf_begin(&r->rb, NP_REC_END, 1);
	msgpack_pack_map(pk, 10);
	np_pack_kv_u64(pk, "t_ns", rc_shift(r, t_end));
	np_pack_kv_u64(pk, "duration_ns", t_end - r->ctx.start_mono_ns);
	np_pack_kv_u64(pk, "intervals", r->intervals);
	np_pack_kv_str(pk, "reason", reason);
	np_pack_kv_u64(pk, "events_total", rc_total(r, false));
	np_pack_kv_u64(pk, "lost_total", rc_total(r, true));
	np_pack_kv_u64(pk, "self_cpu_ns", rc_self_cpu_ns());
	np_pack_str(pk, "family");
	msgpack_pack_array(pk, r->nfams);
	for (unsigned i = 0; i < r->nfams; i++) {
		struct rc_fam *fm = &r->fams[i];
		np_pack_str(pk, fm->f->name);
		ev[i] = fm->f->events ? fm->f->events(fm->state) : 0;
		lost[i] = fm->f->lost ? fm->f->lost(fm->state) : 0;
	}
	np_pack_kv_u64_array(pk, "events", ev, r->nfams);
	np_pack_kv_u64_array(pk, "lost", lost, r->nfams);
}

/* ---- progress line ---- */

static void rc_progress(struct rc_run *r, uint64_t now, uint64_t *last_t, uint64_t *last_ev)
{
	if (!r->progress || now - *last_t < 500000000ull)
		return;
	uint64_t ev = rc_total(r, false);
	double dt = (double)(now - *last_t) / 1e9;
	double el = (double)(now - r->ctx.start_mono_ns) / 1e9;
	double mb = (double)rec_output_bytes(r->out) / 1e6;
	fprintf(stderr, "\rnprec: %7.1fs  %9.0f ev/s  %8.2f MB  lost %llu   ",
		el, (double)(ev - *last_ev) / dt, mb, (unsigned long long)rc_total(r, true));
	r->progress_dirty = true;
	*last_t = now;
	*last_ev = ev;
}

/* ---- main loop ---- */

/* Messages of the output layer that did not stop the recording. */
static void rc_notices(struct rc_run *r)
{
	char buf[1024];
	if (r->out && rec_output_notice(r->out, buf, sizeof(buf)) == 1 && !r->cfg.quiet) {
		fprintf(stderr, "%snprec: %s\n", r->progress_dirty ? "\n" : "", buf);
		r->progress_dirty = false;
	}
}

/* Builds and hands over one interval; returns 0, 1 (size limit) or <0. */
static int rc_interval(struct rc_run *r, uint64_t t0, uint64_t t1)
{
	char err[256] = "";
	rc_drain(r);
	rc_interval_record(r, t0, t1);
	if (r->ctx.probes_changed)
		rc_probes_record(&r->rb, &r->ctx, rc_shift(r, t1));
	for (unsigned i = 0; i < r->nfams; i++) {
		struct rc_fam *fm = &r->fams[i];
		cpuslice_point();
		if (fm->f->snapshot &&
		    fm->f->snapshot(fm->state, &r->ctx, &r->rb, rc_shift(r, t0), rc_shift(r, t1)) < 0)
			fprintf(stderr, "nprec: %s: snapshot failed, interval incomplete\n", fm->f->name);
	}
	rc_lost_record(r, t0, t1);
	rec_progtab_pack(&r->progs, &r->rb, rc_shift(r, t0), rc_shift(r, t1));
	r->intervals++;
	int rc = rec_output_interval(r->out, &r->rb, rc_shift(r, t1), err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "%snprec: %s\n", r->progress_dirty ? "\n" : "", err[0] ? err : strerror(-rc));
	else
		rc_notices(r);
	return rc;
}

static void rc_sleep_tick(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	nanosleep(&ts, NULL);   /* a signal ends it early, which is what we want */
}

/* A recorder whose own work needs more than REC_PRIO_BUSY_PCT of a CPU
 * (e.g. --packets at hundreds of thousands of events/s) and yields every
 * 200 us to a busy workload falls behind its ring buffers: measured with
 * 128-byte iperf3 writes, 27 % of 1.1 M events/s lost against none without
 * yields. So --cpu-slice applies only while the last interval's CPU share
 * was below that; the latency it protects is a light recorder's concern. */
static void rc_slice_update(struct rc_run *r)
{
	bool busy = r->self.cpu_pct > REC_PRIO_BUSY_PCT;
	cpuslice_set(busy ? 0 : (uint64_t)r->cfg.slice_us * 1000);
}

static void rc_prio_update(struct rc_run *r, uint64_t now)
{
	if (!rec_prio_tick(&r->prio, now) || !r->cfg.verbose)
		return;
	fprintf(stderr, "%snprec: %.1f %% of a CPU%s: nice %d\n", r->progress_dirty ? "\n" : "",
		r->prio.last_pct, r->prio.last_late ? ", loop late" : "", r->prio.cur);
	r->progress_dirty = false;
}

static void rc_handle_async(struct rc_run *r, uint64_t now)
{
	char err[256] = "";
	if (rc_hup) {
		rc_hup = 0;
		if (rec_output_reopen(r->out, err, sizeof(err)) < 0)
			fprintf(stderr, "nprec: reopen after SIGHUP failed: %s\n", err);
	}
	if (rc_usr1) {
		rc_usr1 = 0;
		if (rec_output_dump(r->out, "sigusr1", rc_shift(r, now), err, sizeof(err)) < 0)
			fprintf(stderr, "nprec: dump on SIGUSR1 failed: %s\n", err);
	}
	rc_notices(r);
}

/* The last partial interval and the END record, in the final chunk; after
 * an output error only END. Returns the exit code. */
static int rc_finish(struct rc_run *r, uint64_t t0, const char *reason, int code)
{
	if (code == RC_EXIT_OK) {
		/* the last partial interval and the END record, in the final chunk */
		uint64_t now = np_mono_ns();
		char err[256] = "";
		r->ctx.final_drain = true;
		rc_drain(r);
		now = np_mono_ns();
		rc_interval_record(r, t0, now);
		for (unsigned i = 0; i < r->nfams; i++) {
			struct rc_fam *fm = &r->fams[i];
			if (fm->f->snapshot)
				fm->f->snapshot(fm->state, &r->ctx, &r->rb, rc_shift(r, t0), rc_shift(r, now));
		}
		rc_lost_record(r, t0, now);
		rec_progtab_pack(&r->progs, &r->rb, rc_shift(r, t0), rc_shift(r, now));
		r->intervals++;
		rc_end_record(r, now, reason);
		if (rec_output_close(r->out, &r->rb, err, sizeof(err)) < 0) {
			fprintf(stderr, "%snprec: %s\n", r->progress_dirty ? "\n" : "", err);
			code = RC_EXIT_RUNTIME;
		} else if (err[0] && !r->cfg.quiet) {   /* e.g. the flight recorder's last dump */
			fprintf(stderr, "%snprec: %s\n", r->progress_dirty ? "\n" : "", err);
			r->progress_dirty = false;
		}
	} else {
		char err[256] = "";
		np_recbuf_reset(&r->rb);
		rc_end_record(r, np_mono_ns(), reason);
		rec_output_close(r->out, &r->rb, err, sizeof(err));
	}
	return code;
}

/* Returns the exit code. */
static int rc_loop(struct rc_run *r)
{
	uint64_t start = r->ctx.start_mono_ns, t0 = start;
	uint64_t next = start + r->cfg.interval_ns;
	uint64_t end = r->cfg.duration_ns ? start + r->cfg.duration_ns : UINT64_MAX;
	uint64_t last_t = start, last_ev = 0, sleep = RC_TICK_NS;
	struct rec_tick tick;
	const char *reason = "duration";
	int code = RC_EXIT_OK;

	/* fixed when a family's drain does not count (e.g. --packets at
	 * hundreds of thousands of events/s, clocksync's exchange); the
	 * sleeps end at the interval's end, which is then on time (a fixed
	 * tick ended intervals up to a tick late) */
	rec_tick_init(&tick, !r->drain_counts);
	rc_drain(r);   /* what came while the output opened and privileges dropped */
	if (r->cfg.verbose)   /* ring buffers fill meanwhile: a start-up loss comes from here */
		fprintf(stderr, "nprec: start-up: at most %.0f ms between two drains of the rings opened\n",
			(double)r->drain_gap_max / 1e6);
	for (;;) {
		rec_prio_due(&r->prio, sleep);
		rc_sleep_tick(sleep);
		cpuslice_begin();
		uint64_t now = np_mono_ns();
		rc_drain(r);
		rc_prio_update(r, now);
		rc_handle_async(r, now);
		if (rc_stop_sig) {
			reason = rc_stop_sig == SIGINT ? "sigint" : "sigterm";
			break;
		}
		if (now >= end)
			break;
		if (now >= next) {
			int rc = rc_interval(r, t0, now);
			rc_slice_update(r);
			if (rec_aff_interval(&r->aff) && r->cfg.verbose)
				fprintf(stderr, "nprec: avoiding CPU %d (busiest)\n", r->aff.avoided);
			t0 = now;
			next += r->cfg.interval_ns;
			if (next <= now)   /* we fell behind: do not burst to catch up */
				next = now + r->cfg.interval_ns;
			if (rc == 1) { reason = "max-size"; break; }
			if (rc < 0) { reason = "output-error"; code = RC_EXIT_RUNTIME; break; }
		}
		rc_progress(r, now, &last_t, &last_ev);
		sleep = rec_tick_next(&tick, r->drained, now, next < end ? next : end);
		r->drained = 0;
	}
	code = rc_finish(r, t0, reason, code);
	r->out = NULL;
	if (r->progress_dirty)
		fputc('\n', stderr);
	if (r->cfg.verbose)
		fprintf(stderr, "nprec: --cpu-slice: %llu yields, %llu stretches over twice the slice\n",
			(unsigned long long)cpuslice_yields(), (unsigned long long)cpuslice_overruns());
	if (r->cfg.verbose && r->prio.no_way_back)
		fprintf(stderr, "nprec: --nice: %llu times busy at nice %d with no way back\n",
			(unsigned long long)r->prio.boosts_missed, r->prio.light);
	if (!r->cfg.quiet)
		fprintf(stderr, "nprec: stopped (%s): %llu intervals, %llu events, %llu lost\n", reason,
			(unsigned long long)r->intervals, (unsigned long long)rc_total(r, false),
			(unsigned long long)rc_total(r, true));
	return code;
}

static void rc_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rc_on_signal;   /* no SA_RESTART: a signal ends the tick sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int rc_start_opened(struct rc_run *r);

/* Families opened, header written, output open; the start-up drainer
 * runs meanwhile. Returns the exit code. */
static int rc_start(struct rc_run *r)
{
	bool drainer = rc_drainer_start(r) == 0;
	int code = rc_start_opened(r);
	if (drainer)
		rc_drainer_stop(r);
	return code;
}

static int rc_start_opened(struct rc_run *r)
{
	char err[256] = "";
	struct np_hostinfo host;
	struct np_clockref clk;
	struct np_recbuf hdr;

	r->ctx.start_mono_ns = np_mono_ns();   /* provisional, for the families' open */
	int code = rc_open_families(r);
	if (code)
		return code;
	np_hostinfo_read(&host);
	np_clockref_read(&clk);
	r->ctx.start_mono_ns = clk.mono_ns;
	clk.mono_ns = rc_shift(r, clk.mono_ns);
	rec_selfcost_init(&r->self);
	rec_ratectl_init(&r->ratectl, r->cfg.max_cpu_pct, r->cfg.sample_n);
	cpuslice_set((uint64_t)r->cfg.slice_us * 1000);
	if (rec_prio_init(&r->prio, r->cfg.nice, np_mono_ns(), err, sizeof(err)) && err[0] && r->cfg.verbose)
		fprintf(stderr, "nprec: %s\n", err);
	err[0] = 0;
	const char *lp = getenv("NPREC_TEST_LIGHT_POLICY");   /* batch|idle: recprio.h */
	if (lp && rec_prio_light_policy(&r->prio, !strcmp(lp, "idle") ? SCHED_IDLE :
					 !strcmp(lp, "batch") ? SCHED_BATCH : SCHED_OTHER) < 0)
		fprintf(stderr, "nprec: NPREC_TEST_LIGHT_POLICY=%s: %s\n", lp, strerror(errno));
	const char *avoid = getenv("NPREC_TEST_AVOID_BUSY");
	if (rec_aff_init(&r->aff, avoid && strcmp(avoid, "1") == 0, err, sizeof(err)) < 0 && r->cfg.verbose)
		fprintf(stderr, "nprec: %s\n", err);
	err[0] = 0;
	np_recbuf_init(&hdr);
	rc_header_build(&hdr, &r->ctx, &host, &clk);
	int rc = rec_output_open(&r->out, &r->cfg, &hdr, err, sizeof(err));
	np_recbuf_free(&hdr);
	if (rc < 0) {
		fprintf(stderr, "nprec: %s\n", err[0] ? err : strerror(-rc));
		return RC_EXIT_OUTPUT;
	}
	return 0;
}

/* Programs attached, output open: give up what the loop does not need
 * (record/core/privdrop.h). TC filters are detached by netlink at exit. */
static int rc_drop_privileges(struct rc_run *r)
{
	struct rec_privdrop req = { .user = r->cfg.run_user, .base_nice = r->prio.base,
				    .files = { r->cfg.output, r->cfg.profile_baseline } };
	struct rec_privdrop_result res;
	char err[256] = "";
	for (unsigned i = 0; i < r->nfams; i++)
		req.tc_teardown |= !strcmp(r->fams[i].f->name, "pktpath") ||
				   !strcmp(r->fams[i].f->name, "stackmon");
	char nice_err[256] = "";
	bool nice_stuck = rec_prio_before_drop(&r->prio, nice_err, sizeof(nice_err)) == 1;
	int rc = rec_privdrop_apply(&req, &res, err, sizeof(err));
	if (rc == 1)
		r->prio.no_way_back = false;   /* kept root (-Z root): CAP_SYS_NICE stays */
	else if (rc == 0 && nice_stuck && r->cfg.verbose)
		fprintf(stderr, "nprec: %s\n", nice_err);
	if (rc < 0) {
		fprintf(stderr, "nprec: %s (-Z root keeps root)\n", err);
		return rc_finish(r, r->ctx.start_mono_ns, "privileges", RC_EXIT_PRIV);
	}
	if (r->cfg.verbose && rc == 0)
		fprintf(stderr, "nprec: running as %s (uid %u), capabilities 0x%llx effective, "
			"0x%llx permitted, file helper pid %d\n", res.user, res.uid,
			(unsigned long long)res.caps_eff, (unsigned long long)res.caps_perm, res.helper_pid);
	return 0;
}

int main(int argc, char **argv)
{
	static struct rc_run run;
	struct rc_run *r = &run;
	struct rc_cli_result res;
	char err[256] = "";

	rec_config_defaults(&r->cfg);
	switch (rc_cli_parse(&r->cfg, argc, argv, &res, stdout, err, sizeof(err))) {
	case RC_CLI_HELP:
	case RC_CLI_VERSION:
		return RC_EXIT_OK;
	case RC_CLI_TRIGGER:
		if (rc_cli_trigger(res.trigger_target, err, sizeof(err)) < 0) {
			fprintf(stderr, "nprec: %s\n", err);
			return RC_EXIT_RUNTIME;
		}
		return RC_EXIT_OK;
	case RC_CLI_ERROR:
		fprintf(stderr, "nprec: %s\n", err);
		return RC_EXIT_USAGE;
	case RC_CLI_RUN:
		break;
	}
	int code = rc_check_env();
	if (code)
		return code;
	/* tracefs, cgroup2: mounted privately where missing (record/core/kfs.h);
	 * said after the options resolved, so a usage error stays one line */
	kfs_prepare(&r->kfs);
	if (kfs_cgroup2(&r->kfs)[0] && strcmp(r->cfg.cgroup_root, "/sys/fs/cgroup") == 0)
		r->cfg.cgroup_root = kfs_cgroup2(&r->kfs);
	r->ctx.kfs = &r->kfs;
	if (rc_cli_resolve(&r->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "nprec: %s\n", err);
		return RC_EXIT_USAGE;
	}
	if (!r->cfg.quiet)
		kfs_report(&r->kfs, stderr);
	rc_libbpf_verbose = r->cfg.verbose;
	libbpf_set_print(rc_libbpf_print);
	r->ctx.cfg = &r->cfg;
	r->ctx.shift_ns = r->cfg.test_clock_shift_ns;
	r->ctx.drain_opened = rc_drain_cb;
	r->ctx.drain_arg = r;
	r->progress = !r->cfg.quiet && isatty(STDERR_FILENO);
	r->drain_counts = true;   /* until a family's drain does not count */
	np_recbuf_init(&r->rb);
	pthread_mutex_init(&r->drain_mu, NULL);
	pthread_cond_init(&r->drain_cv, NULL);
	rc_install_signals();

	code = rc_start(r);
	if (!code)
		code = rc_drop_privileges(r);
	if (!code) {
		hookhub_toggle_start(&r->ctx);
		code = rc_loop(r);
	}
	hookhub_toggle_stop(&r->ctx);
	rec_privdrop_teardown();
	rc_close_families(r);
	rec_progtab_free(&r->progs);
	rec_aff_free(&r->aff);
	np_recbuf_free(&r->rb);
	hookhub_free(&r->ctx);
	rc_probes_free(&r->ctx);
	if (r->cfg.netns_fd >= 0)
		close(r->cfg.netns_fd);
	return code;
}
