/* Packet-path family (user side): loads bpf/pktpath.bpf.c, attaches the
 * tracepoints and the TC programs on the selected interfaces inside the
 * recorded netns, collects events from the ring buffer and writes them every
 * interval as columnar NP_REC_PKT_EVENTS batches plus the NP_REC_PKT_FLOWS
 * table they reference (docs/records/pktpath.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "family.h"
#include "cpuslice.h"
#include "npmsg.h"
#include "hostinfo.h"
#include "records.h"
#include "pktcols.h"
#include "pktpath.h"
#include "pknetns.h"
#include "progtab.h"
#include "activeid.h"
#include "../bpf/activeid.h"
#include "pktpath.skel.h"

#define PK_FAMILY        "pktpath"
#define PK_BATCH_MAX     65536       /* events per PKT_EVENTS record */
#define PK_PENDING_MAX   (2u << 20)  /* events held per interval before dropping */
#define PK_TC_HANDLE     0x504b      /* "PK": our filters, told apart from others' */

struct pk_flowkey {
	uint8_t family, proto;
	uint16_t sport, dport;
	uint8_t saddr[16], daddr[16];
};

struct pk_tc_att {
	unsigned ifindex;
	bool egress_on, ingress_on;
};

struct pk_state {
	struct rec_ctx *ctx;
	struct pktpath_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *links[16];
	unsigned nlinks;
	struct pk_tc_att tc[REC_MAX_IFACES];
	unsigned ntc;
	int netns_fd;
	/* events of the current interval */
	struct pktcols_ev *ev;
	size_t nev, capev;
	uint64_t received, user_dropped;
	uint64_t drain_deadline, drain_cuts;
	bool discard;              /* the stop's drain: events only counted (user_dropped) */
	/* PK_DRAIN_MAX_NS and PK_FINAL_KEEP_NS, or NPREC_TEST_PK_DRAIN_NS and
	 * NPREC_TEST_PK_FINAL_KEEP_NS (a test makes every drain cut, so the
	 * stop's drain has a backlog to keep and to count) */
	uint64_t drain_max_ns, final_keep_ns;
	/* flow table: open addressing over flows[] indices */
	struct pk_flowkey *flows;
	uint32_t nflows, capflows;
	uint32_t *slots;           /* flow index + 1, 0 = empty */
	uint32_t nslots;
	struct aid_state *aid;     /* --active-ids */
	/* counters at the previous snapshot, per hook */
	struct pk_counters prev[PK_HOOK_MAX];
	uint64_t prog_missed_prev[PK_HOOK_MAX];
	uint64_t qdisc_stale;      /* pk_qdisc_pend entries aged out: qdisc_dequeue missed */
	int ncpus;
};

