/* Host-stack component family (perfmon, docs/STACKMON.md): attaches
 * bpf/stackmon.bpf.c to the pods' veths (host side) and the host's external
 * interface (the last of two or more -i), inside --netns. With --profile-baseline
 * it collects the P99 of every component per bucket and writes the baseline
 * file at the end; with --baseline FILE --scale X it derives thresholds by
 * perfmon eq. 1, lets the kernel raise alerts and keeps only alerts of
 * windows holding more than T of them (perfmon §5). Writes STACK_EWMA every
 * interval, ALERTS when some survived, BASELINE while profiling. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "family.h"
#include "fsbroker.h"
#include "cpuslice.h"
#include "npmsg.h"
#include "records.h"
#include "sketch.h"
#include "hostinfo.h"
#include "pknetns.h"
#include "stackmon.h"
#include "stackmon.skel.h"

#define SM_FAMILY     "stackmon"
#define SM_WINDOW_NS  100000000ull     /* perfmon's CPA buffer window */
#define SM_TC_HANDLE  0x534d            /* "SM" */
#define SM_MAX_KEPT   100000

static const char *const sm_comp_name[SM_NCOMP] = { "rtt", "rnst1", "cnst", "rnst2" };
static const char *const sm_bucket_name[SM_NBUCKET] = { "intra", "inter" };

struct sm_window {
	uint64_t start;
	struct sm_alert *a;
	size_t n, cap;
	uint64_t total;          /* alerts in the window, also past the buffer */
};

struct sm_state {
	struct rec_ctx *ctx;
	struct stackmon_bpf *skel;
	struct ring_buffer *rb;
	int netns_fd;
	unsigned nif;                       /* interfaces given: veths..., ext */
	unsigned ifidx[REC_MAX_IFACES];
	bool tc_on[REC_MAX_IFACES][2];      /* [iface][egress, ingress] */
	unsigned T;
	struct sm_window win[SM_NCOMP];
	struct sm_alert *kept;
	size_t nkept, capkept;
	uint64_t raised, kept_total, filtered;
	bool profiling;
	double baseline[SM_NBUCKET][SM_NCOMP];
	uint64_t thr[SM_NBUCKET][SM_NCOMP];
	int ncpus;
};

/* ---- baseline file ---- */

static void sm_pack_baseline(msgpack_packer *pk, const double p99[SM_NBUCKET][SM_NCOMP],
			     const uint64_t n[SM_NBUCKET][SM_NCOMP], double alpha)
{
	msgpack_pack_map(pk, 3);
	np_pack_kv_str(pk, "stat", "p99");
	np_pack_kv_f64(pk, "ewma_alpha", alpha);
	np_pack_str(pk, "buckets");
	msgpack_pack_map(pk, SM_NBUCKET);
	for (int b = 0; b < SM_NBUCKET; b++) {
		np_pack_str(pk, sm_bucket_name[b]);
		msgpack_pack_map(pk, 2 * SM_NCOMP);
		for (int c = 0; c < SM_NCOMP; c++) {
			char k[32];
			snprintf(k, sizeof(k), "%s_p99_ns", sm_comp_name[c]);
			np_pack_kv_u64(pk, k, (uint64_t)p99[b][c]);
			snprintf(k, sizeof(k), "%s_n", sm_comp_name[c]);
			np_pack_kv_u64(pk, k, n[b][c]);
		}
	}
}

static void sm_read_p99(struct sm_state *s, double p99[SM_NBUCKET][SM_NCOMP],
			uint64_t n[SM_NBUCKET][SM_NCOMP])
{
	uint64_t *v = calloc(s->ncpus, sizeof(*v));
	int fd = bpf_map__fd(s->skel->maps.sm_hist);
	for (int b = 0; b < SM_NBUCKET; b++)
		for (int c = 0; c < SM_NCOMP; c++) {
			struct np_sketch sk;
			np_sketch_init(&sk);
			for (__u32 i = 0; v && i < NP_SK_NBUCKETS; i++) {
				__u32 slot = (b * SM_NCOMP + c) * NP_SK_NBUCKETS + i;
				if (bpf_map_lookup_elem(fd, &slot, v))
					continue;
				uint64_t sum = 0;
				for (int cpu = 0; cpu < s->ncpus; cpu++)
					sum += v[cpu];
				if (sum)
					np_sketch_add_bucket(&sk, i, sum);
			}
			p99[b][c] = (double)np_sketch_quantile(&sk, 0.99);
			n[b][c] = sk.n;
			np_sketch_free(&sk);
		}
	free(v);
}

