/* Where finished chunks go (issue 5).
 *
 *  file    one recording; every interval is one chunk, written with write(2)
 *          before the next interval starts (so SIGKILL loses at most the
 *          interval in progress); --fsync makes each chunk durable.
 *  rotate  NAME.0001.npr, NAME.0002.npr ...: a new file when the next chunk
 *          would pass --rotate SIZE, at most COUNT files kept.
 *  flight  chunks are built in memory and kept in a ring bounded by time or
 *          bytes; a trigger writes the ring out as NAME.dump-0001.npr ...
 *
 * Every file starts with the same HEADER record plus an "output" key that
 * says which file of the set it is (docs/records/incident.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpuslice.h"
#include "flightring.h"
#include "fsbroker.h"
#include "npmsg.h"
#include "output.h"
#include "outrecs.h"
#include "records.h"
#include "trigger.h"

/* Room kept under --max-size for the END chunk written at close. */
#define OUT_END_RESERVE       4096u
/* A time-bounded ring never holds more than this in memory. */
#define OUT_FLIGHT_MAX_MEM    (1024ull << 20)
#define OUT_TRIGGER_VERSION   1

enum out_mode { OUT_FILE, OUT_ROTATE, OUT_FLIGHT };

struct out_pending {                /* a dump requested, written at interval end */
	bool on;
	char why[256];
	char source[16];
	uint64_t t_mono;
	struct rec_trigger_fire fire;
	bool has_fire;
};

struct rec_output {
	const struct rec_config *cfg;
	enum out_mode mode;
	struct np_writer_opts wopts;
	char *hdr;                  /* HEADER record bytes, copied */
	size_t hdr_len;
	const char *out;            /* -o as given, "-" = stdout */
	char *base;                 /* output path without ".npr" */

	struct np_writer *w;        /* current file (NULL in flight mode) */
	char *path;                 /* its path */
	uint64_t file_intervals;    /* intervals in the current file */
	uint64_t file_first_t, file_last_t;
	unsigned file_index;        /* rotation index / reopen count */
	unsigned rot_lo;            /* lowest rotation index that may still exist */
	uint64_t bytes_closed;      /* bytes of files already closed */
	int failed;                 /* sticky write error */
	bool full;                  /* --max-size reached */

	struct flightring ring;
	uint64_t last_t_end;
	unsigned dump_index;
	uint64_t last_cond_dump;    /* mono ns of the last condition dump */
	struct out_pending pend;

	struct rec_trigger *trig;
	struct np_zctx *zc;         /* kept across chunks; NULL: one per chunk */
	char notice[512];
	char failmsg[512];          /* why o->failed was set, repeated at close */
};

static uint64_t out_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* mono timestamp -> realtime, through the current offset between the clocks */
static uint64_t out_mono_to_rt(uint64_t t_mono)
{
	uint64_t m = out_clock(CLOCK_MONOTONIC), r = out_clock(CLOCK_REALTIME);
	return r - (m - t_mono);
}

static void out_notice(struct rec_output *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void out_notice(struct rec_output *o, const char *fmt, ...)
{
	size_t len = strlen(o->notice);
	if (len + 2 >= sizeof(o->notice))
		return;
	if (len)
		o->notice[len++] = '\n';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->notice + len, sizeof(o->notice) - len, fmt, ap);
	va_end(ap);
}

/* ---- header of each file ---- */

struct out_fileinfo {
	const char *mode;           /* "file", "rotate", "flight-dump" */
	unsigned index;             /* rotation index / reopen count / dump index */
	const struct out_pending *dump;
};

static void out_pack_fileinfo(struct rec_output *o, msgpack_packer *pk,
			      const struct out_fileinfo *fi)
{
	const char *slash = strrchr(o->base, '/');
	const char *set = slash ? slash + 1 : o->base;
	unsigned n = 2;
	if (fi->dump)
		n += 5;
	if (o->mode == OUT_ROTATE)
		n += 3;
	msgpack_pack_map(pk, n);
	np_pack_kv_str(pk, "mode", fi->mode);
	np_pack_kv_str(pk, "set", set);
	if (o->mode == OUT_ROTATE) {
		np_pack_kv_u64(pk, "rotation_index", fi->index);
		np_pack_kv_u64(pk, "rotate_size", o->cfg->rotate_size);
		np_pack_kv_u64(pk, "rotate_count", o->cfg->rotate_count);
	}
	if (fi->dump) {
		np_pack_kv_u64(pk, "dump_index", fi->index);
		np_pack_kv_str(pk, "trigger", fi->dump->why);
		np_pack_kv_u64(pk, "trigger_mono_ns", fi->dump->t_mono);
		np_pack_kv_u64(pk, "window_ns", o->cfg->flight_seconds_ns);
		np_pack_kv_u64(pk, "window_bytes", o->cfg->flight_bytes);
	}
}

