/* A recorder family: one BPF object (bpf/NAME.bpf.c + bpf/NAME.h) and its user
 * side (record/families/NAME.c). nprec's main loop opens every family, drains their
 * ring buffers every tick (20-100 ms) and asks each for its records at the end
 * of every snapshot interval. A family that cannot load or attach reports
 * why through rec_probe() and stays off; that never aborts the recording
 * unless the family is required by an explicit option. */
#ifndef NP_REC_FAMILY_H
#define NP_REC_FAMILY_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include "container.h"

struct rec_ctx;

struct rec_family {
	const char *name;
	/* Load and attach. Returns an enum rec_fam_open state (err says why a
	 * family is off) or -errno for a fatal error (err filled). */
	int  (*open)(struct rec_ctx *ctx, void **state, char *err, size_t errlen);
	/* Consume ring buffers; called every tick and before snapshot. */
	int  (*drain)(void *state);
	/* drain returns the records it consumed (>= 0): while every family
	 * with a drain says so and they are few, the loop sleeps longer
	 * between drains (record/nprec.c rc_next_tick) */
	bool drain_counts;
	/* Append this interval's records (aggregates read with deltas, batched
	 * events) to rb. t0/t1: the interval, mono ns (already shifted). */
	int  (*snapshot)(void *state, struct rec_ctx *ctx, struct np_recbuf *rb,
			 uint64_t t0, uint64_t t1);
	/* Lost events since open, for the progress line and LOST records. */
	uint64_t (*lost)(void *state);
	/* Events seen since open (for events/s). */
	uint64_t (*events)(void *state);
	void (*close)(void *state);
};

/* What a family's open decided; a negative value instead is -errno, an
 * error that stops nprec. */
enum rec_fam_open {
	REC_FAM_ON = 0,            /* loaded and attached (some probes may be skipped) */
	REC_FAM_OFF_OPTION = 1,    /* turned off (or not asked for) by the options */
	REC_FAM_OFF_KERNEL = 2,    /* this kernel lacks a hook the family needs */
};

/* Maps families share, published by name (the first family that loads a
 * map the next one reuses); at most REC_SHARED_MAPS. */
#define REC_SHARED_MAPS 8
struct rec_shared_map {
	const char *name;
	int fd;
};
/* 0, or -ENOSPC when the registry is full */
int rec_shared_map_put(struct rec_ctx *ctx, const char *name, int fd);
/* The fd published under name, or -1. */
int rec_shared_map_get(const struct rec_ctx *ctx, const char *name);

/* Probe status list, written into the header (and a PROBES record when it
 * changes later). */
enum rec_probe_state { REC_PROBE_ATTACHED = 1, REC_PROBE_SKIPPED = 2, REC_PROBE_FAILED = 3 };
void rec_probe(struct rec_ctx *ctx, const char *family, const char *probe,
	       enum rec_probe_state st, const char *reason);

struct rec_ctx {
	struct rec_config *cfg;
	/* filled by nprec.c */
	uint64_t start_mono_ns;
	int64_t  shift_ns;          /* cfg->test_clock_shift_ns: add to every stored ts */
	/* probe list */
	struct rec_probe_entry {
		char family[24], probe[64], reason[160];
		enum rec_probe_state st;
	} *probes;
	unsigned nprobes, probes_cap;
	bool probes_changed;
	/* maps families share (rec_shared_map_put/_get) */
	struct rec_shared_map shared_maps[REC_SHARED_MAPS];
	unsigned nshared_maps;
	/* --max-cpu: packet sampling divisor in force (1 in N), set by nprec.c
	 * before every snapshot; sampling families apply it when it changes.
	 * 0 until the first interval (use cfg->sample_n). */
	uint32_t sample_div;
	/* one program per shared tracepoint (record/core/hookhub.h), made on first
	 * use; hub_off: NPREC_TEST_NO_HUB=1 or it failed to load */
	struct hookhub *hub;
	bool hub_off;
	/* kernel filesystems found or mounted (record/core/kfs.h), for the header */
	const struct rec_kfs *kfs;
	/* set by nprec.c for the drain before END: a family's drain then
	 * empties its rings (what it cannot keep is counted lost), since they
	 * are freed at close */
	bool final_drain;
	/* drains the families opened so far (set by nprec.c; NULL in tests) */
	void (*drain_opened)(void *arg);
	void *drain_arg;
};

/* A family whose open takes long (kallsyms, a large verifier run) calls this
 * between its slow steps: the families opened before it are attached and
 * their ring buffers fill meanwhile (netcpu and threads open in 0.35-0.4 s
 * after txn on an idle machine, more under load; a loopback wrk at 25 k
 * requests/s makes ~50 k txn events/s, and txn's 4 MB ring holds ~0.6 s). */
static inline void rec_drain_opened(struct rec_ctx *ctx)
{
	if (ctx->drain_opened)
		ctx->drain_opened(ctx->drain_arg);
}

/* Families are listed in record/core/families.c (one line each). */
extern const struct rec_family *const rec_families[];

#endif
