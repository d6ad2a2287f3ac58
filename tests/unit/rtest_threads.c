/* The threads family opened directly: a thread of this process burns CPU
 * and sleeps a known number of times; the recorded on-CPU time and
 * context switches are compared with what the kernel reports for that
 * thread itself (CLOCK_THREAD_CPUTIME_ID, getrusage(RUSAGE_THREAD)), and
 * its cgroup path with /proc/self/cgroup. The last snapshot and the
 * kernel's figures are both taken while the worker is blocked (so neither
 * moves): once its figures were read by the worker itself before it exited,
 * and under load the exit path was preempted 4 times more after that
 * reading (983 involuntary switches recorded against 979). Both variants of the family:
 * the task iterator (the default without hardware counters) and the
 * sched_switch program (NPREC_TEST_THREADS_SWITCH=1). Then, in both
 * variants: snapshots racing a thread's switches (race) and a tid reused
 * before the old thread's entry was reported (reuse). Needs root; skips
 * otherwise. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <msgpack.h>

#include "config.h"
#include "family.h"
#include "hookhub.h"
#include "npmsg.h"
#include "recheader.h"
#include "records.h"
#include "kfs.h"
#include "tap.h"

extern const struct rec_family rec_family_threads;

static struct {
	pid_t tid;
	uint64_t cpu_ns;
	long nvcsw, nivcsw;
	volatile int parked;       /* the worker is done and about to block */
	int park[2];               /* a pipe it blocks on until the last snapshot */
} truth;

