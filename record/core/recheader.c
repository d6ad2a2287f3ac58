/* HEADER record: what a reader needs to interpret the rest of the file
 * without the machine that wrote it. */
#include "recheader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "kfs.h"
#include "npmsg.h"
#include "records.h"

const char *rc_probe_state_name(enum rec_probe_state st)
{
	switch (st) {
	case REC_PROBE_ATTACHED: return "attached";
	case REC_PROBE_SKIPPED:  return "skipped";
	case REC_PROBE_FAILED:   return "failed";
	}
	return "unknown";
}

static void rc_copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

void rec_probe(struct rec_ctx *ctx, const char *family, const char *probe,
	       enum rec_probe_state st, const char *reason)
{
	struct rec_probe_entry *e = NULL;
	for (unsigned i = 0; i < ctx->nprobes; i++)
		if (!strcmp(ctx->probes[i].family, family) && !strcmp(ctx->probes[i].probe, probe))
			e = &ctx->probes[i];
	if (!e) {
		if (ctx->nprobes == ctx->probes_cap) {
			unsigned cap = ctx->probes_cap ? ctx->probes_cap * 2 : 32;
			void *p = realloc(ctx->probes, cap * sizeof(*ctx->probes));
			if (!p)
				return;   /* the header then lacks this line; nothing else breaks */
			ctx->probes = p;
			ctx->probes_cap = cap;
		}
		e = &ctx->probes[ctx->nprobes++];
		rc_copy(e->family, sizeof(e->family), family);
		rc_copy(e->probe, sizeof(e->probe), probe);
	} else if (e->st == st && !strcmp(e->reason, reason ? reason : "")) {
		return;
	}
	e->st = st;
	rc_copy(e->reason, sizeof(e->reason), reason);
	ctx->probes_changed = true;
	if (ctx->cfg && ctx->cfg->verbose)
		fprintf(stderr, "nprec: %s/%s: %s%s%s\n", family, probe, rc_probe_state_name(st),
			reason && *reason ? ": " : "", reason ? reason : "");
}

void rc_probes_free(struct rec_ctx *ctx)
{
	free(ctx->probes);
	ctx->probes = NULL;
	ctx->nprobes = ctx->probes_cap = 0;
}

static void rc_probes_pack(msgpack_packer *pk, const struct rec_ctx *ctx)
{
	msgpack_pack_array(pk, ctx->nprobes);
	for (unsigned i = 0; i < ctx->nprobes; i++) {
		const struct rec_probe_entry *e = &ctx->probes[i];
		msgpack_pack_map(pk, 4);
		np_pack_kv_str(pk, "family", e->family);
		np_pack_kv_str(pk, "probe", e->probe);
		np_pack_kv_str(pk, "state", rc_probe_state_name(e->st));
		np_pack_kv_str(pk, "reason", e->reason);
	}
}

void rc_probes_record(struct np_recbuf *rb, struct rec_ctx *ctx, uint64_t t_ns)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_PROBES, 1);
	msgpack_pack_map(pk, 2);
	np_pack_kv_u64(pk, "t_ns", t_ns);
	np_pack_str(pk, "probes");
	rc_probes_pack(pk, ctx);
	ctx->probes_changed = false;
}

static void rc_pack_str_array(msgpack_packer *pk, const char *key, const char *const *v, unsigned n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (unsigned i = 0; i < n; i++)
		np_pack_str(pk, v[i]);
}

static void rc_pack_hosts(msgpack_packer *pk, const struct rec_config *c)
{
	char buf[INET6_ADDRSTRLEN];
	np_pack_str(pk, "hosts");
	msgpack_pack_array(pk, c->nhosts);
	for (unsigned i = 0; i < c->nhosts; i++) {
		const struct in6_addr *a = &c->hosts[i].addr;
		if (IN6_IS_ADDR_V4MAPPED(a))
			inet_ntop(AF_INET, &a->s6_addr[12], buf, sizeof(buf));
		else
			inet_ntop(AF_INET6, a, buf, sizeof(buf));
		np_pack_str(pk, buf);
	}
}

/* The effective configuration, every option with its value (defaults too),
 * so a reader knows what was and was not filtered. */
