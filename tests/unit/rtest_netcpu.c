/* The netcpu family opened directly (no nprec main): TCP traffic over
 * loopback made by this process, pinned to one CPU, against what the
 * recorded NP_REC_NETCPU says. Ground truth: the number of send/recv/write
 * calls this process made on sockets (and writes that were not on sockets),
 * the CPU the threads were pinned to, the process's own CPU time. Needs
 * root; skips otherwise. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <msgpack.h>

#include "config.h"
#include "family.h"
#include "hookhub.h"
#include "kfs.h"
#include "netcpu_dither.h"
#include "npmsg.h"
#include "recheader.h"
#include "records.h"
#include "sampleci.h"
#include "tap.h"

extern const struct rec_family rec_family_netcpu;

#define N_SEND 2000
#define N_WRITE 100
#define CHUNK 65536

static int cpu_pin = 1;
static uint64_t n_recv_calls;

static void pin(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu_pin, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int recv_cpu = -1;          /* the receiver's CPU, -1: cpu_pin */
static void *receiver(void *arg)
{
	int fd = *(int *)arg;
	static char buf[CHUNK];
	pin();
	if (recv_cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(recv_cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	for (;;) {
		n_recv_calls++;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0)
			break;
	}
	return NULL;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* got is want, or a few below it: the kernel skips a tracepoint program's
 * run now and then under load, it never runs it twice. */
static bool near_below(uint64_t got, uint64_t want)
{
	return got <= want && want - got <= 1 + want / 500;
}

/* Runs the transfer; returns the number of socket send calls made. */
static uint64_t transfer(void)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), cs = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	bind(ls, (struct sockaddr *)&a, sizeof(a));
	listen(ls, 1);
	getsockname(ls, (struct sockaddr *)&a, &al);
	connect(cs, (struct sockaddr *)&a, sizeof(a));
	int as = accept(ls, NULL, NULL);
	pthread_t th;
	pthread_create(&th, NULL, receiver, &as);
	static char buf[CHUNK];
	uint64_t calls = 0;
	int devnull = open("/dev/null", O_WRONLY);
	/* XC_CHUNK=N: sends of N bytes, for A/B runs that move where a lock
	 * of the send cycle to the sampler's timer falls */
	size_t chunk = getenv("XC_CHUNK") ? (size_t)atoi(getenv("XC_CHUNK")) : sizeof(buf);
	chunk = chunk && chunk <= sizeof(buf) ? chunk : sizeof(buf);
	for (int i = 0; i < N_SEND; i++, calls++)
		if (send(cs, buf, chunk, 0) < 0)
			break;
	for (int i = 0; i < N_WRITE; i++, calls++) {
		if (write(cs, buf, 1024) < 0)
			break;
		if (write(devnull, buf, 1024) < 0)   /* not a socket: not counted */
			break;
	}
	shutdown(cs, SHUT_WR);
	pthread_join(th, NULL);
	close(devnull);
	close(cs);
	close(as);
	close(ls);
	return calls;
}

/* A thread blocks in recv() until the main thread sends one byte 300 ms
 * later. Returns the receiver's own CPU time for the call (ns). */
static uint64_t blocked_cpu_ns;
static void *blocked_receiver(void *arg)
{
	int fd = *(int *)arg;
	char c;
	pin();
	uint64_t c0 = 0;
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	c0 = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	if (recv(fd, &c, 1, 0) != 1)
		return NULL;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	blocked_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec - c0;
	return NULL;
}

/* n sendfile() calls of one byte each into a socket: socket sends that no
 * listed syscall stamps (exact mode counts them as unclocked). Returns the
 * calls that succeeded. */
static int sendfile_sends(int n)
{
	int sv[2], done = 0;
	char path[] = "/tmp/rtest_netcpu.XXXXXX", buf[64];
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	unlink(path);
	if (write(fd, "x", 1) != 1 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		close(fd);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		off_t off = 0;
		if (sendfile(sv[0], fd, &off, 1) != 1)
			break;
		done++;
		if (read(sv[1], buf, sizeof(buf)) != 1)
			break;
	}
	close(sv[0]);
	close(sv[1]);
	close(fd);
	return done;
}

