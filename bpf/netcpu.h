/* Network CPU cost (netto thesis ch. 4-5): types shared by bpf/netcpu.bpf.c
 * and record/families/netcpu.c. Include <linux/types.h> (user space) or vmlinux.h
 * (BPF) first. docs/NETCPU.md explains the method, docs/records/
 * netcpu-threads.md the record bodies. */
#ifndef NP_NETCPU_H
#define NP_NETCPU_H

/* Measured classes. Stored in recordings by name, the numbers are internal. */
enum nc_class {
	NC_NET_RX = 0,      /* NET_RX softirq */
	NC_NET_TX = 1,      /* NET_TX softirq */
	NC_SOCK_SEND = 2,   /* socket send syscalls, on-CPU only */
	NC_SOCK_RECV = 3,   /* socket receive syscalls, on-CPU only */
	NC_CLASS_MAX = 4,
};

/* softirq vector numbers (include/linux/interrupt.h) */
#define NC_VEC_NET_TX 2
#define NC_VEC_NET_RX 3

/* vector of a sampled softirq, told by its action on the stack */
enum nc_sirq_vec {
	NC_SV_RX = 0,       /* net_rx_action on the stack */
	NC_SV_TX = 1,       /* net_tx_action on the stack */
	NC_SV_OTHER = 2,    /* another vector, or neither found in the frames taken */
	NC_SV_MAX = 3,
};

#define NC_STACK_DEPTH 64      /* frames kept per sampled stack */

/* Per-CPU monotonic counters, the CPU's softirq clock and the socket-op
 * slot of its current task. User space reads the counters every interval
 * and stores differences: no reset, no race. */