static uint32_t pk_key_hash(const struct pk_flowkey *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int pk_slots_grow(struct pk_state *s)
{
	uint32_t n = s->nslots ? s->nslots * 2 : 1024;
	uint32_t *sl = calloc(n, sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	for (uint32_t f = 0; f < s->nflows; f++) {
		uint32_t i = pk_key_hash(&s->flows[f]) & (n - 1);
		while (sl[i])
			i = (i + 1) & (n - 1);
		sl[i] = f + 1;
	}
	free(s->slots);
	s->slots = sl;
	s->nslots = n;
	return 0;
}

/* Flow index of k, added when new; UINT32_MAX when out of memory. */
static uint32_t pk_flow_index(struct pk_state *s, const struct pk_flowkey *k)
{
	if ((s->nflows + 1) * 2 > s->nslots && pk_slots_grow(s) < 0)
		return UINT32_MAX;
	uint32_t i = pk_key_hash(k) & (s->nslots - 1);
	while (s->slots[i]) {
		if (!memcmp(&s->flows[s->slots[i] - 1], k, sizeof(*k)))
			return s->slots[i] - 1;
		i = (i + 1) & (s->nslots - 1);
	}
	if (s->nflows == s->capflows) {
		uint32_t cap = s->capflows ? s->capflows * 2 : 256;
		void *p = realloc(s->flows, cap * sizeof(*s->flows));
		if (!p)
			return UINT32_MAX;
		s->flows = p;
		s->capflows = cap;
	}
	s->flows[s->nflows] = *k;
	s->slots[i] = s->nflows + 1;
	return s->nflows++;
}

/* A drain ends after PK_DRAIN_MAX_NS even when the ring is not empty: a
 * producer faster than us (iperf3 at full speed on a loaded 2-CPU machine,
 * where cpuslice's yields come back late) kept ring_buffer__consume going for
 * 3.3 s, and no interval was written in that time: a kill -9 then loses
 * it all. What the ring cannot hold meanwhile is counted as lost. */
#define PK_DRAIN_MAX_NS (100 * 1000000ull)
#define PK_DRAIN_CUT    (-EINTR)   /* from the callback: stop consuming */
/* The drain before END keeps events this long past the first cut, then
 * counts the rest without keeping it, for at most as long again: the ring
 * is freed at close, and an event the kernel counted as seen must be
 * written or counted lost (a run behind a CPU hog left 161 450 of 751 972
 * in the ring, in neither). Counting only outruns any producer; what is
 * left after both bounds is not counted (never seen in a test). */
#define PK_FINAL_KEEP_NS  (1000 * 1000000ull)

static int pk_drain_go_on(struct pk_state *s)
{
	if ((s->received & 255) || !s->drain_deadline || np_mono_ns() < s->drain_deadline)
		return 0;
	return PK_DRAIN_CUT;
}

static int pk_on_event(void *arg, void *data, size_t size)
{
	struct pk_state *s = arg;
	const struct pk_event *e = data;
	if (size < sizeof(*e))
		return 0;
	s->received++;
	if (s->discard) {
		s->user_dropped++;
		return pk_drain_go_on(s);
	}
	if ((s->received & 63) == 0)
		cpuslice_point();
	int more = pk_drain_go_on(s);
	if (s->nev == s->capev) {
		size_t cap = s->capev ? s->capev * 2 : 65536;
		void *p = cap <= PK_PENDING_MAX ? realloc(s->ev, cap * sizeof(*s->ev)) : NULL;
		if (!p) {
			s->user_dropped++;
			return 0;
		}
		s->ev = p;
		s->capev = cap;
	}
	struct pk_flowkey k = {
		.family = (e->flags & PK_F_V6) ? 6 : 4, .proto = e->proto,
		.sport = e->sport, .dport = e->dport,
	};
	memcpy(k.saddr, e->saddr, k.family == 6 ? 16 : 4);
	memcpy(k.daddr, e->daddr, k.family == 6 ? 16 : 4);
	uint32_t fi = pk_flow_index(s, &k);
	if (fi == UINT32_MAX) {
		s->user_dropped++;
		return 0;
	}
	struct pktcols_ev *o = &s->ev[s->nev++];
	*o = (struct pktcols_ev){
		.ts = e->ts + (uint64_t)s->ctx->shift_ns, .flow = fi,
		.seq = e->seq, .end_seq = e->end_seq, .ack = e->ack, .tsval = e->tsval,
		.uid = e->uid, .ifindex = e->ifindex, .len = e->len, .ipid = e->ipid,
		.cpu = e->cpu, .hook = e->hook, .tcpflags = e->tcpflags, .doff = e->doff,
		.flags = e->flags, .gso = e->gso_size,
	};
	return more;
}

/* Active-ID events become packet events of hook aid_tx/aid_rx with the ID
 * in uid, oriented like the packet (receive: remote -> local). */
static int pk_on_aid_event(void *arg, void *data, size_t size)
{
	const struct aid_event *a = data;
	if (size < sizeof(*a))
		return 0;
	struct pk_event e = {
		.ts = a->ts, .seq = a->seq, .end_seq = a->end_seq, .ack = a->ack, .uid = a->id,
		.proto = 6, .hook = a->rx ? PK_HOOK_AID_RX : PK_HOOK_AID_TX,
		.sport = a->rx ? a->dport : a->sport, .dport = a->rx ? a->sport : a->dport,
	};
	e.saddr[0] = a->rx ? a->daddr : a->saddr;
	e.daddr[0] = a->rx ? a->saddr : a->daddr;
	return pk_on_event(arg, &e, sizeof(e));
}

static bool pk_kernel_has_tp(const struct btf *vmlinux, const char *tp)
{
	char name[96];
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return vmlinux && btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) > 0;
}

/* One program per tracepoint (never one program on several): the kernel's
 * recursion guard is per program and CPU, so a program shared by two hooks
 * would skip the inner one whenever one hook nests inside the other. */
struct pk_tp { const char *tp; struct bpf_program *prog; uint8_t hook; };

static size_t pk_tps(struct pktpath_bpf *sk, struct pk_tp *t)
{
	size_t n = 0;
	t[n++] = (struct pk_tp){ "sock_send_length", sk->progs.pk_sock_send, PK_HOOK_SOCK_SEND };
	t[n++] = (struct pk_tp){ "net_dev_queue", sk->progs.pk_dev_queue, PK_HOOK_DEV_QUEUE };
	t[n++] = (struct pk_tp){ "qdisc_enqueue", sk->progs.pk_qdisc_enq, PK_HOOK_QDISC_ENQ };
	t[n++] = (struct pk_tp){ "qdisc_dequeue", sk->progs.pk_qdisc_deq, PK_HOOK_QDISC_DEQ };
	t[n++] = (struct pk_tp){ "net_dev_start_xmit", sk->progs.pk_dev_start_xmit,
				 PK_HOOK_DEV_START_XMIT };
	t[n++] = (struct pk_tp){ "net_dev_xmit", sk->progs.pk_dev_xmit, PK_HOOK_DEV_XMIT };
	t[n++] = (struct pk_tp){ "napi_gro_receive_entry", sk->progs.pk_gro_entry,
				 PK_HOOK_GRO_ENTRY };
	t[n++] = (struct pk_tp){ "netif_receive_skb", sk->progs.pk_netif_receive,
				 PK_HOOK_NETIF_RECEIVE };
	t[n++] = (struct pk_tp){ "tcp_probe", sk->progs.pk_tcp_rcv, PK_HOOK_TCP_RCV };
	t[n++] = (struct pk_tp){ "skb_copy_datagram_iovec", sk->progs.pk_copy_to_user,
				 PK_HOOK_COPY_TO_USER };
	return n;
}

static void pk_set_rodata(struct pk_state *s, const struct rec_config *c)
{
	struct pktpath_bpf *sk = s->skel;
	sk->rodata->filter_netns_ino = c->netns_ino;
	sk->data->sample_div = c->sample_n ? c->sample_n : 1;
	sk->rodata->per_flow_cap = c->per_flow_cap;
	unsigned ni = 0;
	for (unsigned i = 0; i < c->nifaces && ni < PK_MAX_IFACES; i++) {
		unsigned idx = pk_netns_ifindex(c->netns_fd, c->ifaces[i]);
		if (idx)
			((__u32 *)sk->rodata->ifaces)[ni++] = idx;
	}
	sk->rodata->nifaces = ni;
	unsigned np = c->nports < PK_MAX_PORTS ? c->nports : PK_MAX_PORTS;
	for (unsigned i = 0; i < np; i++)
		((__u16 *)sk->rodata->ports)[i] = c->ports[i];
	sk->rodata->nports = np;
}

static void pk_tc_detach_one(struct pk_state *s, struct pk_tc_att *a)
{
	for (int dir = 0; dir < 2; dir++) {
		bool *on = dir ? &a->ingress_on : &a->egress_on;
		if (!*on)
			continue;
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = a->ifindex,
			    .attach_point = dir ? BPF_TC_INGRESS : BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = PK_TC_HANDLE, .priority = PK_TC_HANDLE);
		bpf_tc_detach(&hook, &opts);
		*on = false;
	}
	(void)s;
}

