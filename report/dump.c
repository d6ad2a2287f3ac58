/* npreport dump: prints every record of np files as one JSON object per line,
 * like `perf script` or `tshark -r`, for scripting (jq) and debugging. */
#include "dump.h"
#include "container.h"
#include "npmsg.h"
#include "numarg.h"
#include "records.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DUMP_MAX_TYPES 64

struct dump_opts {
	int  types[DUMP_MAX_TYPES];    /* --type filter; empty = all */
	int  ntypes;
	bool header_only;
	bool stats;
	bool with_file;                /* several files: say which one */
	/* --from/--to: chunks of this time window only (np_reader_set_window) */
	bool win, win_rel;
	int64_t from, to;
};

static void dump_usage(FILE *f)
{
	fprintf(f, "usage: npreport dump [--type NAME]... [--header-only] [--stats] [--from T] [--to T] FILE...\n"
		   "  prints every record of .npr/.npa files as one JSON object per line:\n"
		   "  {\"type\":NAME,\"type_id\":N,\"version\":N,\"chunk\":N,\"offset\":N,\"body\":{...}}\n"
		   "  --type NAME    only records of this type (name or number; repeatable)\n"
		   "  --header-only  only the file's HEADER (recording) or ANA_META (analysis) record\n"
		   "  --stats        reader statistics on stderr after each file\n"
		   "  --from T, --to T  only the chunks whose records' times meet this window (and\n"
		   "                 the file's first chunk, and chunks without a time), read through\n"
		   "                 the file's chunk index; T in seconds from the file's first time\n"
		   "                 (e.g. 3600) or absolute mono ns with suffix 'ns'\n"
		   "  exit status: 0 read fully, 1 damage was skipped, 2 usage or open error\n");
}

static int dump_parse_type(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s && !*end && v >= 0 && v <= 0xffff)
		return (int)v;
	for (int t = 0; t < 256; t++) {
		const char *name = np_rec_type_name(t);
		if (name && strcmp(name, s) == 0)
			return t;
	}
	return -1;
}

static bool dump_wanted(const struct dump_opts *o, int type)
{
	if (o->header_only)
		return type == NP_REC_HEADER || type == NP_REC_ANA_META;
	if (o->ntypes == 0)
		return true;
	for (int i = 0; i < o->ntypes; i++)
		if (o->types[i] == type)
			return true;
	return false;
}

/* The reader's messages already name the file. */
static void dump_warn(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "npreport dump: %s\n", msg);
}

/* A JSON string of a file name (paths may hold quotes or control bytes). */
static void dump_json_str(FILE *f, const char *s)
{
	msgpack_object o = { .type = MSGPACK_OBJECT_STR };
	o.via.str.ptr = s;
	o.via.str.size = (uint32_t)strlen(s);
	np_obj_print_json(f, &o);
}

static void dump_record(FILE *out, const struct dump_opts *o, const char *path,
			const struct np_record *rec)
{
	const char *name = np_rec_type_name(rec->type);
	fputc('{', out);
	if (o->with_file) {
		fputs("\"file\":", out);
		dump_json_str(out, path);
		fputc(',', out);
	}
	if (name)
		fprintf(out, "\"type\":\"%s\"", name);
	else
		fputs("\"type\":null", out);
	fprintf(out, ",\"type_id\":%u,\"version\":%u,\"chunk\":%" PRIu64 ",\"offset\":%" PRIu64
		",\"body\":", rec->type, rec->version, rec->chunk_index, rec->file_offset);
	if (rec->body)
		np_obj_print_json(out, rec->body);
	else
		fputs("null", out);
	fputs("}\n", out);
}

static void dump_print_stats(const char *path, const struct np_reader_stats *s)
{
	fprintf(stderr, "%s: %" PRIu64 " chunks ok, %" PRIu64 " bad, %" PRIu64 " bytes skipped, %"
		PRIu64 " records (%" PRIu64 " bad), %s, last good chunk ends at %" PRIu64 "%s\n",
		path, s->chunks_ok, s->chunks_bad, s->bytes_skipped, s->records, s->records_bad,
		s->truncated ? "truncated" : "not truncated", s->last_good_offset,
		s->bad_file_header ? ", file header damaged" : "");
}

