/* record/core/output.c, trigger.c, selfcost.c without nprec: a rec_config by
 * hand, intervals of fake records, files read back with the container
 * reader. Chunk sizes are controlled with incompressible payloads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "xorshift.h"
#include "config.h"
#include "flightring.h"
#include "outrecs.h"
#include "container.h"
#include "npmsg.h"
#include "output.h"
#include "records.h"
#include "selfcost.h"
#include "trigger.h"

#define SEC 1000000000ull
#define REC_BLOB 99   /* an unknown record type: readers skip it */

static char tmpdir[256] = "/tmp/np-rtest-output.XXXXXX";
static void header_rb(struct np_recbuf *rb)
{
	np_recbuf_init(rb);
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_HEADER, 1);
	msgpack_pack_map(pk, 2);
	np_pack_kv_str(pk, "hostname", "test-host");
	np_pack_kv_str(pk, "output", "replaced by output.c");
}

/* One interval: INTERVAL {seq, t0_ns, t1_ns}, a FLOWS record with retrans
 * (if >= 0) and `blob` random bytes. */
static void interval_rb(struct np_recbuf *rb, uint64_t seq, uint64_t t0, uint64_t t1,
			int retrans, size_t blob)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_INTERVAL, 1);
	msgpack_pack_map(pk, 3);
	np_pack_kv_u64(pk, "seq", seq);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	if (retrans >= 0) {
		/* three flows sharing the retransmissions (FLOWS "retrans" column) */
		uint64_t col[3] = { (uint64_t)retrans / 2, (uint64_t)retrans / 4,
				    (uint64_t)retrans - retrans / 2 - retrans / 4 };
		pk = np_recbuf_begin(rb, NP_REC_FLOWS, 1);
		msgpack_pack_map(pk, 1);
		np_pack_kv_u64_array(pk, "retrans", col, 3);
	}
	if (blob) {
		char *b = malloc(blob);
		for (size_t i = 0; i < blob; i++)
			b[i] = (char)xs_next();
		pk = np_recbuf_begin(rb, REC_BLOB, 1);
		msgpack_pack_map(pk, 1);
		np_pack_str(pk, "data");
		msgpack_pack_bin(pk, blob);
		msgpack_pack_bin_body(pk, b, blob);
		free(b);
	}
}

static void end_rb(struct np_recbuf *rb)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_END, 1);
	msgpack_pack_map(pk, 1);
	np_pack_kv_str(pk, "reason", "test");
}

struct summary {
	int ok;                      /* file opened */
	uint64_t n_header, n_interval, n_end, n_trigger, n_blob, n_flows;
	uint64_t first_t0, last_t1, first_seq, last_seq;
	bool header_first;
	char mode[32], set[64], trigger_why[128], trig_expr[64];
	uint64_t rotation_index, dump_index, trig_first, trig_last, trig_t;
	double trig_value;
	struct np_reader_stats st;
	off_t size;
	bool indexed;        /* ends with a chunk index a reader uses (FORMAT.md 2.6) */
};

static void summarize(const char *path, struct summary *s)
{
	memset(s, 0, sizeof(*s));
	struct np_reader *r;
	struct stat sb;
	if (stat(path, &sb) == 0)
		s->size = sb.st_size;
	if (np_reader_open(&r, path, NULL, NULL) < 0)
		return;
	s->ok = 1;
	struct np_record rec;
	uint64_t n = 0;
	while (np_reader_next(r, &rec) == 1) {
		if (n++ == 0)
			s->header_first = rec.type == NP_REC_HEADER;
		uint64_t v;
		switch (rec.type) {
		case NP_REC_HEADER: {
			s->n_header++;
			const msgpack_object *out = np_map_get(rec.body, "output");
			if (out && out->type == MSGPACK_OBJECT_MAP) {
				np_get_strbuf(out, "mode", s->mode, sizeof(s->mode));
				np_get_strbuf(out, "set", s->set, sizeof(s->set));
				np_get_u64(out, "rotation_index", &s->rotation_index);
				np_get_u64(out, "dump_index", &s->dump_index);
			}
			break;
		}
		case NP_REC_INTERVAL:
			if (!s->n_interval++) {
				np_get_u64(rec.body, "t0_ns", &s->first_t0);
				np_get_u64(rec.body, "seq", &s->first_seq);
			}
			np_get_u64(rec.body, "t1_ns", &s->last_t1);
			if (np_get_u64(rec.body, "seq", &v) == 0)
				s->last_seq = v;
			break;
		case NP_REC_END: s->n_end++; break;
		case NP_REC_FLOWS: s->n_flows++; break;
		case REC_BLOB: s->n_blob++; break;
		case NP_REC_TRIGGER:
			s->n_trigger++;
			np_get_strbuf(rec.body, "why", s->trigger_why, sizeof(s->trigger_why));
			np_get_strbuf(rec.body, "expr", s->trig_expr, sizeof(s->trig_expr));
			np_get_u64(rec.body, "first_mono_ns", &s->trig_first);
			np_get_u64(rec.body, "last_mono_ns", &s->trig_last);
			np_get_u64(rec.body, "t_mono_ns", &s->trig_t);
			np_get_f64(rec.body, "value", &s->trig_value);
			break;
		}
	}
	s->st = *np_reader_stats(r);
	np_reader_close(r);
	if (np_reader_open(&r, path, NULL, NULL) == 0) {
		np_reader_set_window(r, 0, INT64_MAX, false);
		s->indexed = np_reader_seek_mode(r) == NP_SEEK_INDEX;
		np_reader_close(r);
	}
}