/* The header records with this file's "output" map in the HEADER body. */
static void out_build_header(struct rec_output *o, struct np_recbuf *rb,
			     const struct out_fileinfo *fi)
{
	msgpack_sbuffer val;
	msgpack_packer pk;
	msgpack_sbuffer_init(&val);
	msgpack_packer_init(&pk, &val, msgpack_sbuffer_write);
	out_pack_fileinfo(o, &pk, fi);
	outrecs_header_with(rb, o->hdr, o->hdr_len, "output", val.data, val.size);
	msgpack_sbuffer_destroy(&val);
}

/* ---- files ---- */

static int out_create(struct rec_output *o, struct np_writer **w, const char *path,
		      const struct out_fileinfo *fi, char *err, size_t errlen)
{
	int rc;
	if (strcmp(path, "-") == 0) {
		int fd = dup(STDOUT_FILENO);
		if (fd < 0) {
			rc = -errno;
			snprintf(err, errlen, "cannot use stdout: %s", strerror(-rc));
			return rc;
		}
		rc = np_writer_fdopen(w, fd, NP_KIND_RECORDING, &o->wopts);
	} else {
		/* through the file helper once privileges are dropped (fsbroker.h) */
		int fd = fsb_open(path);
		rc = fd < 0 ? fd : np_writer_fdopen(w, fd, NP_KIND_RECORDING, &o->wopts);
	}
	if (rc < 0) {
		*w = NULL;
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(-rc));
		if (strcmp(path, "-") != 0)
			fsb_unlink(path);
		return rc;
	}
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	out_build_header(o, &rb, fi);
	rc = np_writer_commit(*w, &rb);
	np_recbuf_free(&rb);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write header to %s: %s", path, strerror(-rc));
		np_writer_close(*w);
		*w = NULL;
		if (strcmp(path, "-") != 0)
			fsb_unlink(path);
	}
	return rc;
}

static char *out_name(const struct rec_output *o, const char *fmt, unsigned idx)
{
	char *p = NULL;
	if (asprintf(&p, fmt, o->base, idx) < 0)
		return NULL;
	return p;
}

static void out_close_current(struct rec_output *o)
{
	if (!o->w)
		return;
	o->bytes_closed += np_writer_bytes(o->w);
	np_writer_close(o->w);
	o->w = NULL;
}

/* Opens the file for o->file_index of the current mode and makes it current. */
static int out_open_current(struct rec_output *o, char *err, size_t errlen)
{
	char *path;
	struct out_fileinfo fi = { .index = o->file_index };
	if (o->mode == OUT_ROTATE) {
		path = out_name(o, "%s.%04u.npr", o->file_index);
		fi.mode = "rotate";
	} else {
		path = strdup(o->out);
		fi.mode = "file";
	}
	if (!path) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	struct np_writer *w;
	int rc = out_create(o, &w, path, &fi, err, errlen);
	if (rc < 0) {
		free(path);
		return rc;
	}
	out_close_current(o);
	free(o->path);
	o->path = path;
	o->w = w;
	o->file_intervals = 0;
	o->file_first_t = o->file_last_t = 0;
	return 0;
}

static int out_rotate(struct rec_output *o, char *err, size_t errlen)
{
	o->file_index++;
	int rc = out_open_current(o, err, errlen);
	if (rc < 0)
		return rc;
	/* at most COUNT files of the set, older runs' files of it included */
	unsigned count = o->cfg->rotate_count;
	while (count && o->rot_lo + count <= o->file_index) {
		char *old = out_name(o, "%s.%04u.npr", o->rot_lo++);
		int urc = old ? fsb_unlink(old) : 0;
		if (urc < 0 && urc != -ENOENT)
			out_notice(o, "cannot remove old rotated file %s: %s", old, strerror(-urc));
		free(old);
	}
	return 0;
}

/* Lowest and highest N of the existing files BASE<infix>NNNN.npr, 0 if none:
 * a restarted recorder continues a set instead of overwriting it. */