static void blocking_recv(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return;
	pthread_t th;
	pthread_create(&th, NULL, blocked_receiver, &sv[1]);
	usleep(300000);
	if (send(sv[0], "x", 1, 0) != 1)
		fprintf(stderr, "send failed\n");
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* A receive that blocks on CPU 0 and, moved while blocked, completes on
 * CPU 1: the part before it blocked stays on CPU 0, the rest and the call
 * count go to CPU 1. */
static pid_t moved_tid;
static volatile int moved_ready;
static void *moved_receiver(void *arg)
{
	int fd = *(int *)arg;
	char c;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	moved_tid = (pid_t)syscall(SYS_gettid);
	moved_ready = 1;
	if (recv(fd, &c, 1, 0) != 1)
		return NULL;
	return NULL;
}

static void moved_recv(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return;
	pthread_t th;
	pthread_create(&th, NULL, moved_receiver, &sv[1]);
	while (!moved_ready)
		usleep(1000);
	usleep(200000);              /* blocked in recv() by now */
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(moved_tid, sizeof(set), &set);
	usleep(50000);
	if (send(sv[0], "x", 1, 0) != 1)
		fprintf(stderr, "send failed\n");
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* The sender moves from one CPU to the other mid-way: every call's time
 * and count must land on the CPU it ran on. */
static void pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *drain(void *arg)
{
	int fd = *(int *)arg;
	char buf[4096];
	pin_to(0);
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	return NULL;
}

static void migrating_sender(int n0, int n1)
{
	int sv[2];
	char buf[1024] = { 0 };
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return;
	pthread_t th;
	pthread_create(&th, NULL, drain, &sv[1]);
	pin_to(0);
	for (int i = 0; i < n0; i++)
		if (send(sv[0], buf, sizeof(buf), 0) < 0)
			break;
	pin_to(1);
	for (int i = 0; i < n1; i++)
		if (send(sv[0], buf, sizeof(buf), 0) < 0)
			break;
	shutdown(sv[0], SHUT_WR);
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
}

struct netcpu_rec {
	int found;
	uint64_t t0, t1;
	uint64_t *ns[4], *n[4], *nested;
	size_t ncpu;
	int stacks_found;
	uint64_t samples_netrx, unresolved, lost, cat_sum;
	uint64_t cat_tcp_ip;
	uint64_t hz, hz_observed;
	char source[16];
	char sock[16];                  /* exact | sampled | none */
	char sampler[16];               /* sock_sampler: local | remote | remote-recv */
	uint64_t *smp[2];               /* send_smp, recv_smp */
	uint64_t *probe[2];             /* send_probe_smp, recv_probe_smp */
	uint64_t *outside[2];           /* send_outside_smp, recv_outside_smp */
	uint64_t period_ns;             /* the timer's mean period */
	uint64_t *smp_ns[4];            /* <class>_smp_ns: samples x their own periods */
	char sirq[16];                  /* exact | sampled | none */
	uint64_t *rx_smp;               /* netrx_smp */
	uint64_t *unclocked[2];         /* send_unclocked_n, recv_unclocked_n */
};

static const char *cls[4] = { "netrx", "nettx", "send", "recv" };

static void parse_stacks(const msgpack_object *body, struct netcpu_rec *r)
{
	r->stacks_found = 1;
	np_get_strbuf(body, "source", r->source, sizeof(r->source));
	np_get_u64(body, "hz", &r->hz);
	np_get_u64(body, "hz_observed", &r->hz_observed);
	np_get_u64(body, "samples_netrx", &r->samples_netrx);
	np_get_u64(body, "unresolved", &r->unresolved);
	np_get_u64(body, "lost", &r->lost);
	size_t n = 0;
	uint64_t *cs = np_get_u64_array(body, "cat_samples", &n);
	const msgpack_object_array *names = np_get_array(body, "cat");
	for (size_t i = 0; cs && names && i < n && i < names->size; i++) {
		r->cat_sum += cs[i];
		const msgpack_object *o = &names->ptr[i];
		if (o->type == MSGPACK_OBJECT_STR &&
		    ((o->via.str.size == 7 && !memcmp(o->via.str.ptr, "tcp_udp", 7)) ||
		     (o->via.str.size == 2 && !memcmp(o->via.str.ptr, "ip", 2))))
			r->cat_tcp_ip += cs[i];
	}
	free(cs);
}

static void parse(const struct np_recbuf *rb, struct netcpu_rec *r)
{
	memset(r, 0, sizeof(*r));
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	while (msgpack_unpack_next(&u, rb->sbuf.data, rb->sbuf.size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *o = &u.data;
		if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 3)
			continue;
		uint64_t type = o->via.array.ptr[0].via.u64;
		const msgpack_object *body = &o->via.array.ptr[2];
		if (type == NP_REC_NETRX_STACKS) {
			parse_stacks(body, r);
			continue;
		}
		if (type != NP_REC_NETCPU)
			continue;
		r->found = 1;
		np_get_u64(body, "t0_ns", &r->t0);
		np_get_u64(body, "t1_ns", &r->t1);
		for (int c = 0; c < 4; c++) {
			char k[24];
			snprintf(k, sizeof(k), "%s_ns", cls[c]);
			r->ns[c] = np_get_u64_array(body, k, &r->ncpu);
			snprintf(k, sizeof(k), "%s_n", cls[c]);
			r->n[c] = np_get_u64_array(body, k, &r->ncpu);
			snprintf(k, sizeof(k), "%s_smp_ns", cls[c]);
			r->smp_ns[c] = np_get_u64_array(body, k, &r->ncpu);
		}
		r->nested = np_get_u64_array(body, "nested_ns", &r->ncpu);
		np_get_strbuf(body, "sock", r->sock, sizeof(r->sock));
		np_get_strbuf(body, "sock_sampler", r->sampler, sizeof(r->sampler));
		r->smp[0] = np_get_u64_array(body, "send_smp", &r->ncpu);
		r->smp[1] = np_get_u64_array(body, "recv_smp", &r->ncpu);
		r->probe[0] = np_get_u64_array(body, "send_probe_smp", &r->ncpu);
		r->probe[1] = np_get_u64_array(body, "recv_probe_smp", &r->ncpu);
		r->outside[0] = np_get_u64_array(body, "send_outside_smp", &r->ncpu);
		r->outside[1] = np_get_u64_array(body, "recv_outside_smp", &r->ncpu);
		np_get_u64(body, "smp_period_ns", &r->period_ns);
		np_get_strbuf(body, "sirq", r->sirq, sizeof(r->sirq));
		r->rx_smp = np_get_u64_array(body, "netrx_smp", &r->ncpu);
		/* exact mode only: a missing key must not zero ncpu */
		size_t nu = 0;
		r->unclocked[0] = np_get_u64_array(body, "send_unclocked_n", &nu);
		r->unclocked[1] = np_get_u64_array(body, "recv_unclocked_n", &nu);
		if (r->unclocked[0] && nu != r->ncpu) {
			free(r->unclocked[0]);
			free(r->unclocked[1]);
			r->unclocked[0] = r->unclocked[1] = NULL;
		}
	}
	msgpack_unpacked_destroy(&u);
}

static void rec_free(struct netcpu_rec *r)
{
	for (int c = 0; c < 4; c++) {
		free(r->ns[c]);
		free(r->n[c]);
		free(r->smp_ns[c]);
	}
	free(r->nested);
	free(r->smp[0]);
	free(r->smp[1]);
	free(r->probe[0]);
	free(r->probe[1]);
	free(r->outside[0]);
	free(r->outside[1]);
	free(r->rx_smp);
	free(r->unclocked[0]);
	free(r->unclocked[1]);
}

static uint64_t col_sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; v && i < n; i++)
		s += v[i];
	return s;
}

static enum rec_probe_state probe_state(const struct rec_ctx *ctx, const char *probe)
{
	for (unsigned i = 0; i < ctx->nprobes; i++)
		if (!strcmp(ctx->probes[i].probe, probe))
			return ctx->probes[i].st;
	return (enum rec_probe_state)-1;
}

/* Whether probe's reason holds text. */
static bool probe_has(const struct rec_ctx *ctx, const char *probe, const char *text)
{
	for (unsigned i = 0; i < ctx->nprobes; i++)
		if (!strcmp(ctx->probes[i].probe, probe))
			return strstr(ctx->probes[i].reason, text) != NULL;
	return false;
}

