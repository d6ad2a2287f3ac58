/* A pool of threads over independent jobs: each thread takes the next job
 * number until none is left or one failed. Jobs write only their own
 * results, so what a run computes does not depend on the thread count. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "patterns_int.h"

#define POOL_MAX 64

struct pool {
	pat_job_fn fn;
	void *ctx;
	size_t njobs, next, scratch;
	int err;
	pthread_mutex_t lock;
};

static void *pool_worker(void *arg)
{
	struct pool *p = arg;
	void *scratch = p->scratch ? malloc(p->scratch) : NULL;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		size_t k = p->next++;
		if (p->scratch && !scratch) p->err = -ENOMEM;
		bool stop = k >= p->njobs || p->err;
		pthread_mutex_unlock(&p->lock);
		if (stop) break;
		int rc = p->fn(p->ctx, k, scratch);
		if (rc) { pthread_mutex_lock(&p->lock); if (!p->err) p->err = rc; pthread_mutex_unlock(&p->lock); }
	}
	free(scratch);
	return NULL;
}

int pat_threads(const struct pat_opts *o, size_t njobs)
{
	long n = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1) n = 1;
	if ((size_t)n > njobs) n = (long)njobs;
	return n > POOL_MAX ? POOL_MAX : (int)(n ? n : 1);
}

int pat_pool_run(size_t njobs, int nthreads, size_t scratch, pat_job_fn fn, void *ctx)
{
	struct pool p = { .fn = fn, .ctx = ctx, .njobs = njobs, .scratch = scratch };
	pthread_mutex_init(&p.lock, NULL);
	pthread_t th[POOL_MAX];
	int started = 0;
	for (int t = 1; t < nthreads && t < POOL_MAX; t++)
		if (pthread_create(&th[started], NULL, pool_worker, &p) == 0) started++;
	pool_worker(&p);
	for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
	pthread_mutex_destroy(&p.lock);
	return p.err;
}
