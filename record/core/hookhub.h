/* The hub: one program per tracepoint that several families hook, which
 * runs their programs in turn by tail calls (bpf/hub.h). Created on first
 * use, one per rec_ctx. A family that wants to join shares the hook's prog
 * array before its object loads (hookhub_share) and puts its loaded
 * program in its slot (hookhub_join); when either fails it attaches its
 * program on its own, as without a hub. NPREC_TEST_NO_HUB=1 turns the hub off
 * (every family attaches its own programs: bench/record.sh nprec_nohub). */
#ifndef NP_REC_HOOKHUB_H
#define NP_REC_HOOKHUB_H

#include <stdbool.h>
#include <bpf/libbpf.h>
#include "family.h"
#include "hub.h"

struct hookhub;

/* Before NAME__load(): m (the family's copy of the hook's prog array)
 * becomes the hub's. Returns the hub, or NULL when there is none (off,
 * or it could not load: ctx's probe list says why, once). */
struct hookhub *hookhub_share(struct rec_ctx *ctx, enum hub_hook hook, struct bpf_map *m);
/* After load: p runs in slot; the hook's head is attached on first join.
 * 0 or -errno (the family then attaches p itself). */
int  hookhub_join(struct hookhub *h, enum hub_hook hook, unsigned slot, struct bpf_program *p);
void hookhub_leave(struct hookhub *h, enum hub_hook hook, unsigned slot);
/* Before NAME__load(): m (the family's copy of the gates, HUB_GATES_MAP)
 * becomes the hub's; false when there is no hub. */
bool hookhub_share_gates(struct rec_ctx *ctx, struct bpf_map *m);
/* After the joins: TCP calls of hook skip flows' slot while the gate's want
 * is 0, but 1 in sample (a power of 2; 0 = none) drawn at random (bpf/hub.h).
 * Refused (false) unless flows' program is in its slot and no member sits
 * before it; a later join before it, or the hook dissolving, turns the gate
 * off. */
bool hookhub_gate(struct hookhub *h, enum hub_hook hook, __u32 sample);
/* Name of the hook's tracepoint ("sock_send_length"). */
const char *hookhub_tp(enum hub_hook hook);
/* A family's place on one hook, for families that attach by hand. */
struct hub_member {
	struct hookhub *hub;    /* set by hub_member_share: map shared */
	enum hub_hook hook;
	unsigned slot;
	bool joined;
};
/* hookhub_share for m (before load). */
void hub_member_share(struct rec_ctx *ctx, struct hub_member *m, enum hub_hook hook, unsigned slot,
		      struct bpf_map *map);
/* Joins the hub with p (probe reported as "shared program (hub)");
 * false when m has no hub or the join failed. */
bool hub_member_join(struct rec_ctx *ctx, const char *family, struct hub_member *m,
		     struct bpf_program *p);
/* Joins the hub with p, else attaches p into *link. Reports the probe
 * ("tp_btf/TRACEPOINT") for family; false when neither worked. */
bool hub_member_attach(struct rec_ctx *ctx, const char *family, struct hub_member *m,
		       struct bpf_program *p, struct bpf_link **link);
void hub_member_leave(struct hub_member *m);

/* The descriptors of the hub's own programs (the heads), at most max;
 * 0 when ctx has no hub. */
size_t hookhub_prog_fds(const struct rec_ctx *ctx, int *fds, size_t max);

/* Bench aid (bench/e2e_toggle.sh): with NPREC_TEST_HUB_TOGGLE_MS=N a
 * thread detaches every attached head (so no member runs) and attaches
 * them again every N ms, and writes "CLOCK_MONOTONIC-ns 0|1" (1: attached)
 * at each switch to NPREC_TEST_HUB_TOGGLE_LOG (else stderr), so that a
 * workload's rate can be compared between adjacent windows with and
 * without the programs (NPREC_TEST_HUB_TOGGLE_HOOKS=TP[,TP]: only the
 * heads of those tracepoints, e.g. sock_send_length). Needs the
 * privileges to attach (-Z root). Start
 * once the programs are attached; stop before the families close (they
 * leave the hub). Without the variable both do nothing. */
void hookhub_toggle_start(struct rec_ctx *ctx);
void hookhub_toggle_stop(struct rec_ctx *ctx);
/* Detaches the heads and frees the hub (after every family closed). */
void hookhub_free(struct rec_ctx *ctx);

#endif