static bool clean(const struct summary *s)
{
	return s->ok && !s->st.chunks_bad && !s->st.truncated && !s->st.bad_file_header &&
	       !s->st.bytes_skipped && s->header_first;
}

static void cfg_init(struct rec_config *c, const char *name)
{
	static char path[512];
	rec_config_defaults(c);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	c->output = path;
	c->interval_ns = SEC;
	c->zstd_level = 3;
}

static bool exists(const char *fmt, const char *a, unsigned i)
{
	char p[600];
	snprintf(p, sizeof(p), fmt, a, i);
	return access(p, F_OK) == 0;
}

/* One output under test: its config, header, the interval being built and
 * the last error. */
struct ofx {
	struct rec_config c;
	struct np_recbuf h, rb;
	char err[512];
	struct rec_output *o;
};

/* The config for tmpdir/name; the caller sets options, then ofx_open. */
static void ofx_init(struct ofx *f, const char *name)
{
	cfg_init(&f->c, name);
	header_rb(&f->h);
	np_recbuf_init(&f->rb);
	f->err[0] = 0;
	f->o = NULL;
}

static void ofx_open(struct ofx *f)
{
	CHECK(rec_output_open(&f->o, &f->c, &f->h, f->err, sizeof(f->err)) == 0, "open: %s", f->err);
}

/* Interval i ([i s, i + 1 s]) written; rec_output_interval's result. */
static int ofx_interval(struct ofx *f, uint64_t i, int retrans, size_t blob)
{
	interval_rb(&f->rb, i, i * SEC, (i + 1) * SEC, retrans, blob);
	return rec_output_interval(f->o, &f->rb, (i + 1) * SEC, f->err, sizeof(f->err));
}

/* Intervals from..to, each one CHECKed to be written. */
static void ofx_intervals_ok(struct ofx *f, uint64_t from, uint64_t to, size_t blob)
{
	for (uint64_t i = from; i <= to; i++)
		CHECK(ofx_interval(f, i, -1, blob) == 0, "%s", f->err);
}

/* Intervals 1, 2, ... of blob bytes until one is refused or max are
 * written: the last result; *next the number after the last tried,
 * *written how many went in. */
static int ofx_fill(struct ofx *f, uint64_t max, size_t blob, uint64_t *next, uint64_t *written)
{
	int rc = 0;
	uint64_t i;
	*written = 0;
	for (i = 1; i <= max && rc == 0; i++) {
		rc = ofx_interval(f, i, -1, blob);
		*written += rc == 0;
	}
	*next = i;
	return rc;
}

/* Closed (one CHECK), with an END record when end. */
static void ofx_close(struct ofx *f, bool end)
{
	if (end)
		end_rb(&f->rb);
	CHECK(rec_output_close(f->o, end ? &f->rb : NULL, f->err, sizeof(f->err)) == 0, "close: %s",
	      f->err);
}

static void ofx_free(struct ofx *f)
{
	np_recbuf_free(&f->h);
	np_recbuf_free(&f->rb);
}

/* tmpdir/name (a buffer of the caller's, p[600]). */
static const char *tmp_path(char *p, const char *name)
{
	snprintf(p, 600, "%s/%s", tmpdir, name);
	return p;
}

/* ---- plain file ---- */

static void test_plain(void)
{
	struct ofx f;
	ofx_init(&f, "plain.npr");
	ofx_open(&f);
	for (uint64_t i = 1; i <= 5; i++) {
		CHECK(ofx_interval(&f, i, -1, 100) == 0, "%s", f.err);
		CHECK(np_recbuf_empty(&f.rb), "recbuf reset after interval");
	}
	/* every interval is in the file before the next one starts */
	struct summary s;
	summarize(f.c.output, &s);
	CHECK_EQ_U(s.n_interval, 5);
	CHECK_EQ_U(rec_output_bytes(f.o), s.size);
	ofx_close(&f, true);
	summarize(f.c.output, &s);
	CHECK(clean(&s), "plain file reads cleanly");
	CHECK(s.indexed, "plain file ends with its chunk index");
	CHECK_EQ_U(s.n_header, 1);
	CHECK_EQ_U(s.n_interval, 5);
	CHECK_EQ_U(s.n_blob, 5);
	CHECK_EQ_U(s.n_end, 1);
	CHECK(strcmp(s.mode, "file") == 0, "header output.mode=%s", s.mode);
	CHECK(strcmp(s.set, "plain") == 0, "header output.set=%s", s.set);
	struct stat sb;
	CHECK(stat(f.c.output, &sb) == 0 && (sb.st_mode & 0777) == 0600, "mode 0600");
	ofx_free(&f);
}