static void pk_tc_attach_iface(struct pk_state *s, const char *ifname)
{
	char probe[64], why[160];
	unsigned idx = if_nametoindex(ifname);
	snprintf(probe, sizeof(probe), "tc/%s", ifname);
	if (!idx) {
		rec_probe(s->ctx, PK_FAMILY, probe, REC_PROBE_FAILED, "no such interface in the netns");
		return;
	}
	struct pk_tc_att *a = &s->tc[s->ntc++];
	a->ifindex = idx;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = idx, .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	int rc = bpf_tc_hook_create(&hook);
	if (rc && rc != -EEXIST) {
		snprintf(why, sizeof(why), "clsact qdisc: %s", strerror(-rc));
		rec_probe(s->ctx, PK_FAMILY, probe, REC_PROBE_FAILED, why);
		return;
	}
	for (int dir = 0; dir < 2; dir++) {
		hook.attach_point = dir ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		struct bpf_program *p = dir ? s->skel->progs.pk_tc_ingress : s->skel->progs.pk_tc_egress;
		/* REPLACE: a filter left behind by a recorder that was killed */
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = PK_TC_HANDLE, .priority = PK_TC_HANDLE,
			    .flags = BPF_TC_F_REPLACE, .prog_fd = bpf_program__fd(p));
		rc = bpf_tc_attach(&hook, &opts);
		snprintf(probe, sizeof(probe), "tc/%s/%s", ifname, dir ? "ingress" : "egress");
		if (rc) {
			snprintf(why, sizeof(why), "%s", strerror(-rc));
			rec_probe(s->ctx, PK_FAMILY, probe, REC_PROBE_FAILED, why);
			continue;
		}
		*(dir ? &a->ingress_on : &a->egress_on) = true;
		rec_probe(s->ctx, PK_FAMILY, probe, REC_PROBE_ATTACHED, NULL);
	}
}