static void out_scan_set(const char *base, const char *infix, unsigned *lo, unsigned *hi)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(base, '/');
	const char *stem = slash ? slash + 1 : base;
	*lo = *hi = 0;
	fsb_dir_of(base, dir, sizeof(dir));
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t sl = strlen(stem), il = strlen(infix);
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (strncmp(n, stem, sl) != 0 || strncmp(n + sl, infix, il) != 0)
			continue;
		const char *num = n + sl + il;
		if (strspn(num, "0123456789") < 4)
			continue;
		char *end;
		unsigned long v = strtoul(num, &end, 10);
		if (strcmp(end, ".npr") != 0 || v == 0 || v >= UINT_MAX)
			continue;
		if (!*lo || v < *lo)
			*lo = (unsigned)v;
		if (v > *hi)
			*hi = (unsigned)v;
	}
	closedir(d);
}

/* Recording stops; err (already filled) is repeated by later calls. */
static void out_stop(struct rec_output *o, int rc, char *err, size_t errlen)
{
	o->failed = rc;
	snprintf(o->failmsg, sizeof(o->failmsg), "%s; recording stopped, the previous files "
		 "are complete", err);
	snprintf(err, errlen, "%s", o->failmsg);
}

static void out_write_failed(struct rec_output *o, int rc, char *err, size_t errlen)
{
	o->failed = rc;
	double secs = o->file_intervals ? (double)(o->file_last_t - o->file_first_t) / 1e9 : 0;
	snprintf(o->failmsg, sizeof(o->failmsg), "write to %s failed: %s; recording stopped; "
		 "kept %llu bytes, %llu intervals (%.1f s), valid to the last complete chunk",
		 o->path, strerror(-rc), (unsigned long long)np_writer_bytes(o->w),
		 (unsigned long long)o->file_intervals, secs);
	snprintf(err, errlen, "%s", o->failmsg);
}

/* ---- TRIGGER records ---- */

static void out_pack_trigger(struct rec_output *o, struct np_recbuf *rb,
			     const struct out_pending *p, const char *file_mode,
			     uint64_t first_t, uint64_t last_t, uint64_t chunks, uint64_t bytes)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_TRIGGER, OUT_TRIGGER_VERSION);
	unsigned n = 11 + (p->has_fire ? 3 : 0);
	msgpack_pack_map(pk, n);
	np_pack_kv_str(pk, "why", p->why);
	np_pack_kv_str(pk, "source", p->source);
	np_pack_kv_str(pk, "mode", file_mode);
	np_pack_kv_u64(pk, "t_mono_ns", p->t_mono);
	np_pack_kv_u64(pk, "t_rt_ns", out_mono_to_rt(p->t_mono));
	np_pack_kv_u64(pk, "dump_index", o->mode == OUT_FLIGHT ? o->dump_index : 0);
	np_pack_kv_u64(pk, "first_mono_ns", first_t);
	np_pack_kv_u64(pk, "last_mono_ns", last_t);
	np_pack_kv_u64(pk, "chunks", chunks);
	np_pack_kv_u64(pk, "bytes", bytes);
	np_pack_kv_u64(pk, "ring_dropped", o->ring.dropped_mem);
	if (p->has_fire) {
		np_pack_kv_str(pk, "expr", p->fire.expr);
		np_pack_kv_f64(pk, "value", p->fire.value);
		np_pack_kv_f64(pk, "threshold", p->fire.threshold);
	}
}

/* Writes the ring as NAME.dump-NNNN.npr, then the TRIGGER record, then tail
 * (the END record when the recorder stops); the ring itself stays. */
