/* Chunk payloads checked and decompressed on worker threads ahead of the
 * reader (npanalyze --threads): the reader still walks the file itself and
 * takes each decoded payload in its own order (np_reader_set_prefetch), so
 * records, warnings and statistics are those of a serial read. */
#ifndef NP_ANA_READ_H
#define NP_ANA_READ_H

#include <stdbool.h>
#include "container.h"

struct ana_read;

/* workers >= 1 threads decoding for r, at most 2 chunks per worker ahead of
 * it (2 more, decoded by the reader while it waits for a worker, unless
 * bounded: streamed windows and --mem count on the fewer buffers); NULL
 * when they cannot start (r then reads alone). Attaches itself to r:
 * ana_read_free before np_reader_close. */
struct ana_read *ana_read_new(struct np_reader *r, unsigned workers, bool bounded);
/* Pages [p, p + n) made present (MADV_POPULATE_WRITE) by a worker when it
 * has no chunk to start (it would wait), in place of an earlier request
 * not started (added to it when it goes on there): at --threads 2 the reading thread appends the events itself
 * and the worker is often ahead, so it clears the fresh pages the appends
 * reach next. Populating changes no data; a stale range (the array moved)
 * is harmless. NULL a is fine. */
void ana_read_populate(struct ana_read *a, void *p, size_t n);
/* Stops the workers and detaches from the reader. NULL is fine. */
void ana_read_free(struct ana_read *a);

#endif
