/* Host-stack component monitoring (perfmon §4): types shared by
 * bpf/stackmon.bpf.c and record/families/stackmon.c. docs/STACKMON.md. */
#ifndef NP_STACKMON_H
#define NP_STACKMON_H

#include "npwire.h"

enum sm_comp { SM_RTT = 0, SM_RNST1 = 1, SM_CNST = 2, SM_RNST2 = 3, SM_NCOMP = 4 };
enum sm_bucket { SM_INTRA = 0, SM_INTER = 1, SM_NBUCKET = 2 };

/* TC attach points (the interface roles of perfmon Fig. 5). */
enum sm_point { SM_VETH_INGRESS = 0, SM_VETH_EGRESS = 1, SM_EXT_INGRESS = 2, SM_EXT_EGRESS = 3 };

/* A pod connection as seen on the pod's veth (before any host NAT). */
struct sm_fkey {
	__u32 paddr, raddr;       /* pod, remote (network order) */
	__u16 pport, rport;       /* host order */
};

struct sm_flow {
	__u64 f[SM_NCOMP];        /* EWMA, ns */
	__u64 n[SM_NCOMP];        /* samples */
	__u64 alerts[SM_NCOMP];
	__u64 rnst_d, rnst_da;    /* last RNST_D, RNST_DA */
	__u64 rtt_ts, da_ts;
	__u32 rtt_end, da_end;
	__u8  rtt_pending, da_pending, inter, pad;
	__u32 pad2;
};

struct sm_alert {
	__u64 ts;
	__u64 value;              /* the component's EWMA when it crossed */
	__u64 sample;             /* the packet's own value */
	__u64 threshold;
	struct sm_fkey fk;
	__u32 seq, ack;
	__u8  comp, bucket, pad[6];
};

#define SM_HIST_SLOTS (SM_NBUCKET * SM_NCOMP * NP_SK_NBUCKETS)

#endif
