/* Helpers the REC-CORE families share: choosing tp_btf or raw_tp for each
 * tracepoint (both variants live in one object, the loser is switched off
 * with bpf_program__set_autoload), attaching with every result reported
 * through rec_probe(), and reading per-CPU map values. */
#ifndef NP_REC_RCBPF_H
#define NP_REC_RCBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>
#include "family.h"
#include "hookhub.h"

struct rc_tp {
	const char *name;             /* tracepoint, e.g. "sock_send_length" */
	struct bpf_program *btf_prog; /* SEC("tp_btf/NAME"), may be NULL */
	struct bpf_program *raw_prog; /* SEC("raw_tp/NAME"), may be NULL */
	bool required;                /* family off without it */
	enum hub_hook hub_hook;       /* HUB_NONE, or the tp_btf variant joins the hub */
	unsigned hub_slot;
	struct bpf_map *hub_map;      /* the object's copy of the hook's prog array */
	bool present;                 /* filled: tracepoint exists */
	struct hub_member hub;        /* filled by rc_tp_select / rc_tp_attach */
	struct bpf_link *link;        /* filled by rc_tp_attach */
};

/* Marks which variant loads: tp_btf unless use_raw; neither when the
 * kernel has no such tracepoint. Returns -ENOENT when a required one is
 * missing (err filled). */
/* NPREC_TEST_FORCE_RAW_TP=1: the raw_tp variants even where tp_btf works
 * (tests of the fallback on kernels that accept tp_btf); a family whose
 * choices depend on the variant asks before rc_tp_select. */
bool rc_tp_raw_forced(void);
int  rc_tp_select(struct rec_ctx *ctx, const char *family, struct rc_tp *tps, size_t n,
		  bool use_raw, char *err, size_t errlen);
/* Attaches the selected variants; returns -errno when a required one fails. */
int  rc_tp_attach(struct rec_ctx *ctx, const char *family, struct rc_tp *tps, size_t n,
		  bool use_raw, char *err, size_t errlen);
void rc_tp_detach(struct rc_tp *tps, size_t n);

/* Possible CPUs (the per-CPU map value count). */
int  rc_ncpus(void);
/* Value size rounded as the kernel lays out per-CPU values. */
static inline size_t rc_pcpu_stride(size_t valsz) { return (valsz + 7) & ~(size_t)7; }

/* All keys of a hash map, each once: the walk with bpf_map_get_next_key
 * restarts from the first key when the current one disappears (deleted,
 * LRU-evicted), so keys are collected and de-duplicated first and the
 * caller looks up / deletes afterwards. *keys is malloc'd (free it).
 * 0 or -ENOMEM. */
int  rc_map_keys(int fd, size_t keysz, void **keys, size_t *n);

/* Per-CPU hash maps preallocate max_entries x ncpus values: on a host with
 * many CPUs the defaults (sized for a few cores) would pin hundreds of MB.
 * Caps max_entries so the map stays within RC_PCPU_MAP_BUDGET bytes (and
 * at least 1024 entries). Call between NAME__open() and NAME__load(). */
#define RC_PCPU_MAP_BUDGET (32u << 20)
void rc_size_pcpu_map(struct bpf_map *m, int ncpus);

/* One pass of the BPF iterator behind link (its programs run for every
 * element; their output, if any, is discarded). 0 or -errno. */
int rc_iter_run(struct bpf_link *link);
/* prog attached as an iterator over the elements of map (a
 * BPF_MAP_TYPE_SK_STORAGE: one socket each). NULL with errno set. */
struct bpf_link *rc_iter_attach_sk_storage(struct bpf_program *prog, const struct bpf_map *map);

/* Shared vmlinux BTF (loaded once, never freed before exit). */
const struct btf *rc_vmlinux_btf(void);
/* Name of enumerator val of enum ename ("SKB_DROP_REASON_NETFILTER_DROP"
 * with prefix stripped when it matches). NULL if unknown. */
const char *rc_btf_enum_name(const char *ename, long long val, const char *strip_prefix);


/* "10.0.0.1" for v4-mapped addresses, else IPv6 text. buf >= 46 bytes. */
void rc_format_addr(const uint32_t a[4], char *buf, size_t n);
#include <msgpack.h>
/* Column of strings: key then [s0, s1, ...]; strings are at base + i*stride. */
void rc_pack_kv_strcol(msgpack_packer *pk, const char *key, const char *base, size_t stride, size_t n);

#endif
