/* From the recording's probe records to the report: an in-memory recording
 * whose HEADER (start 1000 s) says netcpu's per-syscall tracepoints failed
 * and tp_btf/sys_enter was skipped, a PROBES record at 1001 s that
 * tp_btf/sys_enter then attached, and a PROBES record stamped 999 s (older
 * than the header, as a reordered read would deliver it) claiming the
 * per-syscall tracepoints attached. Expected after npanalyze's loader and
 * writer and npreport's reader: one row per probe (2), the latest state of
 * each (failed / attached: the stale record ignored), and the incident
 * summary naming the failed probe with tp_btf/sys_enter as its fallback.
 * Also the retrans series the writer adds from the flow statistics: one
 * per flow that retransmitted, summing to its retransmissions. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ana.h"
#include "incident.h"
#include "npmsg.h"
#include "records.h"
#include "tap.h"
#include "tfile.h"

#define T0 1000000000000ull
#define PER_CALL "tracepoint/syscalls/sys_enter_<socket calls>"

static void pp_probe(msgpack_packer *pk, const char *probe, const char *state, const char *reason)
{
	msgpack_pack_map(pk, 4);
	np_pack_kv_str(pk, "family", "netcpu");
	np_pack_kv_str(pk, "probe", probe);
	np_pack_kv_str(pk, "state", state);
	np_pack_kv_str(pk, "reason", reason);
}

static void pp_header(struct np_recbuf *rb)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_HEADER, 1);
	msgpack_pack_map(pk, 5);
	np_pack_kv_str(pk, "kind", "recording");
	np_pack_str(pk, "host");
	msgpack_pack_map(pk, 1);
	np_pack_kv_str(pk, "hostname", "pp-host");
	np_pack_kv_u64(pk, "interval_ns", 1000000000ull);
	np_pack_kv_u64(pk, "start_ns", T0);
	np_pack_str(pk, "probes");
	msgpack_pack_array(pk, 2);
	pp_probe(pk, PER_CALL, "failed", "sys_enter_sendto: No such file (tracefs not mounted)");
	pp_probe(pk, "tp_btf/sys_enter", "skipped", "syscall tracepoints used");
}

static void pp_probes_rec(struct np_recbuf *rb, uint64_t t, const char *probe, const char *state)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_PROBES, 1);
	msgpack_pack_map(pk, 2);
	np_pack_kv_u64(pk, "t_ns", t);
	np_pack_str(pk, "probes");
	msgpack_pack_array(pk, 1);
	pp_probe(pk, probe, state, "");
}

static uint8_t *pp_recording(size_t *len)
{
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	pp_header(&rb);
	pp_probes_rec(&rb, T0 + 1000000000ull, "tp_btf/sys_enter", "attached");
	pp_probes_rec(&rb, T0 - 1000000000ull, PER_CALL, "attached");
	return tfile_recording(&rb, len);
}

/* Three flow intervals of one flow (3 + 0 + 4 retransmissions) and one of a
 * flow without retransmissions, sorted as ana_flows_run leaves them. */
static void pp_fstats(struct ana_model *m)
{
	const char *keys[] = { "tcp 10.0.0.1:1>10.0.0.2:80", "tcp 10.0.0.1:1>10.0.0.2:80",
			       "tcp 10.0.0.1:1>10.0.0.2:80", "tcp 10.0.0.1:2>10.0.0.2:80" };
	const uint64_t re[] = { 3, 0, 4, 0 };
	for (size_t i = 0; i < 4; i++) {
		struct ana_flowstat *f = ANA_PUSH(m->fstats);
		if (!f)
			return;
		memset(f, 0, sizeof(*f));
		snprintf(f->key, sizeof(f->key), "%s", keys[i]);
		f->t = T0 + (i % 3) * 1000000000ull;
		f->dur_ns = 1000000000ull;
		f->retrans = re[i];
	}
}

static const char *pp_state(const struct np_table *t, const char *probe)
{
	int cp = np_table_find_col(t, "probe"), cs = np_table_find_col(t, "state");
	for (size_t r = 0; cp >= 0 && cs >= 0 && r < t->nrows; r++) {
		const struct np_cell *c = np_table_cell_c(t, r, (size_t)cp);
		if (c->kind == NP_CELL_STR && !strcmp(c->s, probe))
			return np_table_cell_c(t, r, (size_t)cs)->s;
	}
	return "(none)";
}

static void pp_check_analysis(const char *path)
{
	struct np_analysis a;
	CHECK_EQ_U(np_analysis_load(&a, path, NULL, NULL), 0);
	const struct np_table *t = np_analysis_table(&a, "probes");
	CHECK(t && t->nrows == 2, "2 probe rows (%zu)", t ? t->nrows : 0);
	if (t) {
		CHECK(!strcmp(pp_state(t, PER_CALL), "failed"), "per-call: %s (stale record ignored)",
		      pp_state(t, PER_CALL));
		CHECK(!strcmp(pp_state(t, "tp_btf/sys_enter"), "attached"), "sys_enter: %s (PROBES wins)",
		      pp_state(t, "tp_btf/sys_enter"));
	}
	struct rpt_incident inc;
	rpt_incident_build(&a, &inc);
	const char *rec = NULL;
	for (size_t i = 0; i < inc.n; i++)
		if (inc.items[i].kind == RPT_INC_RECORDER)
			rec = inc.items[i].text;
	CHECK(rec && strstr(rec, "netcpu: " PER_CALL " failed (sys_enter_sendto: No such file (tracefs "
			    "not mounted)), using tp_btf/sys_enter"), "RECORDER: %s", rec ? rec : "(none)");
	size_t nre = 0;
	double sum = 0;
	for (size_t i = 0; i < a.nseries; i++) {
		const struct np_series *s = a.series[i];
		if (strcmp(s->table, "flows") || strcmp(s->metric, "retrans"))
			continue;
		nre++;
		CHECK(!strcmp(s->key, "pp-host|tcp 10.0.0.1:1>10.0.0.2:80") && s->n == 3, "series %s (%zu)",
		      s->key, s->n);
		for (size_t k = 0; k < s->n; k++)
			sum += s->v[k];
	}
	CHECK_EQ_U(nre, 1);
	CHECK_NEAR(sum, 7, 0);
	np_analysis_free(&a);
}

int main(void)
{
	struct ana_options opt = { .quiet = true };
	struct ana_model m;
	struct ana_out o;
	size_t len = 0;
	uint8_t *rec = pp_recording(&len);
	tfile_load(&m, &opt, rec, len, "pp.npr");
	CHECK_EQ_U(m.probes.n, 2);
	pp_fstats(&m);
	ana_out_init(&o);
	char path[] = "/tmp/test_report_probes.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "temp file");
	if (fd >= 0)
		close(fd);
	CHECK_EQ_U(ana_out_write(&m, &o, path), 0);
	pp_check_analysis(path);
	unlink(path);
	ana_out_free(&o);
	ana_model_free(&m);
	free(rec);
	return tap_done();
}