static void pk_tc_attach_all(struct pk_state *s, const struct rec_config *c)
{
	if (!c->nifaces) {
		rec_probe(s->ctx, PK_FAMILY, "tc", REC_PROBE_SKIPPED, "no -i IFACE given");
		return;
	}
	int saved;
	int rc = pk_netns_enter(c->netns_fd, &saved);
	if (rc < 0) {
		rec_probe(s->ctx, PK_FAMILY, "tc", REC_PROBE_FAILED, "cannot enter the netns");
		return;
	}
	for (unsigned i = 0; i < c->nifaces; i++)
		pk_tc_attach_iface(s, c->ifaces[i]);
	pk_netns_leave(saved);
}

static void pk_close(void *state);

static int pk_attach_tps(struct pk_state *s, char *err, size_t errlen)
{
	struct pk_tp tps[16];
	size_t n = pk_tps(s->skel, tps);
	unsigned qdisc_on = 0;     /* enqueue and dequeue programs attached */
	for (size_t i = 0; i < n; i++) {
		if (!bpf_program__autoload(tps[i].prog))
			continue;
		struct bpf_link *l = bpf_program__attach(tps[i].prog);
		char probe[64];
		snprintf(probe, sizeof(probe), "tp_btf/%s", tps[i].tp);
		if (!l) {
			rec_probe(s->ctx, PK_FAMILY, probe, REC_PROBE_FAILED, strerror(errno));
			continue;
		}
		s->links[s->nlinks++] = l;
		rec_probe(s->ctx, PK_FAMILY, probe, REC_PROBE_ATTACHED, NULL);
		if (tps[i].prog == s->skel->progs.pk_netif_receive)
			s->skel->bss->rx_check = 1;
		if (tps[i].prog == s->skel->progs.pk_dev_queue)
			s->skel->bss->tx_check = 1;
		qdisc_on += tps[i].prog == s->skel->progs.pk_qdisc_enq || tps[i].prog == s->skel->progs.pk_qdisc_deq;
	}
	s->skel->bss->qdisc_check = qdisc_on == 2;
	if (!s->nlinks && !s->ntc) {
		snprintf(err, errlen, "pktpath: no hook could be attached");
		return -ENOENT;
	}
	return 0;
}

static uint64_t pk_env_ns(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 10) : dflt;
}