static uint64_t clk(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The test thread: rounds of cpu_ns of its own CPU, each followed by a
 * sleep of sleep_us; then it parks until the test lets it go. */
static void burn_rounds(const char *who, int rounds, uint64_t cpu_ns, useconds_t sleep_us)
{
	truth.tid = (pid_t)syscall(SYS_gettid);
	volatile uint64_t x = 0;
	for (int round = 0; round < rounds; round++) {
		uint64_t until = clk(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;
		while (clk(CLOCK_THREAD_CPUTIME_ID) < until)
			x++;
		usleep(sleep_us);
	}
	char c;
	truth.parked = 1;
	if (read(truth.park[0], &c, 1) < 0)
		fprintf(stderr, "%s: read: %s\n", who, strerror(errno));
}

static void *worker(void *arg)
{
	(void)arg;
	burn_rounds("worker", 20, 10000000, 2000);   /* 10 ms of CPU a round */
	return NULL;
}

/* The worker's state letter (/proc/self/task/TID/stat), '?' if unknown. */
static char task_state(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *fp = fopen(path, "r");
	size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
	if (fp)
		fclose(fp);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');   /* comm may hold spaces */
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Whether the worker has left the CPU: its state reads 'S' as soon as it
 * starts to block, before it has switched out, and a task still on the CPU
 * has a clock that runs ahead of what a snapshot can read (the CI of
 * 1714c0a failed once by 2.7 us that way); a clock that stays still over a
 * millisecond is off the CPU. */
static bool worker_off_cpu(clockid_t cid)
{
	if (!truth.parked || task_state(truth.tid) != 'S')
		return false;
	uint64_t before = clk(cid);
	usleep(1000);
	return clk(cid) == before && task_state(truth.tid) == 'S';
}

/* Waits until the worker blocks on its pipe, then reads what the kernel
 * has for it: its CPU clock and its switches (/proc .../status). */
static bool read_parked_truth(pthread_t th)
{
	clockid_t cid;
	if (pthread_getcpuclockid(th, &cid) != 0)
		return false;
	bool off = false;
	for (int i = 0; i < 2000 && !(off = worker_off_cpu(cid)); i++)
		usleep(5000);
	if (!off)
		return false;
	truth.cpu_ns = clk(cid);
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)truth.tid);
	FILE *fp = fopen(path, "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		sscanf(line, "voluntary_ctxt_switches: %ld", &truth.nvcsw);
		sscanf(line, "nonvoluntary_ctxt_switches: %ld", &truth.nivcsw);
	}
	if (fp)
		fclose(fp);
	return fp != NULL;
}

struct found {
	int rows;               /* 0: every row of the tid; 1: exited ones only; 2: live ones only */
	int rec, cg_rec;
	uint64_t oncpu, nvcsw, nivcsw, cgroup_id, pid;
	char comm[32], path[512];
};

static void scan_threads(const msgpack_object *b, struct found *f)
{
	size_t n = 0, m = 0;
	uint64_t *tid = np_get_u64_delta(b, "tid_d", &n);
	uint64_t *on = np_get_u64_array(b, "oncpu_ns", &m);
	uint64_t *vc = np_get_u64_array(b, "nvcsw", &m);
	uint64_t *ic = np_get_u64_array(b, "nivcsw", &m);
	uint64_t *cg = np_get_u64_array(b, "cgroup_id", &m);
	uint64_t *pid = np_get_u64_array(b, "pid", &m);
	uint64_t *ex = np_get_u64_array(b, "exited", &m);
	const msgpack_object_array *comm = np_get_array(b, "comm");
	f->rec = 1;
	for (size_t i = 0; tid && on && vc && ic && cg && pid && ex && i < n && i < m; i++) {
		if (tid[i] != (uint64_t)truth.tid || (f->rows == 1 && !ex[i]) || (f->rows == 2 && ex[i]))
			continue;
		f->oncpu += on[i];
		f->nvcsw += vc[i];
		f->nivcsw += ic[i];
		f->cgroup_id = cg[i];
		f->pid = pid[i];
		if (comm && i < comm->size && comm->ptr[i].type == MSGPACK_OBJECT_STR)
			snprintf(f->comm, sizeof(f->comm), "%.*s", (int)comm->ptr[i].via.str.size,
				 comm->ptr[i].via.str.ptr);
	}
	free(tid); free(on); free(vc); free(ic); free(cg); free(pid); free(ex);
}

static void scan_cgroups(const msgpack_object *b, struct found *f)
{
	size_t n = 0;
	uint64_t *id = np_get_u64_array(b, "id", &n);
	const msgpack_object_array *path = np_get_array(b, "path");
	f->cg_rec = 1;
	for (size_t i = 0; id && path && i < n && i < path->size; i++)
		if (id[i] == f->cgroup_id && path->ptr[i].type == MSGPACK_OBJECT_STR)
			snprintf(f->path, sizeof(f->path), "%.*s", (int)path->ptr[i].via.str.size,
				 path->ptr[i].via.str.ptr);
	free(id);
}

static void scan(const struct np_recbuf *rb, struct found *f)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	while (msgpack_unpack_next(&u, rb->sbuf.data, rb->sbuf.size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *o = &u.data;
		if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 3)
			continue;
		uint64_t type = o->via.array.ptr[0].via.u64;
		if (type == NP_REC_THREADS)
			scan_threads(&o->via.array.ptr[2], f);
		else if (type == NP_REC_CGROUPS)
			scan_cgroups(&o->via.array.ptr[2], f);   /* follows THREADS */
	}
	msgpack_unpacked_destroy(&u);
}

static void self_cgroup(char *buf, size_t len)
{
	FILE *fp = fopen("/proc/self/cgroup", "r");
	char line[480];
	buf[0] = 0;
	while (fp && fgets(line, sizeof(line), fp))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, len, "%s", line + 3);
		}
	if (fp)
		fclose(fp);
}

static bool has_probe(const struct rec_ctx *ctx, const char *probe, int st)
{
	for (unsigned i = 0; i < ctx->nprobes; i++)
		if (strcmp(ctx->probes[i].probe, probe) == 0 && (int)ctx->probes[i].st == st)
			return true;
	return false;
}

