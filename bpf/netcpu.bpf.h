/* netcpu's per-CPU counters and socket-op slots (struct nc_cpu), the one
 * map of that family another object uses too: txn reads a client
 * request's start from it, and user space makes netcpu's object reuse
 * txn's copy (record/families/txn.c, record/families/netcpu.c). Include vmlinux.h,
 * bpf_helpers.h and netcpu.h first. */
#ifndef NP_BPF_NETCPU_BPF_H
#define NP_BPF_NETCPU_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nc_cpu);
} nc_cpus SEC(".maps");

#endif
