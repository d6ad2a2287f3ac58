/* The members' side of the hub (bpf/hub.h): the hook's prog array, which
 * user space replaces by the hub's before load (bpf_map__reuse_fd), and
 * the chaining to the next member. Without a hub the array stays empty
 * and every tail call falls through. */
#ifndef NP_BPF_HUB_BPF_H
#define NP_BPF_HUB_BPF_H
#include "hub.h"

#define HUB_PROG_ARRAY(name)                                   \
	struct {                                               \
		__uint(type, BPF_MAP_TYPE_PROG_ARRAY);          \
		__uint(max_entries, HUB_NSLOTS);                \
		__type(key, __u32);                             \
		__type(value, __u32);                           \
	} name SEC(".maps")

/* A tail call returns only when the slot is empty: try each later slot.
 * Constant keys: the JIT patches them into direct jumps. */
#define HUB_NEXT(ctx, map, slot) do {                          \
	if ((slot) < 1) bpf_tail_call(ctx, &(map), 1);         \
	if ((slot) < 2) bpf_tail_call(ctx, &(map), 2);         \
	if ((slot) < 3) bpf_tail_call(ctx, &(map), 3);         \
} while (0)

/* The gates (bpf/hub.h), a struct hub_gate per hook; a member that keeps
 * a gate's want declares it too and shares the hub's (hookhub_share_gates).
 * Mappable: user space updates want atomically. */
#define HUB_GATES_MAP(name)                                    \
	struct {                                               \
		__uint(type, BPF_MAP_TYPE_ARRAY);               \
		__uint(max_entries, HUB_NHOOKS);                \
		__uint(map_flags, BPF_F_MMAPABLE);              \
		__type(key, __u32);                             \
		__type(value, struct hub_gate);                 \
	} name SEC(".maps")

#define HUB_FIRST(ctx, map) do {                               \
	bpf_tail_call(ctx, &(map), 0);                         \
	HUB_NEXT(ctx, map, 0);                                 \
} while (0)

#endif