static void run(bool switch_variant)
{
	fprintf(stderr, "# variant: %s\n", switch_variant ? "sched_switch program" : "task iterator");
	if (switch_variant)
		setenv("NPREC_TEST_THREADS_SWITCH", "1", 1);
	else
		unsetenv("NPREC_TEST_THREADS_SWITCH");
	memset(&truth, 0, sizeof(truth));
	if (pipe(truth.park) != 0) {
		CHECK(0, "pipe");
		return;
	}
	struct rec_config cfg;
	rec_config_defaults(&cfg);
	cfg.pids[0] = (uint32_t)getpid();
	cfg.npids = 1;
	struct rec_ctx ctx = { .cfg = &cfg };
	void *st = NULL;
	char err[256] = "";
	int rc = rec_family_threads.open(&ctx, &st, err, sizeof(err));
	CHECK(rc == 0, "open: %d %s", rc, err);
	if (rc != 0)
		return;
	for (unsigned i = 0; i < ctx.nprobes; i++)
		fprintf(stderr, "  probe %s %s: %d %s\n", ctx.probes[i].family, ctx.probes[i].probe,
			ctx.probes[i].st, ctx.probes[i].reason);
	/* which variant ran (this VM has no hardware counters: the iterator
	 * unless asked for the switch program) */
	if (switch_variant)
		CHECK(has_probe(&ctx, "tp_btf/sched_switch", REC_PROBE_ATTACHED), "switch variant: sched_switch attached");
	else if (has_probe(&ctx, "perf_event/hw-counters", REC_PROBE_SKIPPED))
		CHECK(has_probe(&ctx, "iter/task", REC_PROBE_ATTACHED) &&
		      has_probe(&ctx, "tp_btf/sched_switch", REC_PROBE_SKIPPED),
		      "no counters: iterator attached, sched_switch skipped");
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	struct found f = { 0 };
	uint64_t t0 = clk(CLOCK_MONOTONIC);
	pthread_t th;
	pthread_setname_np(pthread_self(), "rtest_threads");
	pthread_create(&th, NULL, worker, NULL);
	pthread_setname_np(th, "nc-worker");
	/* two snapshots while it runs, one after: the sum must be whole */
	for (int i = 0; i < 2; i++) {
		usleep(120000);
		rec_family_threads.snapshot(st, &ctx, &rb, t0, clk(CLOCK_MONOTONIC));
		scan(&rb, &f);
		np_recbuf_reset(&rb);
	}
	/* the last snapshot of the worker blocked: its figures stand still
	 * from before the kernel's are read until after the snapshot */
	bool parked = read_parked_truth(th);
	uint64_t cpu_before = truth.cpu_ns;
	long vol_before = truth.nvcsw, invol_before = truth.nivcsw;
	rec_family_threads.snapshot(st, &ctx, &rb, t0, clk(CLOCK_MONOTONIC));
	scan(&rb, &f);
	parked = parked && read_parked_truth(th);
	CHECK(parked && truth.cpu_ns == cpu_before && truth.nvcsw == vol_before && truth.nivcsw == invol_before,
	      "worker blocked through the last snapshot (parked %d; cpu %llu/%llu vol %ld/%ld invol %ld/%ld)",
	      parked, (unsigned long long)cpu_before, (unsigned long long)truth.cpu_ns, vol_before,
	      truth.nvcsw, invol_before, truth.nivcsw);
	if (write(truth.park[1], "x", 1) != 1)
		perror("write");
	pthread_join(th, NULL);
	char cg[512];
	self_cgroup(cg, sizeof(cg));

	CHECK(f.rec, "no THREADS record");
	CHECK(f.cg_rec, "no CGROUPS record");
	fprintf(stderr, "  worker tid %d: recorded %llu ns, %llu vol, %llu invol; kernel %llu ns, %ld vol, %ld invol; comm %s cgroup %s\n",
		truth.tid, (unsigned long long)f.oncpu, (unsigned long long)f.nvcsw,
		(unsigned long long)f.nivcsw, (unsigned long long)truth.cpu_ns, truth.nvcsw,
		truth.nivcsw, f.comm, f.path);
	/* Both are the scheduler's figures of the thread, read while it was
	 * blocked: equal. (Before it read se.sum_exec_runtime, the family used
	 * ktime and ran 4.7 % over in CI: steal time.) */
	CHECK(f.oncpu == truth.cpu_ns, "on-CPU %llu vs thread clock %llu", (unsigned long long)f.oncpu,
	      (unsigned long long)truth.cpu_ns);
	CHECK(f.nvcsw == (uint64_t)truth.nvcsw, "voluntary %llu vs %ld", (unsigned long long)f.nvcsw, truth.nvcsw);
	CHECK(f.nivcsw == (uint64_t)truth.nivcsw, "involuntary %llu vs %ld", (unsigned long long)f.nivcsw,
	      truth.nivcsw);
	CHECK(truth.nvcsw >= 20, "worker slept 20 times, only %ld voluntary switches", truth.nvcsw);
	CHECK_EQ_U(f.pid, getpid());
	CHECK(strcmp(f.comm, "nc-worker") == 0, "comm '%s'", f.comm);
	CHECK(cg[0] && strcmp(f.path, cg) == 0, "cgroup path '%s' vs /proc/self/cgroup '%s'", f.path, cg);
	np_recbuf_free(&rb);
	rec_family_threads.close(st);
	close(truth.park[0]);
	close(truth.park[1]);
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
}