static void rc_config_pack(msgpack_packer *pk, const struct rec_config *c)
{
	const char *ifaces[REC_MAX_IFACES];
	uint32_t ports[REC_MAX_FILTERS];
	for (unsigned i = 0; i < c->nifaces; i++) ifaces[i] = c->ifaces[i];
	for (unsigned i = 0; i < c->nports; i++) ports[i] = c->ports[i];

	msgpack_pack_map(pk, 41);
	np_pack_kv_str(pk, "output", c->output);
	np_pack_kv_u64(pk, "duration_ns", c->duration_ns);
	np_pack_kv_u64(pk, "interval_ns", c->interval_ns);
	np_pack_kv_bool(pk, "fsync", c->fsync);
	np_pack_kv_i64(pk, "zstd_level", c->zstd_level);
	np_pack_kv_u64(pk, "max_size", c->max_size);
	np_pack_kv_u64(pk, "rotate_size", c->rotate_size);
	np_pack_kv_u64(pk, "rotate_count", c->rotate_count);
	np_pack_kv_u64(pk, "flight_ns", c->flight_seconds_ns);
	np_pack_kv_u64(pk, "flight_bytes", c->flight_bytes);
	rc_pack_str_array(pk, "trigger_on", c->trigger_on, c->ntrigger_on);
	np_pack_kv_f64(pk, "max_cpu_pct", c->max_cpu_pct);
	np_pack_kv_u64(pk, "nice", (uint64_t)c->nice);
	np_pack_kv_u64(pk, "cpu_slice_us", c->slice_us);
	rc_pack_str_array(pk, "ifaces", ifaces, c->nifaces);
	np_pack_kv_u32_array(pk, "ports", ports, c->nports);
	rc_pack_hosts(pk, c);
	np_pack_kv_u32_array(pk, "pids", c->pids, c->npids);
	np_pack_kv_str(pk, "cgroup", c->cgroup_path);
	np_pack_kv_u64(pk, "cgroup_id", c->cgroup_id);
	np_pack_kv_str(pk, "netns", c->netns);
	np_pack_kv_u64(pk, "netns_ino", c->netns_ino);
	/* sample_source as configured ("tick" | "cpu-clock" | "off"); with
	 * tick, sample_hz is the cpu-clock fallback rate. What was used is in
	 * the probe list and in every NETRX_STACKS record (source, hz). */
	np_pack_kv_u64(pk, "sample_hz", c->sample_hz);
	np_pack_kv_str(pk, "sample_source",
		       c->sample_tick ? "tick" : c->sample_hz ? "cpu-clock" : "off");
	np_pack_kv_bool(pk, "redact_paths", c->redact_paths);
	np_pack_kv_bool(pk, "flows", !c->no_flows);
	np_pack_kv_bool(pk, "txn", !c->no_txn);
	np_pack_kv_bool(pk, "netcpu", !c->no_netcpu);
	np_pack_kv_bool(pk, "threads", !c->no_threads);
	np_pack_kv_bool(pk, "packets", c->pktpath);
	np_pack_kv_u64(pk, "sample_n", c->sample_n);
	np_pack_kv_u64(pk, "per_flow_cap", c->per_flow_cap);
	np_pack_kv_bool(pk, "active_ids", c->active_ids);
	np_pack_kv_str(pk, "profile_baseline", c->profile_baseline);
	np_pack_kv_str(pk, "baseline", c->baseline);
	np_pack_kv_f64(pk, "scale_x", c->scale_x);
	np_pack_kv_f64(pk, "ewma_alpha", c->ewma_alpha);
	np_pack_kv_u64(pk, "alert_window_t", c->alert_window_t);
	np_pack_kv_u64(pk, "sync_listen_port", c->sync_listen_port);
	rc_pack_str_array(pk, "sync_peers", c->sync_peers, c->nsync_peers);
	np_pack_kv_i64(pk, "test_clock_shift_ns", c->test_clock_shift_ns);
}

void rc_header_build(struct np_recbuf *rb, struct rec_ctx *ctx,
		     const struct np_hostinfo *host, const struct np_clockref *clk)
{
	const struct rec_config *c = ctx->cfg;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_HEADER, RC_HEADER_VERSION);
	msgpack_pack_map(pk, 11 + (ctx->kfs != NULL));
	np_pack_kv_str(pk, "kind", "recording");
	np_pack_kv_u64(pk, "format_version", NP_FORMAT_VERSION);
	np_pack_kv_str(pk, "producer", "nprec " NP_VERSION);
	np_pack_str(pk, "host");
	np_hostinfo_pack(pk, host);
	np_pack_str(pk, "clock");
	np_clockref_pack(pk, clk);
	np_pack_kv_u64(pk, "start_ns", ctx->start_mono_ns + (uint64_t)ctx->shift_ns);
	np_pack_kv_i64(pk, "shift_ns", ctx->shift_ns);
	np_pack_kv_u64(pk, "interval_ns", c->interval_ns);
	rc_pack_str_array(pk, "argv", (const char *const *)c->argv, c->argv ? (unsigned)c->argc : 0);
	np_pack_str(pk, "config");
	rc_config_pack(pk, c);
	np_pack_str(pk, "probes");
	rc_probes_pack(pk, ctx);
	ctx->probes_changed = false;
	if (ctx->kfs) {
		np_pack_str(pk, "kernel_fs");
		kfs_pack(pk, ctx->kfs);
	}
}
