/* ana_par_for (ana_par.h). */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include "ana_par.h"

#define PAR_MAXT ANA_PAR_MAXT
#define PAR_MIN  65536          /* below this many iterations a thread costs more than it saves */

struct par_job { ana_par_fn fn; void *ctx; size_t lo, hi; };

static void *par_run(void *arg)
{
	struct par_job *j = arg;
	j->fn(j->ctx, j->lo, j->hi);
	return NULL;
}

static _Thread_local bool par_all_started;     /* ana_par_concurrent */

bool ana_par_concurrent(void)
{
	return par_all_started;
}

/* Runs the jobs, the first in the caller's thread; a job whose thread
 * cannot start runs there too, after it. */
static void par_spawn(struct par_job *job, unsigned n)
{
	pthread_t th[PAR_MAXT];
	int started[PAR_MAXT] = { 0 };
	bool all = true, outer = par_all_started;
	for (unsigned t = 1; t < n; t++) {
		started[t] = pthread_create(&th[t], NULL, par_run, &job[t]) == 0;
		all &= started[t] != 0;
	}
	par_all_started = all;
	par_run(&job[0]);
	par_all_started = outer;
	for (unsigned t = 1; t < n; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else
			par_run(&job[t]);
	}
}

void ana_par_for(size_t n, unsigned threads, ana_par_fn fn, void *ctx)
{
	if (threads > PAR_MAXT)
		threads = PAR_MAXT;
	if (threads <= 1 || n < PAR_MIN) {
		fn(ctx, 0, n);
		return;
	}
	struct par_job job[PAR_MAXT];
	for (unsigned t = 0; t < threads; t++)
		job[t] = (struct par_job){ fn, ctx, n * t / threads, n * (t + 1) / threads };
	par_spawn(job, threads);
}

void ana_par_tasks(unsigned ntasks, ana_par_fn fn, void *ctx)
{
	struct par_job job[PAR_MAXT];
	if (ntasks > PAR_MAXT)
		ntasks = PAR_MAXT;
	for (unsigned t = 0; t < ntasks; t++)
		job[t] = (struct par_job){ fn, ctx, t, t + 1 };
	if (ntasks)
		par_spawn(job, ntasks);
}

struct par_zap { uintptr_t a, b; unsigned n; };

static void par_zap_task(void *ctx, size_t t, size_t t1)
{
	(void)t1;
	const struct par_zap *z = ctx;
	uintptr_t pg = 4096, len = z->b - z->a;
	uintptr_t a = (z->a + len * t / z->n) & ~(pg - 1);
	uintptr_t b = (z->a + len * (t + 1) / z->n) & ~(pg - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
}

void ana_par_zap(void *p, size_t len, unsigned threads)
{
	uintptr_t pg = 4096;
	struct par_zap z = { ((uintptr_t)p + pg - 1) & ~(pg - 1), ((uintptr_t)p + len) & ~(pg - 1),
			     threads > PAR_MAXT ? PAR_MAXT : threads ? threads : 1 };
	if (z.b <= z.a)
		return;
	if (z.n > 1 && z.b - z.a >= ((size_t)PAR_MIN << 6))
		ana_par_tasks(z.n, par_zap_task, &z);
	else
		par_zap_task(&z, 0, 1);
}
