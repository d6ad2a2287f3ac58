/* Flows family, user side: loads bpf/flows.bpf.c, and every interval turns
 * the cumulative counters of every flow slot into per-interval
 * deltas (NP_REC_FLOWS); drops come one by one through a ring buffer, plus
 * the per-tuple counts of those that found it full (NP_REC_DROPS).
 *
 * Slots (bpf/flows.h): the kernel claims a free one per new flow; user
 * space gives it back, in two steps so that no update is lost: a closed
 * flow after its last report, an idle one when the table fills up, is
 * first taken from its socket (sk FLOWS_SK_RELEASING: the socket's next
 * event makes a new flow), and at least RC_FLOW_GRACE_NS later (the next
 * interval, or a drain for the closed flows rc_flows_reclaim gives back
 * early), when every program that still saw the old owner has finished,
 * read once more, zeroed and freed. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "family.h"
#include "cpuslice.h"
#include "flows.h"
#include "flows.skel.h"
#include "flowsbtf.h"
#include "hookhub.h"
#include "npmsg.h"
#include "progtab.h"
#include "rcbpf.h"
#include "rcdelta.h"
#include "rcfilter.h"
#include "records.h"
#include "recschema.h"

#define RC_FLOWS_FAMILY "flows"
/* drop events kept per interval with their own row; more are counted per
 * (tuple, reason) like the kernel's overflow map */
#define RC_DROP_EVROWS 65536
#define RC_FLOWS_TP_DROP 4   /* kfree_skb */
#define RC_FLOWS_NTP 6

/* the idle flows of a table a quarter full (or that had no free slot for a
 * new flow) go back after this many intervals without activity; their
 * socket's next event makes a new flow */
#define RC_FLOW_IDLE_IVS 2
/* a slot taken from its socket is zeroed and freed this long after, when
 * every program that still saw the old owner has long finished (they run
 * for microseconds) */
#define RC_FLOW_GRACE_NS 100000000ULL
/* a drain checks the closed and no-slot counters at least this often, and
 * at every drain while new flows come (rc_flows_reclaim) */
#define RC_FLOW_CHECK_NS 500000000ULL

_Static_assert(sizeof(struct rc_flow_meta) == 192, "flow_meta: three cache lines");
_Static_assert(offsetof(struct rc_flow_meta, gen) + sizeof(uint64_t) == 64,
	       "flow_meta: a send/recv's fields in the first cache line");

/* Cumulative counters of a slot (the shared ones and the per-CPU ones folded). */
struct rc_flow_prev {
	uint64_t tx_bytes, rx_bytes, tx_calls, rx_calls, retrans, srtt_sum, srtt_n;
	uint64_t segs_in, segs_out, total_retrans;
};

/* One flow: its counters and its shared record. */
struct rc_flow_sum {
	struct rc_flow_prev c;          /* cumulative counters */
	uint32_t srtt_min, srtt_max, srtt_last, cwnd;
	uint64_t open_ns, close_ns, cgroup_id;
	uint32_t pid, tid;
	char comm[16];
};

/* What user space keeps per slot between intervals. */
struct rc_flow_slot {
	uint64_t gen;                   /* the flow prev belongs to; 0 none */
	struct rc_flow_prev prev;
	uint32_t idle;                  /* intervals without activity */
	bool releasing;                 /* sk set to FLOWS_SK_RELEASING by us */
	uint64_t taken_ns;              /* when (CLOCK_MONOTONIC) */
};

struct rc_flow_row {
	struct rc_flow_key k;
	struct rc_flow_sum s;
	struct rc_flow_prev d;          /* deltas this interval */
	char la[46], ra[46];
};

struct rc_flows {
	struct flows_bpf *skel;
	struct rc_tp tps[RC_FLOWS_NTP];
	bool send_calls;                /* flows_send_calls (--no-send-calls clears it) */
	int ncpus;
	void *vbuf;                     /* ncpus x stride scratch */
	void *zbuf;                     /* ncpus x stride zeroes (a slot given back) */
	void *evbuf;                    /* FLOWS_EV_N x ncpus x stride: flow_events, batched */
	bool ev_batch;                  /* the kernel does batched lookups of flow_events */
	uint32_t nslots;
	struct rc_flow_meta *meta;      /* flow_meta, mmapped: nslots entries */
	size_t meta_len;
	struct hub_gate *gates;         /* hub_gates (the hub's when shared), mmapped */
	size_t gates_len;
	struct rc_flow_slot *slots;     /* nslots */
	struct rc_dtab drops_prev;
	struct rc_flow_row *rows;
	size_t nrows, caprows;
	uint64_t evicted;               /* user space: drop-count entries evicted, no memory */
	uint64_t tcp_pass_failed;       /* snapshots whose flows_tcp_iter pass failed */
	uint64_t noslot_seen;           /* FLOWS_EV_NO_SLOT at the last read */
	uint64_t noslot_reclaim;        /* ... at the last early give-back */
	uint64_t closed_seen;           /* FLOWS_EV_CLOSED at the last early give-back */
	uint32_t *taken;                /* slots given back early, in their grace time */
	size_t ntaken;
	uint32_t *live;                 /* slots in use at the last read (sk not 0), ascending */
	size_t nlive;
	uint64_t gen_seen;              /* flows_gen at the last read */
	uint64_t gen_check, check_ns;   /* flows_gen and time at the last counter check */
	bool scan_all;                  /* the next read walks every slot */
	uint64_t io_events;             /* send/recv events read so far (the kernel does not count them) */
	struct ring_buffer *ring;       /* drop_events */
	struct rc_drop_event *dev;      /* this interval's drop events */
	size_t ndev, capdev;
	struct rc_dtab dfold;           /* drop events beyond RC_DROP_EVROWS: key -> count */
	struct rc_drop_key *fkeys;      /* the keys in dfold, in insertion order */
	size_t nfkeys, capfkeys;
};