static int out_dump_now(struct rec_output *o, struct np_recbuf *tail, char *err, size_t errlen)
{
	struct out_pending *p = &o->pend;
	const struct flightring *r = &o->ring;
	unsigned idx = ++o->dump_index;
	char *path = out_name(o, "%s.dump-%04u.npr", idx);
	if (!path) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	struct out_fileinfo fi = { .mode = "flight-dump", .index = idx, .dump = p };
	struct np_writer *w;
	int rc = out_create(o, &w, path, &fi, err, errlen);
	size_t from = flightring_first_for(r, p->t_mono);
	size_t nchunks = r->n - from;
	uint64_t ring_bytes = 0;
	for (size_t k = from; k < r->n; k++)
		ring_bytes += flightring_at(r, k)->c.len;
	uint64_t first_t = nchunks ? flightring_at(r, from)->t_start : 0;
	uint64_t last_t = nchunks ? flightring_at(r, r->n - 1)->t_end : 0;
	size_t i = from;
	for (; rc == 0 && i < r->n; i++)
		rc = np_writer_write_chunk(w, &flightring_at(r, i)->c);
	if (rc == 0) {
		struct np_recbuf rb;
		np_recbuf_init(&rb);
		out_pack_trigger(o, &rb, p, "flight-dump", first_t, last_t, nchunks, ring_bytes);
		rc = np_writer_commit(w, &rb);
		np_recbuf_free(&rb);
	}
	if (rc == 0 && tail && !np_recbuf_empty(tail))
		rc = np_writer_commit(w, tail);
	if (rc == 0)
		rc = np_writer_fsync(w);
	uint64_t bytes = w ? np_writer_bytes(w) : 0;
	int crc = w ? np_writer_close(w) : 0;
	if (rc == 0)
		rc = crc;
	o->bytes_closed += bytes;
	if (rc < 0 && w) {
		snprintf(err, errlen, "flight-recorder dump %s failed: %s; %zu of %zu intervals "
			 "kept (%llu bytes); the ring is kept for the next trigger", path,
			 strerror(-rc), i > from ? i - from - 1 : 0, nchunks, (unsigned long long)bytes);
	} else if (rc == 0) {
		out_notice(o, "flight recorder: %s written (%s; %zu intervals, %.1f s, %.1f MB)",
			   path, p->why, nchunks, (double)(last_t - first_t) / 1e9, (double)bytes / 1e6);
	}
	free(path);
	p->on = false;
	return rc;
}

/* A trigger outside flight mode leaves a mark in the current file. */
static int out_mark(struct rec_output *o, char *err, size_t errlen)
{
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	out_pack_trigger(o, &rb, &o->pend, "mark", o->file_first_t, o->file_last_t,
			 o->file_intervals, np_writer_bytes(o->w));
	int rc = np_writer_commit(o->w, &rb);
	np_recbuf_free(&rb);
	o->pend.on = false;
	if (rc < 0) {
		out_write_failed(o, rc, err, errlen);
	} else {
		out_notice(o, "trigger (%s) marked in %s", o->pend.why, o->path);
	}
	return rc;
}

static void out_pend(struct rec_output *o, const char *why, const char *source, uint64_t t)
{
	if (o->pend.on)
		return;     /* a second trigger before the dump: one dump serves both */
	memset(&o->pend, 0, sizeof(o->pend));
	o->pend.on = true;
	snprintf(o->pend.why, sizeof(o->pend.why), "%s", why && *why ? why : "trigger");
	snprintf(o->pend.source, sizeof(o->pend.source), "%s", source);
	o->pend.t_mono = t;
}

/* ---- open ---- */

static int out_check_cfg(const struct rec_config *c, const char *out, char *err, size_t errlen)
{
	bool flight = c->flight_bytes || c->flight_seconds_ns;
	if ((flight || c->rotate_size) && strcmp(out, "-") == 0) {
		snprintf(err, errlen, "%s needs -o FILE (not stdout)",
			 flight ? "--flight-recorder" : "--rotate");
		return -EINVAL;
	}
	if (flight && c->rotate_size) {
		snprintf(err, errlen, "--rotate and --flight-recorder exclude each other");
		return -EINVAL;
	}
	return 0;
}

/* A flight recorder writes nothing until the incident: find out now, not
 * then, that its dumps cannot be created. */
static int out_check_dump_dir(const char *base, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	fsb_dir_of(base, dir, sizeof(dir));
	if (access(dir, W_OK | X_OK) < 0) {
		int rc = -errno;
		snprintf(err, errlen, "cannot create flight-recorder dumps in %s: %s", dir,
			 strerror(-rc));
		return rc;
	}
	return 0;
}

static char *out_base(const char *path)
{
	size_t n = strlen(path);
	if (n > 4 && strcmp(path + n - 4, ".npr") == 0)
		n -= 4;
	return strndup(path, n);
}