/* The tick source (default with --netcpu exact; --netcpu sample takes its
 * stacks on the socket sampler's timer, sampled_default): NET_RX samples
 * of loopback traffic land in tcp/ip once the interrupt frames are
 * stripped, as with the cpu-clock timer. At HZ 250 one transfer may take no tick inside
 * NET_RX: transfers repeat (a bounded count, no time limit) until one did. */
#define TICK_ROUNDS 40
/* netcpu with default settings for this process only (exact: --netcpu
 * exact): open's rc, checked */
static int open_defaults(struct rec_config *cfg, struct rec_ctx *ctx, void **st, const char *what,
			 bool exact)
{
	char err[256] = "";
	rec_config_defaults(cfg);
	cfg->netcpu_exact = exact;
	cfg->pids[0] = (uint32_t)getpid();
	cfg->npids = 1;
	*ctx = (struct rec_ctx){ .cfg = cfg };
	int rc = rec_family_netcpu.open(ctx, st, err, sizeof(err));
	CHECK(rc == 0, "open (%s): %d %s", what, rc, err);
	return rc;
}

static void tick_run(void)
{
	struct rec_config cfg;
	struct rec_ctx ctx;
	void *st = NULL;
	int rc = open_defaults(&cfg, &ctx, &st, "tick", true);
	CHECK(cfg.sample_tick, "tick is the default source");
	if (rc != 0)
		return;
	CHECK(probe_state(&ctx, "tp_btf/hrtimer_expire_entry") == REC_PROBE_ATTACHED, "tick attached");
	CHECK(probe_state(&ctx, "perf_event/cpu-clock") == REC_PROBE_SKIPPED, "no cpu-clock timer");
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	struct netcpu_rec r;
	uint64_t netrx = 0, tcp_ip = 0, cat = 0, unres = 0, lost = 0, samples_hz = 0;
	char source[16] = "";
	int rounds = 0;
	pin();
	while (rounds < TICK_ROUNDS && (netrx == 0 || tcp_ip == 0)) {
		np_recbuf_reset(&rb);
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		transfer();
		rec_family_netcpu.snapshot(st, &ctx, &rb, t0, now_ns(CLOCK_MONOTONIC));
		parse(&rb, &r);
		rounds++;
		netrx += r.samples_netrx;
		tcp_ip += r.cat_tcp_ip;
		cat += r.cat_sum;
		unres += r.unresolved;
		lost += r.lost;
		samples_hz = r.hz;
		snprintf(source, sizeof(source), "%s", r.source);
		rec_free(&r);
	}
	CHECK(!strcmp(source, "tick"), "source %s", source);
	CHECK(samples_hz > 0, "hz 0");
	CHECK(netrx > 0, "no tick inside NET_RX in %d transfers", rounds);
	CHECK(tcp_ip > 0, "no tcp/ip tick samples in loopback NET_RX (%llu samples)",
	      (unsigned long long)netrx);
	CHECK(cat + unres <= netrx + 5, "categorised %llu + %llu > %llu", (unsigned long long)cat,
	      (unsigned long long)unres, (unsigned long long)netrx);
	CHECK(lost == 0, "%llu NET_RX stacks lost on the tick", (unsigned long long)lost);
	CHECK(cat + unres + 5 * (uint64_t)rounds >= netrx, "categorised %llu + %llu < %llu",
	      (unsigned long long)cat, (unsigned long long)unres, (unsigned long long)netrx);
	fprintf(stderr, "  tick: %d transfers, hz %llu, netrx samples %llu, classified %llu "
		"(tcp+ip %llu)\n", rounds, (unsigned long long)samples_hz, (unsigned long long)netrx,
		(unsigned long long)cat, (unsigned long long)tcp_ip);
	np_recbuf_free(&rb);
	rec_family_netcpu.close(st);
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
}

/* One transfer gives 3-15 NET_RX samples at 1 kHz, some 60 % of them in
 * tcp/ip: CI once read 6, none in tcp/ip (0.4^6 = 0.4 % a run, two
 * phases a run). More transfers until STACK_MIN_SAMPLES make a miss
 * mean a classifier that does not see tcp/ip, not chance. Returns the
 * transfers made. */
#define STACK_MIN_SAMPLES 40
#define STACK_ROUNDS 12
static int more_netrx_samples(void *st, struct rec_ctx *ctx, struct np_recbuf *rb, uint64_t *netrx,
			      uint64_t *tcp_ip)
{
	int rounds = 0;
	while (rounds < STACK_ROUNDS && *netrx < STACK_MIN_SAMPLES) {
		struct netcpu_rec r;
		np_recbuf_reset(rb);
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		transfer();
		rec_family_netcpu.snapshot(st, ctx, rb, t0, now_ns(CLOCK_MONOTONIC));
		parse(rb, &r);
		*netrx += r.samples_netrx;
		*tcp_ip += r.cat_tcp_ip;
		rec_free(&r);
		rounds++;
	}
	return rounds;
}

/* tracefs as nprec found or mounted it (a fresh machine mounts none) */
static struct rec_kfs kfs;

static bool tracefs_usable(void)
{
	enum kfs_state st = kfs.fs[KFS_TRACEFS].st;
	return st == KFS_PRESENT || st == KFS_MOUNTED;
}

/* One family open/close with the syscall-entry variant per_call (the
 * per-syscall tracepoints) or tp_btf/sys_enter, every exact check. */
