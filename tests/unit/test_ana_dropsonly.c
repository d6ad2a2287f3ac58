/* A recording with DROPS but no FLOWS (issue 17: the mutation fuzzer found
 * analyze/ana_families.c calling qsort(NULL, 0, ...), undefined behaviour that
 * UBSan stops on in the unit-asan build). The flows table is then empty and
 * the drops table holds the 7 drops the recording states. */
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "npmsg.h"
#include "records.h"
#include "tap.h"
#include "tfile.h"

static void dd_header(struct np_recbuf *rb)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_HEADER, 1);
	msgpack_pack_map(pk, 4);
	np_pack_kv_str(pk, "kind", "recording");
	np_pack_str(pk, "host");
	msgpack_pack_map(pk, 2);
	np_pack_kv_str(pk, "hostname", "dd-host");
	np_pack_kv_u64(pk, "ncpus", 1);
	np_pack_kv_u64(pk, "interval_ns", 1000000000ull);
	np_pack_kv_u64(pk, "start_ns", 1000000000000ull);
}

static void dd_strcol(msgpack_packer *pk, const char *key, const char *v)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, 1);
	np_pack_str(pk, v);
}

static void dd_drops(struct np_recbuf *rb)
{
	uint64_t one[1] = { 1 }, netns[1] = { 4026531840u }, proto[1] = { 6 };
	uint64_t sport[1] = { 40001 }, dport[1] = { 9999 }, reason[1] = { 3 }, count[1] = { 7 };
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_DROPS, 1);
	msgpack_pack_map(pk, 13);
	np_pack_kv_u64(pk, "t0_ns", 1000000000000ull);
	np_pack_kv_u64(pk, "t1_ns", 1001000000000ull);
	np_pack_kv_u64(pk, "n", one[0]);
	np_pack_kv_u64_array(pk, "netns", netns, 1);
	np_pack_kv_u64_array(pk, "proto", proto, 1);
	dd_strcol(pk, "saddr", "10.0.1.1");
	np_pack_kv_u64_array(pk, "sport", sport, 1);
	dd_strcol(pk, "daddr", "10.0.1.2");
	np_pack_kv_u64_array(pk, "dport", dport, 1);
	np_pack_kv_u64_array(pk, "reason", reason, 1);
	dd_strcol(pk, "reason_name", "NO_SOCKET");
	np_pack_kv_u64_array(pk, "count", count, 1);
	np_pack_kv_bool(pk, "tuple_from_packet", true);
}

/* HEADER and DROPS as one in-memory recording; *len its size. */
static uint8_t *dd_recording(size_t *len)
{
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	dd_header(&rb);
	dd_drops(&rb);
	return tfile_recording(&rb, len);
}

static struct np_table *dd_table(struct ana_out *o, const char *name)
{
	for (size_t i = 0; i < o->tables.n; i++)
		if (!strcmp(o->tables.v[i]->name, name))
			return o->tables.v[i];
	return NULL;
}

int main(void)
{
	struct ana_options opt = { .quiet = true };
	struct ana_model m;
	struct ana_out o;
	size_t len = 0;
	uint8_t *rec = dd_recording(&len);
	tfile_load(&m, &opt, rec, len, "dd.npr");
	CHECK_EQ_U(m.fstats.n, 0);
	CHECK_EQ_U(m.drops.n, 1);
	ana_out_init(&o);
	ana_flows_run(&m, &o);     /* qsort(NULL, 0) before the fix: UBSan aborts here */
	struct np_table *f = dd_table(&o, "flows"), *d = dd_table(&o, "drops");
	CHECK(f != NULL && f->nrows == 0, "empty flows table");
	CHECK(d != NULL && d->nrows == 1, "one drops row");
	if (d && d->nrows == 1) {
		int c = np_table_find_col(d, "drops");
		CHECK(c >= 0 && np_cell_f64(np_table_cell_c(d, 0, (size_t)c)) == 7, "7 drops");
	}
	ana_out_free(&o);
	ana_model_free(&m);
	free(rec);
	return tap_done();
}