static int sm_write_baseline_file(struct sm_state *s, const char *path)
{
	double p99[SM_NBUCKET][SM_NCOMP];
	uint64_t n[SM_NBUCKET][SM_NCOMP];
	sm_read_p99(s, p99, n);
	struct np_writer *w;
	int fd = fsb_open(path);       /* nprec runs unprivileged by now */
	int rc = fd < 0 ? fd : np_writer_fdopen(&w, fd, NP_KIND_RECORDING, NULL);
	if (rc < 0)
		return rc;
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	struct np_hostinfo h;
	np_hostinfo_read(&h);
	msgpack_packer *pk = np_recbuf_begin(&rb, NP_REC_HEADER, 1);
	msgpack_pack_map(pk, 4);
	np_pack_kv_str(pk, "kind", "baseline");
	np_pack_kv_u64(pk, "format_version", NP_FORMAT_VERSION);
	np_pack_kv_str(pk, "producer", "nprec " NP_VERSION);
	np_pack_str(pk, "host");
	np_hostinfo_pack(pk, &h);
	rc = np_writer_commit(w, &rb);
	if (!rc) {
		pk = np_recbuf_begin(&rb, NP_REC_BASELINE, 1);
		sm_pack_baseline(pk, p99, n, s->ctx->cfg->ewma_alpha);
		rc = np_writer_commit(w, &rb);
	}
	np_recbuf_free(&rb);
	int rc2 = np_writer_close(w);
	return rc ? rc : rc2;
}

static int sm_load_baseline(struct sm_state *s, const char *path, char *err, size_t errlen)
{
	struct np_reader *r;
	int rc = np_reader_open(&r, path, NULL, NULL);
	if (rc < 0) {
		snprintf(err, errlen, "stackmon: --baseline %s: %s", path, strerror(-rc));
		return rc;
	}
	struct np_record rec;
	bool found = false;
	while (!found && np_reader_next(r, &rec) == 1) {
		if (rec.type != NP_REC_BASELINE)
			continue;
		const msgpack_object *bk = np_map_get(rec.body, "buckets");
		for (int b = 0; bk && b < SM_NBUCKET; b++) {
			const msgpack_object *m = np_map_get(bk, sm_bucket_name[b]);
			for (int c = 0; m && c < SM_NCOMP; c++) {
				char k[32];
				snprintf(k, sizeof(k), "%s_p99_ns", sm_comp_name[c]);
				np_get_f64(m, k, &s->baseline[b][c]);
			}
		}
		found = bk != NULL;
	}
	np_reader_close(r);
	if (!found) {
		snprintf(err, errlen, "stackmon: --baseline %s: no baseline record in the file", path);
		return -EINVAL;
	}
	return 0;
}

/* perfmon eq. 1: T_RTT = X*RTT, T_C = X * floor(RTT/C) * C for the others,
 * so a component alerts only when its share of the RTT becomes significant.
 * A component without a baseline (or without an RTT to scale against, e.g.
 * RNST at intra-node flows) gets no threshold. */
static void sm_thresholds(struct sm_state *s, double X)
{
	for (int b = 0; b < SM_NBUCKET; b++) {
		double rtt = s->baseline[b][SM_RTT];
		s->thr[b][SM_RTT] = (uint64_t)(X * rtt);
		for (int c = 1; c < SM_NCOMP; c++) {
			double v = s->baseline[b][c];
			double k = v > 0 ? floor(rtt / v) : 0;
			if (k < 1 && v > 0)
				k = 1;        /* component larger than RTT: scale by X alone */
			s->thr[b][c] = (uint64_t)(X * k * v);
		}
	}
}

/* ---- alert windows (perfmon §5) ---- */

static void sm_keep(struct sm_state *s, const struct sm_alert *a)
{
	if (s->nkept == s->capkept) {
		size_t cap = s->capkept ? s->capkept * 2 : 256;
		void *p = cap <= SM_MAX_KEPT ? realloc(s->kept, cap * sizeof(*s->kept)) : NULL;
		if (!p)
			return;
		s->kept = p;
		s->capkept = cap;
	}
	s->kept[s->nkept++] = *a;
}

static void sm_close_window(struct sm_state *s, struct sm_window *w)
{
	if (w->total > s->T) {
		for (size_t i = 0; i < w->n; i++)
			sm_keep(s, &w->a[i]);
		s->kept_total += w->total;
	} else {
		s->filtered += w->total;
	}
	w->n = 0;
	w->total = 0;
	w->start = 0;
}

