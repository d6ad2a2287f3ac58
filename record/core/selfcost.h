/* nprec's own cost (--max-cpu, and the self-cost fields of every INTERVAL
 * record): CPU time of the recorder process and its memory, and the
 * controller that raises the packet-path sampling divisor when the recorder
 * costs more CPU than allowed. CPU spent by BPF programs runs in the context
 * of the traced tasks and softirqs, not in nprec's process: it is not in
 * these figures. */
#ifndef NP_REC_SELFCOST_H
#define NP_REC_SELFCOST_H

#include <stdbool.h>
#include <stdint.h>
#include <msgpack.h>

struct rec_selfcost {
	uint64_t t_mono_ns;        /* time of the last sample */
	uint64_t utime_ns, stime_ns;   /* process totals at the last sample */
	double cpu_pct;            /* since the previous sample; 100 = one core */
	uint64_t rss_bytes;        /* resident set now */
	uint64_t maxrss_bytes;     /* peak resident set */
	int statm_fd;              /* /proc/self/statm, kept open: -1 when it could not be */
	long page;
};

/* Opens /proc/self/statm for the life of the process (before a privilege
 * drop: the descriptor stays readable), and takes the first sample. */
void rec_selfcost_init(struct rec_selfcost *s);
/* Reads the counters; cpu_pct covers the time since the previous call. */
void rec_selfcost_sample(struct rec_selfcost *s);
/* Packs REC_SELFCOST_NKEYS key/value pairs into a map the caller opened:
 * self_cpu_pct, self_utime_ns, self_stime_ns, self_rss_bytes, self_maxrss_bytes. */
#define REC_SELFCOST_NKEYS 5
void rec_selfcost_pack(msgpack_packer *pk, const struct rec_selfcost *s);

/* --max-cpu: doubles the sampling divisor while the recorder is over budget,
 * halves it back after REC_RATECTL_CALM intervals under half the budget. */
#define REC_RATECTL_CALM    3
#define REC_RATECTL_MAX_DIV 4096u
struct rec_ratectl {
	double max_pct;            /* 0 = no limit: divisor stays base_div */
	uint32_t base_div;         /* the --sample 1/N the user asked for */
	uint32_t div;              /* divisor in force */
	uint32_t prev_div;         /* divisor before the last update */
	unsigned calm;
	uint64_t changes;          /* number of changes since start */
};

void rec_ratectl_init(struct rec_ratectl *r, double max_cpu_pct, uint32_t base_div);
/* Feeds one interval's measured CPU; returns the divisor to use from now on
 * (sample 1 packet in N). r->div != r->prev_div tells that it changed. */
uint32_t rec_ratectl_update(struct rec_ratectl *r, double cpu_pct);
/* Packs REC_RATECTL_NKEYS pairs: sample_div, sample_div_prev, sample_div_changes.
 * A reader sees a change of rate where sample_div != sample_div_prev. */
#define REC_RATECTL_NKEYS 3
void rec_ratectl_pack(msgpack_packer *pk, const struct rec_ratectl *r);

#endif
