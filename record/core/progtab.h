/* The program table: every BPF program nprec loaded, whichever family
 * loaded it, found among the process's file descriptors (so a family needs
 * no code for it), and the runs the kernel skipped for each
 * (bpf_prog_info.recursion_misses). The kernel skips and counts a run of a
 * tp_btf / raw_tp program that is already running on that CPU (e.g. a
 * softirq interrupting a process-context run of the same program) and,
 * since Linux 6.7, of classic tracepoint and kprobe programs nested in any
 * other such program; perf_event, TC, sock_ops and iterator programs are
 * never counted (they read 0). A hub member runs by tail call: its skipped
 * runs are its hub program's. One NP_REC_PROGS record per interval
 * (docs/records/recorder-core.md). */
#ifndef NP_REC_PROGTAB_H
#define NP_REC_PROGTAB_H

#include <stddef.h>
#include <stdint.h>
#include "container.h"

struct rec_ctx;

struct rec_prog {
	int fd;
	uint32_t id;
	uint32_t type;              /* enum bpf_prog_type */
	char name[48];              /* from the program's BTF, else the kernel's 15 characters */
	char family[24];            /* the family whose open loaded it, "hub" for the hub's */
	uint64_t missed_prev;       /* recursion_misses at the previous record */
};

struct rec_progtab {
	struct rec_prog *v;
	size_t n, cap;
};

/* Adds the programs among the process's descriptors that t does not hold
 * yet, as family's (the hub's own programs as "hub"). Call after each
 * family's open. 0 or -errno. */
int  rec_progtab_scan(struct rec_progtab *t, const struct rec_ctx *ctx, const char *family);
/* Runs the kernel skipped for the program behind fd since it loaded (0
 * when the kernel cannot say). */
uint64_t rec_prog_missed(int fd);
/* NP_REC_PROGS for t0..t1 (mono ns, already shifted): every program, its
 * skipped runs in the interval and since load. */
void rec_progtab_pack(struct rec_progtab *t, struct np_recbuf *rb, uint64_t t0, uint64_t t1);
void rec_progtab_free(struct rec_progtab *t);

#endif