static void rc_flows_tps(struct rc_flows *f)
{
	struct flows_bpf *s = f->skel;
	/* no tcp:tcp_probe: srtt/cwnd are sampled at send/recv (flows.bpf.c) */
	struct rc_tp t[RC_FLOWS_NTP] = {
		{ .name = "sock_send_length", .btf_prog = s->progs.flows_send_btf, .raw_prog = s->progs.flows_send_raw, .required = true,
		  .hub_hook = HUB_SOCK_SEND, .hub_slot = HUB_SLOT_FLOWS, .hub_map = s->maps.hub_sock_send },
		{ .name = "sock_recv_length", .btf_prog = s->progs.flows_recv_btf, .raw_prog = s->progs.flows_recv_raw, .required = true,
		  .hub_hook = HUB_SOCK_RECV, .hub_slot = HUB_SLOT_FLOWS, .hub_map = s->maps.hub_sock_recv },
		{ .name = "tcp_retransmit_skb", .btf_prog = s->progs.flows_retrans_btf, .raw_prog = s->progs.flows_retrans_raw, .required = false },
		{ .name = "inet_sock_set_state", .btf_prog = s->progs.flows_state_btf, .raw_prog = s->progs.flows_state_raw, .required = false,
		  .hub_hook = HUB_SOCK_STATE, .hub_slot = HUB_SLOT_FLOWS, .hub_map = s->maps.hub_sock_state },
		[RC_FLOWS_TP_DROP] = { .name = "kfree_skb", .btf_prog = s->progs.flows_drop_btf, .raw_prog = s->progs.flows_drop_raw,
				       .required = false },
		/* a TCP socket's end: what its application read after CLOSE
		 * (bytes received from the socket, --no-send-calls) */
		{ .name = "tcp_destroy_sock", .btf_prog = s->progs.flows_destroy_btf, .required = false },
	};
	memcpy(f->tps, t, sizeof(t));
}

/* !send_calls: the hub's TCP gates (bpf/hub.h). TCP sends never enter
 * flows' program; TCP receives do while a flow has no owner, else 1 in
 * FLOWS_RX_SAMPLE drawn by the hub (with --pid every filtered call
 * counts: no receive gate). */
static void rc_flows_gates(struct rc_flows *f, struct rec_ctx *ctx)
{
	char why[96];
	bool tx = f->tps[0].hub.joined && hookhub_gate(f->tps[0].hub.hub, HUB_SOCK_SEND, 0);
	bool rx = !ctx->cfg->npids && f->tps[1].hub.joined &&
		  hookhub_gate(f->tps[1].hub.hub, HUB_SOCK_RECV, FLOWS_RX_SAMPLE);
	snprintf(why, sizeof(why), "TCP sends %s; TCP receives %s", tx ? "skip flows" : "enter flows",
		 rx ? "skip flows while every flow has an owner, but 1 in 256" : "enter flows");
	rec_probe(ctx, RC_FLOWS_FAMILY, "hub TCP gate", tx || rx ? REC_PROBE_ATTACHED : REC_PROBE_SKIPPED, why);
}

/* Open + configure + load, with tp_btf or raw_tp programs. */
static int rc_flows_load(struct rc_flows *f, struct rec_ctx *ctx, bool use_raw, char *err, size_t errlen)
{
	int rc;
	f->skel = flows_bpf__open();
	if (!f->skel) {
		snprintf(err, errlen, "cannot open BPF object: %s", strerror(errno));
		return -errno;
	}
	RC_FILTER_SET(f->skel->rodata, ctx->cfg);
	rc_size_pcpu_map(f->skel->maps.flow_ctr, f->ncpus);
	rc_size_pcpu_map(f->skel->maps.drops, f->ncpus);
	/* a power of 2: the kernel masks the hash */
	uint32_t cap = bpf_map__max_entries(f->skel->maps.flow_ctr);
	for (f->nslots = 1; f->nslots * 2 <= cap; f->nslots *= 2)
		;
	bpf_map__set_max_entries(f->skel->maps.flow_ctr, f->nslots);
	bpf_map__set_max_entries(f->skel->maps.flow_meta, f->nslots);
	bpf_map__set_max_entries(f->skel->maps.flow_tcp_slot, f->nslots);
	f->skel->rodata->flows_slot_mask = f->nslots - 1;
	f->skel->rodata->rc_task_filter = ctx->cfg->npids > 0;
	const char *ce = getenv("NPREC_TEST_COUNT_ENTRIES");
	f->skel->rodata->flows_count_entries = ce && *ce == '1';
	/* without BTF (raw_tp) the prototype is unknown: every hit counts */
	f->skel->rodata->flows_retrans_has_err = rc_flows_retrans_has_err(rc_vmlinux_btf());
	rc_flows_tps(f);
	/* --no-send-calls: TCP bytes sent from the socket at snapshots and
	 * closes (bpf/flows.bpf.c flows_tcp_iter); the send program returns at
	 * once for TCP and counts the other protocols' sends, which no socket
	 * field totals (UDP); tp_btf only */
	f->send_calls = use_raw || rc_tp_raw_forced() || !ctx->cfg->no_send_calls;
	f->skel->rodata->flows_send_calls = f->send_calls;
	bpf_program__set_autoload(f->skel->progs.flows_tcp_iter, !f->send_calls);
	rc = rc_tp_select(ctx, RC_FLOWS_FAMILY, f->tps, RC_FLOWS_NTP, use_raw, err, errlen);
	/* the receive gate's want is the count of flows with no owner: in the
	 * hub's map, which the hub's heads read */
	if (!rc && !f->send_calls)
		hookhub_share_gates(ctx, f->skel->maps.hub_gates);
	if (!rc)
		rc = flows_bpf__load(f->skel);
	if (rc) {
		if (!err[0])
			snprintf(err, errlen, "cannot load BPF programs: %s", strerror(-rc));
		flows_bpf__destroy(f->skel);
		f->skel = NULL;
	}
	return rc;
}

static void rc_flows_close(void *state)
{
	struct rc_flows *f = state;
	if (!f)
		return;
	rc_tp_detach(f->tps, RC_FLOWS_NTP);
	if (f->meta)
		munmap(f->meta, f->meta_len);
	if (f->gates)
		munmap(f->gates, f->gates_len);
	flows_bpf__destroy(f->skel);
	rc_dtab_free(&f->drops_prev);
	rc_dtab_free(&f->dfold);
	ring_buffer__free(f->ring);
	free(f->dev);
	free(f->fkeys);
	free(f->vbuf);
	free(f->zbuf);
	free(f->evbuf);
	free(f->slots);
	free(f->taken);
	free(f->live);
	free(f->rows);
	free(f);
}