struct nc_cpu {
	__u64 ns[NC_CLASS_MAX];     /* on-CPU ns per class since load */
	__u64 n[NC_CLASS_MAX];      /* completed invocations per class */
	__u64 ns_remote[NC_CLASS_MAX]; /* op ns that ran here, charged by the CPU
				     * the op completed on (atomic adds only);
				     * user space adds it to ns[] */
	__u64 sirq_ts;              /* entry ts of the running softirq, 0 if none */
	__u32 sirq_vec;
	__u32 pad0;
	__u64 samples;              /* samples (tick or cpu-clock) seen on this CPU */
	__u64 samples_netrx;        /* ... of which inside NET_RX */
	__u64 stack_lost;           /* NET_RX samples whose stack was not counted:
				     * walk failed, or the count map full */
	__u64 nested_ns;            /* NET_RX/TX ns taken out of socket ops */
	/* the op (possibly) in flight of the current task: stamped at syscall
	 * entry, charged at sock_*_length; op_tid 0 = none */
	__u64 op_ts;                /* start of its current on-CPU stretch, 0 under a softirq */
	__u64 op_acc;               /* its ns on this CPU before op_ts */
	__u64 op_rns;               /* its ns on CPU op_rcpu - 1 */
	__u64 op_nested;            /* NET_RX/TX ns taken out of it */
	__u32 op_tid;
	__u32 op_nr;                /* syscall nr (matched against orig_ax) */
	__u32 op_rcpu;              /* 1 + the other CPU it ran on, 0 if none */
	__u32 op_flags;
	__u32 op_fd;                /* first syscall argument */
	__u32 pad1;
	__u64 op_start;             /* ktime of its syscall entry */
	/* the op that completed last on this CPU, until the next stamp: txn
	 * takes a client request's start from here or from op_start
	 * (bpf/txn.bpf.c, req_start) */
	__u64 last_start;
	__u32 last_tid, last_nr;
	/* sampled socket time (--netcpu sample, the default; counted in
	 * exact mode too, as its cross-check): samples that found this CPU's
	 * task inside a send / receive syscall on a socket, outside any
	 * softirq. x samples = x sampling periods of on-CPU time. */
	__u64 smp_sock[2];          /* [0] send, [1] receive */
	__u32 sirq_any;             /* 1 while any softirq runs on this CPU (exact pair only) */
	__u32 pad2;
	/* sampled softirq time (the same timer as smp_sock): samples that
	 * found this CPU serving a softirq (preempt_count), by the vector
	 * action on the interrupted stack. The estimate at --netcpu sample,
	 * the exact pair's cross-check otherwise. */
	__u64 smp_sirq[NC_SV_MAX];
	__u64 smp_rx_probe;         /* exact mode: samples in the pair's NET_RX
				     * window that the walk put outside
				     * net_rx_action (the pair's own programs) */
	__u64 smp_rx_stray;         /* exact mode: walk in net_rx_action outside
				     * the pair's window (should stay 0) */
	__u64 smp_sock_cut[2];      /* socket samples left out: the walk did not
				     * reach do_syscall_64 (bpf/netcpu.bpf.c
				     * nc_walk_reaches_entry) */
	__u64 smp_sirq_missed;      /* exact mode: a softirq runs (the pair) but
				     * the walk found none */
	__u64 smp_pc_unknown;       /* samples whose preempt_count could not be
				     * read (bpf/netcpu.bpf.c nc_pc_softirq) */
	__u64 smp_sock_probe[2];    /* exact mode: socket samples left out as a
				     * tracer's (or cut) while the exact clock
				     * ran for the task: its own probes' time */
	__u64 smp_sock_outside[2];  /* exact mode: socket samples (counted in
				     * smp_sock) while the exact clock did not
				     * run for the task: the syscall's tail
				     * after sock_*_length, lost exact time */
	/* remote socket sampler (bpf/netcpu.bpf.c nc_sock_sample_remote):
	 * this CPU's runqueue, published by its own timer's program for the
	 * other CPUs' timers (0 = not yet); its smp_sock, smp_sock_probe and
	 * smp_sock_outside then count the state of the CPU it samples */
	__u64 rq_addr;
	__u64 ptr_tmp;              /* a pointer's value through memory (the
				     * verifier allows no arithmetic on it) */
	__u64 smp_remote_unknown;   /* remote samples not taken: the target's
				     * runqueue not yet published */
	/* the combined estimate (remote sampler): this CPU's own samples of
	 * its task inside a socket call under a softirq (the call total is
	 * smp_sock + these), and the remote samples of the CPU this one
	 * samples, inside a socket call outside / under a softirq (their
	 * split is the call's) */
	__u64 smp_sock_sirq[2];
	__u64 smp_rsock[2];
	__u64 smp_rsirq[2];
	__u64 smp_rpc_sirq[2];      /* remote samples in the call whose
				     * preempt_count says softirq (exact mode:
				     * against the pair's smp_rsirq, the pair's
				     * own cost and the softirq loop's) */
	__u64 unclocked[2];         /* exact mode: send / receive calls of the
				     * recorded processes that reached
				     * sock_*_length without a stamp of their
				     * own (a call the syscall hooks do not list,
				     * sendfile or splice, or a stamp the kernel
				     * skipped or a switch lost): in no
				     * n[]/ns[], counted so they are not silent */
};

/* A socket op whose task was switched out (task storage, created on the
 * first park of the task): the slot's fields until it runs again. */
struct nc_task {
	__u64 acc;                  /* ns on CPU `cpu` */
	__u64 rns;                  /* ns on CPU rcpu - 1 */
	__u64 nested;
	__u32 nr;
	__u32 flags;
	__u32 cpu;
	__u32 rcpu;
	__u32 parked;               /* 1 while it holds an op */
	__u32 pad;
	__u64 start;                /* its syscall entry (nc_cpu.op_start) */
};

/* Key of the sampled-stack count map: the stack itself (the walk the
 * sampler already took, cut after net_rx_action's frame and zero-filled),
 * so no stack map with its bucket collisions sits in between. The user
 * side flips `slot` every interval and drains the other one (deep-mon's
 * selector). bpf/netcpu.bpf.c's struct nc_walk starts with this layout. */
struct nc_stack_key {
	__u32 cpu;
	__u32 slot;
	__u64 ips[NC_STACK_DEPTH];  /* ips[0] innermost, 0 after the last */
};

#endif
