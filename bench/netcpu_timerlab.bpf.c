// SPDX-License-Identifier: GPL-2.0
/* bench/netcpu_timerlab.sh's probe (not part of nprec): a timeline of one
 * socket call class of one process and of every softirq, plus a cpu-clock
 * timer of its own whose program logs the timer's expiry. The analysis
 * (bench/netcpu_timerlab.py) asks where the timer's expiries fall in that
 * timeline: the question behind the sampled socket time's excess on
 * iperf3 receive (docs/NETCPU.md j31d). Events go to a ring buffer without
 * wake-ups: a wake-up is an irq_work self-IPI per event, which itself
 * moved the timeline around the expiries in a first version. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

extern void *bpf_cast_to_kern_ctx(void *) __ksym;

const volatile __u32 tl_tgid = 0;      /* the process whose calls are logged */
const volatile __u32 tl_nr = 0;        /* their syscall nr (0 read, 1 write) */
const volatile __u32 tl_send = 0;      /* 1: they end at sock_send_length */

/* One event; bench/netcpu_timerlab.py reads this layout (32 bytes). */
struct tl_ev {
	__u64 ts;       /* bpf_ktime_get_ns() */
	__u64 a;        /* TL_SMP, TL_HRSTART: the timer's expiry; TL_SI*: the vector */
	__u64 b;        /* TL_HRSTART: the timer's function */
	__u32 pid;
	__u16 cpu;
	__u8 type;
	__u8 pad;
};

enum { TL_SMP = 1, TL_CALL0 = 2, TL_CALL1 = 3, TL_SI0 = 4, TL_SI1 = 5, TL_LTIMER = 6, TL_HRSTART = 7 };

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);
} tl_rb SEC(".maps");

__u64 tl_drops = 0;

static __always_inline void tl_emit(__u8 type, __u64 a, __u64 b, __u32 pid)
{
	struct tl_ev *e = bpf_ringbuf_reserve(&tl_rb, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&tl_drops, 1);
		return;
	}
	e->ts = bpf_ktime_get_ns();
	e->a = a;
	e->b = b;
	e->pid = pid;
	e->cpu = bpf_get_smp_processor_id();
	e->type = type;
	e->pad = 0;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* the expiry the hrtimer was set for: the program runs 10-50 us later on
 * the project VM (the guest is stopped from ~2 us before it) */
SEC("perf_event")
int tl_smp(struct bpf_perf_event_data *ctx)
{
	struct bpf_perf_event_data_kern *k = bpf_cast_to_kern_ctx(ctx);
	struct perf_event *ev = k->event;

	tl_emit(TL_SMP, BPF_CORE_READ(ev, hw.hrtimer.node.expires), 0,
		bpf_get_current_task_btf()->pid);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(tl_enter, struct pt_regs *regs, long id)
{
	__u64 pt = bpf_get_current_pid_tgid();

	if ((pt >> 32) == tl_tgid && id == tl_nr)
		tl_emit(TL_CALL0, id, 0, (__u32)pt);
	return 0;
}

static __always_inline void tl_call_end(int send)
{
	__u64 pt = bpf_get_current_pid_tgid();

	if ((pt >> 32) == tl_tgid && send == (int)tl_send)
		tl_emit(TL_CALL1, 0, 0, (__u32)pt);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(tl_recv_len, struct sock *sk, int ret, int flags)
{
	tl_call_end(0);
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(tl_send_len, struct sock *sk, int ret, int flags)
{
	tl_call_end(1);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(tl_si0, unsigned int vec)
{
	tl_emit(TL_SI0, vec, 0, 0);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(tl_si1, unsigned int vec)
{
	tl_emit(TL_SI1, vec, 0, 0);
	return 0;
}

SEC("tp_btf/local_timer_entry")
int BPF_PROG(tl_ltimer, int vector)
{
	tl_emit(TL_LTIMER, 0, 0, 0);
	return 0;
}

/* Every hrtimer armed: one whose expiry comes before the CPU's next timer
 * event makes the guest rewrite its TSC deadline, which costs ~13 us on
 * the project VM (a VM exit) against ~0.4 us otherwise, and just before
 * the probe's own expiry that expiry is the next event (docs/NETCPU.md
 * j31d: TCP's pacing timers, armed in the receive calls' softirqs). */
SEC("tp_btf/hrtimer_start")
int BPF_PROG(tl_hrstart, struct hrtimer *t, enum hrtimer_mode mode)
{
	tl_emit(TL_HRSTART, BPF_CORE_READ(t, node.expires), (__u64)BPF_CORE_READ(t, function), 0);
	return 0;
}