static int rc_drop_on_event(void *ctx, void *data, size_t size)
{
	struct rc_flows *f = ctx;
	if (size < sizeof(struct rc_drop_event))
		return 0;
	const struct rc_drop_event *e = data;
	if (f->ndev == f->capdev && f->capdev < RC_DROP_EVROWS) {
		size_t cap = f->capdev ? f->capdev * 2 : 256;
		void *p = realloc(f->dev, cap * sizeof(*f->dev));
		if (p) {
			f->dev = p;
			f->capdev = cap;
		}
	}
	if (f->ndev < f->capdev) {
		f->dev[f->ndev++] = *e;
		return 0;
	}
	uint64_t *n = rc_dtab_find(&f->dfold, &e->k);
	if (!n) {
		if (f->nfkeys == f->capfkeys) {
			size_t cap = f->capfkeys ? f->capfkeys * 2 : 64;
			void *p = realloc(f->fkeys, cap * sizeof(*f->fkeys));
			if (!p) {
				f->evicted++;       /* no memory: the drop is lost */
				return 0;
			}
			f->fkeys = p;
			f->capfkeys = cap;
		}
		if (!(n = rc_dtab_put(&f->dfold, &e->k))) {
			f->evicted++;
			return 0;
		}
		f->fkeys[f->nfkeys++] = e->k;
	}
	(*n)++;
	return 0;
}

/* The slot records, read (and given back) in place. */
static int rc_flows_map_slots(struct rc_flows *f, char *err, size_t errlen)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)f->nslots * sizeof(struct rc_flow_meta);
	f->meta_len = (len + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	void *p = mmap(NULL, f->meta_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(f->skel->maps.flow_meta), 0);
	if (p == MAP_FAILED) {
		int e = errno;
		snprintf(err, errlen, "cannot map the flow table: %s", strerror(e));
		return -e;
	}
	f->meta = p;
	f->gates_len = (size_t)pg;
	p = mmap(NULL, f->gates_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(f->skel->maps.hub_gates), 0);
	if (p == MAP_FAILED) {
		int e = errno;
		snprintf(err, errlen, "cannot map the hub's gates: %s", strerror(e));
		return -e;
	}
	f->gates = p;
	f->slots = calloc(f->nslots, sizeof(*f->slots));
	f->taken = calloc(f->nslots, sizeof(*f->taken));
	f->live = calloc(f->nslots, sizeof(*f->live));
	f->scan_all = true;
	return f->slots && f->taken && f->live ? 0 : -ENOMEM;
}

/* !send_calls: the iterator over TCP sockets with a flow (flows_tcp_sk) */
static int rc_flows_attach_iter(struct rc_flows *f, char *err, size_t errlen)
{
	f->skel->links.flows_tcp_iter = rc_iter_attach_sk_storage(f->skel->progs.flows_tcp_iter,
								  f->skel->maps.flows_tcp_sk);
	if (!f->skel->links.flows_tcp_iter) {
		int e = errno;
		snprintf(err, errlen, "cannot attach the TCP socket iterator: %s", strerror(e));
		return -e;
	}
	return 0;
}

static int rc_flows_open(struct rec_ctx *ctx, void **state, char *err, size_t errlen)
{
	if (ctx->cfg->no_flows) {
		snprintf(err, errlen, "disabled by --no-flows");
		return REC_FAM_OFF_OPTION;
	}
	struct rc_flows *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->ncpus = rc_ncpus();
	f->vbuf = calloc((size_t)f->ncpus, rc_pcpu_stride(sizeof(struct rc_flow_ctr)));
	f->zbuf = calloc((size_t)f->ncpus, rc_pcpu_stride(sizeof(struct rc_flow_ctr)));
	f->evbuf = calloc((size_t)f->ncpus * FLOWS_EV_N, rc_pcpu_stride(sizeof(uint64_t)));
	f->ev_batch = true;
	if (!f->vbuf || !f->zbuf || !f->evbuf || rc_dtab_init(&f->drops_prev, sizeof(struct rc_drop_key), sizeof(uint64_t)) ||
	    rc_dtab_init(&f->dfold, sizeof(struct rc_drop_key), sizeof(uint64_t))) {
		rc_flows_close(f);
		return -ENOMEM;
	}
	int rc = rc_flows_load(f, ctx, false, err, errlen);
	if (rc && rc != -ENOENT) {   /* tp_btf refused: the raw_tp variants */
		char err2[256] = "";
		rc = rc_flows_load(f, ctx, true, err2, sizeof(err2));
		if (rc)
			snprintf(err, errlen, "%s", err2);
	}
	if (!rc)
		rc = rc_tp_attach(ctx, RC_FLOWS_FAMILY, f->tps, RC_FLOWS_NTP,
				  !bpf_program__autoload(f->tps[1].btf_prog), err, errlen);
	if (!rc && !f->send_calls)
		rc = rc_flows_attach_iter(f, err, errlen);
	if (!rc)
		rc = rc_flows_map_slots(f, err, errlen);
	if (!rc) {
		f->ring = ring_buffer__new(bpf_map__fd(f->skel->maps.drop_events), rc_drop_on_event, f, NULL);
		if (!f->ring) {
			rc = -errno;
			snprintf(err, errlen, "cannot set up the drop ring buffer: %s", strerror(errno));
		}
	}
	if (rc) {
		rc_flows_close(f);
		/* a kernel without the tracepoints turns the family off (the
		 * header says why); other failures stop nprec */
		return rc == -ENOENT ? REC_FAM_OFF_KERNEL : rc;
	}
	if (!f->send_calls) {
		rec_probe(ctx, RC_FLOWS_FAMILY, "iter/bpf_sk_storage_map", REC_PROBE_ATTACHED,
			  "--no-send-calls: TCP bytes sent read from the socket at snapshots and "
			  "closes; the send program counts UDP sends only");
		rc_flows_gates(f, ctx);
	}
	*state = f;
	return 0;
}

/* ---- reading the maps ---- */

static uint64_t rc_flows_counter(struct rc_flows *f, uint32_t k);
static void rc_flows_counters(struct rc_flows *f, uint64_t tot[FLOWS_EV_N]);

/* The slot's per-CPU counters (in f->vbuf) folded into s->c and the
 * srtt extremes; the shared ones (s->c.tx_bytes ... rx_calls) kept. */