/* ---- --max-size ---- */

static void test_max_size(void)
{
	struct ofx f;
	ofx_init(&f, "max.npr");
	f.c.max_size = 20000;
	ofx_open(&f);
	uint64_t i, written;
	int rc = ofx_fill(&f, 100, 1000, &i, &written);
	CHECK(rc == 1, "max-size returns 1, got %d (%s)", rc, f.err);
	CHECK(written >= 10 && written <= 20, "intervals before the limit: %llu",
	      (unsigned long long)written);
	interval_rb(&f.rb, i, i * SEC, (i + 1) * SEC, -1, 1000);   /* the last partial one */
	ofx_close(&f, true);
	struct summary s;
	summarize(f.c.output, &s);
	CHECK(clean(&s), "max-size file reads cleanly");
	CHECK(s.indexed, "max-size file ends with its chunk index, within the limit");
	CHECK(s.size <= 20000, "file %lld <= max-size 20000", (long long)s.size);
	CHECK(s.size >= 20000 - 2 * 1100 - 4096, "file %lld is near the limit", (long long)s.size);
	/* after the refused interval no later one goes in (no gap), END does */
	CHECK_EQ_U(s.n_interval, written);
	CHECK_EQ_U(s.last_seq, written);
	CHECK_EQ_U(s.n_end, 1);
	ofx_free(&f);
}

/* ---- --rotate SIZE,COUNT ---- */

static void test_rotate(void)
{
	struct ofx f;
	ofx_init(&f, "rot.npr");
	f.c.rotate_size = 5000;
	f.c.rotate_count = 3;
	ofx_open(&f);
	ofx_intervals_ok(&f, 1, 30, 1000);
	ofx_close(&f, true);
	char base[512];
	snprintf(base, sizeof(base), "%s/rot", tmpdir);
	CHECK(access(f.c.output, F_OK) != 0, "no un-numbered file with --rotate");
	/* 1000-byte intervals, 5000-byte files: 4 intervals a file, 30 -> 8 files */
	unsigned last = 0;
	for (unsigned k = 1; k <= 20; k++)
		if (exists("%s.%04u.npr", base, k))
			last = k;
	CHECK_EQ_U(last, 8);
	unsigned kept = 0;
	uint64_t expect_seq = 0, total_iv = 0;
	for (unsigned k = 1; k <= last; k++) {
		if (!exists("%s.%04u.npr", base, k))
			continue;
		kept++;
		char p[600];
		snprintf(p, sizeof(p), "%s.%04u.npr", base, k);
		struct summary s;
		summarize(p, &s);
		CHECK(clean(&s), "%s reads alone", p);
		CHECK(s.indexed, "%s ends with its chunk index", p);
		CHECK(s.size <= 5000 + 200, "%s size %lld within rotate size", p, (long long)s.size);
		CHECK(strcmp(s.mode, "rotate") == 0 && s.rotation_index == k,
		      "%s: mode %s index %llu", p, s.mode, (unsigned long long)s.rotation_index);
		CHECK(strcmp(s.set, "rot") == 0, "set %s", s.set);
		if (expect_seq)
			CHECK_EQ_U(s.first_seq, expect_seq);   /* no interval lost between files */
		expect_seq = s.last_seq + 1;
		total_iv += s.n_interval;
		CHECK_EQ_U(s.n_end, k == last ? 1 : 0);
	}
	CHECK_EQ_U(kept, 3);
	CHECK_EQ_U(expect_seq, 31);
	CHECK(total_iv >= 9 && total_iv <= 12, "kept intervals %llu", (unsigned long long)total_iv);
	ofx_free(&f);
}

/* A restarted recorder continues an existing set: rotation numbering goes
 * on after the highest file, COUNT covers the old files too, dumps are never
 * overwritten. Runs after test_rotate (rot.0006..0008 exist). */
