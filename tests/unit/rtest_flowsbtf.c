/* rc_flows_retrans_has_err on BTF built here: the prototypes of
 * tcp:tcp_retransmit_skb before and after its err argument, a third
 * argument that is not an int, no typedef, no BTF at all; and on this
 * kernel's BTF, against what the typedef's prototype says. */
#include <stdio.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "flowsbtf.h"
#include "tap.h"

enum third { NONE, INT, PTR };

/* typedef void (*btf_trace_tcp_retransmit_skb)(void *, const struct sock *,
 * const struct sk_buff *[, int err]) */
static struct btf *retrans_btf(enum third third, const char *typedef_name)
{
	struct btf *b = btf__new_empty();
	int i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int sock = btf__add_fwd(b, "sock", BTF_FWD_STRUCT);
	int skb = btf__add_fwd(b, "sk_buff", BTF_FWD_STRUCT);
	int vp = btf__add_ptr(b, 0);
	int skp = btf__add_ptr(b, btf__add_const(b, sock));
	int skbp = btf__add_ptr(b, btf__add_const(b, skb));
	int errt = btf__add_typedef(b, "int_t", i32);   /* resolved through */
	int fp = btf__add_func_proto(b, 0);
	btf__add_func_param(b, "", vp);
	btf__add_func_param(b, "sk", skp);
	btf__add_func_param(b, "skb", skbp);
	if (third == INT)
		btf__add_func_param(b, "err", errt);
	else if (third == PTR)
		btf__add_func_param(b, "x", vp);
	btf__add_typedef(b, typedef_name, btf__add_ptr(b, fp));
	return b;
}

static void check_case(enum third third, const char *name, bool want, const char *what)
{
	struct btf *b = retrans_btf(third, name);
	CHECK(rc_flows_retrans_has_err(b) == want, "%s: %s", what, want ? "has err" : "no err");
	btf__free(b);
}

int main(void)
{
	check_case(INT, "btf_trace_tcp_retransmit_skb", true, "(sk, skb, int err)");
	check_case(NONE, "btf_trace_tcp_retransmit_skb", false, "(sk, skb), older kernels");
	check_case(PTR, "btf_trace_tcp_retransmit_skb", false, "(sk, skb, void *)");
	check_case(INT, "btf_trace_tcp_send_reset", false, "no btf_trace_tcp_retransmit_skb");
	CHECK(!rc_flows_retrans_has_err(NULL), "no BTF: no err");
	struct btf *k = btf__load_vmlinux_btf();
	if (!libbpf_get_error(k)) {
		/* this kernel: the answer follows the prototype's parameter count */
		int id = btf__find_by_name_kind(k, "btf_trace_tcp_retransmit_skb", BTF_KIND_TYPEDEF);
		const struct btf_type *fp = id > 0 ? btf__type_by_id(k, btf__type_by_id(k, btf__type_by_id(k, id)->type)->type) : NULL;
		int n = fp ? btf_vlen(fp) : 0;
		fprintf(stderr, "# this kernel: btf_trace_tcp_retransmit_skb has %d parameters\n", n);
		CHECK(rc_flows_retrans_has_err(k) == (n == 4), "this kernel: %d parameters", n);
		btf__free(k);
	}
	return tap_done();
}
