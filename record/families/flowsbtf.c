/* The flows family's tracepoint prototypes, read from BTF at load. */
#include "flowsbtf.h"

/* A tracepoint's BTF is a typedef btf_trace_NAME of a pointer to a function
 * prototype whose first parameter is the probe's void *data; the
 * tracepoint's own arguments follow. */
static const struct btf_type *rc_tp_proto(const struct btf *btf, const char *typedef_name)
{
	int id = btf ? btf__find_by_name_kind(btf, typedef_name, BTF_KIND_TYPEDEF) : -1;
	if (id < 0)
		return NULL;
	const struct btf_type *t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

bool rc_flows_retrans_has_err(const struct btf *btf)
{
	const struct btf_type *fp = rc_tp_proto(btf, "btf_trace_tcp_retransmit_skb");
	if (!fp || btf_vlen(fp) < 4)     /* data, sk, skb, err */
		return false;
	int id = btf__resolve_type(btf, btf_params(fp)[3].type);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	return t && btf_is_int(t);
}
