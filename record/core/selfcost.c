/* Recorder self cost and the --max-cpu sampling controller. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "selfcost.h"

static uint64_t sc_tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

static uint64_t sc_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The resident set from the kept descriptor: an fopen, fscanf and fclose
 * a second were ~7 % of an idle recorder's CPU (docs/BENCHMARKS.md). */
static uint64_t sc_rss_bytes(const struct rec_selfcost *s)
{
	char buf[128];
	if (s->statm_fd < 0)
		return 0;
	ssize_t n = pread(s->statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *end;
	strtoull(buf, &end, 10);                    /* size */
	unsigned long long resident = strtoull(end, NULL, 10);
	return (uint64_t)resident * (uint64_t)s->page;
}

static void sc_read(struct rec_selfcost *s)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		s->utime_ns = sc_tv_ns(&ru.ru_utime);
		s->stime_ns = sc_tv_ns(&ru.ru_stime);
		s->maxrss_bytes = (uint64_t)ru.ru_maxrss * 1024u;
	}
	s->rss_bytes = sc_rss_bytes(s);
	s->t_mono_ns = sc_mono_ns();
}

void rec_selfcost_init(struct rec_selfcost *s)
{
	memset(s, 0, sizeof(*s));
	s->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	s->page = sysconf(_SC_PAGESIZE);
	sc_read(s);
}

void rec_selfcost_sample(struct rec_selfcost *s)
{
	struct rec_selfcost prev = *s;
	sc_read(s);
	uint64_t wall = s->t_mono_ns - prev.t_mono_ns;
	uint64_t cpu = (s->utime_ns + s->stime_ns) - (prev.utime_ns + prev.stime_ns);
	s->cpu_pct = wall ? 100.0 * (double)cpu / (double)wall : 0;
}

static void sc_key(msgpack_packer *pk, const char *k)
{
	size_t n = strlen(k);
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, k, n);
}

void rec_selfcost_pack(msgpack_packer *pk, const struct rec_selfcost *s)
{
	sc_key(pk, "self_cpu_pct");
	msgpack_pack_double(pk, s->cpu_pct);
	sc_key(pk, "self_utime_ns");
	msgpack_pack_uint64(pk, s->utime_ns);
	sc_key(pk, "self_stime_ns");
	msgpack_pack_uint64(pk, s->stime_ns);
	sc_key(pk, "self_rss_bytes");
	msgpack_pack_uint64(pk, s->rss_bytes);
	sc_key(pk, "self_maxrss_bytes");
	msgpack_pack_uint64(pk, s->maxrss_bytes);
}

void rec_ratectl_init(struct rec_ratectl *r, double max_cpu_pct, uint32_t base_div)
{
	memset(r, 0, sizeof(*r));
	r->max_pct = max_cpu_pct > 0 ? max_cpu_pct : 0;
	r->base_div = base_div ? base_div : 1;
	r->div = r->prev_div = r->base_div;
}

uint32_t rec_ratectl_update(struct rec_ratectl *r, double cpu_pct)
{
	r->prev_div = r->div;
	if (r->max_pct <= 0)
		return r->div;
	if (cpu_pct > r->max_pct) {
		/* far over budget: cut faster than halving */
		uint32_t f = cpu_pct > 2 * r->max_pct ? 4 : 2;
		uint64_t nd = (uint64_t)r->div * f;
		r->div = nd > REC_RATECTL_MAX_DIV ? REC_RATECTL_MAX_DIV : (uint32_t)nd;
		if (r->div < r->base_div)
			r->div = r->base_div;
		r->calm = 0;
	} else if (cpu_pct < r->max_pct / 2 && r->div > r->base_div) {
		if (++r->calm >= REC_RATECTL_CALM) {
			r->div = r->div / 2 < r->base_div ? r->base_div : r->div / 2;
			r->calm = 0;
		}
	} else {
		r->calm = 0;
	}
	if (r->div != r->prev_div)
		r->changes++;
	return r->div;
}

void rec_ratectl_pack(msgpack_packer *pk, const struct rec_ratectl *r)
{
	sc_key(pk, "sample_div");
	msgpack_pack_uint32(pk, r->div);
	sc_key(pk, "sample_div_prev");
	msgpack_pack_uint32(pk, r->prev_div);
	sc_key(pk, "sample_div_changes");
	msgpack_pack_uint64(pk, r->changes);
}