static void test_restart(void)
{
	struct ofx f;
	ofx_init(&f, "rot.npr");
	f.c.rotate_size = 5000;
	f.c.rotate_count = 3;
	char base[512];
	snprintf(base, sizeof(base), "%s/rot", tmpdir);
	ofx_open(&f);
	CHECK(exists("%s.%04u.npr", base, 9), "restart opens rot.0009.npr");
	CHECK(exists("%s.%04u.npr", base, 8), "and keeps the earlier run's files for now");
	for (uint64_t i = 1; i <= 5; i++)   /* 5 intervals: one rotation, to 0010 */
		ofx_interval(&f, i, -1, 1000);
	ofx_close(&f, false);
	unsigned n = 0;
	for (unsigned k = 1; k <= 12; k++)
		n += exists("%s.%04u.npr", base, k);
	CHECK(exists("%s.%04u.npr", base, 10) && exists("%s.%04u.npr", base, 8) && n == 3,
	      "COUNT=3 over both runs: %u files", n);

	cfg_init(&f.c, "fl.npr");
	f.c.flight_seconds_ns = 5 * SEC;
	ofx_open(&f);
	ofx_interval(&f, 1, -1, 10);
	ofx_close(&f, false);
	snprintf(base, sizeof(base), "%s/fl", tmpdir);
	CHECK(exists("%s.dump-%04u.npr", base, 4), "restarted flight recorder writes dump 0004");
	struct summary s;
	char p[600];
	summarize(tmp_path(p, "fl.dump-0001.npr"), &s);
	CHECK(strcmp(s.trigger_why, "sigusr1") == 0, "earlier dump 0001 untouched (%s)", s.trigger_why);
	ofx_free(&f);
}

/* ---- flight recorder ---- */

static void test_flight_seconds(void)
{
	struct ofx f;
	ofx_init(&f, "fl.npr");
	f.c.flight_seconds_ns = 5 * SEC;
	ofx_open(&f);
	CHECK(access(f.c.output, F_OK) != 0, "flight mode writes nothing before a trigger");
	ofx_intervals_ok(&f, 1, 20, 500);
	CHECK_EQ_U(rec_output_bytes(f.o), 0);
	/* trigger in the middle of interval 21 ([21 s, 22 s]) */
	uint64_t trig = 21 * SEC + SEC / 2;
	CHECK(rec_output_dump(f.o, "sigusr1", trig, f.err, sizeof(f.err)) == 0, "%s", f.err);
	char p[600];
	tmp_path(p, "fl.dump-0001.npr");
	CHECK(access(p, F_OK) != 0, "dump waits for the end of the interval");
	ofx_intervals_ok(&f, 21, 21, 500);
	char note[1024] = "";
	CHECK(rec_output_notice(f.o, note, sizeof(note)) == 1 && strstr(note, "fl.dump-0001.npr"),
	      "notice: %s", note);
	struct summary s;
	summarize(p, &s);
	CHECK(clean(&s), "dump reads cleanly");
	CHECK(s.indexed, "flight-recorder dump ends with its chunk index");
	CHECK(strcmp(s.mode, "flight-dump") == 0 && s.dump_index == 1, "mode %s", s.mode);
	/* the dump covers [trigger - 5 s, trigger] and little more */
	CHECK(s.first_t0 <= trig - 5 * SEC, "first t0 %llu", (unsigned long long)s.first_t0);
	CHECK(s.first_t0 >= trig - 7 * SEC, "first t0 %llu", (unsigned long long)s.first_t0);
	CHECK(s.last_t1 >= trig && s.last_t1 <= trig + SEC, "last t1 %llu",
	      (unsigned long long)s.last_t1);
	CHECK_EQ_U(s.n_trigger, 1);
	CHECK(strcmp(s.trigger_why, "sigusr1") == 0, "why %s", s.trigger_why);
	CHECK_EQ_U(s.trig_t, trig);
	CHECK_EQ_U(s.trig_first, s.first_t0);
	CHECK_EQ_U(s.trig_last, s.last_t1);
	CHECK_EQ_U(s.n_end, 0);
	/* keeps recording: a later trigger (at the end of interval 30) makes a
	 * second dump; stop makes a third */
	ofx_intervals_ok(&f, 22, 30, 500);
	rec_output_dump(f.o, "nprec --trigger", 31 * SEC - 1, f.err, sizeof(f.err));
	ofx_intervals_ok(&f, 31, 40, 500);
	ofx_close(&f, true);
	summarize(tmp_path(p, "fl.dump-0002.npr"), &s);
	CHECK(clean(&s) && s.n_interval >= 6 && s.n_interval <= 7 && s.last_seq == 31,
	      "second dump: %llu intervals, last seq %llu", (unsigned long long)s.n_interval,
	      (unsigned long long)s.last_seq);
	summarize(tmp_path(p, "fl.dump-0003.npr"), &s);
	CHECK(clean(&s) && s.n_end == 1 && s.last_seq == 40 && strcmp(s.trigger_why, "stop") == 0,
	      "stop dump: end %llu last seq %llu why %s", (unsigned long long)s.n_end,
	      (unsigned long long)s.last_seq, s.trigger_why);
	ofx_free(&f);
}

