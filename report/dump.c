/* npreport dump: prints every record of np files as one JSON object per line,
 * like `perf script` or `tshark -r`, for scripting (jq) and debugging. */
#include "dump.h"
#include "container.h"
#include "npmsg.h"
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
};

static void dump_usage(FILE *f)
{
	fprintf(f, "usage: npreport dump [--type NAME]... [--header-only] [--stats] FILE...\n"
		   "  prints every record of .npr/.npa files as one JSON object per line:\n"
		   "  {\"type\":NAME,\"type_id\":N,\"version\":N,\"chunk\":N,\"offset\":N,\"body\":{...}}\n"
		   "  --type NAME    only records of this type (name or number; repeatable)\n"
		   "  --header-only  only the file's HEADER (recording) or ANA_META (analysis) record\n"
		   "  --stats        reader statistics on stderr after each file\n"
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
	struct np_record rec;
	while (np_reader_next(r, &rec) == 1) {
		if (dump_wanted(o, rec.type))
			dump_record(stdout, o, path, &rec);
		if (o->header_only && (rec.type == NP_REC_HEADER || rec.type == NP_REC_ANA_META))
			break;
	}
	const struct np_reader_stats *s = np_reader_stats(r);
	if (o->stats)
		dump_print_stats(path, s);
	int rc = !o->header_only && dump_damaged(s) ? 1 : 0;
	np_reader_close(r);
	return rc;
}

static int dump_parse(struct dump_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "header-only", no_argument, NULL, 'H' },
		{ "stats", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "t:Hsh", longopts, NULL)) != -1) {
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
	struct dump_opts o = { 0 };
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
