/* NET_RX softirq breakdown categories (netto §4.3.2 / §5.3, Algorithm 1):
 * a sampled kernel stack is charged to the category of its deepest frame
 * (closest to the leaf) whose function name matches a category rule, so
 * helpers (memcpy, kfree_skb ...) are charged to the subsystem that called
 * them. The category names are stored in recordings. */
#ifndef NP_REC_NETRXCAT_H
#define NP_REC_NETRXCAT_H

#include <stddef.h>
#include <stdint.h>
#include "ksyms.h"

enum nc_cat {
	NC_CAT_DRIVER = 0,   /* NAPI poll of the device driver */
	NC_CAT_GRO,          /* generic receive offload */
	NC_CAT_TC,           /* traffic control classifiers/actions, tcx */
	NC_CAT_NETFILTER,    /* netfilter hooks, iptables/nftables, conntrack */
	NC_CAT_BRIDGE,       /* software bridge */
	NC_CAT_FORWARD,      /* IP forwarding */
	NC_CAT_IP,           /* IP receive and local delivery */
	NC_CAT_TRANSPORT,    /* TCP / UDP */
	NC_CAT_SOCKET,       /* socket queueing and wakeups */
	NC_CAT_XMIT,         /* transmissions done inside NET_RX (acks, forwarded) */
	NC_CAT_OTHER,        /* nothing matched */
	NC_CAT_MAX,
};

const char *nc_cat_name(int cat);

/* Category of one function name (".isra.0"-style suffixes ignored), or -1. */
int nc_cat_of_symbol(const char *name);

/* Category of a stack of instruction pointers, ips[0] innermost. A frame
 * called directly by __napi_poll/napi_poll counts as driver poll when its
 * name matches nothing else. Frames that do not resolve are skipped;
 * NC_CAT_OTHER when nothing matches. *leaf (optional) gets the innermost
 * resolved name. */
int nc_cat_of_stack(const struct ksyms *k, const uint64_t *ips, size_t n, const char **leaf);

/* A stack taken by the tick source (tp_btf/hrtimer_expire_entry) starts
 * with the timer interrupt's own frames (the BPF trampoline, the hrtimer
 * code, the interrupt entry) above the interrupted context. Cuts ips[]
 * after the innermost interrupt entry frame (asm_sysvec_*,
 * asm_common_interrupt), so ips[0] becomes the interrupted IP as in a
 * perf_event sample; zero-fills the tail. Returns the frames removed, 0
 * (stack unchanged) when no such frame resolves. */
size_t nc_strip_irq_frames(const struct ksyms *k, uint64_t *ips, size_t n);

#endif
