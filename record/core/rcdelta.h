/* A small open-addressing table (fixed key and value sizes) that keeps the
 * previous cumulative values of per-CPU map entries, so a snapshot emits
 * per-interval deltas without ever resetting the kernel's counters (no
 * update is lost between reads). Rebuilt every snapshot: entries that are
 * gone from the kernel map are gone from the table. Values are 8-byte
 * aligned. */
#ifndef NP_REC_RCDELTA_H
#define NP_REC_RCDELTA_H

#include <stddef.h>
#include <stdint.h>

struct rc_dtab {
	size_t keysz, valsz, cap, n;
	uint8_t *slots;      /* cap x (used flag, key, value), each 8-byte aligned */
	size_t slotsz;
};

int   rc_dtab_init(struct rc_dtab *t, size_t keysz, size_t valsz);
/* The same, sized for n entries: a table rebuilt every snapshot with
 * thousands of keys is not grown (and rehashed) step by step. */
int   rc_dtab_init_for(struct rc_dtab *t, size_t keysz, size_t valsz, size_t n);
void *rc_dtab_find(const struct rc_dtab *t, const void *key);
/* Returns the value slot for key (zeroed when new), NULL on ENOMEM. */
void *rc_dtab_put(struct rc_dtab *t, const void *key);
void  rc_dtab_free(struct rc_dtab *t);
/* Moves src into dst (dst freed first). */
void  rc_dtab_swap(struct rc_dtab *a, struct rc_dtab *b);

#endif