static void run(bool per_call)
{
	fprintf(stderr, "# syscall entry: %s\n", per_call ? "per-syscall tracepoints" : "tp_btf/sys_enter");
	if (per_call)
		setenv("NPREC_TEST_SYSCALL_HOOK", "per-call", 1);
	else
		unsetenv("NPREC_TEST_SYSCALL_HOOK");
	n_recv_calls = 0;
	struct rec_config cfg;
	rec_config_defaults(&cfg);
	cfg.pids[0] = (uint32_t)getpid();
	cfg.npids = 1;
	cfg.sample_tick = false;       /* the exact cpu-clock timer; tick source: tick_run() */
	cfg.sample_hz = 1000;
	cfg.netcpu_exact = true;       /* the exact clock; sampled: sampled_*() */
	struct rec_ctx ctx = { .cfg = &cfg };
	void *st = NULL;
	char err[256] = "";
	int rc = rec_family_netcpu.open(&ctx, &st, err, sizeof(err));
	CHECK(rc == 0, "open: %d %s", rc, err);
	if (rc != 0)
		return;
	for (unsigned i = 0; i < ctx.nprobes; i++)
		fprintf(stderr, "  probe %s %s: %d %s\n", ctx.probes[i].family, ctx.probes[i].probe,
			ctx.probes[i].st, ctx.probes[i].reason);
	if (per_call && tracefs_usable())
		CHECK(probe_state(&ctx, "tracepoint/syscalls/sys_enter_<socket calls>") == REC_PROBE_ATTACHED &&
		      probe_state(&ctx, "tp_btf/sys_enter") == REC_PROBE_SKIPPED, "per-syscall tracepoints attached");
	else if (per_call)   /* no tracefs and no right to mount it: the fallback */
		CHECK(probe_state(&ctx, "tracepoint/syscalls/sys_enter_<socket calls>") == REC_PROBE_FAILED &&
		      probe_state(&ctx, "tp_btf/sys_enter") == REC_PROBE_ATTACHED,
		      "tracefs %s: tp_btf/sys_enter attached instead", kfs_state_name(kfs.fs[KFS_TRACEFS].st));
	else
		CHECK(probe_state(&ctx, "tp_btf/sys_enter") == REC_PROBE_ATTACHED &&
		      probe_state(&ctx, "tracepoint/syscalls/sys_enter_<socket calls>") == REC_PROBE_SKIPPED,
		      "tp_btf/sys_enter attached (default)");

	struct np_recbuf rb;
	np_recbuf_init(&rb);
	struct netcpu_rec r;

	/* busy interval: this process's traffic, pinned to cpu_pin */
	pin();
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t sends = transfer();
	uint64_t t1 = now_ns(CLOCK_MONOTONIC), cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	rec_family_netcpu.snapshot(st, &ctx, &rb, t0, t1);
	parse(&rb, &r);
	CHECK(r.found, "no NETCPU record");
	CHECK(r.ncpu >= (size_t)cpu_pin + 1, "ncpu %zu", r.ncpu);
	if (r.found && r.ncpu > (size_t)cpu_pin) {
		uint64_t send_n = col_sum(r.n[2], r.ncpu), recv_n = col_sum(r.n[3], r.ncpu);
		/* Writes to /dev/null are excluded, so never more than the calls
		 * made. A call whose stamp was lost is counted apart, unclocked
		 * (CI under load: 1 send of 2100 once, 3 of 700 another time,
		 * before that count existed); what neither holds is a
		 * sock_*_length run the kernel skipped: up to 0.2 % fewer. */
		uint64_t send_u = col_sum(r.unclocked[0], r.ncpu), recv_u = col_sum(r.unclocked[1], r.ncpu);
		CHECK(r.unclocked[0] && r.unclocked[1], "no unclocked counts in exact mode");
		CHECK(near_below(send_n + send_u, sends), "sends counted %llu + %llu unclocked of %llu",
		      (unsigned long long)send_n, (unsigned long long)send_u, (unsigned long long)sends);
		CHECK(near_below(recv_n + recv_u, n_recv_calls), "receives counted %llu + %llu unclocked of %llu",
		      (unsigned long long)recv_n, (unsigned long long)recv_u, (unsigned long long)n_recv_calls);
		CHECK(near_below(r.n[2][cpu_pin] + r.unclocked[0][cpu_pin], sends),
		      "sends on the pinned CPU %llu of %llu", (unsigned long long)r.n[2][cpu_pin],
		      (unsigned long long)sends);
		if (send_u || recv_u || send_n < sends || recv_n < n_recv_calls)
			fprintf(stderr, "  busy: sends %llu + %llu unclocked of %llu, receives %llu + %llu of %llu\n",
				(unsigned long long)send_n, (unsigned long long)send_u, (unsigned long long)sends,
				(unsigned long long)recv_n, (unsigned long long)recv_u,
				(unsigned long long)n_recv_calls);
		for (size_t c = 0; c < r.ncpu; c++)
			if ((int)c != cpu_pin) {
				CHECK_EQ_U(r.ns[2][c], 0);
				CHECK_EQ_U(r.ns[3][c], 0);
			}
		uint64_t op_ns = r.ns[2][cpu_pin] + r.ns[3][cpu_pin];
		CHECK(r.ns[2][cpu_pin] > 0 && r.ns[3][cpu_pin] > 0, "send %llu recv %llu ns",
		      (unsigned long long)r.ns[2][cpu_pin], (unsigned long long)r.ns[3][cpu_pin]);
		/* op time is on-CPU time of this process's threads */
		CHECK(op_ns <= cpu1 - cpu0, "socket ops %llu ns > process CPU %llu ns",
		      (unsigned long long)op_ns, (unsigned long long)(cpu1 - cpu0));
		CHECK(col_sum(r.ns[0], r.ncpu) > 0, "no NET_RX time under loopback TCP");
		/* nested time is a part of the network softirq time */
		CHECK(col_sum(r.nested, r.ncpu) <= col_sum(r.ns[0], r.ncpu) + col_sum(r.ns[1], r.ncpu),
		      "nested %llu > softirq %llu", (unsigned long long)col_sum(r.nested, r.ncpu),
		      (unsigned long long)(col_sum(r.ns[0], r.ncpu) + col_sum(r.ns[1], r.ncpu)));
		CHECK(r.n[0][cpu_pin] > 0, "no NET_RX on the pinned CPU");
		fprintf(stderr, "  busy: send %llu ns / %llu calls, recv %llu ns / %llu calls, "
			"netrx %llu ns, nested %llu ns, process cpu %llu ns\n",
			(unsigned long long)r.ns[2][cpu_pin], (unsigned long long)send_n,
			(unsigned long long)r.ns[3][cpu_pin], (unsigned long long)recv_n,
			(unsigned long long)col_sum(r.ns[0], r.ncpu),
			(unsigned long long)col_sum(r.nested, r.ncpu), (unsigned long long)(cpu1 - cpu0));
	}
	CHECK(r.stacks_found, "no NETRX_STACKS record");
	CHECK(r.cat_sum + r.unresolved <= r.samples_netrx + 5, "categorised %llu + %llu > %llu",
	      (unsigned long long)r.cat_sum, (unsigned long long)r.unresolved,
	      (unsigned long long)r.samples_netrx);
	/* every NET_RX sample's stack is counted (keyed by the stack itself:
	 * no stack-map bucket to collide in; the old 8192-bucket stack map
	 * lost some at 1 kHz), up to the few that straddle the snapshot */
	CHECK(r.lost == 0, "%llu NET_RX stacks lost", (unsigned long long)r.lost);
	CHECK(r.cat_sum + r.unresolved + 5 >= r.samples_netrx, "categorised %llu + %llu < %llu",
	      (unsigned long long)r.cat_sum, (unsigned long long)r.unresolved,
	      (unsigned long long)r.samples_netrx);
	CHECK(!strcmp(r.source, "cpu-clock") && r.hz == 1000, "source %s hz %llu", r.source,
	      (unsigned long long)r.hz);
	fprintf(stderr, "  stacks: netrx samples %llu, classified %llu (tcp+ip %llu), unresolved %llu\n",
		(unsigned long long)r.samples_netrx, (unsigned long long)r.cat_sum,
		(unsigned long long)r.cat_tcp_ip, (unsigned long long)r.unresolved);
	uint64_t netrx = r.samples_netrx, tcp_ip = r.cat_tcp_ip;
	rec_free(&r);
	int rounds = 1 + more_netrx_samples(st, &ctx, &rb, &netrx, &tcp_ip);
	/* over the transfers, as the tcp/ip share: one transfer's ~5 ms of
	 * NET_RX gave 0 samples at 1 kHz once (CI of 585686a, ASan) */
	CHECK(netrx > 0, "no sample inside NET_RX (%d transfers)", rounds);
	CHECK(tcp_ip > 0, "no tcp/ip samples in loopback NET_RX (%llu samples, %d transfers)",
	      (unsigned long long)netrx, rounds);

	/* idle interval: no socket op by this process */
	np_recbuf_reset(&rb);
	t0 = now_ns(CLOCK_MONOTONIC);
	usleep(300000);
	t1 = now_ns(CLOCK_MONOTONIC);
	rec_family_netcpu.snapshot(st, &ctx, &rb, t0, t1);
	parse(&rb, &r);
	CHECK(r.found, "no NETCPU record (idle)");
	CHECK_EQ_U(col_sum(r.n[2], r.ncpu) + col_sum(r.n[3], r.ncpu), 0);
	CHECK_EQ_U(col_sum(r.ns[2], r.ncpu) + col_sum(r.ns[3], r.ncpu), 0);
	rec_free(&r);

	/* a receive that blocks 300 ms costs only its on-CPU time: the clock
	 * stops when the thread is switched out (netto §4.2). The kernel's
	 * thread clock of the switched-out thread stops earlier than ours, at
	 * the update before pick_next_task (newidle balancing of the CPU the
	 * receiver leaves idle runs after it, before the sched_switch
	 * tracepoint): a few us idle, 17 us over once under ASan on a loaded
	 * 2-CPU machine (CI: charged 43.6 us, thread clock 26.8 us). 1 ms of
	 * slack still fails a clock that ran through the 300 ms of blocking. */
#define BLOCK_SLACK_NS 1000000
	np_recbuf_reset(&rb);
	t0 = now_ns(CLOCK_MONOTONIC);
	blocking_recv();
	t1 = now_ns(CLOCK_MONOTONIC);
	rec_family_netcpu.snapshot(st, &ctx, &rb, t0, t1);
	parse(&rb, &r);
	CHECK(r.found, "no NETCPU record (blocking)");
	CHECK_EQ_U(col_sum(r.n[3], r.ncpu), 1);
	CHECK_EQ_U(col_sum(r.n[2], r.ncpu), 1);
	CHECK(col_sum(r.ns[3], r.ncpu) <= blocked_cpu_ns + BLOCK_SLACK_NS,
	      "blocked recv charged %llu ns, its thread ran %llu ns",
	      (unsigned long long)col_sum(r.ns[3], r.ncpu), (unsigned long long)blocked_cpu_ns);
	CHECK(col_sum(r.ns[3], r.ncpu) > 0, "blocked recv charged nothing");
	fprintf(stderr, "  blocking recv: 300 ms wall, charged %llu ns, thread CPU %llu ns\n",
		(unsigned long long)col_sum(r.ns[3], r.ncpu), (unsigned long long)blocked_cpu_ns);
	rec_free(&r);

	/* sendfile into a socket: no listed syscall stamps it, so it is no
	 * clocked send, and it is not silent either */
	np_recbuf_reset(&rb);
	t0 = now_ns(CLOCK_MONOTONIC);
	int nsf = sendfile_sends(40);
	t1 = now_ns(CLOCK_MONOTONIC);
	rec_family_netcpu.snapshot(st, &ctx, &rb, t0, t1);
	parse(&rb, &r);
	CHECK(nsf == 40, "sendfile into a socket: %d of 40 calls", nsf);
	CHECK(r.found && r.unclocked[0] && r.unclocked[1], "no unclocked counts (sendfile)");
	if (r.found && r.unclocked[0] && r.unclocked[1]) {
		CHECK(near_below(col_sum(r.unclocked[0], r.ncpu), (uint64_t)nsf), "sendfile: %llu unclocked of %d",
		      (unsigned long long)col_sum(r.unclocked[0], r.ncpu), nsf);
		CHECK_EQ_U(col_sum(r.n[2], r.ncpu), 0);
		CHECK(near_below(col_sum(r.n[3], r.ncpu), (uint64_t)nsf), "its reads: %llu clocked of %d",
		      (unsigned long long)col_sum(r.n[3], r.ncpu), nsf);
		CHECK_EQ_U(col_sum(r.unclocked[1], r.ncpu), 0);
	}
	rec_free(&r);

	if (cpu_pin == 1) {
		/* the main thread sends from CPU 1: only the receiver's call on CPU 0 */
		np_recbuf_reset(&rb);
		t0 = now_ns(CLOCK_MONOTONIC);
		moved_recv();
		t1 = now_ns(CLOCK_MONOTONIC);
		rec_family_netcpu.snapshot(st, &ctx, &rb, t0, t1);
		parse(&rb, &r);
		CHECK(r.found && r.ncpu >= 2, "no NETCPU record (moved recv)");
		if (r.found && r.ncpu >= 2) {
			CHECK_EQ_U(r.n[3][0], 0);
			CHECK_EQ_U(r.n[3][1], 1);
			CHECK(r.ns[3][0] > 0 && r.ns[3][1] > 0, "moved recv ns cpu0 %llu cpu1 %llu",
			      (unsigned long long)r.ns[3][0], (unsigned long long)r.ns[3][1]);
			CHECK(r.ns[3][0] + r.ns[3][1] < 1000000, "moved recv charged %llu ns",
			      (unsigned long long)(r.ns[3][0] + r.ns[3][1]));
			fprintf(stderr, "  moved recv: cpu0 %llu ns, cpu1 %llu ns\n",
				(unsigned long long)r.ns[3][0], (unsigned long long)r.ns[3][1]);
		}
		rec_free(&r);

		np_recbuf_reset(&rb);
		t0 = now_ns(CLOCK_MONOTONIC);
		migrating_sender(500, 700);
		t1 = now_ns(CLOCK_MONOTONIC);
		rec_family_netcpu.snapshot(st, &ctx, &rb, t0, t1);
		parse(&rb, &r);
		CHECK(r.found && r.ncpu >= 2, "no NETCPU record (migration)");
		if (r.found && r.ncpu >= 2 && r.unclocked[0]) {
			/* each CPU's sends there and nowhere else; a lost stamp is
			 * unclocked, on the CPU that ran the call (CI: 697 of 700
			 * counted once, before the unclocked count) */
			uint64_t u0 = r.unclocked[0][0], u1 = r.unclocked[0][1];
			CHECK(near_below(r.n[2][0] + u0, 500) && near_below(r.n[2][1] + u1, 700),
			      "migration: sends cpu0 %llu + %llu unclocked of 500, cpu1 %llu + %llu of 700",
			      (unsigned long long)r.n[2][0], (unsigned long long)u0,
			      (unsigned long long)r.n[2][1], (unsigned long long)u1);
			if (u0 || u1 || r.n[2][0] != 500 || r.n[2][1] != 700)
				fprintf(stderr, "  migration: sends cpu0 %llu + %llu unclocked, cpu1 %llu + %llu\n",
					(unsigned long long)r.n[2][0], (unsigned long long)u0,
					(unsigned long long)r.n[2][1], (unsigned long long)u1);
			CHECK(r.ns[2][0] > 0 && r.ns[2][1] > 0, "send ns %llu / %llu",
			      (unsigned long long)r.ns[2][0], (unsigned long long)r.ns[2][1]);
			CHECK_EQ_U(r.ns[3][1], 0);              /* the receiver stayed on CPU 0 */
			CHECK(r.n[3][0] > 0, "receiver calls on CPU 0");
		}
		rec_free(&r);
	}

	np_recbuf_free(&rb);
	rec_family_netcpu.close(st);
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
}