static void rc_flow_fold(struct rc_flows *f, struct rc_flow_sum *s)
{
	size_t stride = rc_pcpu_stride(sizeof(struct rc_flow_ctr));
	s->c.retrans = s->c.srtt_sum = s->c.srtt_n = 0;
	s->c.segs_in = s->c.segs_out = s->c.total_retrans = 0;
	s->srtt_min = s->srtt_max = 0;
	for (int c = 0; c < f->ncpus; c++) {
		const struct rc_flow_ctr *v = (const void *)((char *)f->vbuf + (size_t)c * stride);
		s->c.retrans += v->retrans;
		s->c.srtt_sum += v->srtt_sum_us;  s->c.srtt_n += v->srtt_n;
		if (v->segs_in > s->c.segs_in) s->c.segs_in = v->segs_in;
		if (v->segs_out > s->c.segs_out) s->c.segs_out = v->segs_out;
		if (v->total_retrans > s->c.total_retrans) s->c.total_retrans = v->total_retrans;
		if (v->srtt_min_us && (!s->srtt_min || v->srtt_min_us < s->srtt_min)) s->srtt_min = v->srtt_min_us;
		if (v->srtt_max_us > s->srtt_max) s->srtt_max = v->srtt_max_us;
	}
}

/* The shared record of a slot (written by the kernel meanwhile: a copy;
 * the counters it adds to atomically read whole). */
static void rc_flow_meta_copy(struct rc_flow_meta *m, struct rc_flow_row *r)
{
	struct rc_flow_meta c;
	memcpy(&c, m, sizeof(c));
	r->s.c.tx_bytes = __atomic_load_n(&m->tx_bytes, __ATOMIC_RELAXED);
	r->s.c.rx_bytes = __atomic_load_n(&m->rx_bytes, __ATOMIC_RELAXED);
	r->s.c.tx_calls = __atomic_load_n(&m->tx_calls, __ATOMIC_RELAXED);
	r->s.c.rx_calls = __atomic_load_n(&m->rx_calls, __ATOMIC_RELAXED);
	r->k = c.k;
	r->s.srtt_last = c.srtt_last_us;
	r->s.cwnd = c.cwnd_last;
	r->s.open_ns = c.open_ns;
	r->s.close_ns = c.close_ns;
	r->s.cgroup_id = c.cgroup_id;
	r->s.pid = c.pid;
	r->s.tid = c.tid;
	memcpy(r->s.comm, c.comm, sizeof(r->s.comm));
	r->s.comm[15] = 0;
}

static struct rc_flow_row *rc_flows_row(struct rc_flows *f)
{
	if (f->nrows == f->caprows) {
		size_t cap = f->caprows ? f->caprows * 2 : 256;
		void *p = realloc(f->rows, cap * sizeof(*f->rows));
		if (!p)
			return NULL;
		f->rows = p;
		f->caprows = cap;
	}
	return &f->rows[f->nrows++];
}

/* Kernel counters that only grow, read on some CPU at some time: the max
 * over CPUs can lag what an earlier read saw, never a negative delta. */
#define RC_D(field) (r->d.field = p && r->s.c.field < p->field ? 0 : r->s.c.field - (p ? p->field : 0))

/* Row of slot i for this interval: counters, deltas against prev (NULL: a
 * flow new to us). false: no row (no memory, or not readable). */
static bool rc_flow_read(struct rc_flows *f, uint32_t i, const struct rc_flow_prev *p, struct rc_flow_row **out)
{
	if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.flow_ctr), &i, f->vbuf))
		return false;
	struct rc_flow_row *r = rc_flows_row(f);
	if (!r) {
		f->evicted++;
		return false;
	}
	rc_flow_meta_copy(&f->meta[i], r);
	rc_flow_fold(f, &r->s);
	RC_D(tx_bytes); RC_D(rx_bytes); RC_D(tx_calls); RC_D(rx_calls); RC_D(retrans);
	RC_D(srtt_sum); RC_D(srtt_n); RC_D(segs_in); RC_D(segs_out); RC_D(total_retrans);
	f->io_events += r->d.tx_calls + r->d.rx_calls;
	*out = r;
	return true;
}

static bool rc_flow_active(const struct rc_flow_row *r)
{
	return r->d.tx_calls || r->d.rx_calls || r->d.tx_bytes || r->d.retrans || r->d.srtt_n || r->d.segs_in ||
	       r->d.segs_out;
}

static uint64_t rc_flows_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void rc_flow_take(struct rc_flows *f, uint32_t i, uint64_t now)
{
	__atomic_store_n(&f->meta[i].sk, FLOWS_SK_RELEASING, __ATOMIC_RELEASE);
	f->slots[i].releasing = true;
	f->slots[i].taken_ns = now;
}

/* Second step of giving slot i back: updates that raced with the first
 * step become one more row, then the slot is zeroed and free. */