static int sm_on_alert(void *arg, void *data, size_t size)
{
	struct sm_state *s = arg;
	const struct sm_alert *a = data;
	if (size < sizeof(*a) || a->comp >= SM_NCOMP)
		return 0;
	s->raised++;
	struct sm_window *w = &s->win[a->comp];
	if (w->total && a->ts >= w->start + SM_WINDOW_NS)
		sm_close_window(s, w);
	if (!w->total)
		w->start = a->ts;
	w->total++;
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		void *p = cap <= 65536 ? realloc(w->a, cap * sizeof(*w->a)) : NULL;
		if (!p)
			return 0;
		w->a = p;
		w->cap = cap;
	}
	w->a[w->n++] = *a;
	return 0;
}

static int sm_drain(void *state)
{
	struct sm_state *s = state;
	ring_buffer__consume(s->rb);
	uint64_t now = np_mono_ns();
	for (int c = 0; c < SM_NCOMP; c++)
		if (s->win[c].total && now >= s->win[c].start + SM_WINDOW_NS)
			sm_close_window(s, &s->win[c]);
	return 0;
}

/* ---- attach ---- */

/* slot: index of the interface; role 0 = a pod's veth, 1 = the external one. */
static void sm_tc_attach(struct sm_state *s, unsigned slot, int role, const char *ifname)
{
	char probe[64], why[160];
	unsigned idx = if_nametoindex(ifname);
	snprintf(probe, sizeof(probe), "tc/%s(%s)", ifname, role ? "ext" : "veth");
	if (!idx) {
		rec_probe(s->ctx, SM_FAMILY, probe, REC_PROBE_FAILED, "no such interface in the netns");
		return;
	}
	s->ifidx[slot] = idx;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = idx, .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	int rc = bpf_tc_hook_create(&hook);
	if (rc && rc != -EEXIST) {
		snprintf(why, sizeof(why), "clsact qdisc: %s", strerror(-rc));
		rec_probe(s->ctx, SM_FAMILY, probe, REC_PROBE_FAILED, why);
		return;
	}
	struct bpf_program *progs[2][2] = {
		{ s->skel->progs.sm_veth_egress, s->skel->progs.sm_veth_ingress },
		{ s->skel->progs.sm_ext_egress, s->skel->progs.sm_ext_ingress },
	};
	for (int dir = 0; dir < 2; dir++) {
		hook.attach_point = dir ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		/* REPLACE: a filter left behind by a recorder that was killed */
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SM_TC_HANDLE, .priority = SM_TC_HANDLE,
			    .flags = BPF_TC_F_REPLACE, .prog_fd = bpf_program__fd(progs[role][dir]));
		rc = bpf_tc_attach(&hook, &opts);
		snprintf(probe, sizeof(probe), "tc/%s(%s)/%s", ifname, role ? "ext" : "veth",
			 dir ? "ingress" : "egress");
		if (rc) {
			rec_probe(s->ctx, SM_FAMILY, probe, REC_PROBE_FAILED, strerror(-rc));
			continue;
		}
		s->tc_on[slot][dir] = true;
		rec_probe(s->ctx, SM_FAMILY, probe, REC_PROBE_ATTACHED, NULL);
	}
}

static void sm_tc_detach(struct sm_state *s)
{
	int saved;
	if (pk_netns_enter(s->netns_fd, &saved) < 0)
		return;
	for (unsigned slot = 0; slot < s->nif; slot++)
		for (int dir = 0; dir < 2; dir++) {
			if (!s->tc_on[slot][dir])
				continue;
			LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = s->ifidx[slot],
				    .attach_point = dir ? BPF_TC_INGRESS : BPF_TC_EGRESS);
			LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SM_TC_HANDLE, .priority = SM_TC_HANDLE);
			bpf_tc_detach(&hook, &opts);
			s->tc_on[slot][dir] = false;
		}
	pk_netns_leave(saved);
}

static void sm_close(void *state);

