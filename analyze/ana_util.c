/* Small shared pieces of the analyzer: vectors, names, warnings, the flow
 * index and the time mapping onto the reference timeline. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"

int ana_vec_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	void *p = realloc(*v, nc * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = nc;
	return 0;
}

static const char *const ana_hook_names[ANA_NHOOKS] = {
	[PK_HOOK_NONE] = "unknown", [PK_HOOK_SOCK_SEND] = "sock_send",
	[PK_HOOK_DEV_QUEUE] = "dev_queue", [PK_HOOK_TC_EGRESS] = "tc_egress",
	[PK_HOOK_QDISC_ENQ] = "qdisc_enq", [PK_HOOK_QDISC_DEQ] = "qdisc_deq",
	[PK_HOOK_DEV_START_XMIT] = "dev_start_xmit", [PK_HOOK_DEV_XMIT] = "dev_xmit",
	[PK_HOOK_GRO_ENTRY] = "gro_entry", [PK_HOOK_TC_INGRESS] = "tc_ingress",
	[PK_HOOK_NETIF_RECEIVE] = "netif_receive", [PK_HOOK_TCP_RCV] = "tcp_rcv",
	[PK_HOOK_COPY_TO_USER] = "copy_to_user",
};

const char *ana_hook_name(int hook)
{
	return hook > 0 && hook < ANA_NHOOKS && ana_hook_names[hook] ? ana_hook_names[hook]
									 : "unknown";
}

int ana_hook_from_name(const char *s, size_t n)
{
	for (int i = 1; i < ANA_NHOOKS; i++)
		if (ana_hook_names[i] && strlen(ana_hook_names[i]) == n &&
		    !memcmp(ana_hook_names[i], s, n))
			return i;
	return PK_HOOK_NONE;
}

static const char *const ana_seg_names[ANA_NSEGS] = {
	"sender_stack", "qdisc", "device", "wire", "forward_stack", "forward_qdisc",
	"forward_device", "receiver_stack", "receiver_app", "total",
};

const char *ana_seg_name(int seg)
{
	return seg >= 0 && seg < ANA_NSEGS ? ana_seg_names[seg] : "unknown";
}

const char *ana_seg_phrase(int seg)
{
	static const char *const n[ANA_NSEGS] = {
		"sender's network stack", "sender's qdisc", "sender's device", "network",
		"forwarding host's stack (ingress, netfilter/NAT, routing)",
		"forwarding host's qdisc", "forwarding host's device",
		"receiver's network stack", "receiver's application", "whole path",
	};
	return seg >= 0 && seg < ANA_NSEGS ? n[seg] : "unknown";
}

/* The first hook seen on a new host closes the network segment. */
int ana_hook_segment(int hook, bool first_on_host)
{
	if (first_on_host)
		return ANA_SEG_WIRE;
	switch (hook) {
	case PK_HOOK_QDISC_DEQ:       return ANA_SEG_QDISC;
	case PK_HOOK_DEV_START_XMIT:
	case PK_HOOK_DEV_XMIT:        return ANA_SEG_DEVICE;
	case PK_HOOK_GRO_ENTRY:
	case PK_HOOK_TC_INGRESS:
	case PK_HOOK_NETIF_RECEIVE:
	case PK_HOOK_TCP_RCV:         return ANA_SEG_RCV_STACK;
	case PK_HOOK_COPY_TO_USER:    return ANA_SEG_RCV_APP;
	default:                      return ANA_SEG_SND_STACK;
	}
}

/* On a host that forwards the packet (neither its sender nor its
 * receiver) everything up to the qdisc enqueue is its ingress, netfilter
 * and routing; the rest maps as on a sender. */
int ana_path_segment(int hook, bool first_on_host, bool forwarder)
{
	int s = ana_hook_segment(hook, first_on_host);
	if (!forwarder || s == ANA_SEG_WIRE)
		return s;
	return s == ANA_SEG_QDISC ? ANA_SEG_FWD_QDISC : s == ANA_SEG_DEVICE ? ANA_SEG_FWD_DEVICE
									 : ANA_SEG_FWD_STACK;
}

