/* Per-thread CPU time, context switches and hardware counters (deep-mon
 * §3.1.1): types shared by bpf/threads.bpf.c and record/families/threads.c.
 * Include <linux/types.h> (user space) or vmlinux.h (BPF) first. */
#ifndef NP_THREADS_H
#define NP_THREADS_H

#define NT_COMM_LEN 16
#define NT_MAX_THREADS 32768
#define NT_MAX_CPUS 1024

enum nt_hw {
	NT_HW_CYCLES = 0,
	NT_HW_INSTRUCTIONS = 1,
	NT_HW_CACHE_REFS = 2,
	NT_HW_CACHE_MISSES = 3,
	NT_HW_MAX = 4,
};

#define NT_F_EXITED 0x1   /* the thread exited: user space drops it after reading */

/* Cumulative per thread since the recorder started; never reset by the
 * kernel side, so user space emits differences and loses nothing. */
struct nt_thread {
	__u32 pid;                  /* tgid */
	__u32 flags;
	char comm[NT_COMM_LEN];
	__u64 cgroup_id;
	__u64 start_ns;             /* the task's start_time: with the tid, which thread */
	__u64 oncpu_ns;
	__u64 exec_last;            /* se.sum_exec_runtime when last charged */
	__u64 nvcsw;                /* switched out while blocking */
	__u64 nivcsw;               /* switched out while runnable (preempted) */
	__u64 nvcsw_last, nivcsw_last;   /* the task's own counts when last read (iterator) */
	__u64 hw[NT_HW_MAX];
	__u64 cycles_alone;         /* cycles while the sibling hyper-thread idled */
	__u64 cycles_overlap;       /* cycles while it ran a thread too */
};

/* Per CPU: who runs since when, and the counter values at that switch. */
struct nt_cpu {
	__u64 ts;                   /* ktime at switch-in: in-flight estimate only */
	__u64 exec_in;              /* the thread's se.sum_exec_runtime then */
	__u32 tid;
	__u32 pad;
	__u64 hw_last[NT_HW_MAX];
};

#endif