static int sm_open(struct rec_ctx *ctx, void **state, char *err, size_t errlen)
{
	struct rec_config *c = ctx->cfg;
	if (!c->profile_baseline && !c->baseline)
		return REC_FAM_OFF_OPTION;
	if (!c->nifaces) {
		snprintf(err, errlen, "stackmon: needs -i VETH [-i VETH ...] [-i EXT] (pods' veths, "
			 "host side, then the external interface)");
		return -EINVAL;
	}
	struct sm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->netns_fd = c->netns_fd;
	s->T = c->alert_window_t;
	s->profiling = c->profile_baseline != NULL;
	s->ncpus = libbpf_num_possible_cpus();
	int rc = 0;
	if (c->baseline && (rc = sm_load_baseline(s, c->baseline, err, errlen)) < 0) {
		free(s);
		return rc;
	}
	sm_thresholds(s, c->scale_x);
	s->skel = stackmon_bpf__open();
	if (!s->skel) {
		snprintf(err, errlen, "stackmon: cannot open BPF object: %s", strerror(errno));
		free(s);
		return -EINVAL;
	}
	double a = c->ewma_alpha > 0 && c->ewma_alpha < 1 ? c->ewma_alpha : 0.125;
	s->skel->rodata->alpha_q10 = (__u32)(a * 1024 + 0.5);
	if (!s->profiling)
		memcpy((void *)s->skel->rodata->thr, s->thr, sizeof(s->thr));
	rc = stackmon_bpf__load(s->skel);
	if (rc) {
		snprintf(err, errlen, "stackmon: cannot load BPF programs: %s", strerror(-rc));
		sm_close(s);
		return rc;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.sm_alerts), sm_on_alert, s, NULL);
	if (!s->rb) {
		snprintf(err, errlen, "stackmon: ring buffer: %s", strerror(errno));
		sm_close(s);
		return -EINVAL;
	}
	int saved;
	rc = pk_netns_enter(c->netns_fd, &saved);
	if (rc < 0) {
		snprintf(err, errlen, "stackmon: cannot enter the netns: %s", strerror(-rc));
		sm_close(s);
		return rc;
	}
	/* -i VETH [-i VETH ...] -i EXT: with two or more, the last is external */
	s->nif = c->nifaces < REC_MAX_IFACES ? c->nifaces : REC_MAX_IFACES;
	for (unsigned i = 0; i < s->nif; i++)
		sm_tc_attach(s, i, s->nif >= 2 && i == s->nif - 1, c->ifaces[i]);
	pk_netns_leave(saved);
	if (!s->tc_on[0][0] && !s->tc_on[0][1]) {
		snprintf(err, errlen, "stackmon: cannot attach to %s", c->ifaces[0]);
		sm_close(s);
		return -ENOENT;
	}
	*state = s;
	return 0;
}

/* ---- records ---- */

/* One column of n rows; the row expression may contain commas. */
#define SM_COL(name, ...) do { np_pack_str(pk, name); msgpack_pack_array(pk, n); \
	for (size_t i = 0; i < n; i++) { __VA_ARGS__; } } while (0)

static void sm_pack_ewma(struct sm_state *s, struct np_recbuf *rb, uint64_t t0, uint64_t t1)
{
	int fd = bpf_map__fd(s->skel->maps.sm_flows);
	size_t n = 0, cap = 0;
	struct { struct sm_fkey k; struct sm_flow f; } *rows = NULL;
	struct sm_fkey key, next;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		cpuslice_point();
		key = next;
		prev = &key;
		struct sm_flow f;
		if (bpf_map_lookup_elem(fd, &key, &f))
			continue;
		if (!f.n[0] && !f.n[1] && !f.n[2] && !f.n[3])
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			void *p = realloc(rows, cap * sizeof(*rows));
			if (!p)
				break;
			rows = p;
		}
		rows[n].k = key;
		rows[n].f = f;
		n++;
	}
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_STACK_EWMA, 1);
	msgpack_pack_map(pk, 8 + 3 * SM_NCOMP);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_u64(pk, "n", n);
	SM_COL("paddr", { char b[INET_ADDRSTRLEN]; inet_ntop(AF_INET, &rows[i].k.paddr, b, sizeof(b)); np_pack_str(pk, b); });
	SM_COL("pport", msgpack_pack_uint32(pk, rows[i].k.pport));
	SM_COL("raddr", { char b[INET_ADDRSTRLEN]; inet_ntop(AF_INET, &rows[i].k.raddr, b, sizeof(b)); np_pack_str(pk, b); });
	SM_COL("rport", msgpack_pack_uint32(pk, rows[i].k.rport));
	SM_COL("bucket", np_pack_str(pk, sm_bucket_name[rows[i].f.inter ? 1 : 0]));
	for (int c = 0; c < SM_NCOMP; c++) {
		char k[32];
		snprintf(k, sizeof(k), "f_%s_ns", sm_comp_name[c]);
		SM_COL(k, msgpack_pack_uint64(pk, rows[i].f.f[c]));
		snprintf(k, sizeof(k), "n_%s", sm_comp_name[c]);
		SM_COL(k, msgpack_pack_uint64(pk, rows[i].f.n[c]));
		snprintf(k, sizeof(k), "alerts_%s", sm_comp_name[c]);
		SM_COL(k, msgpack_pack_uint64(pk, rows[i].f.alerts[c]));
	}
	free(rows);
}