static void rc_flow_release(struct rc_flows *f, uint32_t i)
{
	struct rc_flow_slot *ps = &f->slots[i];
	struct rc_flow_row *r;
	if (ps->gen && rc_flow_read(f, i, &ps->prev, &r) && !rc_flow_active(r))
		f->nrows--;
	bpf_map_update_elem(bpf_map__fd(f->skel->maps.flow_ctr), &i, f->zbuf, BPF_ANY);
	/* an open flow given back unowned (idle) leaves the count
	 * (bpf/flows.bpf.c flow_uncount), or every TCP receive would keep
	 * looking its flow up */
	uint32_t one = 1;
	if (__atomic_compare_exchange_n(&f->meta[i].unowned, &one, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		__atomic_fetch_sub(&f->gates[HUB_SOCK_RECV].want, 1, __ATOMIC_ACQ_REL);
	memset((char *)&f->meta[i] + sizeof(f->meta[i].sk), 0, sizeof(f->meta[i]) - sizeof(f->meta[i].sk));
	__atomic_store_n(&f->meta[i].sk, 0, __ATOMIC_RELEASE);
	memset(ps, 0, sizeof(*ps));
}

/* UDP sockets of one tuple (SO_REUSEPORT, a socket registered again) are
 * one flow, as the socket sees it: rows with the same key are summed. */
static int rc_flows_merge(struct rc_flows *f)
{
	struct rc_dtab seen;
	size_t out = 0;
	if (rc_dtab_init(&seen, sizeof(struct rc_flow_key), sizeof(uint64_t)))
		return -ENOMEM;
	for (size_t i = 0; i < f->nrows; i++) {
		struct rc_flow_row *r = &f->rows[i];
		uint64_t *at = r->k.proto == 17 ? rc_dtab_find(&seen, &r->k) : NULL;
		if (!at) {
			uint64_t *n = r->k.proto == 17 ? rc_dtab_put(&seen, &r->k) : NULL;
			if (n)
				*n = out;
			if (out != i)
				f->rows[out] = *r;
			out++;
			continue;
		}
		struct rc_flow_row *a = &f->rows[*at];
		bool busier = r->d.tx_calls + r->d.rx_calls > a->d.tx_calls + a->d.rx_calls;
		uint64_t *x = (uint64_t *)&a->s.c, *y = (uint64_t *)&r->s.c;
		uint64_t *dx = (uint64_t *)&a->d, *dy = (uint64_t *)&r->d;
		for (size_t j = 0; j < sizeof(a->d) / sizeof(uint64_t); j++) {
			x[j] += y[j];
			dx[j] += dy[j];
		}
		if (r->s.srtt_min && (!a->s.srtt_min || r->s.srtt_min < a->s.srtt_min)) a->s.srtt_min = r->s.srtt_min;
		if (r->s.srtt_max > a->s.srtt_max) a->s.srtt_max = r->s.srtt_max;
		if (r->s.open_ns && (!a->s.open_ns || r->s.open_ns < a->s.open_ns)) a->s.open_ns = r->s.open_ns;
		if (busier) {
			a->s.pid = r->s.pid;      /* the busier socket's owner */
			a->s.tid = r->s.tid;
			a->s.cgroup_id = r->s.cgroup_id;
			memcpy(a->s.comm, r->s.comm, sizeof(a->s.comm));
		}
	}
	f->nrows = out;
	rc_dtab_free(&seen);
	return 0;
}

/* Rows of the flows that changed (or opened/closed) since the last read,
 * after those rc_flows_reclaim made meanwhile.
 *
 * Which slots to visit: a slot becomes used only by the kernel's claim,
 * which bumps flows_gen before it stores the slot's gen, and free only by
 * rc_flow_release. So while flows_gen has not moved since the last read
 * (and that read met no slot half filled), the used slots are among those
 * the last read found used, and the walk visits only those. Walking all
 * 16 k slots reads 3 MB of the mmapped table, one cold line a slot: on
 * the bench VM that was ~0.3 ms an interval, ~10 % of an idle or paced
 * recorder's own CPU; a host where new flows come every second walks
 * them all as before. */
static int rc_flows_collect(struct rc_flows *f)
{
	uint32_t live = 0;
	uint64_t now = rc_flows_now();
	uint64_t gen = __atomic_load_n(&f->skel->bss->flows_gen, __ATOMIC_ACQUIRE);
	bool all = f->scan_all || gen != f->gen_seen;
	size_t n = all ? f->nslots : f->nlive, kept = 0;
	f->gen_seen = gen;
	f->scan_all = false;
	for (size_t j = 0; j < n; j++) {
		uint32_t i = all ? (uint32_t)j : f->live[j];
		volatile struct rc_flow_meta *m = &f->meta[i];
		if ((j & 4095) == 4095)
			cpuslice_point();
		/* a free slot (most of them) is one cache line read: the kernel
		 * claims only slots whose sk is 0, and one we took keeps
		 * FLOWS_SK_RELEASING until rc_flow_release, so sk 0 also says
		 * it is not ours to release (its user-side entry stays cold) */
		uint64_t sk = __atomic_load_n(&m->sk, __ATOMIC_ACQUIRE);
		if (!sk)
			continue;
		struct rc_flow_slot *ps = &f->slots[i];
		if (ps->releasing) {
			if (now - ps->taken_ns >= RC_FLOW_GRACE_NS)
				rc_flow_release(f, i);
			else
				f->live[kept++] = i;
			continue;
		}
		f->live[kept++] = i;
		uint64_t g = __atomic_load_n(&m->gen, __ATOMIC_ACQUIRE);
		if (sk == FLOWS_SK_RELEASING || !g) {
			f->scan_all = true;     /* being filled: the next read finds it */
			continue;
		}
		live++;
		const struct rc_flow_prev *p = ps->gen == g ? &ps->prev : NULL;
		struct rc_flow_row *r;
		if (!rc_flow_read(f, i, p, &r))
			continue;
		bool active = rc_flow_active(r);
		bool changed = !p || active || r->s.close_ns;
		ps->idle = active ? 0 : ps->idle + 1;
		ps->gen = g;
		ps->prev = r->s.c;
		if (r->s.close_ns)
			rc_flow_take(f, i, now);      /* reported now, for the last time */
		if (!changed)
			f->nrows--;
	}
	f->nlive = kept;
	/* a table a quarter full, or one where a new flow found no free slot
	 * among those its socket hashes to, gives its idle flows back */
	uint64_t noslot = rc_flows_counter(f, FLOWS_EV_NO_SLOT);
	bool tight = live >= f->nslots / 4 || noslot != f->noslot_seen;
	f->noslot_seen = noslot;
	if (tight)
		for (uint32_t i = 0; i < f->nslots; i++)
			if (f->slots[i].gen && !f->slots[i].releasing && f->slots[i].idle >= RC_FLOW_IDLE_IVS)
				rc_flow_take(f, i, now);
	int rc = rc_flows_merge(f);
	for (size_t i = 0; i < f->nrows; i++) {
		rc_format_addr(f->rows[i].k.laddr, f->rows[i].la, sizeof(f->rows[i].la));
		rc_format_addr(f->rows[i].k.raddr, f->rows[i].ra, sizeof(f->rows[i].ra));
	}
	return rc;
}

/* Between two intervals, once many TCP flows closed (an eighth of the
 * table) or a new flow found no free slot: the closed flows' rows are
 * made now (reported with the interval's), their slots taken, and freed
 * RC_FLOW_GRACE_NS later, instead of an interval for each step. Under
 * connection churn, and at start-up (slow under load: no interval runs
 * until every family has loaded, but drains do), a table that waits for
 * the intervals fills up and new flows find no slot (lost). Called at
 * every drain (the counters at most every RC_FLOW_CHECK_NS while no new
 * flow came); a scan reads the whole table (~1 ms), only when due.
 * Returns the flows given back (the drain tick shortens while many are). */
static size_t rc_flows_reclaim(struct rc_flows *f)
{
	uint64_t now = rc_flows_now();
	size_t keep = 0;
	for (size_t j = 0; j < f->ntaken; j++) {
		uint32_t i = f->taken[j];
		if (!f->slots[i].releasing)
			continue;       /* freed by an interval's read meanwhile */
		if (now - f->slots[i].taken_ns >= RC_FLOW_GRACE_NS)
			rc_flow_release(f, i);
		else
			f->taken[keep++] = i;
	}
	f->ntaken = keep;
	/* The counters cost a syscall, the drain's only one when nothing is
	 * due. A table fills only by claims, which move flows_gen (free to
	 * read: mmapped): while it stands still they are read every
	 * RC_FLOW_CHECK_NS, not at every drain. */
	uint64_t gen = __atomic_load_n(&f->skel->bss->flows_gen, __ATOMIC_ACQUIRE);
	if (gen == f->gen_check && now - f->check_ns < RC_FLOW_CHECK_NS)
		return f->ntaken - keep;
	f->gen_check = gen;
	f->check_ns = now;
	uint64_t ev[FLOWS_EV_N];
	rc_flows_counters(f, ev);
	uint64_t closed = ev[FLOWS_EV_CLOSED], noslot = ev[FLOWS_EV_NO_SLOT];
	if (closed - f->closed_seen < f->nslots / 8 && noslot == f->noslot_reclaim)
		return 0;
	f->closed_seen = closed;
	f->noslot_reclaim = noslot;
	for (uint32_t i = 0; i < f->nslots && f->ntaken < f->nslots; i++) {
		struct rc_flow_meta *m = &f->meta[i];
		struct rc_flow_slot *ps = &f->slots[i];
		struct rc_flow_row *r;
		if (ps->releasing || !__atomic_load_n(&m->close_ns, __ATOMIC_ACQUIRE))
			continue;
		uint64_t sk = __atomic_load_n(&m->sk, __ATOMIC_ACQUIRE);
		uint64_t g = __atomic_load_n(&m->gen, __ATOMIC_ACQUIRE);
		if (!sk || sk == FLOWS_SK_RELEASING || !g)
			continue;
		if (!rc_flow_read(f, i, ps->gen == g ? &ps->prev : NULL, &r))
			continue;
		ps->gen = g;
		ps->prev = r->s.c;
		rc_flow_take(f, i, now);
		f->taken[f->ntaken++] = i;
	}
	return f->ntaken - keep;
}

/* ---- packing ---- */

#define RC_COL(key, expr) do {                                             \
	for (size_t i_ = 0; i_ < n; i_++) { const struct rc_flow_row *r = &f->rows[i_]; col[i_] = (expr); } \
	np_pack_kv_u64_array(pk, key, col, n);                                 \
} while (0)

static uint64_t rc_ts(uint64_t t, int64_t shift) { return t ? t + (uint64_t)shift : 0; }

static int rc_flows_pack(struct rc_flows *f, struct rec_ctx *ctx, struct np_recbuf *rb,
			 uint64_t t0, uint64_t t1)
{
	size_t n = f->nrows;
	int64_t sh = ctx->shift_ns;
	uint64_t *col = calloc(n ? n : 1, sizeof(uint64_t));
	if (!col)
		return -ENOMEM;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_FLOWS, 1);
	msgpack_pack_map(pk, NPK_FLOWS__N);
	np_pack_kv_u64(pk, NPK(FLOWS, T0_NS), t0);
	np_pack_kv_u64(pk, NPK(FLOWS, T1_NS), t1);
	np_pack_kv_u64(pk, NPK(FLOWS, N), n);
	RC_COL(NPK(FLOWS, PROTO), r->k.proto);
	RC_COL(NPK(FLOWS, NETNS), r->k.netns);
	rc_pack_kv_strcol(pk, NPK(FLOWS, LADDR), f->rows ? f->rows[0].la : NULL, sizeof(*f->rows), n);
	RC_COL(NPK(FLOWS, LPORT), r->k.lport);
	rc_pack_kv_strcol(pk, NPK(FLOWS, RADDR), f->rows ? f->rows[0].ra : NULL, sizeof(*f->rows), n);
	RC_COL(NPK(FLOWS, RPORT), r->k.rport);
	RC_COL(NPK(FLOWS, TX_BYTES), r->d.tx_bytes);
	RC_COL(NPK(FLOWS, RX_BYTES), r->d.rx_bytes);
	RC_COL(NPK(FLOWS, TX_PKTS), r->k.proto == 6 ? r->d.segs_out : r->d.tx_calls);
	RC_COL(NPK(FLOWS, RX_PKTS), r->k.proto == 6 ? r->d.segs_in : r->d.rx_calls);
	RC_COL(NPK(FLOWS, RETRANS), r->d.retrans);
	RC_COL(NPK(FLOWS, RETRANS_SEGS), r->d.total_retrans);
	RC_COL(NPK(FLOWS, TX_BYTES_TOTAL), r->s.c.tx_bytes);
	RC_COL(NPK(FLOWS, RX_BYTES_TOTAL), r->s.c.rx_bytes);
	RC_COL(NPK(FLOWS, SRTT_N), r->d.srtt_n);
	RC_COL(NPK(FLOWS, SRTT_MEAN_US), r->d.srtt_n ? r->d.srtt_sum / r->d.srtt_n : 0);
	RC_COL(NPK(FLOWS, SRTT_MIN_US), r->s.srtt_min);
	RC_COL(NPK(FLOWS, SRTT_MAX_US), r->s.srtt_max);
	RC_COL(NPK(FLOWS, SRTT_US), r->s.srtt_last);
	RC_COL(NPK(FLOWS, CWND), r->s.cwnd);
	RC_COL(NPK(FLOWS, OPEN_NS), rc_ts(r->s.open_ns, sh));
	RC_COL(NPK(FLOWS, CLOSE_NS), rc_ts(r->s.close_ns, sh));
	RC_COL(NPK(FLOWS, PID), r->s.pid);
	RC_COL(NPK(FLOWS, TID), r->s.tid);
	rc_pack_kv_strcol(pk, NPK(FLOWS, COMM), f->rows ? f->rows[0].s.comm : NULL, sizeof(*f->rows), n);
	RC_COL(NPK(FLOWS, CGROUP_ID), r->s.cgroup_id);
	free(col);
	return 0;
}