static void test_flight_bytes_and_condition(void)
{
	struct ofx f;
	ofx_init(&f, "fb.npr");
	f.c.flight_bytes = 8000;
	f.c.trigger_on[f.c.ntrigger_on++] = "retrans>100/s";
	ofx_open(&f);
	/* retrans per interval: low, then high for 3 intervals (one dump, not
	 * three), low, high again (second dump) */
	int retrans[] = { 10, 50, 90, 100, 30, 400, 500, 450, 20, 20, 300, 10 };
	unsigned n = sizeof(retrans) / sizeof(retrans[0]);
	for (unsigned i = 0; i < n; i++)
		CHECK(ofx_interval(&f, i + 1, retrans[i], 1000) == 0, "%s", f.err);
	char p[600];
	struct summary s;
	summarize(tmp_path(p, "fb.dump-0001.npr"), &s);
	CHECK(clean(&s), "condition dump reads cleanly");
	CHECK_EQ_U(s.last_seq, 6);          /* fired at the end of interval 6 (400/s) */
	CHECK(strcmp(s.trig_expr, "retrans>100/s") == 0, "expr %s", s.trig_expr);
	CHECK_NEAR(s.trig_value, 400, 0.01);
	/* 8000-byte ring of ~1060-byte chunks: 7 intervals */
	CHECK(s.n_interval >= 6 && s.n_interval <= 7, "bytes ring holds %llu intervals",
	      (unsigned long long)s.n_interval);
	CHECK(s.size <= 8000 + 1000, "dump size %lld", (long long)s.size);
	summarize(tmp_path(p, "fb.dump-0002.npr"), &s);
	CHECK(clean(&s) && s.last_seq == 11, "second condition dump ends at interval 11 (%llu)",
	      (unsigned long long)s.last_seq);
	CHECK(access(tmp_path(p, "fb.dump-0003.npr"), F_OK) != 0, "no dump for a sustained condition");
	ofx_close(&f, false);
	ofx_free(&f);
}

/* A trigger without --flight-recorder marks the moment in the recording. */
static void test_mark(void)
{
	struct ofx f;
	ofx_init(&f, "mark.npr");
	f.c.trigger_on[f.c.ntrigger_on++] = "retrans > 5";
	ofx_open(&f);
	ofx_interval(&f, 1, 0, 10);
	CHECK(rec_output_dump(f.o, "sigusr1", 2 * SEC + 5, f.err, sizeof(f.err)) == 0, "%s", f.err);
	ofx_interval(&f, 2, 12, 10);
	ofx_close(&f, false);
	struct summary s;
	summarize(f.c.output, &s);
	CHECK(clean(&s) && s.n_trigger == 2 && s.n_interval == 2, "two marks, %llu",
	      (unsigned long long)s.n_trigger);
	ofx_free(&f);
}

/* ---- SIGHUP reopen ---- */

static void test_reopen(void)
{
	struct ofx f;
	ofx_init(&f, "hup.npr");
	char moved[600];
	ofx_open(&f);
	ofx_interval(&f, 1, -1, 10);
	/* not moved: reopening must not truncate the recording */
	CHECK(rec_output_reopen(f.o, f.err, sizeof(f.err)) == 0, "%s", f.err);
	ofx_interval(&f, 2, -1, 10);
	snprintf(moved, sizeof(moved), "%s.1", f.c.output);
	CHECK(rename(f.c.output, moved) == 0, "rename");
	CHECK(rec_output_reopen(f.o, f.err, sizeof(f.err)) == 0, "reopen: %s", f.err);
	for (uint64_t i = 3; i <= 5; i++)
		ofx_interval(&f, i, -1, 10);
	ofx_close(&f, true);
	struct summary a, b;
	summarize(moved, &a);
	summarize(f.c.output, &b);
	CHECK(clean(&a) && a.n_interval == 2 && a.last_seq == 2, "old file: %llu intervals",
	      (unsigned long long)a.n_interval);
	CHECK(clean(&b) && b.n_header == 1 && b.n_interval == 3 && b.first_seq == 3 && b.n_end == 1,
	      "new file: %llu intervals from %llu", (unsigned long long)b.n_interval,
	      (unsigned long long)b.first_seq);
	ofx_free(&f);
}

/* SIGHUP with --rotate starts the next file of the set. */
static void test_reopen_rotate(void)
{
	struct ofx f;
	ofx_init(&f, "hrot.npr");
	f.c.rotate_size = 1 << 20;
	ofx_open(&f);
	ofx_interval(&f, 1, -1, 10);
	CHECK(rec_output_reopen(f.o, f.err, sizeof(f.err)) == 0, "reopen: %s", f.err);
	ofx_interval(&f, 2, -1, 10);
	ofx_close(&f, false);
	char p[600];
	struct summary s1, s2;
	summarize(tmp_path(p, "hrot.0001.npr"), &s1);
	summarize(tmp_path(p, "hrot.0002.npr"), &s2);
	CHECK(clean(&s1) && clean(&s2) && s1.last_seq == 1 && s2.first_seq == 2 &&
	      s2.rotation_index == 2, "HUP rotated: %llu -> %llu (index %llu)",
	      (unsigned long long)s1.last_seq, (unsigned long long)s2.first_seq,
	      (unsigned long long)s2.rotation_index);
	ofx_free(&f);
}

