// SPDX-License-Identifier: GPL-2.0
/* Test object of tests/unit/rtest_progtab.c: a tp_btf program the kernel
 * skips (and counts, bpf_prog_info.recursion_misses) a run of on purpose.
 * On a page fault the test process takes in kernel mode it reads a user
 * address that faults (bpf_probe_read_user runs with page faults
 * disabled): that fault hits the same tracepoint while the program runs,
 * so the kernel skips the nested run and counts it. `nested` counts the
 * reads that faulted: recursion_misses must equal it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 rt_tgid = 0;
const volatile __u64 rt_bad_addr = 0;
__u64 rt_runs = 0, rt_nested = 0;

SEC("tp_btf/page_fault_kernel")
int rt_recursion_fault(__u64 *ctx)
{
	char v;

	(void)ctx;
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != rt_tgid)
		return 0;
	__sync_fetch_and_add(&rt_runs, 1);
	if (bpf_probe_read_user(&v, 1, (void *)rt_bad_addr) < 0)
		__sync_fetch_and_add(&rt_nested, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