/* ---- drops ---- */

static uint64_t rc_drop_prog_missed(struct rc_flows *f);

struct rc_drop_row {
	struct rc_drop_key k;
	uint64_t cnt, t_ns;             /* t_ns 0: a count row (no event of its own) */
	uint32_t seq, ack, len, flags;
	char sa[46], da[46], rn[64];
};

struct rc_drop_rows { struct rc_drop_row *v; size_t n, cap; };

static struct rc_drop_row *rc_drop_row_add(struct rc_drop_rows *r, const struct rc_drop_key *k, uint64_t cnt)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		void *p = realloc(r->v, cap * sizeof(*r->v));
		if (!p)
			return NULL;
		r->v = p;
		r->cap = cap;
	}
	struct rc_drop_row *x = &r->v[r->n++];
	memset(x, 0, sizeof(*x));
	x->k = *k;
	x->cnt = cnt;
	return x;
}

/* Count rows: drops that found the ring buffer full, per (tuple, reason),
 * as deltas of the kernel's cumulative per-CPU map. */
static int rc_drops_overflow(struct rc_flows *f, struct rc_drop_rows *rows)
{
	struct rc_dtab next;
	struct rc_drop_key *keys;
	int fd = bpf_map__fd(f->skel->maps.drops);
	size_t stride = rc_pcpu_stride(sizeof(uint64_t)), dmatched = 0, nkeys;
	if (rc_dtab_init(&next, sizeof(*keys), sizeof(uint64_t)))
		return -ENOMEM;
	if (rc_map_keys(fd, sizeof(*keys), (void **)&keys, &nkeys)) {
		rc_dtab_free(&next);
		return -ENOMEM;
	}
	int rc = 0;
	for (size_t i = 0; i < nkeys; i++) {
		const struct rc_drop_key key = keys[i];
		cpuslice_point();
		if (bpf_map_lookup_elem(fd, &key, f->vbuf))
			continue;
		uint64_t tot = 0;
		for (int c = 0; c < f->ncpus; c++)
			tot += *(uint64_t *)((char *)f->vbuf + (size_t)c * stride);
		const uint64_t *p = rc_dtab_find(&f->drops_prev, &key);
		dmatched += p != NULL;
		uint64_t *nv = rc_dtab_put(&next, &key);
		if (nv)
			*nv = tot;
		if (tot != (p ? *p : 0) && !rc_drop_row_add(rows, &key, tot - (p ? *p : 0)))
			rc = -ENOMEM;
	}
	free(keys);
	if (f->drops_prev.n > dmatched)
		f->evicted += f->drops_prev.n - dmatched;
	rc_dtab_swap(&f->drops_prev, &next);
	rc_dtab_free(&next);
	return rc;
}