/* ---- disk full ---- */

static void test_disk_full(void)
{
	char mnt[300];
	snprintf(mnt, sizeof(mnt), "%s/tiny", tmpdir);
	mkdir(mnt, 0700);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=256k") < 0) {
		fprintf(stderr, "# disk-full test skipped: cannot mount tmpfs: %s\n", strerror(errno));
		return;
	}
	struct ofx f;
	ofx_init(&f, "unused.npr");
	char path[400];
	snprintf(path, sizeof(path), "%s/full.npr", mnt);
	f.c.output = path;
	ofx_open(&f);
	uint64_t i, ok;
	int rc = ofx_fill(&f, 1000, 10000, &i, &ok);
	CHECK(rc == -ENOSPC, "disk full gives -ENOSPC, got %d", rc);
	CHECK(strstr(f.err, "No space left") && strstr(f.err, "kept") && strstr(f.err, "intervals"),
	      "message says what was kept: %s", f.err);
	CHECK(ofx_interval(&f, i, -1, 10) < 0, "stays stopped");
	np_recbuf_reset(&f.rb);
	end_rb(&f.rb);
	f.err[0] = 0;
	CHECK(rec_output_close(f.o, &f.rb, f.err, sizeof(f.err)) < 0 && f.err[0], "close reports: %s",
	      f.err);
	struct summary s;
	summarize(path, &s);
	CHECK(clean(&s), "full disk: file valid to the last chunk");
	CHECK(!s.indexed, "full disk: no index after a failed write (readers scan)");
	CHECK_EQ_U(s.n_interval, ok);
	CHECK(ok >= 20, "intervals kept %llu", (unsigned long long)ok);
	ofx_free(&f);
	umount2(mnt, MNT_DETACH);
}

/* ---- configuration errors ---- */

static void test_errors(void)
{
	struct rec_config c;
	cfg_init(&c, "err.npr");
	struct np_recbuf h;
	header_rb(&h);
	char err[512] = "";
	struct rec_output *o = NULL;
	c.trigger_on[c.ntrigger_on++] = "retrans>";
	CHECK(rec_output_open(&o, &c, &h, err, sizeof(err)) == -EINVAL && strstr(err, "retrans>"),
	      "bad trigger: %s", err);
	cfg_init(&c, "err.npr");
	c.output = "-";
	c.flight_seconds_ns = SEC;
	CHECK(rec_output_open(&o, &c, &h, err, sizeof(err)) == -EINVAL, "flight to stdout refused");
	cfg_init(&c, "nodir/fl.npr");
	c.flight_seconds_ns = SEC;
	CHECK(rec_output_open(&o, &c, &h, err, sizeof(err)) == -ENOENT && strstr(err, "dumps"),
	      "flight recorder checks its dump directory at start: %s", err);
	cfg_init(&c, "nodir/x.npr");
	CHECK(rec_output_open(&o, &c, &h, err, sizeof(err)) == -ENOENT && strstr(err, "nodir"),
	      "missing dir: %s", err);
	np_recbuf_free(&h);
}

/* ---- flightring.c, outrecs.c ---- */

static void push_blob(struct flightring *r, uint64_t i, size_t blob)
{
	struct np_recbuf rb;
	struct np_chunk c;
	np_recbuf_init(&rb);
	interval_rb(&rb, i, i * SEC, (i + 1) * SEC, -1, blob);
	np_chunk_build(&c, &rb, 3);
	flightring_push(r, &c, i * SEC, (i + 1) * SEC);
	np_recbuf_free(&rb);
}

