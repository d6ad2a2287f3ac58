/* Runs fn over [0, n) split into `threads` contiguous ranges, one thread
 * each (the caller's thread takes the first). For loops whose iterations
 * write disjoint outputs: the result is the same for any thread count. */
#ifndef NP_ANA_PAR_H
#define NP_ANA_PAR_H

#include <stdbool.h>
#include <stddef.h>

#define ANA_PAR_MAXT 64          /* threads at most */

typedef void (*ana_par_fn)(void *ctx, size_t lo, size_t hi);
/* Small n or threads <= 1: one call in the caller's thread. */
void ana_par_for(size_t n, unsigned threads, ana_par_fn fn, void *ctx);
/* fn(ctx, t, t + 1) for t in [0, ntasks), each on its own thread (at most 64). */
void ana_par_tasks(unsigned ntasks, ana_par_fn fn, void *ctx);
/* In task 0 of ana_par_tasks (the caller's thread): true when every other
 * task has a thread of its own, so task 0 may wait for one of them; false
 * when some run in the caller's thread after task 0 (no thread could be
 * started) or outside a task. */
bool ana_par_concurrent(void);
/* The whole pages inside [p, p + len) handed back to the kernel, a share
 * per thread (MADV_DONTNEED takes the mmap lock shared: side by side); they
 * read as zeros after. For a large array about to be freed at the end of
 * a run: the kernel frees what is still mapped at exit on one thread. */
void ana_par_zap(void *p, size_t len, unsigned threads);

#endif