static int rc_drop_ev_cmp(const void *a, const void *b)
{
	const struct rc_drop_event *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* This interval's rows: every drop event (count 1, its time and TCP
 * header), then the count rows of drops without an event of their own. */
static int rc_drops_rows(struct rc_flows *f, struct rc_drop_rows *rows, int64_t shift)
{
	if (f->ring)
		ring_buffer__consume(f->ring);
	qsort(f->dev, f->ndev, sizeof(*f->dev), rc_drop_ev_cmp);
	int rc = 0;
	for (size_t i = 0; i < f->ndev && !rc; i++) {
		const struct rc_drop_event *e = &f->dev[i];
		struct rc_drop_row *x = rc_drop_row_add(rows, &e->k, 1);
		if (!x) {
			rc = -ENOMEM;
			break;
		}
		x->t_ns = e->ts + (uint64_t)shift;
		x->seq = e->seq;
		x->ack = e->ack;
		x->len = e->len;
		x->flags = e->tcpflags;
	}
	f->ndev = 0;
	for (size_t i = 0; i < f->nfkeys && !rc; i++) {
		const uint64_t *n = rc_dtab_find(&f->dfold, &f->fkeys[i]);
		if (n && *n && !rc_drop_row_add(rows, &f->fkeys[i], *n))
			rc = -ENOMEM;
	}
	if (f->nfkeys) {
		f->nfkeys = 0;
		rc_dtab_free(&f->dfold);
		if (rc_dtab_init(&f->dfold, sizeof(struct rc_drop_key), sizeof(uint64_t)))
			rc = -ENOMEM;
	}
	int rc2 = rc_drops_overflow(f, rows);
	for (size_t i = 0; i < rows->n; i++) {
		struct rc_drop_row *r = &rows->v[i];
		rc_format_addr(r->k.saddr, r->sa, sizeof(r->sa));
		rc_format_addr(r->k.daddr, r->da, sizeof(r->da));
		const char *nm = rc_btf_enum_name("skb_drop_reason", r->k.reason, "SKB_DROP_REASON_");
		if (nm)
			snprintf(r->rn, sizeof(r->rn), "%s", nm);
		else
			snprintf(r->rn, sizeof(r->rn), "reason_%u", r->k.reason);
	}
	return rc ? rc : rc2;
}

