/* Where finished chunks go (issue 5). Minimal version: one plain file whose
 * first chunk is the header; every interval is committed (written + flushed)
 * before the next one starts. Rotation, size bound and the flight recorder
 * are layered on this. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "records.h"

struct rec_output {
	const struct rec_config *cfg;
	struct np_writer *w;
	struct np_writer_opts wopts;
	/* copy of the HEADER record bytes, re-written at the start of every file */
	char *hdr;
	size_t hdr_len;
	uint64_t bytes_total;     /* bytes of files closed before the current one */
};

static int out_header_chunk(struct rec_output *o)
{
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	msgpack_sbuffer_write(&rb.sbuf, o->hdr, o->hdr_len);
	rb.nrecords = 1;
	rb.type = NP_REC_HEADER;
	int rc = np_writer_commit(o->w, &rb);
	np_recbuf_free(&rb);
	return rc;
}

static int out_open_file(struct rec_output *o, const char *path, char *err, size_t errlen)
{
	int rc;
	if (strcmp(path, "-") == 0) {
		int fd = dup(STDOUT_FILENO);
		if (fd < 0) {
			rc = -errno;
			snprintf(err, errlen, "cannot use stdout: %s", strerror(-rc));
			return rc;
		}
		rc = np_writer_fdopen(&o->w, fd, NP_KIND_RECORDING, &o->wopts);
	} else {
		rc = np_writer_open(&o->w, path, NP_KIND_RECORDING, &o->wopts);
	}
	if (rc < 0) {
		o->w = NULL;
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = out_header_chunk(o);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write header to %s: %s", path, strerror(-rc));
		np_writer_close(o->w);
		o->w = NULL;
	}
	return rc;
}

int rec_output_open(struct rec_output **op, const struct rec_config *cfg,
		    const struct np_recbuf *header, char *err, size_t errlen)
{
	struct rec_output *o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	o->cfg = cfg;
	o->wopts.zstd_level = cfg->zstd_level;
	o->wopts.fsync_each = cfg->fsync;
	o->hdr_len = header->sbuf.size;
	o->hdr = malloc(o->hdr_len ? o->hdr_len : 1);
	if (!o->hdr) {
		free(o);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(o->hdr, header->sbuf.data, o->hdr_len);
	int rc = out_open_file(o, cfg->output ? cfg->output : "-", err, errlen);
	if (rc < 0) {
		free(o->hdr);
		free(o);
		return rc;
	}
	*op = o;
	return 0;
}

int rec_output_interval(struct rec_output *o, struct np_recbuf *rb, uint64_t t_mono,
			char *err, size_t errlen)
{
	(void)t_mono;
	if (!o->w) {
		snprintf(err, errlen, "output is closed");
		return -EBADF;
	}
	if (np_recbuf_empty(rb))
		return 0;
	int rc = np_writer_commit(o->w, rb);
	if (rc < 0) {
		snprintf(err, errlen, "write to %s failed: %s; file kept valid up to %llu bytes",
			 o->cfg->output, strerror(-rc), (unsigned long long)np_writer_bytes(o->w));
		return rc;
	}
	return 0;
}

int rec_output_dump(struct rec_output *o, const char *why, uint64_t t_mono,
		    char *err, size_t errlen)
{
	(void)o; (void)why; (void)t_mono;
	snprintf(err, errlen, "not in flight-recorder mode (--flight-recorder)");
	return -EINVAL;
}

int rec_output_reopen(struct rec_output *o, char *err, size_t errlen)
{
	if (!o->cfg->output || strcmp(o->cfg->output, "-") == 0)
		return 0;
	if (o->w) {
		o->bytes_total += np_writer_bytes(o->w);
		np_writer_close(o->w);
		o->w = NULL;
	}
	return out_open_file(o, o->cfg->output, err, errlen);
}

uint64_t rec_output_bytes(const struct rec_output *o)
{
	return o->bytes_total + (o->w ? np_writer_bytes(o->w) : 0);
}

int rec_output_close(struct rec_output *o, struct np_recbuf *final_rb, char *err, size_t errlen)
{
	int rc = 0;
	if (o->w && final_rb && !np_recbuf_empty(final_rb)) {
		rc = np_writer_commit(o->w, final_rb);
		if (rc < 0)
			snprintf(err, errlen, "cannot write final chunk: %s", strerror(-rc));
	}
	if (o->w) {
		int crc = np_writer_close(o->w);
		if (crc < 0 && rc == 0) {
			rc = crc;
			snprintf(err, errlen, "closing output: %s", strerror(-crc));
		}
	}
	free(o->hdr);
	free(o);
	return rc;
}
