/* Record schemas (common/recschema.h): the key counts the writers packed by
 * hand, the committed recordings (the .npr files of fixtures/, written by
 * mkfixtures, not by the schema; older, so with fewer keys) use only known
 * keys of the right type, and bodies with an unknown key, a missing key, a
 * key of the wrong type or a short column are refused. */
#include "tap.h"
#include "container.h"
#include "npmsg.h"
#include "records.h"
#include "recschema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned checked[256];

static int check_file(const char *path)
{
	struct np_reader *r;
	struct np_record rec;
	char err[160];
	int bad = 0;
	if (np_reader_open(&r, path, NULL, NULL))
		return -1;
	while (np_reader_next(r, &rec) == 1) {
		if (!rec.body || !np_recschema_of(rec.type))
			continue;
		if (np_schema_check(rec.type, rec.body, false, err, sizeof(err))) {
			fprintf(stderr, "# %s: %s\n", path, err);
			bad++;
		}
		checked[rec.type]++;
	}
	np_reader_close(r);
	return bad;
}

/* A TXN_EVENTS body of two rows packed by hand, with one fault. */
enum fault { F_NONE, F_UNKNOWN, F_MISSING, F_TYPE, F_SHORT, F_NOPATH };

static int check_built(enum fault f)
{
	static const uint64_t two[2] = { 1, 2 }, one[1] = { 1 };
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	size_t nkeys = NPK_TXN_EVENTS__N - (f == F_MISSING || f == F_NOPATH) + (f == F_UNKNOWN);
	msgpack_pack_map(&pk, nkeys);
	for (int k = 0; k < NPK_TXN_EVENTS__N; k++) {
		const struct np_recfield *fd = &np_schema_TXN_EVENTS[k];
		if ((f == F_MISSING && k == NPK_TXN_EVENTS_DUR_NS) || (f == F_NOPATH && k == NPK_TXN_EVENTS_PATH))
			continue;
		if (k == NPK_TXN_EVENTS_N)
			np_pack_kv_u64(&pk, fd->key, 2);
		else if (fd->enc == NP_FE_SCALAR && fd->type == NP_FT_BOOL)
			np_pack_kv_bool(&pk, fd->key, false);
		else if (fd->enc == NP_FE_SCALAR)
			np_pack_kv_u64(&pk, fd->key, 7);
		else if (fd->type == NP_FT_STR && !(f == F_TYPE && k == NPK_TXN_EVENTS_METHOD)) {
			np_pack_str(&pk, fd->key);
			msgpack_pack_array(&pk, 2);
			np_pack_str(&pk, "GET");
			np_pack_str(&pk, "PUT");
		} else if (fd->enc == NP_FE_DELTA) {
			static const uint64_t down[2] = { 5, 2 };   /* a negative difference */
			np_pack_kv_u64_delta(&pk, fd->key, down, 2);
		} else
			np_pack_kv_u64_array(&pk, fd->key, f == F_SHORT && k == NPK_TXN_EVENTS_ROLE ? one : two,
					     f == F_SHORT && k == NPK_TXN_EVENTS_ROLE ? 1 : 2);
	}
	if (f == F_UNKNOWN)
		np_pack_kv_u64(&pk, "retx", 1);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	char err[160] = "";
	int rc = -2;
	if (msgpack_unpack_next(&u, sb.data, sb.size, &off) == MSGPACK_UNPACK_SUCCESS)
		rc = np_schema_check(NP_REC_TXN_EVENTS, &u.data, true, err, sizeof(err));
	if (rc)
		fprintf(stderr, "# fault %d: %s\n", f, err);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

int main(void)
{
	/* the counts the writers packed by hand before the schema */
	CHECK_EQ_U(NPK_FLOWS__N, 29);
	CHECK_EQ_U(NPK_DROPS__N, 19);
	CHECK_EQ_U(NPK_TXN_STATS__N - NPK_TXN_STATS__NOPT, 29);   /* + ev_sample, ev (issue 24), start_* (issue 19) */
	CHECK_EQ_U(NPK_TXN_EVENTS__N - NPK_TXN_EVENTS__NOPT, 15);
	CHECK(!strcmp(NPK(FLOWS, LPORT), "lport") && !strcmp(NPK(TXN_EVENTS, START_NS_D), "start_ns_d"),
	      "NPK names the key");
	CHECK_EQ_U(NPK_PKT_FLOWS__N, 7);
	CHECK_EQ_U(NPK_THREADS__N - NPK_THREADS__NOPT, 12);
	CHECK_EQ_U(NPK_THREADS__NOPT, 6);
	CHECK(np_recschema_of(NP_REC_PKT_EVENTS) == NULL, "types without a schema yet: none returned");

	static const char *const files[] = { "fixtures/rec-basic.npr", "fixtures/multihost-a.npr",
					     "fixtures/multihost-b.npr" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		CHECK(check_file(files[i]) == 0, "%s conforms", files[i]);
	CHECK(checked[NP_REC_FLOWS] > 0 && checked[NP_REC_DROPS] > 0,
	      "fixtures held flows (%u) and drops (%u) records", checked[NP_REC_FLOWS], checked[NP_REC_DROPS]);

	CHECK(check_built(F_NONE) == 0, "a complete body conforms");
	CHECK(check_built(F_NOPATH) == 0, "the optional path may be left out");
	CHECK(check_built(F_UNKNOWN) == -1, "unknown key refused");
	CHECK(check_built(F_MISSING) == -1, "missing required key refused");
	CHECK(check_built(F_TYPE) == -1, "string column of integers refused");
	CHECK(check_built(F_SHORT) == -1, "column shorter than n refused");
	/* the committed page is what the tables generate */
	char *gen = NULL, have[16384];
	size_t genlen = 0;
	FILE *m = open_memstream(&gen, &genlen);
	np_recschema_markdown(m);
	fclose(m);
	FILE *f = fopen("docs/records/schema.md", "r");
	size_t havelen = f ? fread(have, 1, sizeof(have), f) : 0;
	if (f) fclose(f);
	CHECK(genlen == havelen && !memcmp(gen, have, genlen),
	      "docs/records/schema.md matches common/recschema.h (build/tools/recschema_md > docs/records/schema.md)");
	free(gen);
	return tap_done();
}
