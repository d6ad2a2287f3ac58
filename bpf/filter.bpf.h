/* Kernel-side filters shared by the recorder families (--netns, --port,
 * --host, --pid, --cgroup). Include it after vmlinux.h and the libbpf
 * headers in NAME.bpf.c; it defines read-only globals that user space sets
 * before load with RC_FILTER_SET(skel->rodata, cfg) from record/core/rcfilter.h.
 *
 * All filters default to "pass". A filter that is set must match:
 *   rc_filter_netns(ino)          network namespace inode (--netns)
 *   rc_filter_ports(sport, dport) either port, host byte order (--port)
 *   rc_filter_hosts(a, b)         either address, 16 bytes v6 or v4-mapped (--host)
 *   rc_filter_task()              current tgid and cgroup (--pid, --cgroup);
 *                                 only meaningful in process context
 *   rc_filter_sk(sk)              netns + ports + hosts + the socket's own
 *                                 cgroup: usable in softirq context too
 *   rc_filter_sk_task(sk)         rc_filter_sk + current tgid, for hooks that
 *                                 run in the socket owner's context
 *   rc_filter_tuple(netns, la, ra, lp, rp), rc_filter_sk_cgroup(sk): the
 *                                 same split, for callers that read the tuple
 * rc_sk_netns_ino(sk), rc_sk_cgroup_id(sk) and rc_sk_addrs(sk, ...) are the
 * CO-RE reads the filters use; families may use them too. Every read goes
 * through BPF_CORE_READ so the same code works in tp_btf and raw_tp programs.
 */
#ifndef NP_BPF_FILTER_H
#define NP_BPF_FILTER_H

#define RC_FILTER_MAX 16

const volatile __u64 rc_filter_netns_ino = 0;
const volatile __u64 rc_filter_cgroup_id = 0;
const volatile __u32 rc_filter_nports = 0;
const volatile __u16 rc_filter_ports_v[RC_FILTER_MAX] = {};
const volatile __u32 rc_filter_npids = 0;
const volatile __u32 rc_filter_pids_v[RC_FILTER_MAX] = {};
const volatile __u32 rc_filter_nhosts = 0;
const volatile __u32 rc_filter_hosts_v[RC_FILTER_MAX][4] = {};

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

static __always_inline __u64 rc_sk_netns_ino(const struct sock *sk)
{
	return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
}

/* The cgroup (v2) the socket was created in; 0 if unknown. */
static __always_inline __u64 rc_sk_cgroup_id(const struct sock *sk)
{
	struct cgroup *cg = BPF_CORE_READ(sk, sk_cgrp_data.cgroup);
	if (!cg)
		return 0;
	return BPF_CORE_READ(cg, kn, id);
}

/* Local and remote address as 16 bytes (v4 mapped into v6: ::ffff:a.b.c.d),
 * ports in host order. Returns the address family, 0 if not INET. */
static __always_inline int rc_sk_addrs(const struct sock *sk, __u32 laddr[4], __u32 raddr[4],
				       __u16 *lport, __u16 *rport)
{
	__u16 fam = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (fam == AF_INET) {
		laddr[0] = 0; laddr[1] = 0; laddr[2] = bpf_htonl(0xffff);
		raddr[0] = 0; raddr[1] = 0; raddr[2] = bpf_htonl(0xffff);
		laddr[3] = BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr);
		raddr[3] = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	} else if (fam == AF_INET6) {
		/* 16 bytes: laddr/raddr are pointers here, BPF_CORE_READ_INTO
		 * would copy sizeof(*laddr) = 4 */
		bpf_core_read(laddr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
		bpf_core_read(raddr, 16, &sk->__sk_common.skc_v6_daddr);
	} else {
		return 0;
	}
	*lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	*rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	return fam;
}

/* The same reads for a tp_btf program, whose socket argument is a BTF
 * pointer: plain loads (one instruction each, faults caught by the JIT)
 * instead of one bpf_probe_read_kernel call per field, which dominated the
 * per-event cost of the send/recv hooks. btf must be a compile-time
 * constant: the raw_tp variant (no BTF pointer) must never see the direct
 * loads, and after inlining the compiler drops the dead branch. */
static __always_inline __u16 rc_sk_protocol_x(const struct sock *sk, bool btf)
{
	if (btf)
		return sk->sk_protocol;
	return BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
}

static __always_inline __u16 rc_sk_family_x(const struct sock *sk, bool btf)
{
	if (btf)
		return sk->__sk_common.skc_family;
	return BPF_CORE_READ(sk, __sk_common.skc_family);
}

static __always_inline __u64 rc_sk_netns_ino_x(const struct sock *sk, bool btf)
{
	if (btf)
		return sk->__sk_common.skc_net.net->ns.inum;
	return rc_sk_netns_ino(sk);
}