static void test_flightring(void)
{
	struct flightring r;
	/* time window 4 s: keeps 4 s + one interval */
	flightring_init(&r, 4 * SEC, 0, SEC, 0);
	for (uint64_t i = 1; i <= 20; i++)
		push_blob(&r, i, 100);
	CHECK_EQ_U(r.n, 5);
	CHECK_EQ_U(flightring_at(&r, 0)->t_start, 16 * SEC);
	/* a trigger at 20.5 s needs [16.5, 21]: from the chunk starting at 16 s */
	CHECK_EQ_U(flightring_at(&r, flightring_first_for(&r, 20 * SEC + SEC / 2))->t_start, 16 * SEC);
	/* at 21 s the chunk [16, 17] is not needed */
	CHECK_EQ_U(flightring_at(&r, flightring_first_for(&r, 21 * SEC))->t_start, 17 * SEC);
	flightring_free(&r);

	/* the memory cap wins over the time window, and says so */
	flightring_init(&r, 100 * SEC, 0, SEC, 3500);
	for (uint64_t i = 1; i <= 10; i++)
		push_blob(&r, i, 1000);
	CHECK(r.n == 3 && r.bytes <= 3500 && r.dropped_mem == 7, "mem cap: %zu chunks, %llu bytes, "
	      "%llu dropped", r.n, (unsigned long long)r.bytes, (unsigned long long)r.dropped_mem);
	flightring_free(&r);

	/* byte window: newest chunk always kept, even when larger */
	flightring_init(&r, 0, 500, SEC, 0);
	push_blob(&r, 1, 100);
	push_blob(&r, 2, 2000);
	CHECK(r.n == 1 && flightring_at(&r, 0)->t_start == 2 * SEC, "byte window keeps newest");
	CHECK_EQ_U(flightring_first_for(&r, 100 * SEC), 0);
	flightring_free(&r);
	CHECK_EQ_U(r.n, 0);
}

static void test_outrecs(void)
{
	struct np_recbuf h, out;
	header_rb(&h);
	interval_rb(&h, 7, SEC, 2 * SEC, -1, 0);        /* a second record after HEADER */
	np_recbuf_init(&out);
	char val[] = { (char)0xa3, 'y', 'e', 's' };     /* msgpack "yes" */
	outrecs_header_with(&out, h.sbuf.data, h.sbuf.size, "output", val, sizeof(val));
	CHECK_EQ_U(out.nrecords, 2);
	CHECK(out.type == NP_CHUNK_TYPE_MIXED, "mixed chunk type %d", out.type);
	struct np_chunk c;
	CHECK(np_chunk_build(&c, &out, 3) == 0, "build");
	uint8_t file[4096];
	memcpy(file, NP_FILE_MAGIC, NP_FILE_MAGIC_LEN);
	memset(file + 8, 0, 8);
	file[8] = NP_FORMAT_VERSION;
	file[10] = NP_KIND_RECORDING;
	memcpy(file + 16, c.data, c.len);
	struct np_reader *rd;
	struct np_record rec;
	CHECK(np_reader_open_mem(&rd, file, 16 + c.len, NULL, NULL) == 0, "open mem");
	CHECK(np_reader_next(rd, &rec) == 1 && rec.type == NP_REC_HEADER, "header first");
	char buf[32] = "", host[32] = "";
	np_get_strbuf(rec.body, "output", buf, sizeof(buf));
	np_get_strbuf(rec.body, "hostname", host, sizeof(host));
	CHECK(strcmp(buf, "yes") == 0 && strcmp(host, "test-host") == 0,
	      "output replaced (%s), other keys kept (%s)", buf, host);
	CHECK_EQ_U(rec.body->via.map.size, 2);
	CHECK(np_reader_next(rd, &rec) == 1 && rec.type == NP_REC_INTERVAL, "interval copied");
	np_reader_close(rd);
	np_chunk_free(&c);

	outrecs_filter(&h, NP_REC_INTERVAL);
	CHECK(h.nrecords == 1 && h.type == NP_REC_INTERVAL, "filter keeps %u records", h.nrecords);
	np_recbuf_free(&h);
	np_recbuf_free(&out);
}

/* ---- trigger.c ---- */

