/* Kernel symbol table (record/families/ksyms.c) and NET_RX stack categories
 * (record/families/netrxcat.c) on a synthetic kallsyms file: unsorted lines, data
 * symbols, module symbols, an alias, compiler suffixes. No root needed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksyms.h"
#include "netrxcat.h"
#include "tap.h"
#include "ksymfix.h"

static const char *kallsyms =
	"ffffffff81002000 T tcp_v4_rcv\n"
	"ffffffff81001000 T net_rx_action\n"
	"ffffffff81001100 T __napi_poll\n"
	"ffffffffc0001200 t veth_poll\t[veth]\n"
	"ffffffff81001300 T napi_gro_receive\n"
	"ffffffff81001400 t __netif_receive_skb_core\n"
	"ffffffff81001500 T ip_rcv\n"
	"ffffffff81001600 T ip_local_deliver\n"
	"ffffffff81001800 T memcpy\n"
	"ffffffff81001900 T sock_def_readable\n"
	"ffffffff81002100 T br_handle_frame\n"
	"ffffffff81002200 T nf_hook_slow\n"
	"ffffffff81002300 T ip_forward\n"
	"ffffffff81002400 t mydrv_napi_fn\n"
	"ffffffff81002500 T tcp4_gro_receive\n"
	"ffffffff81002600 t ip_rcv_finish.isra.0\n"
	"ffffffff81002680 D some_data\n"
	"ffffffff81002700 T veth_xmit\n"
	"ffffffff81002800 T __dev_queue_xmit\n"
	"ffffffff81002900 T tcf_classify\n"
	"ffffffff81003000 T kfree_skb\n"
	"ffffffff81003000 T kfree_skb_alias\n"
	"garbage line\n"
	"ffffffff81003100 W weak_fn\n";


static void test_lookup(struct ksyms *k)
{
	uint64_t start = 0;
	CHECK_EQ_U(ksyms_count(k), 21);   /* 22 text lines, one alias merged */
	const char *n = ksyms_lookup(k, A(0x2000), &start);
	CHECK(n && strcmp(n, "tcp_v4_rcv") == 0, "exact start: %s", n ? n : "NULL");
	CHECK_EQ_U(start, A(0x2000));
	n = ksyms_lookup(k, A(0x20ff), NULL);
	CHECK(n && strcmp(n, "tcp_v4_rcv") == 0, "last byte: %s", n ? n : "NULL");
	n = ksyms_lookup(k, A(0x2100), NULL);
	CHECK(n && strcmp(n, "br_handle_frame") == 0, "next start: %s", n ? n : "NULL");
	CHECK(ksyms_lookup(k, A(0x0fff), NULL) == NULL, "below the first symbol");
	/* data symbols do not cut text ranges */
	n = ksyms_lookup(k, A(0x2690), NULL);
	CHECK(n && strcmp(n, "ip_rcv_finish.isra.0") == 0, "data symbol: %s", n ? n : "NULL");
	n = ksyms_lookup(k, A(0x3010), NULL);
	CHECK(n && strcmp(n, "kfree_skb") == 0, "first alias kept: %s", n ? n : "NULL");
	n = ksyms_lookup(k, 0xffffffffc0001234ull, &start);
	CHECK(n && strcmp(n, "veth_poll") == 0, "module symbol: %s", n ? n : "NULL");
	CHECK_EQ_U(start, 0xffffffffc0001200ull);
	n = ksyms_lookup(k, 0xffffffffc0001200ull + (1u << 20), NULL);
	CHECK(n == NULL, "far past the last symbol: %s", n ? n : "NULL");
	n = ksyms_lookup(k, A(0x3150), NULL);
	CHECK(n && strcmp(n, "weak_fn") == 0, "weak text: %s", n ? n : "NULL");
}