/* ---- snapshots racing the thread's switches ---- */

/* 1 ms of CPU, a short sleep, 200 times, then blocks like worker(). */
static void *racer(void *arg)
{
	(void)arg;
	burn_rounds("racer", 200, 1000000, 300);
	return NULL;
}

/* Snapshots back to back while a thread runs and sleeps every ~1 ms, so
 * that its switch-outs fall inside snapshots. What has been recorded for
 * it must never exceed its CPU clock read after the snapshot: the figure
 * a snapshot emits is not taken back (rows are differences), so an
 * over-count there stays in the total. Once it stood ~10 ms (a whole
 * stretch of worker() above) over the clock at the end: the switch
 * variant added the stretch in flight when the snapshot began to a total
 * read after that stretch had ended and been charged. */
static void race(bool switch_variant)
{
	fprintf(stderr, "# snapshots racing switches, variant: %s\n",
		switch_variant ? "sched_switch program" : "task iterator");
	if (switch_variant)
		setenv("NPREC_TEST_THREADS_SWITCH", "1", 1);
	else
		unsetenv("NPREC_TEST_THREADS_SWITCH");
	memset(&truth, 0, sizeof(truth));
	struct rec_config cfg;
	rec_config_defaults(&cfg);
	cfg.pids[0] = (uint32_t)getpid();
	cfg.npids = 1;
	struct rec_ctx ctx = { .cfg = &cfg };
	void *st = NULL;
	char err[256] = "";
	if (pipe(truth.park) != 0 || rec_family_threads.open(&ctx, &st, err, sizeof(err)) != 0) {
		CHECK(0, "race: pipe or open: %s", err);
		return;
	}
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	struct found f = { 0 };
	pthread_t th;
	clockid_t cid;
	pthread_create(&th, NULL, racer, NULL);
	/* on two CPUs the switches fall inside snapshots, not between them */
	cpu_set_t one;
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
		CPU_ZERO(&one);
		CPU_SET(1, &one);
		pthread_setaffinity_np(th, sizeof(one), &one);
	}
	int snaps = 0, over = 0;
	uint64_t worst = 0, t0 = clk(CLOCK_MONOTONIC);
	while (pthread_getcpuclockid(th, &cid) == 0 && !truth.parked && snaps < 100000) {
		rec_family_threads.snapshot(st, &ctx, &rb, t0, clk(CLOCK_MONOTONIC));
		scan(&rb, &f);
		np_recbuf_reset(&rb);
		uint64_t cpu = clk(cid);
		snaps++;
		if (truth.tid && f.oncpu > cpu) {
			over++;
			worst = f.oncpu - cpu > worst ? f.oncpu - cpu : worst;
		}
	}
	bool parked = read_parked_truth(th);
	rec_family_threads.snapshot(st, &ctx, &rb, t0, clk(CLOCK_MONOTONIC));
	scan(&rb, &f);
	fprintf(stderr, "  racer tid %d: %d snapshots, %d over its clock (worst by %llu ns); "
		"recorded %llu ns, kernel %llu ns\n", truth.tid, snaps, over, (unsigned long long)worst,
		(unsigned long long)f.oncpu, (unsigned long long)truth.cpu_ns);
	CHECK(snaps > 20, "only %d snapshots while the racer ran", snaps);
	CHECK(over == 0, "recorded on-CPU over the thread's clock after %d of %d snapshots, worst by %llu ns",
	      over, snaps, (unsigned long long)worst);
	CHECK(parked && f.oncpu == truth.cpu_ns, "racer parked %d: on-CPU %llu vs thread clock %llu", parked,
	      (unsigned long long)f.oncpu, (unsigned long long)truth.cpu_ns);
	if (write(truth.park[1], "x", 1) != 1)
		perror("write");
	pthread_join(th, NULL);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	np_recbuf_free(&rb);
	rec_family_threads.close(st);
	close(truth.park[0]);
	close(truth.park[1]);
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
}