int rec_output_open(struct rec_output **op, const struct rec_config *cfg,
		    const struct np_recbuf *header, char *err, size_t errlen)
{
	const char *out = cfg->output ? cfg->output : "-";
	int rc = out_check_cfg(cfg, out, err, errlen);
	if (rc < 0)
		return rc;
	struct rec_output *o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	o->cfg = cfg;
	o->out = out;
	o->mode = (cfg->flight_bytes || cfg->flight_seconds_ns) ? OUT_FLIGHT
		: cfg->rotate_size ? OUT_ROTATE : OUT_FILE;
	o->wopts.zstd_level = cfg->zstd_level;
	o->zc = np_zctx_new();
	o->wopts.fsync_each = cfg->fsync;
	o->wopts.index = true;     /* every file ends with its chunk index (FORMAT.md 2.6) */
	o->hdr_len = header->sbuf.size;
	o->hdr = malloc(o->hdr_len ? o->hdr_len : 1);
	o->base = out_base(out);
	if (!o->hdr || !o->base) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	memcpy(o->hdr, header->sbuf.data, o->hdr_len);
	if (cfg->ntrigger_on) {
		rc = rec_trigger_parse(&o->trig, cfg->trigger_on, cfg->ntrigger_on, err, errlen);
		if (rc < 0)
			goto fail;
	}
	if (o->mode == OUT_ROTATE) {
		unsigned lo, hi;
		out_scan_set(o->base, ".", &lo, &hi);
		o->file_index = hi + 1;
		o->rot_lo = hi ? lo : 1;
		if (hi)
			out_notice(o, "--rotate: continuing the existing set %s.%04u.npr..%04u.npr",
				   o->base, lo, hi);
	} else if (o->mode == OUT_FLIGHT) {
		unsigned lo, hi;
		rc = out_check_dump_dir(o->base, err, errlen);
		if (rc < 0)
			goto fail;
		flightring_init(&o->ring, cfg->flight_seconds_ns, cfg->flight_bytes, cfg->interval_ns,
				cfg->flight_bytes ? 0 : OUT_FLIGHT_MAX_MEM);
		out_scan_set(o->base, ".dump-", &lo, &hi);
		o->dump_index = hi;   /* never overwrite an earlier incident's dump */
	}
	if (o->mode != OUT_FLIGHT) {
		rc = out_open_current(o, err, errlen);
		if (rc < 0)
			goto fail;
	}
	*op = o;
	return 0;
fail:
	rec_trigger_free(o->trig);
	free(o->hdr);
	np_zctx_free(o->zc);
	free(o->base);
	free(o);
	return rc;
}

/* ---- intervals ---- */

static void out_pause(void *arg)
{
	(void)arg;
	cpuslice_point();
}

static int out_build(struct rec_output *o, struct np_recbuf *rb, struct np_chunk *c,
		     char *err, size_t errlen)
{
	/* zstd works a 128 KiB block at a time whatever the step: at level 3
	 * that is ~0.2 ms on the bench VM (zstd -b3 on an interval of
	 * transaction events: 730 MB/s), inside one --cpu-slice */
	struct np_chunk_pacer p = { .pause = out_pause, .step = 16384 };
	int rc = np_chunk_build_paced(c, rb, o->cfg->zstd_level, o->zc,
				      o->zc && o->cfg->slice_us ? &p : NULL);
	if (rc < 0) {
		snprintf(err, errlen, "cannot build chunk: %s", strerror(-rc));
		return rc;
	}
	if (o->mode != OUT_FLIGHT)
		return 0;
	/* The builder allocates the compression bound (about the uncompressed
	 * size). Shrinking it in place would leave a hole per kept chunk that
	 * the next, larger bound never fits in, so the heap would grow by one
	 * bound per interval: copy to an exact-size block and free the big
	 * one, which the next interval then reuses. */
	uint8_t *exact = malloc(c->len);
	if (exact) {
		memcpy(exact, c->data, c->len);
		free(c->data);
		c->data = exact;
	}
	return 0;
}

static int out_file_interval(struct rec_output *o, struct np_chunk *c, uint64_t t_start,
			     uint64_t t_end, char *err, size_t errlen)
{
	const struct rec_config *cfg = o->cfg;
	if (cfg->max_size) {
		uint64_t reserve = OUT_END_RESERVE < cfg->max_size / 8 ? OUT_END_RESERVE
								      : cfg->max_size / 8;
		reserve += np_writer_index_bound(o->w);
		if (rec_output_bytes(o) + c->len + reserve > cfg->max_size) {
			o->full = true;
			return 1;
		}
	}
	if (o->mode == OUT_ROTATE && o->file_intervals > 0 &&
	    np_writer_bytes(o->w) + c->len + np_writer_index_bound(o->w) > cfg->rotate_size) {
		int rc = out_rotate(o, err, errlen);
		if (rc < 0) {
			out_stop(o, rc, err, errlen);
			return rc;
		}
	}
	int rc = np_writer_write_chunk(o->w, c);
	if (rc < 0) {
		out_write_failed(o, rc, err, errlen);
		return rc;
	}
	if (!o->file_intervals)
		o->file_first_t = t_start;
	o->file_last_t = t_end;
	o->file_intervals++;
	return 0;
}

