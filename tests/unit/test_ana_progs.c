/* npanalyze's note on the recorder's skipped program runs (analyze/
 * ana_progs.c): a recording of three intervals whose PROGS records say the
 * kernel skipped hub_state 3 then 5 times and nc_tick never. The analysis
 * notes hub_state with 8 (its family named), not nc_tick, as a note (no
 * exit status 1); a recording without skipped runs gets no such note. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ana.h"
#include "npmsg.h"
#include "records.h"
#include "recschema.h"
#include "rechdr.h"
#include "tap.h"

#define TP_T0 1000000000000ull
#define TP_IV 1000000000ull

static char tp_dir[] = "/tmp/np-test-progs.XXXXXX";

/* One interval: INTERVAL, then PROGS with hub_state's and nc_tick's skipped runs. */
static void tp_interval(struct np_writer *w, struct np_recbuf *rb, int iv, uint64_t hub, uint64_t *hub_total)
{
	uint64_t t0 = TP_T0 + (uint64_t)iv * TP_IV, t1 = t0 + TP_IV;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_INTERVAL, 1);
	msgpack_pack_map(pk, 3);
	np_pack_kv_u64(pk, "seq", (uint64_t)iv);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	*hub_total += hub;
	uint64_t missed[2] = { hub, 0 }, total[2] = { *hub_total, 0 };
	static const char prog[2][16] = { "hub_state", "nc_tick" }, fam[2][16] = { "hub", "netcpu" };
	pk = np_recbuf_begin(rb, NP_REC_PROGS, 1);
	msgpack_pack_map(pk, NPK_PROGS__N);
	np_pack_kv_u64(pk, NPK(PROGS, T0_NS), t0);
	np_pack_kv_u64(pk, NPK(PROGS, T1_NS), t1);
	np_pack_kv_u64(pk, NPK(PROGS, N), 2);
	const char *cols[3] = { NPK(PROGS, PROG), NPK(PROGS, FAMILY), NPK(PROGS, PROG_TYPE) };
	for (int c = 0; c < 3; c++) {
		np_pack_str(pk, cols[c]);
		msgpack_pack_array(pk, 2);
		for (int i = 0; i < 2; i++)
			np_pack_str(pk, c == 0 ? prog[i] : c == 1 ? fam[i] : "tracing");
	}
	np_pack_kv_u64_array(pk, NPK(PROGS, MISSED), missed, 2);
	np_pack_kv_u64_array(pk, NPK(PROGS, MISSED_TOTAL), total, 2);
	np_writer_commit(w, rb);
}

static int tp_write(const char *path, const uint64_t *hub)
{
	struct np_writer *w;
	struct np_recbuf rb;
	uint64_t total = 0;
	if (rechdr_open(&w, &rb, path))
		return -1;
	rechdr_commit(w, &rb, "test_ana_progs", "h1", "mmmm", TP_IV, TP_T0);
	for (int iv = 0; iv < 3; iv++)
		tp_interval(w, &rb, iv, hub[iv], &total);
	return rechdr_close(w, &rb);
}

/* The analysis's warnings and notes of path; *minor: all of them notes. */
static bool tp_noted(const char *path, const char *needle, bool *minor)
{
	struct ana_model m;
	struct ana_options o = { .quiet = true };
	char npa[96];
	bool found = false;
	snprintf(npa, sizeof(npa), "%s/out.npa", tp_dir);
	ana_model_init(&m, &o);
	ana_load_file(&m, path, "h1");
	CHECK(ana_run(&m, npa, NULL) == 0, "ana_run %s", path);
	for (size_t i = 0; i < m.warnings.n; i++)
		if (strstr(m.warnings.v[i], needle)) {
			found = true;
			fprintf(stderr, "  %s\n", m.warnings.v[i]);
		}
	*minor = m.nminor == m.warnings.n;
	ana_model_free(&m);
	return found;
}

int main(void)
{
	char path[96];
	bool minor;
	if (!tap_mkdtemp(tp_dir))
		return tap_done();
	static const uint64_t skipped[3] = { 3, 0, 5 }, none[3] = { 0, 0, 0 };
	snprintf(path, sizeof(path), "%s/skipped.npr", tp_dir);
	CHECK(tp_write(path, skipped) == 0, "write %s", path);
	CHECK(tp_noted(path, "hub_state (hub) 8", &minor), "hub_state's 8 skipped runs noted with its family");
	CHECK(minor, "a note, not a warning");
	CHECK(!tp_noted(path, "nc_tick", &minor), "a program without skipped runs not named");
	snprintf(path, sizeof(path), "%s/none.npr", tp_dir);
	CHECK(tp_write(path, none) == 0, "write %s", path);
	CHECK(!tp_noted(path, "skipped runs of the recorder's BPF programs", &minor), "no skipped run, no note");
	tap_rmdir(tp_dir);
	return tap_done();
}