/* ---- a tid freed and reused before the old entry is reported ---- */

static void burn_ms(int ms)
{
	volatile uint64_t x = 0;
	uint64_t until = clk(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000;
	while (clk(CLOCK_THREAD_CPUTIME_ID) < until)
		x++;
}

/* The state letter of process pid, '?' if unknown. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *fp = fopen(path, "r");
	size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
	if (fp)
		fclose(fp);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static bool wait_blocked(pid_t pid)
{
	for (int i = 0; i < 2000; i++) {
		if (proc_state(pid) == 'S')
			return true;
		usleep(2000);
	}
	return false;
}

/* se.sum_exec_runtime of pid (also of a zombie), 0 if unknown. */
static uint64_t schedstat_ns(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	FILE *fp = fopen(path, "r");
	if (fp && fscanf(fp, "%llu", &ns) != 1)
		ns = 0;
	if (fp)
		fclose(fp);
	return ns;
}

/* clone3 with one pid asked for (set_tid, Linux 5.5): a process like fork(). */
static pid_t fork_as(pid_t want)
{
	uint64_t args[11] = { 0 };   /* struct clone_args up to set_tid_size */
	uint64_t set_tid = (uint64_t)want;
	args[4] = SIGCHLD;               /* exit_signal */
	args[8] = (uint64_t)(uintptr_t)&set_tid;
	args[9] = 1;                     /* set_tid_size */
	return (pid_t)syscall(SYS_clone3, args, 80);
}

/* A process with tid T burns 1 ms and exits; before any snapshot, a new
 * one gets tid T (clone3 set_tid) and burns 5 ms: more than the old one
 * had. The old row must hold the old thread's figures and name, the new
 * one all of the new one's time and its name. Before entries carried the
 * task's start time, the switch variant charged the new thread's 5 ms to
 * the old entry (over its 1 ms), and both variants renamed the old row. */
static void reuse(bool switch_variant)
{
	fprintf(stderr, "# reused tid, variant: %s\n", switch_variant ? "sched_switch program" : "task iterator");
	if (switch_variant)
		setenv("NPREC_TEST_THREADS_SWITCH", "1", 1);
	else
		unsetenv("NPREC_TEST_THREADS_SWITCH");
	int go[2], step[2];
	if (pipe(go) != 0 || pipe(step) != 0) {
		CHECK(0, "pipe");
		return;
	}
	char c;
	pid_t a = fork();
	if (a == 0) {
		prctl(PR_SET_NAME, "nt-old");
		if (read(go[0], &c, 1) == 1)
			burn_ms(1);
		_exit(0);
	}
	bool ok = a > 0 && wait_blocked(a);
	uint64_t a0 = ok ? schedstat_ns(a) : 0;   /* the recording counts it from here */
	struct rec_config cfg;
	rec_config_defaults(&cfg);
	cfg.pids[0] = (uint32_t)a;               /* tgid == tid: a process */
	cfg.npids = 1;
	struct rec_ctx ctx = { .cfg = &cfg };
	void *st = NULL;
	char err[256] = "";
	ok = ok && rec_family_threads.open(&ctx, &st, err, sizeof(err)) == 0;
	CHECK(ok, "reuse: old process %d, open: %s", (int)a, err);
	siginfo_t si;
	ok = ok && write(go[1], "x", 1) == 1 && waitid(P_PID, (id_t)a, &si, WEXITED | WNOWAIT) == 0;
	uint64_t a1 = ok ? schedstat_ns(a) : 0;  /* a zombie: its final runtime */
	waitpid(a, NULL, 0);
	pid_t b = ok ? fork_as(a) : -1;
	if (b == 0) {
		close(step[1]);   /* the parent's close ends it */
		prctl(PR_SET_NAME, "nt-new");
		burn_ms(5);
		while (read(step[0], &c, 1) == 1)
			burn_ms(5);
		_exit(0);
	}
	if (ok && b < 0) {
		fprintf(stderr, "# skip reuse: clone3 with set_tid %d: %s\n", (int)a, strerror(errno));
		ok = false;
	}
	struct found old = { .rows = 1 }, young = { .rows = 2 };
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	truth.tid = a;
	uint64_t t0 = clk(CLOCK_MONOTONIC), b_ns = 0, b_after = 1;
	clockid_t cid;
	if (ok && wait_blocked(b)) {
		/* the first snapshot reports the old row and drops it; the new
		 * process runs again and blocks; the second has its figures */
		rec_family_threads.snapshot(st, &ctx, &rb, t0, clk(CLOCK_MONOTONIC));
		scan(&rb, &old);
		scan(&rb, &young);
		np_recbuf_reset(&rb);
		ok = write(step[1], "x", 1) == 1 && clock_getcpuclockid(b, &cid) == 0;
		for (int i = 0; ok && i < 2000 && !(clk(cid) >= 10000000 && proc_state(b) == 'S'); i++)
			usleep(2000);
		b_ns = clk(cid);
		rec_family_threads.snapshot(st, &ctx, &rb, t0, clk(CLOCK_MONOTONIC));
		scan(&rb, &old);
		scan(&rb, &young);
		b_after = clk(cid);
		fprintf(stderr, "  tid %d: old row %llu ns '%s' (kernel %llu ns), new rows %llu ns '%s' (kernel %llu ns)\n",
			(int)a, (unsigned long long)old.oncpu, old.comm, (unsigned long long)(a1 - a0),
			(unsigned long long)young.oncpu, young.comm, (unsigned long long)b_ns);
		CHECK(strcmp(old.comm, "nt-old") == 0, "old row renamed '%s'", old.comm);
		CHECK(strcmp(young.comm, "nt-new") == 0, "new rows named '%s'", young.comm);
		/* the iterator takes the old one's figures at its exit tracepoint,
		 * before the rest of do_exit; the switch program at its last switch */
		if (switch_variant)
			CHECK(old.oncpu == a1 - a0, "old row %llu vs its runtime %llu",
			      (unsigned long long)old.oncpu, (unsigned long long)(a1 - a0));
		else
			CHECK(old.oncpu > 0 && old.oncpu <= a1 - a0, "old row %llu vs its runtime %llu",
			      (unsigned long long)old.oncpu, (unsigned long long)(a1 - a0));
		CHECK(b_ns == b_after && young.oncpu == b_ns, "new rows %llu vs its clock %llu (%llu after)",
		      (unsigned long long)young.oncpu, (unsigned long long)b_ns, (unsigned long long)b_after);
	} else if (b > 0) {
		CHECK(0, "new process %d did not block", (int)b);
	}
	close(step[1]);
	if (b > 0)
		waitpid(b, NULL, 0);
	close(step[0]);
	close(go[0]);
	close(go[1]);
	np_recbuf_free(&rb);
	if (st)
		rec_family_threads.close(st);
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP rtest_threads: needs root (BPF)\n");
		return tap_done();
	}
	/* as nprec does: cgroup2 mounted in a mount namespace of our own
	 * where the machine has none, so the cgroup path is known */
	struct rec_kfs kfs;
	kfs_prepare(&kfs);
	kfs_report(&kfs, stderr);
	run(false);
	run(true);
	race(false);
	race(true);
	reuse(false);
	reuse(true);
	return tap_done();
}