static void out_check_triggers(struct rec_output *o, const struct np_recbuf *rb,
			       uint64_t t_start, uint64_t t_end)
{
	char why[256];
	if (!o->trig || !rec_trigger_check(o->trig, rb, t_end - t_start, why, sizeof(why)))
		return;
	/* conditions flapping inside one window would dump the same data again */
	if (o->mode == OUT_FLIGHT && o->cfg->flight_seconds_ns && o->last_cond_dump &&
	    t_end - o->last_cond_dump < o->cfg->flight_seconds_ns) {
		out_notice(o, "trigger %s fired again within the window; no new dump", why);
		return;
	}
	if (o->pend.on)
		return;
	out_pend(o, why, "condition", t_end);
	const struct rec_trigger_fire *f = rec_trigger_last(o->trig);
	if (f) {
		o->pend.fire = *f;
		o->pend.has_fire = true;
	}
	o->last_cond_dump = t_end;
}

int rec_output_interval(struct rec_output *o, struct np_recbuf *rb, uint64_t t_mono,
			char *err, size_t errlen)
{
	if (o->failed) {
		snprintf(err, errlen, "%s", o->failmsg[0] ? o->failmsg : "output stopped after an earlier error");
		return o->failed;
	}
	if (o->full) {
		np_recbuf_reset(rb);
		return 1;
	}
	uint64_t t_start = o->last_t_end ? o->last_t_end
		: (t_mono > o->cfg->interval_ns ? t_mono - o->cfg->interval_ns : 0);
	o->last_t_end = t_mono;
	if (np_recbuf_empty(rb))
		return 0;
	out_check_triggers(o, rb, t_start, t_mono);

	struct np_chunk c;
	int rc = out_build(o, rb, &c, err, errlen);
	np_recbuf_reset(rb);
	if (rc < 0)
		return rc;
	if (o->mode == OUT_FLIGHT) {
		uint64_t dropped = o->ring.dropped_mem;
		if (flightring_push(&o->ring, &c, t_start, t_mono) < 0) {
			snprintf(err, errlen, "flight recorder: out of memory");
			return -ENOMEM;
		}
		if (!dropped && o->ring.dropped_mem)
			out_notice(o, "flight recorder: the window needs more than %llu MiB; "
				   "older intervals are dropped",
				   (unsigned long long)(OUT_FLIGHT_MAX_MEM >> 20));
		if (o->pend.on) {
			char derr[512] = "";
			if (out_dump_now(o, NULL, derr, sizeof(derr)) < 0)
				out_notice(o, "%s", derr);   /* a failed dump does not stop recording */
		}
		return 0;
	}
	rc = out_file_interval(o, &c, t_start, t_mono, err, errlen);
	np_chunk_free(&c);
	if (rc == 0 && o->pend.on)
		rc = out_mark(o, err, errlen);
	return rc;
}

int rec_output_dump(struct rec_output *o, const char *why, uint64_t t_mono,
		    char *err, size_t errlen)
{
	if (o->failed) {
		snprintf(err, errlen, "%s", o->failmsg[0] ? o->failmsg : "output stopped after an earlier error");
		return o->failed;
	}
	out_pend(o, why, "external", t_mono);
	/* Flight mode writes the dump at the end of the interval in progress,
	 * so the dump holds what happened up to the trigger. */
	if (o->mode == OUT_FLIGHT)
		return 0;
	return out_mark(o, err, errlen);
}

