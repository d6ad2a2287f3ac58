#include <stdbool.h>
#include <string.h>
#include "netrxcat.h"

static const char *const nc_cat_names[NC_CAT_MAX] = {
	"driver", "gro", "tc", "netfilter", "bridge", "forward", "ip",
	"tcp_udp", "socket", "xmit", "other",
};

const char *nc_cat_name(int cat)
{
	return cat >= 0 && cat < NC_CAT_MAX ? nc_cat_names[cat] : "?";
}

/* Patterns: "abc*" prefix, "*abc" suffix, "*abc*" substring, else exact.
 * Rules are tried in order and the first match wins, so the specific ones
 * (GRO's "tcp4_gro_receive", netfilter's "br_nf_*") come before the broad
 * prefixes ("tcp_*", "br_*"), and TCP/UDP before the "*_xmit" suffix
 * (tcp_write_xmit is TCP's own output logic). */
struct nc_cat_rule {
	const char *pat;
	int cat;
};

static const struct nc_cat_rule nc_cat_rules[] = {
	{ "*gro_receive*", NC_CAT_GRO }, { "*gro_complete*", NC_CAT_GRO },
	{ "napi_gro_*", NC_CAT_GRO }, { "dev_gro_*", NC_CAT_GRO }, { "gro_*", NC_CAT_GRO },
	{ "skb_gro_*", NC_CAT_GRO }, { "napi_skb_finish", NC_CAT_GRO },
	{ "*_gro_*", NC_CAT_GRO },

	{ "br_nf_*", NC_CAT_NETFILTER }, { "nf_*", NC_CAT_NETFILTER },
	{ "__nf_*", NC_CAT_NETFILTER }, { "nft_*", NC_CAT_NETFILTER },
	{ "ipt_*", NC_CAT_NETFILTER }, { "ip6t_*", NC_CAT_NETFILTER },
	{ "iptable_*", NC_CAT_NETFILTER }, { "ip6table_*", NC_CAT_NETFILTER },
	{ "xt_*", NC_CAT_NETFILTER }, { "ebt_*", NC_CAT_NETFILTER },
	{ "ipv4_conntrack*", NC_CAT_NETFILTER }, { "ipv6_conntrack*", NC_CAT_NETFILTER },
	{ "*_conntrack_*", NC_CAT_NETFILTER }, { "nf_hook_slow", NC_CAT_NETFILTER },

	{ "tcf_*", NC_CAT_TC }, { "__tcf_*", NC_CAT_TC }, { "tc_*", NC_CAT_TC },
	{ "tcx_*", NC_CAT_TC }, { "sch_handle_ingress", NC_CAT_TC },
	{ "sch_handle_egress", NC_CAT_TC }, { "cls_bpf_*", NC_CAT_TC },
	{ "do_xdp_generic", NC_CAT_TC }, { "bpf_prog_run_generic_xdp", NC_CAT_TC },

	{ "br_*", NC_CAT_BRIDGE }, { "__br_*", NC_CAT_BRIDGE },

	{ "ip_forward*", NC_CAT_FORWARD }, { "ip6_forward*", NC_CAT_FORWARD },

	{ "__inet_lookup*", NC_CAT_TRANSPORT }, { "inet_lookup*", NC_CAT_TRANSPORT },
	{ "__inet6_lookup*", NC_CAT_TRANSPORT }, { "inet6_lookup*", NC_CAT_TRANSPORT },
	{ "inet_csk_*", NC_CAT_TRANSPORT }, { "inet_ehash*", NC_CAT_TRANSPORT },
	{ "tcp*", NC_CAT_TRANSPORT }, { "__tcp*", NC_CAT_TRANSPORT },
	{ "udp*", NC_CAT_TRANSPORT }, { "__udp*", NC_CAT_TRANSPORT },

	{ "dev_queue_xmit*", NC_CAT_XMIT }, { "__dev_queue_xmit*", NC_CAT_XMIT },
	{ "dev_hard_start_xmit", NC_CAT_XMIT }, { "sch_direct_xmit", NC_CAT_XMIT },
	{ "__qdisc_run", NC_CAT_XMIT }, { "qdisc_*", NC_CAT_XMIT },
	{ "*_start_xmit", NC_CAT_XMIT }, { "*_xmit", NC_CAT_XMIT },
	{ "validate_xmit_*", NC_CAT_XMIT }, { "neigh_*", NC_CAT_XMIT },
	{ "__neigh_*", NC_CAT_XMIT }, { "ip_finish_output*", NC_CAT_XMIT },
	{ "ip6_finish_output*", NC_CAT_XMIT }, { "ip_output", NC_CAT_XMIT },
	{ "ip6_output", NC_CAT_XMIT },

	{ "ip_*", NC_CAT_IP }, { "__ip_*", NC_CAT_IP }, { "ip6_*", NC_CAT_IP },
	{ "__ip6_*", NC_CAT_IP }, { "ipv6_*", NC_CAT_IP }, { "inet_*", NC_CAT_IP },
	{ "fib_*", NC_CAT_IP }, { "fib4_*", NC_CAT_IP }, { "fib6_*", NC_CAT_IP },
	{ "icmp*", NC_CAT_IP }, { "raw_local_deliver", NC_CAT_IP },

	{ "sock_*", NC_CAT_SOCKET }, { "__sock_*", NC_CAT_SOCKET },
	{ "sk_*", NC_CAT_SOCKET }, { "__sk_*", NC_CAT_SOCKET },

	{ "process_backlog", NC_CAT_DRIVER }, { "veth_*", NC_CAT_DRIVER },
	{ "virtnet_*", NC_CAT_DRIVER }, { "e1000*", NC_CAT_DRIVER },
	{ "igb_*", NC_CAT_DRIVER }, { "ixgbe_*", NC_CAT_DRIVER },
	{ "i40e_*", NC_CAT_DRIVER }, { "ice_*", NC_CAT_DRIVER },
	{ "mlx5e_*", NC_CAT_DRIVER }, { "mlx4_en_*", NC_CAT_DRIVER },
	{ "bnxt_*", NC_CAT_DRIVER }, { "ena_*", NC_CAT_DRIVER },
	{ "vmxnet3_*", NC_CAT_DRIVER }, { "gve_*", NC_CAT_DRIVER },
	{ "napi_complete_done", NC_CAT_DRIVER },
};