const char *ana_clock_quality_name(int q)
{
	static const char *const n[] = { "reference", "accurate", "approximate", "failed",
					 "unaligned" };
	return q >= 0 && q <= ANA_CLK_UNALIGNED ? n[q] : "unknown";
}

/* 1 when the message was new and added. */
static int ana_warn_add(struct ana_model *m, bool minor, const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (size_t i = 0; i < m->warnings.n; i++)
		if (!strcmp(m->warnings.v[i], buf))
			return 0;
	uint8_t *flag = ANA_PUSH(m->warn_minor);
	if (!flag)
		return 0;
	char **slot = ANA_PUSH(m->warnings);
	if (!slot) {
		m->warn_minor.n--;
		return 0;
	}
	*slot = strdup(buf);
	*flag = minor;
	return 1;
}

void ana_warn(struct ana_model *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ana_warn_add(m, false, fmt, ap);
	va_end(ap);
}

void ana_note(struct ana_model *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	m->nminor += (size_t)ana_warn_add(m, true, fmt, ap);
	va_end(ap);
}

void ana_model_init(struct ana_model *m, const struct ana_options *opt)
{
	memset(m, 0, sizeof(*m));
	m->opt = opt;
	m->ref = -1;
	m->win_lo = INT64_MIN;
	m->win_hi = INT64_MAX;
}

bool ana_in_window(const struct ana_model *m, int64_t t)
{
	return t >= m->win_lo && t <= m->win_hi;
}

bool ana_interval_in_window(const struct ana_model *m, int host, uint64_t t, uint64_t dur)
{
	if (m->win_lo == INT64_MIN && m->win_hi == INT64_MAX)
		return true;
	int64_t a = ana_host_aligned(m, host) ? ana_to_ref(m, host, t) : (int64_t)t;
	return a + (int64_t)dur > m->win_lo && a <= m->win_hi;
}

void ana_model_free(struct ana_model *m)
{
	for (size_t i = 0; i < m->txns.n; i++)
		np_sketch_free(&m->txns.v[i].lat);
	for (size_t i = 0; i < m->warnings.n; i++)
		free(m->warnings.v[i]);
	for (size_t i = 0; i < m->inputs.n; i++)
		free(m->inputs.v[i]);
	free(m->hosts.v); free(m->pev.v); free(m->flows.v); free(m->syncs.v);
	free(m->fstats.v); free(m->drops.v); free(m->txns.v); free(m->txevs.v);
	free(m->netcpu.v); free(m->netrx.v); free(m->threads.v); free(m->cgroups.v);
	free(m->warn_minor.v);
	free(m->alerts.v); free(m->warnings.v); free(m->inputs.v); free(m->ewma.v);
	free(m->fl_keys); free(m->fl_vals);
	free(m->ivseg.sum); free(m->ivseg.cnt); free(m->bwins.v);
	memset(m, 0, sizeof(*m));
}

bool ana_host_aligned(const struct ana_model *m, int host)
{
	if (host < 0 || (size_t)host >= m->hosts.n)
		return false;
	int q = m->hosts.v[host].clk_quality;
	return q == ANA_CLK_REF || q == ANA_CLK_ACCURATE || q == ANA_CLK_APPROX;
}

int64_t ana_to_ref(const struct ana_model *m, int host, uint64_t t)
{
	const struct ana_host *h = &m->hosts.v[host];
	double d = (double)(int64_t)(t - h->t0);
	/* clamped to +-2^61 ns (73 years): a damaged timestamp must not leave
	 * llround's range, and differences of two stay inside int64 */
	double v = fmin(fmax(h->clk_a * d + h->clk_b, -0x1p61), 0x1p61);
	return (int64_t)llround(v);
}

