/* Chunks decoded ahead of the reader (see ana_read.h).
 *
 * Workers follow the chain of chunk headers from where the reader last
 * asked (each chunk's length gives the next one's offset), so files without
 * a chunk index are read ahead too. Slots are handed out in offset order
 * and taken by the reader in the same order; a slot whose chunk the reader
 * does not ask for (it resynchronised past damage) is dropped, and a
 * request the queue does not hold restarts the chain there. A chunk the
 * workers found damaged is left to the reader, which reports it as it
 * always did. While the chunk it asks for is still being decoded, the
 * reader decodes the next one itself (ar_run_next, as a worker would). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "ana_read.h"
#include "ana_par.h"

#define AR_PER_WORKER 2          /* decoded chunks waiting per worker */
#define AR_READER 2              /* and for the reader's own decoding (unbounded memory only) */

enum ar_state { AR_BUSY, AR_GOOD, AR_BAD };

struct ar_slot {
	uint64_t off;
	struct np_chunkbuf cb;       /* the decoded payload */
	enum ar_state state;
};

struct ana_read {
	struct np_reader *r;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th[ANA_PAR_MAXT];
	unsigned nth;
	struct ar_slot *ring;
	size_t depth;
	uint64_t head, tail;         /* slots [head, tail) handed out, counters */
	uint64_t next_off;           /* next chunk to hand out; 0: none known */
	uint8_t *pop;                /* pages to make present when idle (ana_read_populate) */
	size_t npop;
	bool stop;
};

/* Whether a chunk can be handed out (mu held). */
static bool ar_can_start(const struct ana_read *a)
{
	return a->tail - a->head < a->depth && a->next_off;
}

/* Decodes the next chunk into a fresh slot (mu held, released while
 * decoding). Run by the workers, and by the reader instead of waiting for
 * a worker to finish an earlier chunk: with N threads the reader is one of
 * them, so no core idles while a chunk can be started. */
static void ar_run_next(struct ana_read *a)
{
	struct ar_slot *s = &a->ring[a->tail++ % a->depth];
	s->off = a->next_off;
	s->state = AR_BUSY;
	a->next_off = np_reader_next_chunk(a->r, s->off);
	if (a->next_off)
		pthread_cond_broadcast(&a->cv);  /* another worker can start the next */
	pthread_mutex_unlock(&a->mu);
	int rc = np_reader_decode_at(a->r, s->off, &s->cb);
	pthread_mutex_lock(&a->mu);
	s->state = rc == 0 ? AR_GOOD : AR_BAD;
	pthread_cond_broadcast(&a->cv);
}

static void *ar_worker(void *arg)
{
	struct ana_read *a = arg;
	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->stop && !ar_can_start(a) && !a->npop)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop)
			break;
		if (ar_can_start(a)) {
			ar_run_next(a);
			continue;
		}
		uint8_t *p = a->pop;     /* nothing to decode: the reader's next pages */
		size_t n = a->npop;
		a->npop = 0;
		pthread_mutex_unlock(&a->mu);
		(void)madvise(p, n, MADV_POPULATE_WRITE);   /* Linux 5.14; else pages fault in */
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* The head slot once no worker writes it (mu held). help: the reader
 * wants this chunk, and decodes later ones meanwhile (not when it passes
 * slots over: what it would start there may be dropped too). */
static struct ar_slot *ar_head(struct ana_read *a, bool help)
{
	struct ar_slot *s = &a->ring[a->head % a->depth];
	while (s->state == AR_BUSY) {
		if (help && ar_can_start(a))
			ar_run_next(a);
		else
			pthread_cond_wait(&a->cv, &a->mu);
	}
	return s;
}

/* np_prefetch_fn: the payload at off if a worker decoded it. */
static int ar_take(void *ctx, uint64_t off, struct np_chunkbuf *cb)
{
	struct ana_read *a = ctx;
	int got = 0;
	pthread_mutex_lock(&a->mu);
	while (a->head < a->tail && a->ring[a->head % a->depth].off < off) {
		ar_head(a, false);       /* passed over by the reader */
		a->head++;
	}
	if (a->head < a->tail && a->ring[a->head % a->depth].off == off) {
		struct ar_slot *s = ar_head(a, true);
		if (s->state == AR_GOOD) {
			struct np_chunkbuf old = *cb;
			*cb = s->cb;
			s->cb = old;         /* the reader's old buffers are reused */
			got = 1;
		}
		a->head++;
	} else {
		/* not handed out: drop what is (all beyond off) and go on
		 * from the chunk after off, which the reader decodes itself */
		while (a->head < a->tail) {
			ar_head(a, false);
			a->head++;
		}
		a->next_off = np_reader_next_chunk(a->r, off);
	}
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return got;
}

struct ana_read *ana_read_new(struct np_reader *r, unsigned workers, bool bounded)
{
	if (workers < 1)
		return NULL;
	if (workers > ANA_PAR_MAXT)
		workers = ANA_PAR_MAXT;
	struct ana_read *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->r = r;
	a->depth = (size_t)AR_PER_WORKER * workers + (bounded ? 0 : AR_READER);
	a->ring = calloc(a->depth, sizeof(*a->ring));
	if (!a->ring) {
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	for (unsigned i = 0; i < workers; i++) {
		if (pthread_create(&a->th[i], NULL, ar_worker, a))
			break;
		a->nth++;
	}
	if (!a->nth) {
		ana_read_free(a);
		return NULL;
	}
	np_reader_set_prefetch(r, ar_take, a);
	return a;
}

void ana_read_populate(struct ana_read *a, void *p, size_t n)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	if (a->npop && a->pop + a->npop == (uint8_t *)p)
		a->npop += n;            /* the pending range goes on: no hole left */
	else {
		a->pop = p;
		a->npop = n;
	}
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void ana_read_free(struct ana_read *a)
{
	if (!a)
		return;
	np_reader_set_prefetch(a->r, NULL, NULL);
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	for (unsigned i = 0; i < a->nth; i++)
		pthread_join(a->th[i], NULL);
	for (size_t i = 0; i < a->depth; i++)
		np_chunkbuf_free(&a->ring[i].cb);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a->ring);
	free(a);
}