/* Matches pat against the first n bytes of name. */
static bool nc_pat_match(const char *pat, const char *name, size_t n)
{
	size_t pl = strlen(pat);
	bool head = pl && pat[0] == '*';
	bool tail = pl && pat[pl - 1] == '*';
	const char *core = pat + head;
	size_t cl = pl - head - (tail && pl > 1);

	if (head && tail) {
		if (cl > n)
			return false;
		for (size_t i = 0; i + cl <= n; i++)
			if (memcmp(name + i, core, cl) == 0)
				return true;
		return false;
	}
	if (tail)
		return cl <= n && memcmp(name, core, cl) == 0;
	if (head)
		return cl <= n && memcmp(name + n - cl, core, cl) == 0;
	return cl == n && memcmp(name, core, cl) == 0;
}

int nc_cat_of_symbol(const char *name)
{
	if (!name)
		return -1;
	size_t n = strcspn(name, ".");        /* "fn.isra.0", "fn.cold" */
	for (size_t i = 0; i < sizeof(nc_cat_rules) / sizeof(nc_cat_rules[0]); i++)
		if (nc_pat_match(nc_cat_rules[i].pat, name, n))
			return nc_cat_rules[i].cat;
	return -1;
}

static bool nc_is_napi_poll(const char *name)
{
	if (!name)
		return false;
	size_t n = strcspn(name, ".");
	return nc_pat_match("__napi_poll", name, n) || nc_pat_match("napi_poll", name, n);
}

int nc_cat_of_stack(const struct ksyms *k, const uint64_t *ips, size_t n, const char **leaf)
{
	if (leaf)
		*leaf = NULL;
	for (size_t i = 0; i < n && ips[i]; i++) {
		const char *name = ksyms_lookup(k, ips[i], NULL);
		if (!name)
			continue;
		if (leaf && !*leaf)
			*leaf = name;
		int c = nc_cat_of_symbol(name);
		if (c >= 0)
			return c;
		/* frame i is unmatched: it is a driver poll if its caller is NAPI */
		if (i + 1 < n && ips[i + 1] && nc_is_napi_poll(ksyms_lookup(k, ips[i + 1], NULL)))
			return NC_CAT_DRIVER;
	}
	return NC_CAT_OTHER;
}

/* x86 interrupt entry points: the frame above them in a stack is the
 * interrupted context (entry_64.S / idtentry.h; the tick arrives by the
 * local APIC timer vector, a broadcast tick by a device interrupt). */
static bool nc_is_irq_entry(const char *name)
{
	if (!name)
		return false;
	size_t n = strcspn(name, ".");
	return nc_pat_match("asm_sysvec_*", name, n) || nc_pat_match("asm_common_interrupt", name, n);
}

size_t nc_strip_irq_frames(const struct ksyms *k, uint64_t *ips, size_t n)
{
	size_t i = 0;
	while (i < n && ips[i] && !nc_is_irq_entry(ksyms_lookup(k, ips[i], NULL)))
		i++;
	if (i == n || !ips[i])
		return 0;
	size_t cut = i + 1;
	memmove(ips, ips + cut, (n - cut) * sizeof(*ips));
	memset(ips + (n - cut), 0, cut * sizeof(*ips));
	return cut;
}