static void dump_print_seek(const char *path, const struct np_reader *r)
{
	static const char *const how[] = { [NP_SEEK_INDEX] = "through the chunk index",
					   [NP_SEEK_SCAN] = "by reading every chunk (no usable index)" };
	enum np_seek_mode m = np_reader_seek_mode(r);
	if (m != NP_SEEK_NONE)
		fprintf(stderr, "%s: window read %s\n", path, how[m]);
}

static bool dump_damaged(const struct np_reader_stats *s)
{
	return s->chunks_bad || s->bytes_skipped || s->records_bad || s->truncated ||
	       s->bad_file_header;
}

/* Returns 0 read fully, 1 damaged, 2 cannot open. */
static int dump_file(const struct dump_opts *o, const char *path)
{
	struct np_reader *r;
	int err = np_reader_open(&r, path, dump_warn, (void *)path);
	if (err < 0) {
		fprintf(stderr, "npreport dump: cannot open %s: %s\n", path, strerror(-err));
		return 2;
	}
	if (o->win)
		np_reader_set_window(r, o->from, o->to, o->win_rel);
	struct np_record rec;
	while (np_reader_next(r, &rec) == 1) {
		if (dump_wanted(o, rec.type))
			dump_record(stdout, o, path, &rec);
		if (o->header_only && (rec.type == NP_REC_HEADER || rec.type == NP_REC_ANA_META))
			break;
	}
	const struct np_reader_stats *s = np_reader_stats(r);
	if (o->stats) {
		dump_print_stats(path, s);
		dump_print_seek(path, r);
	}
	int rc = !o->header_only && dump_damaged(s) ? 1 : 0;
	np_reader_close(r);
	return rc;
}

/* T: seconds from the file's first time, or absolute ns with "ns". */
static int dump_parse_time(struct dump_opts *o, const char *opt, const char *s, int64_t *t)
{
	double v;
	const char *unit;
	if (np_parse_num(s, 0, 9.2e18, &v, &unit) == 0) {
		bool ns = !strcmp(unit, "ns");
		if (ns || !*unit || !strcmp(unit, "s")) {
			if (!ns)
				v *= 1e9;
			if (v < 9.2e18) {
				bool rel = !ns;
				if (o->win && rel != o->win_rel) {
					fprintf(stderr, "npreport dump: --from and --to must both be seconds or both ns\n");
					return -1;
				}
				o->win = true;
				o->win_rel = rel;
				*t = (int64_t)v;
				return 0;
			}
		}
	}
	fprintf(stderr, "npreport dump: %s %s: not a time (seconds, or NNNns)\n", opt, s);
	return -1;
}

static int dump_parse(struct dump_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "header-only", no_argument, NULL, 'H' },
		{ "stats", no_argument, NULL, 's' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "t:Hsh", longopts, NULL)) != -1) {
		if ((c == 'F' && dump_parse_time(o, "--from", optarg, &o->from)) ||
		    (c == 'T' && dump_parse_time(o, "--to", optarg, &o->to)))
			return -1;
		switch (c) {
		case 't': {
			int t = dump_parse_type(optarg);
			if (t < 0) {
				fprintf(stderr, "npreport dump: unknown record type '%s'\n", optarg);
				return -1;
			}
			if (o->ntypes == DUMP_MAX_TYPES) {
				fprintf(stderr, "npreport dump: too many --type options\n");
				return -1;
			}
			o->types[o->ntypes++] = t;
			break;
		}
		case 'H': o->header_only = true; break;
		case 's': o->stats = true; break;
		case 'F': case 'T': break;
		case 'h': dump_usage(stdout); return 1;
		default:  dump_usage(stderr); return -1;
		}
	}
	if (optind >= argc) {
		dump_usage(stderr);
		return -1;
	}
	return 0;
}

int dump_main(int argc, char **argv)
{
	struct dump_opts o = { .to = INT64_MAX };
	int p = dump_parse(&o, argc, argv);
	if (p != 0)
		return p < 0 ? 2 : 0;
	o.with_file = argc - optind > 1;
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		int frc = dump_file(&o, argv[i]);
		if (frc > rc)
			rc = frc;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "npreport dump: write error on stdout: %s\n", strerror(errno));
		return 2;
	}
	return rc;
}
