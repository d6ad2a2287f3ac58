/* What the kernel's BTF says about the flows family's tracepoints, where
 * their arguments changed between kernel versions. */
#ifndef NP_FLOWSBTF_H
#define NP_FLOWSBTF_H

#include <stdbool.h>
#include <bpf/btf.h>

/* tcp:tcp_retransmit_skb(sk, skb, int err): the tracepoint has its err
 * argument (it then fires for failed attempts too). False without BTF or
 * with the two-argument prototype of older kernels. */
bool rc_flows_retrans_has_err(const struct btf *btf);

#endif