static __always_inline int rc_sk_addrs_x(const struct sock *sk, bool btf, __u32 laddr[4], __u32 raddr[4],
					 __u16 *lport, __u16 *rport)
{
	if (!btf)
		return rc_sk_addrs(sk, laddr, raddr, lport, rport);
	__u16 fam = sk->__sk_common.skc_family;
	if (fam == AF_INET) {
		laddr[0] = 0; laddr[1] = 0; laddr[2] = bpf_htonl(0xffff);
		raddr[0] = 0; raddr[1] = 0; raddr[2] = bpf_htonl(0xffff);
		laddr[3] = sk->__sk_common.skc_rcv_saddr;
		raddr[3] = sk->__sk_common.skc_daddr;
	} else if (fam == AF_INET6) {
		for (int i = 0; i < 4; i++) {
			laddr[i] = sk->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[i];
			raddr[i] = sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32[i];
		}
	} else {
		return 0;
	}
	*lport = sk->__sk_common.skc_num;
	*rport = bpf_ntohs(sk->__sk_common.skc_dport);
	return fam;
}

static __always_inline bool rc_filter_netns(__u64 ino)
{
	return !rc_filter_netns_ino || ino == rc_filter_netns_ino;
}

static __always_inline bool rc_filter_ports(__u16 a, __u16 b)
{
	if (!rc_filter_nports)
		return true;
	for (__u32 i = 0; i < RC_FILTER_MAX; i++) {
		if (i >= rc_filter_nports)
			break;
		if (rc_filter_ports_v[i] == a || rc_filter_ports_v[i] == b)
			return true;
	}
	return false;
}

static __always_inline bool rc_addr_eq(const __u32 *x, __u32 i)
{
	return x[0] == rc_filter_hosts_v[i][0] && x[1] == rc_filter_hosts_v[i][1] &&
	       x[2] == rc_filter_hosts_v[i][2] && x[3] == rc_filter_hosts_v[i][3];
}

static __always_inline bool rc_filter_hosts(const __u32 a[4], const __u32 b[4])
{
	if (!rc_filter_nhosts)
		return true;
	for (__u32 i = 0; i < RC_FILTER_MAX; i++) {
		if (i >= rc_filter_nhosts)
			break;
		if (rc_addr_eq(a, i) || rc_addr_eq(b, i))
			return true;
	}
	return false;
}

static __always_inline bool rc_filter_pid(__u32 tgid)
{
	if (!rc_filter_npids)
		return true;
	for (__u32 i = 0; i < RC_FILTER_MAX; i++) {
		if (i >= rc_filter_npids)
			break;
		if (rc_filter_pids_v[i] == tgid)
			return true;
	}
	return false;
}

static __always_inline bool rc_filter_task(void)
{
	if (rc_filter_npids && !rc_filter_pid(bpf_get_current_pid_tgid() >> 32))
		return false;
	return !rc_filter_cgroup_id || bpf_get_current_cgroup_id() == rc_filter_cgroup_id;
}

/* For callers that already read the socket's tuple. */
static __always_inline bool rc_filter_tuple(__u64 netns, const __u32 la[4], const __u32 ra[4],
					    __u16 lp, __u16 rp)
{
	return rc_filter_netns(netns) && rc_filter_ports(lp, rp) && rc_filter_hosts(la, ra);
}

/* Every read is skipped when its filter is off: this runs on hot paths. */
static __always_inline bool rc_filter_sk(const struct sock *sk)
{
	__u32 la[4], ra[4];
	__u16 lp = 0, rp = 0;
	if (rc_filter_netns_ino && !rc_filter_netns(rc_sk_netns_ino(sk)))
		return false;
	if (rc_filter_cgroup_id && rc_sk_cgroup_id(sk) != rc_filter_cgroup_id)
		return false;
	if (!rc_filter_nports && !rc_filter_nhosts)
		return true;
	if (!rc_sk_addrs(sk, la, ra, &lp, &rp))
		return false;
	return rc_filter_ports(lp, rp) && rc_filter_hosts(la, ra);
}

/* The socket's cgroup only (for callers that filter the tuple themselves). */
static __always_inline bool rc_filter_sk_cgroup(const struct sock *sk)
{
	return !rc_filter_cgroup_id || rc_sk_cgroup_id(sk) == rc_filter_cgroup_id;
}

/* The helper call only under --pid: its argument would be evaluated (a
 * helper call the verifier cannot drop) before rc_filter_pid's test. */
static __always_inline bool rc_filter_sk_task(const struct sock *sk)
{
	return (!rc_filter_npids || rc_filter_pid(bpf_get_current_pid_tgid() >> 32)) && rc_filter_sk(sk);
}

#endif
