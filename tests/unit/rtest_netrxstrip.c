/* Stripping the timer interrupt's own frames from a stack taken by the
 * tick source (record/families/netrxcat.c nc_strip_irq_frames), then categorising
 * it, on a synthetic kallsyms file. The stack shapes are those dumped on
 * the 6.18 VM during a loopback iperf3 (docs/NETCPU.md "tick source").
 * No root needed (rtest_ only because it links libnprec.a). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksyms.h"
#include "netrxcat.h"
#include "tap.h"
#include "ksymfix.h"

static const char *kallsyms =
	"ffffffff81001000 T net_rx_action\n"
	"ffffffff81001100 T __napi_poll\n"
	"ffffffff81001200 t process_backlog\n"
	"ffffffff81001300 t __netif_receive_skb_one_core\n"
	"ffffffff81001400 T ip_local_deliver_finish\n"
	"ffffffff81001500 T tcp_v4_rcv\n"
	"ffffffff81001600 T sock_def_readable\n"
	"ffffffff81001700 T _raw_spin_unlock_irqrestore\n"
	"ffffffff81001800 T handle_softirqs\n"
	"ffffffff81001900 T __irq_exit_rcu\n"
	"ffffffff81001a00 T sysvec_apic_timer_interrupt\n"
	"ffffffff81001b00 T __sysvec_apic_timer_interrupt\n"
	"ffffffff81001c00 T hrtimer_interrupt\n"
	"ffffffff81001d00 t __hrtimer_run_queues\n"
	"ffffffff81001e00 T bpf_trace_run2\n"
	"ffffffff81001f00 T common_interrupt\n"
	"ffffffff81002000 T asm_sysvec_apic_timer_interrupt\n"
	"ffffffff81002100 T asm_common_interrupt\n"
	"ffffffff81002200 T do_softirq.part.0\n";

#define BPF_PROG_IP 0xffffffffa0001234ull     /* no symbol: JITed program */

/* tick handler frames, innermost first, as bpf_get_stackid sees them */
#define TICK_FRAMES BPF_PROG_IP, A(0x1e10), A(0x1d10), A(0x1c10), A(0x1b10), A(0x1a10), A(0x2016)

/* The tick interrupted NET_RX in sock_def_readable: after the cut the
 * leaf is the interrupted function and the category is socket, as a
 * cpu-clock sample of the same place. */
static void test_tick_in_netrx(const struct ksyms *k)
{
	uint64_t ips[16] = { TICK_FRAMES, A(0x1719), A(0x163e), A(0x1510), A(0x1481), A(0x1380),
			     A(0x1283), A(0x1131), A(0x113b) };
	const char *leaf = NULL;
	nc_cat_of_stack(k, ips, 16, &leaf);
	CHECK(leaf && strcmp(leaf, "bpf_trace_run2") == 0, "unstripped leaf %s", leaf ? leaf : "NULL");
	CHECK_EQ_U(nc_strip_irq_frames(k, ips, 16), 7);
	CHECK_EQ_U(ips[0], A(0x1719));
	CHECK_EQ_U(ips[8], 0);                  /* tail zero-filled */
	CHECK_EQ_U(ips[15], 0);
	CHECK(nc_cat_of_stack(k, ips, 16, &leaf) == NC_CAT_SOCKET, "socket");
	CHECK(leaf && strcmp(leaf, "_raw_spin_unlock_irqrestore") == 0, "leaf %s",
	      leaf ? leaf : "NULL");
}

/* NET_RX itself ran at the exit of a device interrupt (an outer
 * asm_common_interrupt): only the innermost entry, the tick's, is cut. */
static void test_nested_entries(const struct ksyms *k)
{
	uint64_t ips[20] = { TICK_FRAMES, A(0x1510), A(0x1481), A(0x1131), A(0x113b),
			     A(0x18cd), A(0x1910), A(0x1f40), A(0x2126), A(0x1510) };
	CHECK_EQ_U(nc_strip_irq_frames(k, ips, 20), 7);
	CHECK_EQ_U(ips[0], A(0x1510));
	CHECK_EQ_U(ips[7], A(0x2126));          /* the outer entry stays */
	CHECK(nc_cat_of_stack(k, ips, 20, NULL) == NC_CAT_TRANSPORT, "tcp");
}

static void test_no_entry(const struct ksyms *k)
{
	/* a cpu-clock sample starts at the interrupted IP: nothing to cut */
	uint64_t ips[4] = { A(0x1510), A(0x1481), A(0x1131), 0 };
	CHECK_EQ_U(nc_strip_irq_frames(k, ips, 4), 0);
	CHECK_EQ_U(ips[0], A(0x1510));
	CHECK_EQ_U(ips[2], A(0x1131));
	/* unresolvable frames only, and a full stack without any zero */
	uint64_t u[3] = { 0x1000, 0x2000, 0x3000 };
	CHECK_EQ_U(nc_strip_irq_frames(k, u, 3), 0);
	CHECK_EQ_U(u[0], 0x1000);
	/* the entry is the outermost frame: nothing of the interrupted
	 * context was unwound, the stack becomes empty (category other) */
	uint64_t e[8] = { TICK_FRAMES };
	CHECK_EQ_U(nc_strip_irq_frames(k, e, 8), 7);
	CHECK_EQ_U(e[0], 0);
	CHECK(nc_cat_of_stack(k, e, 8, NULL) == NC_CAT_OTHER, "empty");
	/* the entry in the very last slot of a full stack */
	uint64_t f[3] = { BPF_PROG_IP, A(0x1e10), A(0x2016) };
	CHECK_EQ_U(nc_strip_irq_frames(k, f, 3), 3);
	CHECK(f[0] == 0 && f[1] == 0 && f[2] == 0, "all cut");
	CHECK_EQ_U(nc_strip_irq_frames(NULL, ips, 4), 0);   /* no symbols: unchanged */
}

int main(void)
{
	char *path;
	struct ksyms *k;
	int rc = ksymfix_load(kallsyms, &path, &k);
	if (!path)
		return tap_done();
	if (rc == 0) {
		test_tick_in_netrx(k);
		test_nested_entries(k);
		test_no_entry(k);
		CHECK_EQ_U(ksyms_addr(k, "asm_common_interrupt"), A(0x2100));
		CHECK_EQ_U(ksyms_addr(k, "do_softirq.part.0"), A(0x2200));
		CHECK_EQ_U(ksyms_addr(k, "tick_nohz_handler"), 0);
	}
	ksyms_free(k);
	unlink(path);
	return tap_done();
}