static int pk_open(struct rec_ctx *ctx, void **state, char *err, size_t errlen)
{
	struct rec_config *c = ctx->cfg;
	if (!c->pktpath)
		return REC_FAM_OFF_OPTION;
	struct pk_state *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "pktpath: out of memory");
		return -ENOMEM;
	}
	s->ctx = ctx;
	s->ncpus = libbpf_num_possible_cpus();
	s->drain_max_ns = pk_env_ns("NPREC_TEST_PK_DRAIN_NS", PK_DRAIN_MAX_NS);
	s->final_keep_ns = pk_env_ns("NPREC_TEST_PK_FINAL_KEEP_NS", PK_FINAL_KEEP_NS);
	s->skel = pktpath_bpf__open();
	if (!s->skel) {
		snprintf(err, errlen, "pktpath: cannot open BPF object: %s", strerror(errno));
		free(s);
		return -EINVAL;
	}
	pk_set_rodata(s, c);
	struct btf *vml = btf__load_vmlinux_btf();
	struct pk_tp tps[16];
	size_t n = pk_tps(s->skel, tps);
	for (size_t i = 0; i < n; i++) {
		if (pk_kernel_has_tp(vml, tps[i].tp))
			continue;
		bpf_program__set_autoload(tps[i].prog, false);
		char probe[64];
		snprintf(probe, sizeof(probe), "tp_btf/%s", tps[i].tp);
		rec_probe(ctx, PK_FAMILY, probe, REC_PROBE_SKIPPED, "tracepoint not in this kernel");
	}
	btf__free(vml);
	int rc = pktpath_bpf__load(s->skel);
	if (rc) {
		snprintf(err, errlen, "pktpath: cannot load BPF programs: %s (need root or CAP_BPF+CAP_PERFMON+CAP_NET_ADMIN)",
			 strerror(-rc));
		pktpath_bpf__destroy(s->skel);
		free(s);
		return rc < 0 ? rc : -EINVAL;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.pk_events), pk_on_event, s, NULL);
	if (!s->rb) {
		snprintf(err, errlen, "pktpath: cannot create ring buffer: %s", strerror(errno));
		pk_close(s);
		return -EINVAL;
	}
	s->netns_fd = c->netns_fd;
	if (c->active_ids) {
		rc = aid_open(ctx, &s->rb, pk_on_aid_event, s, &s->aid, err, errlen);
		if (rc < 0) {
			pk_close(s);
			return rc;
		}
	}
	pk_tc_attach_all(s, c);
	rc = pk_attach_tps(s, err, errlen);
	if (rc < 0) {
		pk_close(s);
		return rc;
	}
	*state = s;
	return 0;
}

static int pk_consume(struct pk_state *s, uint64_t max_ns)
{
	s->drain_deadline = np_mono_ns() + max_ns;
	int rc = ring_buffer__consume(s->rb);
	s->drain_deadline = 0;
	return rc;
}

/* The stop's drain after a cut: keep, then only count, until the ring is
 * empty or the bounds (PK_FINAL_KEEP_NS) pass. */
static int pk_drain_rest(struct pk_state *s)
{
	uint64_t keep_until = np_mono_ns() + s->final_keep_ns;
	int rc;
	do
		rc = pk_consume(s, s->drain_max_ns);
	while (rc == PK_DRAIN_CUT && np_mono_ns() < keep_until);
	if (rc == PK_DRAIN_CUT) {
		uint64_t count_until = np_mono_ns() + PK_FINAL_KEEP_NS;
		s->discard = true;
		do
			rc = pk_consume(s, PK_DRAIN_MAX_NS);
		while (rc == PK_DRAIN_CUT && np_mono_ns() < count_until);
		s->discard = false;
	}
	return rc < 0 && rc != PK_DRAIN_CUT ? rc : 0;
}

static int pk_drain(void *state)
{
	struct pk_state *s = state;
	int rc = pk_consume(s, s->drain_max_ns);
	if (rc == PK_DRAIN_CUT) {
		s->drain_cuts++;
		return s->ctx->final_drain ? pk_drain_rest(s) : 0;
	}
	return rc < 0 ? rc : 0;
}

/* Sums the per-CPU counters of every hook into out. */
static int pk_read_counters(struct pk_state *s, struct pk_counters *out)
{
	struct pk_counters *v = calloc(s->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (__u32 h = 0; h < PK_HOOK_MAX; h++) {
		memset(&out[h], 0, sizeof(out[h]));
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.pk_counts), &h, v))
			continue;
		for (int c = 0; c < s->ncpus; c++) {
			out[h].seen += v[c].seen;
			out[h].sampled_out += v[c].sampled_out;
			out[h].capped += v[c].capped;
			out[h].lost += v[c].lost;
			out[h].emitted += v[c].emitted;
			out[h].missed += v[c].missed;
		}
	}
	out[PK_HOOK_QDISC_DEQ].missed += s->qdisc_stale;
	free(v);
	return 0;
}

/* A packet waits in a qdisc for its link's turn: milliseconds behind a
 * shaper, not a second. An entry of pk_qdisc_pend older than this at a
 * snapshot is one whose dequeue was not seen (bpf/pktpath.bpf.c). */
#define PK_QDISC_STALE_NS 1000000000ull

