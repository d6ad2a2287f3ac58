/* One program per tracepoint that several families hook (hookhub): the
 * hub attaches a head program once; each family's program for that
 * tracepoint sits in a slot of the hook's BPF_MAP_TYPE_PROG_ARRAY and,
 * after its own work, tail-calls the next slot that is filled. Shared by
 * the BPF objects and record/core/hookhub.c. docs/NPREC.md has why. */
#ifndef NP_BPF_HUB_H
#define NP_BPF_HUB_H
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum hub_hook {
	HUB_NONE = 0,
	HUB_SOCK_SEND,          /* sock:sock_send_length */
	HUB_SOCK_RECV,          /* sock:sock_recv_length */
	HUB_SOCK_STATE,         /* sock:inet_sock_set_state */
	HUB_SCHED_SWITCH,       /* sched:sched_switch */
	HUB_NHOOKS
};

/* Slots, in the order the members run. netcpu first (issue 24): its exact
 * socket-op clock ends before the other families' programs, which are the
 * recorder's cost, not the socket call's; the sampled socket time leaves
 * every program on sock_*_length out as well (docs/NETCPU.md). txn takes a
 * request's start from netcpu's just-completed slot. */
#define HUB_SLOT_NETCPU  0
#define HUB_SLOT_FLOWS   1
#define HUB_SLOT_TXN     2
#define HUB_SLOT_THREADS 3
#define HUB_NSLOTS       4

/* The flows gate of a socket call hook (issue 24): with on set, the hub
 * starts after HUB_SLOT_FLOWS for the calls flows' program would return
 * from at once: failed calls, sockets of other families, and TCP calls
 * while want is 0, but 1 in sample drawn at random (sample a power of 2;
 * 0: none). At the defaults flows counts TCP bytes from the sockets: it
 * needs a TCP call only to name the owner of a flow claimed without one
 * (the receive gate's want counts those, and opens both gates: a server
 * that only sends is named by a send), and a receive for its 1-in-256
 * srtt/owner samples (FLOWS_RX_SAMPLE). UDP calls run every member. User space sets on only while
 * flows is in its slot and no member sits before it
 * (record/core/hookhub.c hookhub_gate). */
struct hub_gate {
	__u64 want;
	__u32 on;
	__u32 sample;
};

#endif