static int rc_drops_snapshot(struct rc_flows *f, struct rec_ctx *ctx, struct np_recbuf *rb,
			     uint64_t t0, uint64_t t1)
{
	struct rc_drop_rows rows = { 0 };
	int rc = rc_drops_rows(f, &rows, ctx->shift_ns);
	size_t n = rows.n;
	if (n) {
		uint64_t *col = calloc(n, sizeof(uint64_t));
		const struct rc_drop_row *r0 = rows.v;
		msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_DROPS, 1);
		msgpack_pack_map(pk, NPK_DROPS__N);
		np_pack_kv_u64(pk, NPK(DROPS, T0_NS), t0);
		np_pack_kv_u64(pk, NPK(DROPS, T1_NS), t1);
		np_pack_kv_u64(pk, NPK(DROPS, N), n);
#define RC_DCOL(kname, expr) do { for (size_t i = 0; i < n; i++) { const struct rc_drop_row *r = &rows.v[i]; if (col) col[i] = (expr); } \
		np_pack_kv_u64_array(pk, kname, col, col ? n : 0); } while (0)
		RC_DCOL(NPK(DROPS, NETNS), r->k.netns);
		RC_DCOL(NPK(DROPS, PROTO), r->k.proto);
		rc_pack_kv_strcol(pk, NPK(DROPS, SADDR), r0->sa, sizeof(*r0), n);
		RC_DCOL(NPK(DROPS, SPORT), r->k.sport);
		rc_pack_kv_strcol(pk, NPK(DROPS, DADDR), r0->da, sizeof(*r0), n);
		RC_DCOL(NPK(DROPS, DPORT), r->k.dport);
		RC_DCOL(NPK(DROPS, REASON), r->k.reason);
		rc_pack_kv_strcol(pk, NPK(DROPS, REASON_NAME), r0->rn, sizeof(*r0), n);
		RC_DCOL(NPK(DROPS, COUNT), r->cnt);
		RC_DCOL(NPK(DROPS, T_NS), r->t_ns);
		RC_DCOL(NPK(DROPS, SEQ), r->seq);
		RC_DCOL(NPK(DROPS, ACK), r->ack);
		RC_DCOL(NPK(DROPS, LEN), r->len);
		RC_DCOL(NPK(DROPS, TCPFLAGS), r->flags);
		/* drops whose packet carried no parsable L3/L4 header have zero tuples */
		np_pack_kv_bool(pk, NPK(DROPS, TUPLE_FROM_PACKET), true);
		np_pack_kv_u64(pk, NPK(DROPS, PROG_MISSED), rc_drop_prog_missed(f));
#undef RC_DCOL
		if (!col)
			rc = -ENOMEM;
		free(col);
	}
	free(rows.v);
	return rc;
}

static int rc_flows_snapshot(void *state, struct rec_ctx *ctx, struct np_recbuf *rb,
			     uint64_t t0, uint64_t t1)
{
	struct rc_flows *f = state;
	/* a failed pass leaves this interval's TCP bytes sent to the next */
	if (!f->send_calls && rc_iter_run(f->skel->links.flows_tcp_iter))
		f->tcp_pass_failed++;
	int rc = rc_flows_collect(f);
	if (!rc)
		rc = rc_flows_pack(f, ctx, rb, t0, t1);
	f->nrows = 0;
	int rc2 = rc_drops_snapshot(f, ctx, rb, t0, t1);
	return rc ? rc : rc2;
}

static uint64_t rc_pcpu_sum(const void *v, int ncpus)
{
	uint64_t tot = 0;
	size_t stride = rc_pcpu_stride(sizeof(uint64_t));
	for (int c = 0; c < ncpus; c++)
		tot += *(const uint64_t *)((const char *)v + (size_t)c * stride);
	return tot;
}

/* Sum over CPUs of flow_events[k]. */
static uint64_t rc_flows_counter(struct rc_flows *f, uint32_t k)
{
	if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.flow_events), &k, f->vbuf))
		return 0;
	return rc_pcpu_sum(f->vbuf, f->ncpus);
}

/* Every flow_events counter in one syscall (a batched lookup), for the
 * check every drain makes: a syscall is ~2 us warm but 8-15 us right
 * after the tick's sleep (measured on the bench VM), which is most of an
 * idle drain's cost. Falls back to a lookup per counter (kernels before
 * 5.7 have no batched array lookups). */
static void rc_flows_counters(struct rc_flows *f, uint64_t tot[FLOWS_EV_N])
{
	size_t stride = rc_pcpu_stride(sizeof(uint64_t)) * (size_t)f->ncpus;
	__u32 keys[FLOWS_EV_N], count = FLOWS_EV_N, out = 0;
	int rc = f->ev_batch ? bpf_map_lookup_batch(bpf_map__fd(f->skel->maps.flow_events), NULL, &out,
						     keys, f->evbuf, &count, NULL) : -1;
	if ((rc == 0 || errno == ENOENT) && count == FLOWS_EV_N) {
		for (uint32_t k = 0; k < FLOWS_EV_N; k++)
			tot[keys[k] < FLOWS_EV_N ? keys[k] : k] = rc_pcpu_sum((char *)f->evbuf + k * stride, f->ncpus);
		return;
	}
	f->ev_batch = false;
	for (uint32_t k = 0; k < FLOWS_EV_N; k++)
		tot[k] = rc_flows_counter(f, k);
}

static uint64_t rc_flows_events(void *state)
{
	struct rc_flows *f = state;
	return f->io_events + rc_flows_counter(f, FLOWS_EV_HANDLED);
}

/* Times the kernel skipped the kfree_skb program because a BPF program of
 * the same kind already ran on that CPU (a drop in an interrupt that hit
 * while the program handled another free): drops never seen. */
static uint64_t rc_drop_prog_missed(struct rc_flows *f)
{
	struct bpf_program *p = f->tps[RC_FLOWS_TP_DROP].btf_prog;
	if (!bpf_program__autoload(p))
		p = f->tps[RC_FLOWS_TP_DROP].raw_prog;
	return rec_prog_missed(bpf_program__fd(p));
}

/* What can be lost: events of a new flow that found no free slot among
 * the FLOWS_PROBES its socket hashes to, entries of the drop-count map a full LRU
 * evicted, rows user space had no memory for. A drop that finds the ring
 * buffer full is counted in the drops map instead; the kfree_skb program's
 * recursion misses are machine-wide (any namespace), so they go to DROPS
 * `prog_missed`, not here. A failed pass of flows_tcp_iter counts one: that
 * interval's TCP bytes sent arrive in a later one. */
static uint64_t rc_flows_lost(void *state)
{
	struct rc_flows *f = state;
	return f->evicted + rc_flows_counter(f, FLOWS_EV_NO_SLOT) + f->tcp_pass_failed;
}
static int rc_flows_drain(void *state)
{
	struct rc_flows *f = state;
	int n = (int)rc_flows_reclaim(f);
	int rc = f->ring ? ring_buffer__consume(f->ring) : 0;
	return rc < 0 ? rc : rc + n;   /* records consumed and flows given back (drain_counts) */
}

const struct rec_family rec_family_flows = {
	.name = RC_FLOWS_FAMILY,
	.open = rc_flows_open,
	.drain = rc_flows_drain,
	.drain_counts = true,
	.snapshot = rc_flows_snapshot,
	.lost = rc_flows_lost,
	.events = rc_flows_events,
	.close = rc_flows_close,
};