static void test_trigger_parse(void)
{
	const char *good[] = { "alert", "alerts", "alert>2", "retrans>100/s", "drops > 0.5 /s",
			       "retrans>7" };
	const char *bad[] = { "", "retrans", "retrans<5", "drops>x/s", "cpu>5", "alert>-1",
			      "retrans>5/m" };
	char err[256];
	struct rec_trigger *t;
	for (unsigned i = 0; i < sizeof(good) / sizeof(*good); i++) {
		CHECK(rec_trigger_parse(&t, &good[i], 1, err, sizeof(err)) == 0, "%s: %s", good[i], err);
		rec_trigger_free(t);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		CHECK(rec_trigger_parse(&t, &bad[i], 1, err, sizeof(err)) == -EINVAL, "'%s' refused", bad[i]);
}

static void test_trigger_counts(void)
{
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	interval_rb(&rb, 1, 0, SEC, 37, 0);
	msgpack_packer *pk = np_recbuf_begin(&rb, NP_REC_FLOWS, 1);  /* plain column */
	uint64_t r2[] = { 1, 2, 3 };
	msgpack_pack_map(pk, 1);
	np_pack_kv_u64_array(pk, "retrans", r2, 3);
	pk = np_recbuf_begin(&rb, NP_REC_DROPS, 1);
	uint64_t d[] = { 5, 7 };
	msgpack_pack_map(pk, 1);
	np_pack_kv_u64_array(pk, "count", d, 2);
	pk = np_recbuf_begin(&rb, NP_REC_ALERTS, 1);
	uint64_t a[] = { 1, 1, 1 };
	msgpack_pack_map(pk, 1);
	np_pack_kv_u64_array(pk, "flow", a, 3);
	pk = np_recbuf_begin(&rb, NP_REC_ALERTS, 1);   /* as stackmon writes it: n, then columns */
	msgpack_pack_map(pk, 2);
	np_pack_kv_u64(pk, "n", 0);
	np_pack_kv_u64_array(pk, "seq", a, 0);
	struct rec_trigger_counts cn;
	rec_trigger_count(&rb, &cn);
	CHECK_EQ_U(cn.retrans, 43);
	CHECK_EQ_U(cn.drops, 12);
	CHECK_EQ_U(cn.alerts, 3);

	const char *ex[] = { "drops>5/s", "alert>3" };
	struct rec_trigger *t;
	char err[256], why[256] = "";
	CHECK(rec_trigger_parse(&t, ex, 2, err, sizeof(err)) == 0, "%s", err);
	/* 12 drops in 2 s = 6/s > 5 */
	CHECK(rec_trigger_check(t, &rb, 2 * SEC, why, sizeof(why)) == 1 && strstr(why, "6.0/s"),
	      "why %s", why);
	CHECK(rec_trigger_check(t, &rb, 2 * SEC, why, sizeof(why)) == 0, "edge-triggered");
	/* 12 in 3 s = 4/s: re-arms */
	CHECK(rec_trigger_check(t, &rb, 3 * SEC, why, sizeof(why)) == 0, "below");
	CHECK(rec_trigger_check(t, &rb, 1 * SEC, why, sizeof(why)) == 1, "fires again");
	rec_trigger_free(t);
	np_recbuf_free(&rb);
}

/* ---- selfcost.c ---- */

static void test_selfcost(void)
{
	struct rec_selfcost s;
	rec_selfcost_init(&s);
	uint64_t before = s.utime_ns + s.stime_ns;
	volatile uint64_t x = 0;
	for (uint64_t i = 0; i < 300000000ull; i++)
		x += i ^ (x >> 3);
	rec_selfcost_sample(&s);
	CHECK(s.utime_ns + s.stime_ns > before, "cpu time grows");
	CHECK(s.cpu_pct > 0 && s.cpu_pct <= 100.0 * 1.05, "busy loop cpu %.1f%%", s.cpu_pct);
	CHECK(s.rss_bytes > 0 && s.maxrss_bytes >= s.rss_bytes / 2, "rss %llu",
	      (unsigned long long)s.rss_bytes);
	/* the kept descriptor reads what a fresh open of another file says */
	unsigned long long vmrss_kb = 0;
	char line[256];
	FILE *st = fopen("/proc/self/status", "r");
	while (st && fgets(line, sizeof(line), st))
		if (sscanf(line, "VmRSS: %llu kB", &vmrss_kb) == 1)
			break;
	if (st)
		fclose(st);
	rec_selfcost_sample(&s);
	CHECK(vmrss_kb && s.rss_bytes / 1024 >= vmrss_kb * 9 / 10 && s.rss_bytes / 1024 <= vmrss_kb * 11 / 10,
	      "rss %llu kB against VmRSS %llu kB", (unsigned long long)(s.rss_bytes / 1024), vmrss_kb);
	close(s.statm_fd);

	struct rec_ratectl r;
	rec_ratectl_init(&r, 10, 1);
	CHECK_EQ_U(rec_ratectl_update(&r, 5), 1);
	CHECK_EQ_U(rec_ratectl_update(&r, 15), 2);      /* over: halve the rate */
	CHECK(r.div != r.prev_div, "change visible");
	CHECK_EQ_U(rec_ratectl_update(&r, 25), 8);      /* far over: quarter */
	CHECK_EQ_U(rec_ratectl_update(&r, 8), 8);       /* within budget: hold */
	CHECK_EQ_U(rec_ratectl_update(&r, 2), 8);
	CHECK_EQ_U(rec_ratectl_update(&r, 2), 8);
	CHECK_EQ_U(rec_ratectl_update(&r, 2), 4);       /* 3 calm intervals: back up */
	CHECK_EQ_U(r.changes, 3);
	rec_ratectl_init(&r, 0, 4);
	CHECK_EQ_U(rec_ratectl_update(&r, 400), 4);     /* no --max-cpu: never changes */
}

int main(void)
{
	static void (*const tests[])(void) = {
		test_plain, test_max_size, test_rotate, test_flight_seconds,
		test_flight_bytes_and_condition, test_restart, test_mark, test_reopen,
		test_reopen_rotate, test_disk_full, test_errors, test_flightring, test_outrecs,
		test_trigger_parse, test_trigger_counts, test_selfcost, NULL
	};
	return tap_run_in(tmpdir, tests);
}
