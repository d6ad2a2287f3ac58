/* One program per tracepoint that several families hook (hookhub): the
 * hub attaches a head program once; each family's program for that
 * tracepoint sits in a slot of the hook's BPF_MAP_TYPE_PROG_ARRAY and,
 * after its own work, tail-calls the next slot that is filled. Shared by
 * the BPF objects and record/core/hookhub.c. docs/NPREC.md has why. */
#ifndef NP_BPF_HUB_H
#define NP_BPF_HUB_H

enum hub_hook {
	HUB_NONE = 0,
	HUB_SOCK_SEND,          /* sock:sock_send_length */
	HUB_SOCK_RECV,          /* sock:sock_recv_length */
	HUB_SOCK_STATE,         /* sock:inet_sock_set_state */
	HUB_SCHED_SWITCH,       /* sched:sched_switch */
	HUB_NHOOKS
};

/* Slots, in the order the members run: the order their programs ran in
 * when each attached its own (families open flows, txn, netcpu, threads),
 * so netcpu's socket-op clock still ends after the other families' work. */
#define HUB_SLOT_FLOWS   0
#define HUB_SLOT_TXN     1
#define HUB_SLOT_NETCPU  2
#define HUB_SLOT_THREADS 3
#define HUB_NSLOTS       4

#endif