static uint64_t ana_mix64(uint64_t x)
{
	x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Open addressing over (host << 48 | local id); keys stored +1 so 0 = empty. */
uint32_t ana_flow_lookup(struct ana_model *m, uint16_t host, uint64_t local_id, bool create)
{
	uint64_t key = (((uint64_t)host << 48) | (local_id & 0xffffffffffffULL)) + 1;
	if (m->flows.n * 2 + 2 > m->fl_cap) {
		if (!create && m->fl_cap)
			goto look;
		size_t nc = m->fl_cap ? m->fl_cap * 2 : 1024;
		uint64_t *k = calloc(nc, sizeof(*k));
		uint32_t *v = calloc(nc, sizeof(*v));
		if (!k || !v) { free(k); free(v); return UINT32_MAX; }
		for (size_t i = 0; i < m->fl_cap; i++) {
			if (!m->fl_keys[i])
				continue;
			size_t j = ana_mix64(m->fl_keys[i]) & (nc - 1);
			while (k[j])
				j = (j + 1) & (nc - 1);
			k[j] = m->fl_keys[i];
			v[j] = m->fl_vals[i];
		}
		free(m->fl_keys); free(m->fl_vals);
		m->fl_keys = k; m->fl_vals = v; m->fl_cap = nc;
	}
look:
	if (!m->fl_cap)
		return UINT32_MAX;
	size_t j = ana_mix64(key) & (m->fl_cap - 1);
	while (m->fl_keys[j]) {
		if (m->fl_keys[j] == key)
			return m->fl_vals[j];
		j = (j + 1) & (m->fl_cap - 1);
	}
	if (!create)
		return UINT32_MAX;
	struct ana_flow *f = ANA_PUSH(m->flows);
	if (!f)
		return UINT32_MAX;
	memset(f, 0, sizeof(*f));
	f->host = host;
	f->local_id = local_id;
	m->fl_keys[j] = key;
	m->fl_vals[j] = (uint32_t)(m->flows.n - 1);
	return m->fl_vals[j];
}

void ana_flow_key(const struct ana_flow *f, char *buf, size_t n)
{
	const char *p = f->proto == 17 ? "udp" : f->proto == 6 ? "tcp" : "ip";
	if (!f->src[0] && !f->dst[0])
		snprintf(buf, n, "%s flow#%llu", p, (unsigned long long)f->local_id);
	else
		snprintf(buf, n, "%s %s:%u>%s:%u", p, f->src, f->sport, f->dst, f->dport);
}

void ana_sketch_cols(struct np_table *t, size_t id)
{
	np_table_col_at(t, id + ANA_SK_COUNT, "count", "count", "samples");
	np_table_col_at(t, id + ANA_SK_MEAN, "mean", "ns", "mean");
	np_table_col_at(t, id + ANA_SK_P50, "p50", "ns", "median");
	np_table_col_at(t, id + ANA_SK_P90, "p90", "ns", "90th percentile");
	np_table_col_at(t, id + ANA_SK_P99, "p99", "ns", "99th percentile");
	np_table_col_at(t, id + ANA_SK_P999, "p999", "ns", "99.9th percentile");
	np_table_col_at(t, id + ANA_SK_MAX, "max", "ns", "maximum");
}

void ana_sketch_cells(struct np_table *t, size_t row, size_t c, const struct np_sketch *s)
{
	np_table_set_u64(t, row, c + ANA_SK_COUNT, s->n);
	if (!s->n)
		return;
	np_table_set_f64(t, row, c + ANA_SK_MEAN, np_sketch_mean(s));
	np_table_set_u64(t, row, c + ANA_SK_P50, np_sketch_quantile(s, 0.50));
	np_table_set_u64(t, row, c + ANA_SK_P90, np_sketch_quantile(s, 0.90));
	np_table_set_u64(t, row, c + ANA_SK_P99, np_sketch_quantile(s, 0.99));
	np_table_set_u64(t, row, c + ANA_SK_P999, np_sketch_quantile(s, 0.999));
	np_table_set_u64(t, row, c + ANA_SK_MAX, s->max);
}