/* Per-syscall tracepoints wanted but tracefs gone (unmounted in our own
 * mount namespace, never the host's): netcpu falls back to
 * tp_btf/sys_enter and says why. */
static void no_tracefs_run(void)
{
	const char *path = kfs.fs[KFS_TRACEFS].path;
	if (kfs.fs[KFS_TRACEFS].st != KFS_MOUNTED || umount2(path, MNT_DETACH) != 0) {
		fprintf(stderr, "# tracefs not ours to unmount (%s): fallback not tried\n",
			kfs_state_name(kfs.fs[KFS_TRACEFS].st));
		return;
	}
	setenv("NPREC_TEST_SYSCALL_HOOK", "per-call", 1);
	struct rec_config cfg;
	struct rec_ctx ctx;
	void *st = NULL;
	if (open_defaults(&cfg, &ctx, &st, "without tracefs", true) == 0) {
		CHECK(probe_state(&ctx, "tracepoint/syscalls/sys_enter_<socket calls>") == REC_PROBE_FAILED &&
		      probe_state(&ctx, "tp_btf/sys_enter") == REC_PROBE_ATTACHED,
		      "tracefs unmounted: per-call wanted, tp_btf/sys_enter attached");
		rec_family_netcpu.close(st);
	}
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
}

/* A sampled class's figure is its samples weighed by their own timer
 * periods (<class>_smp_ns), each a period of the dithered rate: between
 * 1 / (1 + W) and 1 / (1 - W) mean periods, and the interval's restart
 * correction (netcpu_dither.h: under 2 % when a restart falls in an
 * interval of 128 periods or more). */