/* Counts and removes the aged entries of pk_qdisc_pend. */
static void pk_qdisc_age(struct pk_state *s)
{
	int fd = bpf_map__fd(s->skel->maps.pk_qdisc_pend);
	struct timespec ts;
	__u64 key, next, *cur = NULL;
	struct pk_qpend t;
	if (fd < 0 || !s->skel->bss->qdisc_check || clock_gettime(CLOCK_MONOTONIC, &ts))
		return;
	__u64 now = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	/* bounded: a key the programs delete meanwhile restarts the walk */
	for (int i = 0; i < 4 * 16384 && bpf_map_get_next_key(fd, cur, &next) == 0; i++) {
		if (bpf_map_lookup_elem(fd, &next, &t) == 0 && t.t + PK_QDISC_STALE_NS < now &&
		    bpf_map_delete_elem(fd, &next) == 0)
			s->qdisc_stale++;   /* deleted: get_next_key restarts from the first */
		else
			key = next, cur = &key;
	}
}

/* Runs the kernel skipped per hook since load: bpf_prog_info.recursion_misses
 * of the hook's tracepoint program (the program was already running on that
 * CPU, e.g. a process-context run interrupted by a softirq that hit the same
 * tracepoint). TC programs have no such guard. */
static void pk_read_prog_missed(struct pk_state *s, uint64_t *out)
{
	struct pk_tp tps[16];
	size_t n = pk_tps(s->skel, tps);
	memset(out, 0, PK_HOOK_MAX * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[tps[i].hook] = rec_prog_missed(bpf_program__fd(tps[i].prog));
}

static int pk_cmp_ts(const void *a, const void *b)
{
	const struct pktcols_ev *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void pk_pack_flows(struct pk_state *s, struct np_recbuf *rb, const struct pktcols_ev *ev,
			  size_t n)
{
	uint8_t *used = calloc(s->nflows ? s->nflows : 1, 1);
	struct pktcols_flow *f = calloc(s->nflows ? s->nflows : 1, sizeof(*f));
	size_t nf = 0;
	if (used && f) {
		for (size_t i = 0; i < n; i++)
			used[ev[i].flow] = 1;
		for (uint32_t i = 0; i < s->nflows; i++) {
			if (!used[i])
				continue;
			const struct pk_flowkey *k = &s->flows[i];
			f[nf] = (struct pktcols_flow){ .idx = i, .family = k->family, .proto = k->proto,
						      .sport = k->sport, .dport = k->dport };
			memcpy(f[nf].saddr, k->saddr, 16);
			memcpy(f[nf].daddr, k->daddr, 16);
			nf++;
		}
	}
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_PKT_FLOWS, PKTCOLS_VERSION);
	msgpack_pack_map(pk, PKTCOLS_FLOW_KEYS);
	pktcols_pack_flows(pk, f, nf);
	free(used);
	free(f);
}

/* Counters and program misses of one snapshot and of the previous one. */
struct pk_counts_pair {
	const struct pk_counters *now, *prev;
	const uint64_t *pm_now, *pm_prev;
};

static bool pk_hook_changed(const struct pk_counts_pair *c, unsigned h)
{
	return c->now[h].seen != c->prev[h].seen || c->now[h].lost != c->prev[h].lost ||
	       c->now[h].missed != c->prev[h].missed || c->pm_now[h] != c->pm_prev[h];
}

static void pk_pack_counters(msgpack_packer *pk, const struct pk_counts_pair *c)
{
	const struct pk_counters *now = c->now, *prev = c->prev;
	unsigned nh = 0;
	for (unsigned h = 1; h < PK_HOOK_MAX; h++)
		nh += pk_hook_changed(c, h);
	np_pack_str(pk, "hooks");
	msgpack_pack_map(pk, nh);
	for (unsigned h = 1; h < PK_HOOK_MAX; h++) {
		if (!pk_hook_changed(c, h))
			continue;
		np_pack_str(pk, pktcols_hook_name(h));
		msgpack_pack_map(pk, 7);
		np_pack_kv_u64(pk, "seen", now[h].seen - prev[h].seen);
		np_pack_kv_u64(pk, "sampled_out", now[h].sampled_out - prev[h].sampled_out);
		np_pack_kv_u64(pk, "capped", now[h].capped - prev[h].capped);
		np_pack_kv_u64(pk, "lost", now[h].lost - prev[h].lost);
		np_pack_kv_u64(pk, "emitted", now[h].emitted - prev[h].emitted);
		np_pack_kv_u64(pk, "missed", now[h].missed - prev[h].missed);
		np_pack_kv_u64(pk, "prog_missed", c->pm_now[h] - c->pm_prev[h]);
	}
}

/* Active-ID totals since start (not per interval: they are few). */
static void pk_pack_aid(msgpack_packer *pk, struct aid_state *a)
{
	uint64_t v[AID_C_MAX];
	aid_counters(a, v);
	np_pack_str(pk, "active_ids");
	msgpack_pack_map(pk, 5);
	np_pack_kv_u64(pk, "written", v[AID_C_WRITTEN]);
	np_pack_kv_u64(pk, "nospc", v[AID_C_NOSPC]);
	np_pack_kv_u64(pk, "write_err", v[AID_C_WRITE_ERR]);
	np_pack_kv_u64(pk, "parsed", v[AID_C_PARSED]);
	np_pack_kv_u64(pk, "lost", v[AID_C_LOST]);
}

static int pk_snapshot(void *state, struct rec_ctx *ctx, struct np_recbuf *rb, uint64_t t0,
		       uint64_t t1)
{
	struct pk_state *s = state;
	struct pk_counters now[PK_HOOK_MAX];
	uint64_t pm_now[PK_HOOK_MAX];
	uint32_t div_used = s->skel->data->sample_div;
	pk_qdisc_age(s);
	if (pk_read_counters(s, now) < 0)
		memcpy(now, s->prev, sizeof(now));
	pk_read_prog_missed(s, pm_now);
	struct pk_counts_pair cp = { now, s->prev, pm_now, s->prog_missed_prev };
	qsort(s->ev, s->nev, sizeof(*s->ev), pk_cmp_ts);
	if (s->nev)
		pk_pack_flows(s, rb, s->ev, s->nev);
	size_t nbatch = s->nev ? (s->nev + PK_BATCH_MAX - 1) / PK_BATCH_MAX : 1;
	for (size_t b = 0; b < nbatch; b++) {
		size_t off = b * PK_BATCH_MAX;
		size_t n = s->nev - off < PK_BATCH_MAX ? s->nev - off : PK_BATCH_MAX;
		msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_PKT_EVENTS, PKTCOLS_VERSION);
		bool first = b == 0;
		msgpack_pack_map(pk, PKTCOLS_EVENT_KEYS + 4 + (first ? 2 + (s->aid != NULL) : 0));
		np_pack_kv_u64(pk, "t0_ns", t0);
		np_pack_kv_u64(pk, "t1_ns", t1);
		np_pack_kv_u64(pk, "n", n);
		np_pack_kv_u64(pk, "sample_n", div_used);
		if (first) {
			pk_pack_counters(pk, &cp);
			np_pack_kv_u64(pk, "user_dropped", s->user_dropped);
			if (s->aid)
				pk_pack_aid(pk, s->aid);
		}
		pktcols_pack_events(pk, s->ev + off, n);
	}
	memcpy(s->prev, now, sizeof(now));
	memcpy(s->prog_missed_prev, pm_now, sizeof(pm_now));
	s->nev = 0;
	/* --max-cpu: the divisor nprec wants from the next interval on */
	if (ctx->sample_div && ctx->sample_div != div_used)
		s->skel->data->sample_div = ctx->sample_div;
	return 0;
}