int rec_output_reopen(struct rec_output *o, char *err, size_t errlen)
{
	if (o->failed || o->mode == OUT_FLIGHT || !o->w || strcmp(o->out, "-") == 0)
		return 0;
	if (o->mode == OUT_ROTATE) {
		int rc = out_rotate(o, err, errlen);
		if (rc < 0)
			out_stop(o, rc, err, errlen);
		return rc;
	}
	/* Only reopen when the file was moved away: reopening our own path
	 * would truncate the recording in progress. */
	struct stat cur, onpath;
	if (fstat(np_writer_fd(o->w), &cur) == 0 && fsb_stat(o->path, &onpath) == 0 &&
	    cur.st_dev == onpath.st_dev && cur.st_ino == onpath.st_ino) {
		out_notice(o, "reopen: %s was not moved; still writing to it", o->path);
		return 0;
	}
	o->file_index++;
	int rc = out_open_current(o, err, errlen);
	if (rc < 0) {
		o->file_index--;
		size_t n = strlen(err);
		snprintf(err + n, errlen > n ? errlen - n : 0, "; still writing to the moved file");
		return rc;
	}
	out_notice(o, "reopened %s", o->path);
	return 0;
}

uint64_t rec_output_bytes(const struct rec_output *o)
{
	return o->bytes_closed + (o->w ? np_writer_bytes(o->w) : 0);
}

int rec_output_notice(struct rec_output *o, char *buf, size_t len)
{
	if (!o->notice[0])
		return 0;
	snprintf(buf, len, "%s", o->notice);
	o->notice[0] = 0;
	return 1;
}

static int out_close_flight(struct rec_output *o, struct np_recbuf *final_rb,
			    char *err, size_t errlen)
{
	int rc = 0;
	/* Stopping a flight recorder writes the ring out: the user stopped it
	 * because something happened (or a trigger is still pending). */
	if (!o->pend.on)
		out_pend(o, "stop", "stop", o->last_t_end ? o->last_t_end : out_clock(CLOCK_MONOTONIC));
	if (o->ring.n || strcmp(o->pend.source, "stop") != 0)
		rc = out_dump_now(o, final_rb, err, errlen);
	return rc;
}

/* The final chunk; under --max-size only its END record when the whole
 * last interval does not fit any more; with --rotate it starts a new file
 * when it would pass the rotation size. err filled on failure. */
static int out_write_final(struct rec_output *o, struct np_recbuf *rb, char *err, size_t errlen)
{
	struct np_chunk c;
	int rc = out_build(o, rb, &c, err, errlen);
	if (rc < 0)
		return rc;
	/* after an interval was refused, a later one would leave a gap */
	uint64_t max = o->cfg->max_size;
	if (o->full || (max && rec_output_bytes(o) + c.len + np_writer_index_bound(o->w) > max)) {
		np_chunk_free(&c);
		outrecs_filter(rb, NP_REC_END);
		if (np_recbuf_empty(rb))
			return 0;
		rc = out_build(o, rb, &c, err, errlen);
		if (rc < 0)
			return rc;
	}
	np_recbuf_reset(rb);
	if (o->mode == OUT_ROTATE && o->file_intervals > 0 &&
	    np_writer_bytes(o->w) + c.len + np_writer_index_bound(o->w) > o->cfg->rotate_size) {
		rc = out_rotate(o, err, errlen);
		if (rc < 0) {
			np_chunk_free(&c);
			return rc;
		}
	}
	rc = np_writer_write_chunk(o->w, &c);
	np_chunk_free(&c);
	if (rc < 0)
		out_write_failed(o, rc, err, errlen);
	return rc;
}

int rec_output_close(struct rec_output *o, struct np_recbuf *final_rb, char *err, size_t errlen)
{
	int rc = o->failed;
	if (rc)
		snprintf(err, errlen, "%s", o->failmsg[0] ? o->failmsg : strerror(-rc));
	if (o->mode == OUT_FLIGHT && !o->failed) {
		rc = out_close_flight(o, final_rb, err, errlen);
	} else if (o->w && !o->failed && final_rb && !np_recbuf_empty(final_rb)) {
		rc = out_write_final(o, final_rb, err, errlen);
	}
	if (o->w) {
		int crc = np_writer_close(o->w);
		o->w = NULL;
		if (crc < 0 && rc == 0) {
			rc = crc;
			snprintf(err, errlen, "closing %s: %s", o->path, strerror(-crc));
		}
	}
	if (rc == 0 && errlen)
		snprintf(err, errlen, "%s", o->notice);
	flightring_free(&o->ring);
	rec_trigger_free(o->trig);
	np_zctx_free(o->zc);
	free(o->hdr);
	free(o->base);
	free(o->path);
	free(o);
	return rc;
}