static void check_weighed(const struct netcpu_rec *r, int k, const uint64_t *cnt)
{
	double p = (double)r->period_ns;
	/* the remote split's count is its estimate's error, not its samples
	 * (netcpu_dither.h nc_split_count) */
	bool split = (k == 3 && !strcmp(r->sampler, "remote-recv")) || (k >= 2 && !strcmp(r->sampler, "remote"));
	CHECK(r->smp_ns[k] != NULL, "%s_smp_ns missing", cls[k]);
	for (size_t c = 0; r->smp_ns[k] && r->ns[k] && c < r->ncpu; c++) {
		CHECK_EQ_U(r->ns[k][c], r->smp_ns[k][c]);
		if (split)
			continue;
		double w = cnt[c] ? (double)r->smp_ns[k][c] / (double)cnt[c] : p;
		CHECK(w >= p / (1 + NC_DITHER_W) * 0.999 && w <= p / (1 - NC_DITHER_W) * 1.02,
		      "%s cpu %zu: %.0f ns a sample, mean period %.0f", cls[k], c, w, p);
	}
}

/* Default mode (--netcpu sample): no per-call probe, socket time from the
 * socket sampler's own cpu-clock timer; the record says so, carries the
 * sample counts and no call counts, and a sample count is the only truth
 * of the estimate: ns = samples x period on every CPU. This process makes
 * no socket call in the idle interval: exactly 0 samples (--pid filter). */
