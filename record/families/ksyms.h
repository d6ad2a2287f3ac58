/* Kernel text symbols from /proc/kallsyms (or a file in that format),
 * sorted by address so an instruction pointer is matched to the function
 * that holds it by binary search (netto §5.3.2). A symbol's range ends
 * where the next symbol starts. */
#ifndef NP_REC_KSYMS_H
#define NP_REC_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* Loads text symbols (types t/T/w/W). Returns 0, -ENOENT/-EACCES from
 * open, -EPERM when every address reads 0 (kptr_restrict), -ENOMEM. */
int ksyms_load(struct ksyms **out, const char *path);
void ksyms_free(struct ksyms *k);
size_t ksyms_count(const struct ksyms *k);

/* Name of the function holding ip, or NULL when ip is below the first
 * symbol or past the last one's assumed end. *start (optional) gets the
 * symbol address. */
const char *ksyms_lookup(const struct ksyms *k, uint64_t ip, uint64_t *start);

/* Address of the text symbol called name (exact, first alias kept at
 * load), 0 when absent. A linear scan: for the few look-ups at start. */
uint64_t ksyms_addr(const struct ksyms *k, const char *name);

#endif