static void sm_pack_alerts(struct sm_state *s, struct np_recbuf *rb, uint64_t t0, uint64_t t1)
{
	size_t n = s->nkept;
	const struct sm_alert *a = s->kept;
	int64_t sh = s->ctx->shift_ns;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_ALERTS, 1);
	msgpack_pack_map(pk, 18);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_u64(pk, "n", n);
	np_pack_kv_u64(pk, "raised", s->raised);
	np_pack_kv_u64(pk, "kept", s->kept_total);
	np_pack_kv_u64(pk, "filtered", s->filtered);
	np_pack_kv_u64(pk, "window_ns", SM_WINDOW_NS);
	np_pack_kv_u64(pk, "window_t", s->T);
	SM_COL("ts_ns", msgpack_pack_uint64(pk, a[i].ts + (uint64_t)sh));
	SM_COL("component", np_pack_str(pk, sm_comp_name[a[i].comp]));
	SM_COL("bucket", np_pack_str(pk, sm_bucket_name[a[i].bucket & 1]));
	SM_COL("value_ns", msgpack_pack_uint64(pk, a[i].value));
	SM_COL("sample_ns", msgpack_pack_uint64(pk, a[i].sample));
	SM_COL("threshold_ns", msgpack_pack_uint64(pk, a[i].threshold));
	SM_COL("seq", msgpack_pack_uint32(pk, a[i].seq));
	SM_COL("ack", msgpack_pack_uint32(pk, a[i].ack));
	SM_COL("flow", { char b1[INET_ADDRSTRLEN], b2[INET_ADDRSTRLEN], f[80];
		inet_ntop(AF_INET, &a[i].fk.paddr, b1, sizeof(b1));
		inet_ntop(AF_INET, &a[i].fk.raddr, b2, sizeof(b2));
		snprintf(f, sizeof(f), "%s:%u-%s:%u", b1, a[i].fk.pport, b2, a[i].fk.rport);
		np_pack_str(pk, f); });
	np_pack_str(pk, "thresholds");
	msgpack_pack_map(pk, SM_NBUCKET);
	for (int b = 0; b < SM_NBUCKET; b++) {
		np_pack_str(pk, sm_bucket_name[b]);
		msgpack_pack_map(pk, SM_NCOMP);
		for (int c = 0; c < SM_NCOMP; c++)
			np_pack_kv_u64(pk, sm_comp_name[c], s->thr[b][c]);
	}
	s->nkept = 0;
}

static int sm_snapshot(void *state, struct rec_ctx *ctx, struct np_recbuf *rb, uint64_t t0,
		       uint64_t t1)
{
	struct sm_state *s = state;
	(void)ctx;
	sm_drain(s);
	sm_pack_ewma(s, rb, t0, t1);
	if (!s->profiling)
		sm_pack_alerts(s, rb, t0, t1);
	else {
		double p99[SM_NBUCKET][SM_NCOMP];
		uint64_t n[SM_NBUCKET][SM_NCOMP];
		sm_read_p99(s, p99, n);
		msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_BASELINE, 1);
		sm_pack_baseline(pk, p99, n, s->ctx->cfg->ewma_alpha);
	}
	return 0;
}

static uint64_t sm_lost(void *state)
{
	struct sm_state *s = state;
	__u32 k = 0;
	uint64_t *v = calloc(s->ncpus, sizeof(*v)), sum = 0;
	if (v && bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.sm_counts), &k, v) == 0)
		for (int c = 0; c < s->ncpus; c++)
			sum += v[c];
	free(v);
	return sum;
}

static uint64_t sm_events(void *state)
{
	return ((struct sm_state *)state)->raised;
}

static void sm_close(void *state)
{
	struct sm_state *s = state;
	if (!s)
		return;
	if (s->profiling && s->skel && s->ctx->cfg->profile_baseline) {
		int rc = sm_write_baseline_file(s, s->ctx->cfg->profile_baseline);
		if (rc < 0)
			fprintf(stderr, "nprec: stackmon: cannot write baseline %s: %s\n",
				s->ctx->cfg->profile_baseline, strerror(-rc));
	}
	if (s->skel)
		sm_tc_detach(s);
	ring_buffer__free(s->rb);
	stackmon_bpf__destroy(s->skel);
	for (int c = 0; c < SM_NCOMP; c++)
		free(s->win[c].a);
	free(s->kept);
	free(s);
}

const struct rec_family rec_family_stackmon = {
	.name = SM_FAMILY,
	.open = sm_open,
	.drain = sm_drain,
	.snapshot = sm_snapshot,
	.lost = sm_lost,
	.events = sm_events,
	.close = sm_close,
};