static void sampled_default(void)
{
	struct rec_config cfg;
	struct rec_ctx ctx;
	void *st = NULL;
	if (open_defaults(&cfg, &ctx, &st, "sampled", false) != 0)
		return;
	CHECK(probe_state(&ctx, "tp_btf/sys_enter") == REC_PROBE_SKIPPED &&
	      probe_state(&ctx, "tp_btf/sock_send_length") == REC_PROBE_SKIPPED,
	      "no syscall stamp, no sock_*_length program at defaults");
	CHECK(probe_state(&ctx, "perf_event/cpu-clock (socket time)") == REC_PROBE_ATTACHED,
	      "socket sampler attached");
	CHECK(probe_state(&ctx, "tp_btf/softirq_entry") == REC_PROBE_SKIPPED &&
	      probe_state(&ctx, "tp_btf/softirq_exit") == REC_PROBE_SKIPPED &&
	      probe_state(&ctx, "tp_btf/hrtimer_expire_entry") == REC_PROBE_SKIPPED,
	      "no softirq pair, no tick program at defaults");
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	struct netcpu_rec r;
	pin();
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	/* One transfer holds ~18 ms of socket time: at the sampler's 97 Hz
	 * that is ~1.7 samples expected, none at all in ~18 % of runs (CI
	 * saw it). Transfers until 600 ms of process CPU (about 200 ms of
	 * socket time, ~20 samples expected: none with p ~ 2e-9). */
	uint64_t cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (int i = 0; i < 100 && now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0 < 600000000ull; i++)
		transfer();
	rec_family_netcpu.snapshot(st, &ctx, &rb, t0, now_ns(CLOCK_MONOTONIC));
	parse(&rb, &r);
	CHECK(r.found && !strcmp(r.sock, "sampled"), "sock '%s'", r.sock);
	CHECK(!r.n[2] && !r.n[3], "sampled records carry no call counts");
	/* NET_RX / NET_TX time sampled too: the samples weighed, no run count */
	CHECK(!strcmp(r.sirq, "sampled") && !r.n[0] && !r.n[1] && r.rx_smp && r.ns[0], "sirq '%s'", r.sirq);
	CHECK(r.stacks_found && !strcmp(r.source, "socket-timer"), "stacks source '%s'", r.source);
	CHECK_EQ_U(r.period_ns, 1000000000ull / REC_NETCPU_SOCK_HZ);
	/* receive calls split by the other CPU's timer where it runs
	 * (record/families/netcpu.c nc_choose_remote) */
	bool remote = probe_has(&ctx, "perf_event/cpu-clock (socket time)", "remote read");
	CHECK(!strcmp(r.sampler, remote ? "remote-recv" : "local"), "sock_sampler '%s', the probe line %s remote",
	      r.sampler, remote ? "says" : "does not say");
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		fprintf(stderr, "  sampled: sock_sampler %s on %ld CPUs\n", r.sampler, sysconf(_SC_NPROCESSORS_ONLN));
	const uint64_t *cnt[4] = { r.rx_smp, NULL, r.smp[0], r.smp[1] };
	for (int k = 0; k < 4; k++)
		if (cnt[k])
			check_weighed(&r, k, cnt[k]);
	uint64_t n = col_sum(r.smp[0], r.ncpu) + col_sum(r.smp[1], r.ncpu);
	CHECK(n > 0, "no socket sample in a transfer");
	fprintf(stderr, "  sampled: %llu send + %llu recv samples of %llu ns\n",
		(unsigned long long)col_sum(r.smp[0], r.ncpu), (unsigned long long)col_sum(r.smp[1], r.ncpu),
		(unsigned long long)r.period_ns);
	rec_free(&r);
	np_recbuf_reset(&rb);
	t0 = now_ns(CLOCK_MONOTONIC);
	usleep(300000);
	rec_family_netcpu.snapshot(st, &ctx, &rb, t0, now_ns(CLOCK_MONOTONIC));
	parse(&rb, &r);
	CHECK_EQ_U(col_sum(r.smp[0], r.ncpu) + col_sum(r.smp[1], r.ncpu), 0);
	rec_free(&r);
	np_recbuf_free(&rb);
	rec_family_netcpu.close(st);
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
}

/* The sampled estimate against the exact clock over the same socket calls:
 * --netcpu exact keeps the socket sampler as a cross-check, so one run
 * gives both. Transfers repeat (a bounded count, no time limit) until each
 * class has the samples for a 99.9 % interval of at most +-10 %. The
 * tolerance is the 99.99 % Poisson score interval of the count (relative
 * half-width ~3.9/sqrt(n), common/sampleci.c) widened, on each side, by an
 * allowance for the systematic error the count cannot shrink, each the
 * largest excess seen beyond the interval plus a margin:
 *  - low side (exact above the sampled figure): exact must not exceed the
 *    high end of the interval of the count plus the samples in the exact
 *    clock's own programs (probe), which the exact figure holds and the
 *    sampled one, as at --netcpu sample, has not (docs/NETCPU.md "Sampled
 *    against exact"), with the ratio lowered by XC_SHORT. Worst seen: 0.077
 *    below the interval's low ratio (receive 0.815 with probe, load ~6),
 *    0.008 on the quiet machine (0.884).
 *  - high side: the bare sampled figure may exceed its interval's high
 *    ratio by XC_EXCESS. Worst seen: 0.233 (send 1.291 x exact, 4603
 *    samples, quiet machine after the merge of j24q, 2026-11-26 15:06;
 *    1.13-1.29 in 6 quiet runs then, 1.12-1.27 in 16 quiet runs after
 *    j24o's merge, never covered; j24q's 0.25 left 0.017 of margin on the
 *    quiet machine, so 0.35). Under load send reads 0.93-1.04 and j24q's debug
 *    build found no sample taken across an exact-clock boundary and the
 *    exact figure equal to the sum of its stretches: the quiet excess lies
 *    in how often the timer's grid falls inside send stretches, not
 *    explained (docs/NETCPU.md "Sampled against exact", j24q). Found
 *    since (j25f): an unpreempted sender falls into step with the timer
 *    (each sample's stall, which depends on where it lands, pulls the
 *    send cycle's phase to the grid), and the grid then finds send more
 *    often than its share; reproduced under load with `chrt -f 10`
 *    (send 1.02-1.24 in 14 runs), with the send stretches' start phases
 *    far from uniform in the high runs. Since j26d the sampler's rate is
 *    dithered (record/families/netcpu_dither.h): under chrt the same
 *    binary read send 0.83-1.08 with fixed timers (6 of 38 runs not
 *    covered) and 0.92-1.05 with dithered ones (all 37 covered); this
 *    build at six rates 0.83-0.99 fixed (8 of 18 not covered), 0.945-0.995
 *    dithered (none). Not yet seen on a quiet machine, so the allowance
 *    stays.
 * Each run prints the bare ratio, whether the bare interval covered exact
 * (issue 24's target), the ratio with probe and the samples outside the
 * exact clock (the syscall tail after sock_*_length). The sampler runs at
 * 4999 Hz (the default's 97 Hz would need fifty times the transfers); what
 * is tested is that a sample in a socket call stands for one period of
 * socket time, which the rate does not change (the same check at 997 Hz
 * read alike, j24q). Sender and receiver run on different CPUs, as a
 * client and a server do. */
