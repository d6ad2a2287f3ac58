/* Flight-recorder ring of built chunks (see flightring.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flightring.h"

void flightring_init(struct flightring *r, uint64_t window_ns, uint64_t window_bytes,
		     uint64_t interval_ns, uint64_t max_mem)
{
	memset(r, 0, sizeof(*r));
	r->window_ns = window_ns;
	r->window_bytes = window_bytes;
	r->interval_ns = interval_ns;
	r->max_mem = max_mem;
}

static struct flightring_slot *fr_at(const struct flightring *r, size_t i)
{
	return &r->slot[(r->head + i) % r->cap];
}

const struct flightring_slot *flightring_at(const struct flightring *r, size_t i)
{
	return fr_at(r, i);
}

static void fr_pop(struct flightring *r)
{
	struct flightring_slot *s = fr_at(r, 0);
	r->bytes -= s->c.len;
	np_chunk_free(&s->c);
	r->head = (r->head + 1) % r->cap;
	r->n--;
}

static int fr_grow(struct flightring *r)
{
	size_t ncap = r->cap ? r->cap * 2 : 64;
	struct flightring_slot *ns = malloc(ncap * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		ns[i] = *fr_at(r, i);
	free(r->slot);
	r->slot = ns;
	r->cap = ncap;
	r->head = 0;
	return 0;
}

/* Drops the oldest chunks the window no longer needs. */
static void fr_trim(struct flightring *r)
{
	while (r->n > 1) {
		if (r->window_bytes) {
			if (r->bytes <= r->window_bytes)
				break;
		} else {
			uint64_t keep = r->window_ns + r->interval_ns;
			uint64_t newest = fr_at(r, r->n - 1)->t_end;
			uint64_t from = newest > keep ? newest - keep : 0;
			bool covered_without_oldest = fr_at(r, 1)->t_start <= from;
			if (!covered_without_oldest) {
				if (!r->max_mem || r->bytes <= r->max_mem)
					break;
				r->dropped_mem++;
			}
		}
		fr_pop(r);
	}
}

int flightring_push(struct flightring *r, struct np_chunk *c, uint64_t t_start, uint64_t t_end)
{
	if (r->n == r->cap && fr_grow(r) < 0) {
		np_chunk_free(c);
		return -ENOMEM;
	}
	struct flightring_slot *s = &r->slot[(r->head + r->n) % r->cap];
	s->c = *c;
	s->t_start = t_start;
	s->t_end = t_end;
	memset(c, 0, sizeof(*c));
	r->n++;
	r->bytes += s->c.len;
	fr_trim(r);
	return 0;
}

size_t flightring_first_for(const struct flightring *r, uint64_t t)
{
	size_t from = 0;
	while (r->window_ns && from + 1 < r->n && fr_at(r, from + 1)->t_start + r->window_ns <= t)
		from++;
	return from;
}

void flightring_free(struct flightring *r)
{
	while (r->n)
		fr_pop(r);
	free(r->slot);
	r->slot = NULL;
	r->cap = r->head = 0;
	r->bytes = 0;
}