static uint64_t pk_lost(void *state)
{
	struct pk_state *s = state;
	struct pk_counters now[PK_HOOK_MAX];
	uint64_t lost = s->user_dropped;
	if (pk_read_counters(s, now) == 0)
		for (unsigned h = 0; h < PK_HOOK_MAX; h++)
			lost += now[h].lost;
	return lost;
}

static uint64_t pk_events(void *state)
{
	return ((struct pk_state *)state)->received;
}

static void pk_close(void *state)
{
	struct pk_state *s = state;
	if (!s)
		return;
	for (unsigned i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	ring_buffer__free(s->rb);
	s->rb = NULL;
	aid_close(s->aid);
	if (s->ntc) {
		int saved;
		if (pk_netns_enter(s->netns_fd, &saved) == 0) {
			for (unsigned i = 0; i < s->ntc; i++)
				pk_tc_detach_one(s, &s->tc[i]);
			pk_netns_leave(saved);
		}
	}
	ring_buffer__free(s->rb);
	pktpath_bpf__destroy(s->skel);
	free(s->ev);
	free(s->flows);
	free(s->slots);
	free(s);
}

const struct rec_family rec_family_pktpath = {
	.name = PK_FAMILY,
	.open = pk_open,
	.drain = pk_drain,
	.snapshot = pk_snapshot,
	.lost = pk_lost,
	.events = pk_events,
	.close = pk_close,
};