#define XC_Z 3.29         /* enough samples: 99.9 % interval <= +-10 % */
#define XC_ZCOVER 3.89    /* the asserted interval: 99.99 % */
#define XC_RES 0.10       /* samples enough to resolve +-10 % (99.9 %) */
#define XC_EXCESS 0.35    /* high side: worst seen 0.233 (above) */
#define XC_SHORT 0.15     /* low side, with probe: worst seen 0.077 (above) */
#define XC_ROUNDS 60
#define XC_HZ 4999
static bool xc_enough(uint64_t n)
{
	double lo, hi;
	np_poisson_ci(n, XC_Z, &lo, &hi);
	return n && (hi - lo) / 2 <= XC_RES * (double)n;
}

/* exact at most (n + probe) x period over the interval's low ratio of that
 * count less XC_SHORT; at least the sampled figure over its interval's
 * high ratio plus XC_EXCESS. Prints whether the bare interval of n covered
 * exact. */
static void xc_check(const char *cls, uint64_t exact, uint64_t calls, uint64_t n, uint64_t probe,
		     uint64_t outside, double est)
{
	double lo, hi, plo, phi, p = n ? est / (double)n : 0;   /* the mean period of the samples */
	np_poisson_ci(n, XC_ZCOVER, &lo, &hi);
	np_poisson_ci(n + probe, XC_ZCOVER, &plo, &phi);
	double r = exact ? est / (double)exact : 0, rp = exact ? (double)(n + probe) * p / (double)exact : 0;
	bool bare = (double)exact >= lo * p && (double)exact <= hi * p;
	CHECK(xc_enough(n), "%s: %llu samples after %d transfers", cls, (unsigned long long)n, XC_ROUNDS);
	/* the sampled figure may exceed exact by XC_EXCESS beyond its
	 * interval's high ratio (an excess not explained, see above) */
	double elo = est / (lo > 0 ? (double)n / lo + XC_EXCESS : 1e9);
	double plr = phi > 0 ? (double)(n + probe) / phi - XC_SHORT : 0;
	double ehi = plr > 0 ? (double)(n + probe) * p / plr : 1e300;
	CHECK(exact > 0 && (double)exact >= elo && (double)exact <= ehi,
	      "%s: exact %llu ns outside [%.0f, %.0f] (sampled %.3f, with probe %.3f)", cls,
	      (unsigned long long)exact, elo, ehi, r, rp);
	fprintf(stderr, "  %s: exact %llu ns in %llu calls, %llu samples -> %.3f (99.99 %% %s exact), "
		"+ %llu probe -> %.3f; outside %llu; %.0f ns a sample\n", cls, (unsigned long long)exact,
		(unsigned long long)calls, (unsigned long long)n, r, bare ? "covers" : "does not cover",
		(unsigned long long)probe, rp, (unsigned long long)outside, p);
}

static void sampled_vs_exact(void)
{
	struct rec_config cfg;
	struct rec_ctx ctx;
	void *st = NULL;
	char err[256] = "";
	rec_config_defaults(&cfg);
	cfg.pids[0] = (uint32_t)getpid();
	cfg.npids = 1;
	cfg.netcpu_exact = true;
	/* XC_HZ=N: another rate, for A/B runs that move where a lock falls */
	unsigned hz = getenv("XC_HZ") ? (unsigned)atoi(getenv("XC_HZ")) : XC_HZ;
	cfg.netcpu_sock_hz = hz;
	ctx = (struct rec_ctx){ .cfg = &cfg };
	int rc = rec_family_netcpu.open(&ctx, &st, err, sizeof(err));
	CHECK(rc == 0, "open (exact, %u Hz sampler): %d %s", hz, rc, err);
	if (rc != 0)
		return;
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	struct netcpu_rec r;
	uint64_t ex[2] = { 0 }, calls[2] = { 0 }, n[2] = { 0 }, pr[2] = { 0 }, out[2] = { 0 };
	uint64_t period = 0;
	double est[2] = { 0 };
	int rounds = 0;
	pin();
	recv_cpu = !cpu_pin;    /* 0 when there is one CPU: the same as the sender */
	while (rounds < XC_ROUNDS && (!xc_enough(n[0]) || !xc_enough(n[1]))) {
		np_recbuf_reset(&rb);
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		transfer();
		rec_family_netcpu.snapshot(st, &ctx, &rb, t0, now_ns(CLOCK_MONOTONIC));
		parse(&rb, &r);
		for (int k = 0; k < 2; k++) {
			ex[k] += col_sum(r.ns[2 + k], r.ncpu);
			calls[k] += col_sum(r.n[2 + k], r.ncpu);
			n[k] += col_sum(r.smp[k], r.ncpu);
			est[k] += (double)col_sum(r.smp_ns[2 + k], r.ncpu);
			pr[k] += col_sum(r.probe[k], r.ncpu);
			out[k] += col_sum(r.outside[k], r.ncpu);
		}
		period = r.period_ns;
		rounds++;
		rec_free(&r);
	}
	CHECK_EQ_U(period, 1000000000ull / hz);
	recv_cpu = -1;
	fprintf(stderr, "  sampled vs exact: %d transfers\n", rounds);
	xc_check("send", ex[0], calls[0], n[0], pr[0], out[0], est[0]);
	xc_check("recv", ex[1], calls[1], n[1], pr[1], out[1], est[1]);
	np_recbuf_free(&rb);
	rec_family_netcpu.close(st);
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP rtest_netcpu: needs root (BPF)\n");
		return tap_done();
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cpu_pin = 0;
	/* as nprec does: tracefs mounted in a mount namespace of our own */
	kfs_prepare(&kfs);
	kfs_report(&kfs, stderr);
	/* XC_ONLY=1: the cross-check alone, for repeated A/B runs (j26d) */
	if (getenv("XC_ONLY")) {
		sampled_vs_exact();
		return tap_done();
	}
	run(false);
	run(true);
	no_tracefs_run();
	unsetenv("NPREC_TEST_SYSCALL_HOOK");
	tick_run();
	sampled_default();
	sampled_vs_exact();
	return tap_done();
}