static void test_symbol_rules(void)
{
	CHECK(nc_cat_of_symbol("tcp_v4_rcv") == NC_CAT_TRANSPORT, "tcp");
	CHECK(nc_cat_of_symbol("udp_queue_rcv_skb") == NC_CAT_TRANSPORT, "udp");
	CHECK(nc_cat_of_symbol("tcp4_gro_receive") == NC_CAT_GRO, "gro before tcp");
	CHECK(nc_cat_of_symbol("inet_gro_receive") == NC_CAT_GRO, "inet gro");
	CHECK(nc_cat_of_symbol("br_nf_pre_routing") == NC_CAT_NETFILTER, "br_nf before br");
	CHECK(nc_cat_of_symbol("br_handle_frame") == NC_CAT_BRIDGE, "bridge");
	CHECK(nc_cat_of_symbol("ip_forward_finish") == NC_CAT_FORWARD, "forward");
	CHECK(nc_cat_of_symbol("ip_rcv_finish.isra.0") == NC_CAT_IP, "suffix ignored");
	CHECK(nc_cat_of_symbol("veth_xmit") == NC_CAT_XMIT, "xmit before driver");
	CHECK(nc_cat_of_symbol("tcp_write_xmit") == NC_CAT_TRANSPORT, "tcp before *_xmit");
	CHECK(nc_cat_of_symbol("ip_finish_output2") == NC_CAT_XMIT, "ip output is xmit");
	CHECK(nc_cat_of_symbol("veth_poll") == NC_CAT_DRIVER, "driver");
	CHECK(nc_cat_of_symbol("tcf_classify") == NC_CAT_TC, "tc");
	CHECK(nc_cat_of_symbol("sock_def_readable") == NC_CAT_SOCKET, "socket");
	CHECK(nc_cat_of_symbol("skb_release_data") == -1, "skb_ is not sk_");
	CHECK(nc_cat_of_symbol("memcpy") == -1, "helper");
	CHECK(strcmp(nc_cat_name(NC_CAT_TRANSPORT), "tcp_udp") == 0, "name");
	CHECK(strcmp(nc_cat_name(99), "?") == 0, "bad name");
}

static void test_stacks(struct ksyms *k)
{
	const char *leaf;
	uint64_t veth_poll = 0xffffffffc0001208ull;
	uint64_t s1[] = { A(0x1805), A(0x2010), A(0x1604), A(0x1501), A(0x1403), A(0x1302),
			  veth_poll, A(0x1101), A(0x1002), 0 };
	CHECK(nc_cat_of_stack(k, s1, 10, &leaf) == NC_CAT_TRANSPORT, "deepest match is tcp");
	CHECK(leaf && strcmp(leaf, "memcpy") == 0, "leaf %s", leaf ? leaf : "NULL");
	uint64_t s2[] = { A(0x3001), A(0x2404), A(0x1102), A(0x1001) };
	CHECK(nc_cat_of_stack(k, s2, 4, NULL) == NC_CAT_DRIVER, "callee of __napi_poll");
	uint64_t s3[] = { A(0x1801), A(0x2501), A(0x1301), A(0x1201 - 0x100) };
	CHECK(nc_cat_of_stack(k, s3, 4, NULL) == NC_CAT_GRO, "gro");
	uint64_t s4[] = { A(0x1801), A(0x2201), A(0x2101) };
	CHECK(nc_cat_of_stack(k, s4, 3, NULL) == NC_CAT_NETFILTER, "netfilter inside bridge");
	uint64_t s5[] = { A(0x2303), A(0x2601) };
	CHECK(nc_cat_of_stack(k, s5, 2, NULL) == NC_CAT_FORWARD, "forward");
	uint64_t s6[] = { A(0x2701), A(0x2801), A(0x2301) };
	CHECK(nc_cat_of_stack(k, s6, 3, NULL) == NC_CAT_XMIT, "xmit while forwarding");
	uint64_t s7[] = { A(0x2602), A(0x1501) };
	CHECK(nc_cat_of_stack(k, s7, 2, NULL) == NC_CAT_IP, "ip");
	uint64_t s8[] = { A(0x1901), A(0x2001) };
	CHECK(nc_cat_of_stack(k, s8, 2, NULL) == NC_CAT_SOCKET, "socket wakeup");
	uint64_t s9[] = { A(0x2901) };
	CHECK(nc_cat_of_stack(k, s9, 1, NULL) == NC_CAT_TC, "tc");
	uint64_t s10[] = { 0x1000, 0x2000 };
	CHECK(nc_cat_of_stack(k, s10, 2, &leaf) == NC_CAT_OTHER, "unresolved");
	CHECK(leaf == NULL, "no leaf");
	uint64_t s11[] = { A(0x1001) };
	CHECK(nc_cat_of_stack(k, s11, 1, NULL) == NC_CAT_OTHER, "net_rx_action only");
}

int main(void)
{
	char *path;
	struct ksyms *k;
	int rc = ksymfix_load(kallsyms, &path, &k);
	if (!path)
		return tap_done();
	if (rc == 0) {
		test_lookup(k);
		test_stacks(k);
	}
	test_symbol_rules();
	ksyms_free(k);
	unlink(path);

	/* kptr_restrict: every address reads 0 */
	char *zero = ksymfix_write("0000000000000000 T a\n0000000000000000 T b\n");
	struct ksyms *z = NULL;
	CHECK(zero && ksyms_load(&z, zero) == -EPERM, "hidden addresses");
	if (zero)
		unlink(zero);
	CHECK(ksyms_load(&z, "/nonexistent/kallsyms") == -ENOENT, "missing file");
	return tap_done();
}
