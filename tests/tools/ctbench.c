/* ctbench: container throughput. Writes packet-hook events (PKT_EVENTS
 * columns, 65536 per record, one chunk per record as nprec does per
 * interval) and reads them back, timing each side.
 *
 *   ctbench [-n EVENTS] [-z ZSTD_LEVEL] [-o FILE]
 *
 * Prints bytes/event after compression, write and read rates (events/s and
 * MB/s of msgpack payload, per second of process CPU time, user + system):
 * the reader building msgpack-c trees (what npreport dump does), with
 * pktcols_unpack_events on top, and the raw path npanalyze takes
 * (np_reader_set_raw + the pktcols_raw_* pull parser over the 10 columns
 * it reads). */
#include <getopt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "container.h"
#include "hostinfo.h"
#include "npmsg.h"
#include "pktcols.h"
#include "records.h"
#include "../unit/xorshift.h"

#define CB_BATCH 65536

/* Process CPU time: the machines these run on are shared, wall time lies. */
static uint64_t cb_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Events of 64 interleaved TCP flows through 4 hooks, as a busy host sees. */
static void cb_fill(struct pktcols_ev *ev, size_t n, uint64_t *t, uint32_t *seq)
{
	for (size_t i = 0; i < n; i++) {
		struct pktcols_ev *e = &ev[i];
		uint32_t fl = (uint32_t)(xs_next() % 64);
		memset(e, 0, sizeof(*e));
		*t += 200 + xs_next() % 400;
		e->ts = *t;
		e->flow = fl;
		e->hook = (uint8_t)(2 + i % 4);
		if (e->hook == 2)
			seq[fl] += 1448;
		e->seq = seq[fl];
		e->end_seq = seq[fl] + 1448;
		e->ack = 1000 + (uint32_t)(i / 256);
		e->tsval = (uint32_t)(*t / 1000000);
		e->ifindex = 2;
		e->len = 1500;
		e->ipid = (uint16_t)(seq[fl] / 1448);
		e->cpu = (uint16_t)(fl % 2);
		e->tcpflags = 0x10;
		e->doff = 8;
		e->flags = 0x02;
	}
}

static int cb_write(const char *path, size_t nev, int level, double *secs, uint64_t *ubytes)
{
	struct np_writer_opts o = { .zstd_level = level };
	struct np_writer *w;
	struct np_recbuf rb;
	int err = np_writer_open(&w, path, NP_KIND_RECORDING, &o);
	if (err)
		return err;
	np_recbuf_init(&rb);
	struct pktcols_ev *ev = malloc(CB_BATCH * sizeof(*ev));
	uint32_t seq[64] = { 0 };
	uint64_t t = 1000000000000ull;
	double cpu = 0;
	*ubytes = 0;
	for (size_t done = 0; done < nev && !err; done += CB_BATCH) {
		size_t n = nev - done < CB_BATCH ? nev - done : CB_BATCH;
		cb_fill(ev, n, &t, seq);
		uint64_t t0 = cb_cpu_ns();
		msgpack_packer *pk = np_recbuf_begin(&rb, NP_REC_PKT_EVENTS, PKTCOLS_VERSION);
		msgpack_pack_map(pk, PKTCOLS_EVENT_KEYS + 1);
		np_pack_kv_u64(pk, "n", n);
		pktcols_pack_events(pk, ev, n);
		*ubytes += rb.sbuf.size;
		err = np_writer_commit(w, &rb);
		cpu += (double)(cb_cpu_ns() - t0) / 1e9;
	}
	free(ev);
	np_recbuf_free(&rb);
	int cerr = np_writer_close(w);
	*secs = cpu;
	return err ? err : cerr;
}

/* The columns npanalyze decodes (ana_load.c), from the raw bytes. */
static uint64_t cb_raw_columns(const struct np_record *rec)
{
	static const char *const u64[] = { "hook", "flow", "slen", "uid", "tcpflags", "evflags" };
	static const char *const u32[] = { "seq_fd", "ack_fd", "tsval_fd" };
	struct pktcols_raw m;
	size_t n, k;
	if (pktcols_raw_from_record(&m, rec))
		return 0;
	uint64_t *ts = pktcols_raw_u64_delta(&m, "ts_d", &n);
	if (!ts)
		return 0;
	for (size_t i = 0; i < sizeof(u64) / sizeof(u64[0]); i++)
		free(pktcols_raw_u64_array(&m, u64[i], &k));
	for (size_t i = 0; i < sizeof(u32) / sizeof(u32[0]); i++)
		free(pktcols_raw_u32_mod(&m, u32[i], n));
	free(ts);
	return n;
}

/* decode = 0: reader only (chunks + msgpack); 1: also the columns;
 * 2: raw reader only; 3: raw reader and npanalyze's columns. */
static int cb_read(const char *path, int decode, double *secs, uint64_t *events)
{
	struct np_reader *r;
	uint64_t t0 = cb_cpu_ns();
	int err = np_reader_open(&r, path, NULL, NULL);
	if (err)
		return err;
	if (decode >= 2)
		np_reader_set_raw(r, NP_REC_PKT_EVENTS);
	struct np_record rec;
	*events = 0;
	while (np_reader_next(r, &rec) == 1) {
		if (rec.type != NP_REC_PKT_EVENTS)
			continue;
		if (decode == 3) {
			*events += cb_raw_columns(&rec);
		} else if (decode == 2) {
			struct pktcols_raw m;
			uint64_t n = 0;
			if (pktcols_raw_from_record(&m, &rec) == 0)
				pktcols_raw_u64(&m, "n", &n);
			*events += n;
		} else if (decode) {
			struct pktcols_ev *ev;
			size_t n;
			if (pktcols_unpack_events(rec.body, &ev, &n) == 0) {
				*events += n;
				free(ev);
			}
		} else {
			uint64_t n = 0;
			np_get_u64(rec.body, "n", &n);
			*events += n;
		}
	}
	np_reader_close(r);
	*secs = (double)(cb_cpu_ns() - t0) / 1e9;
	return 0;
}

int main(int argc, char **argv)
{
	size_t nev = 4u << 20;
	int level = 3, c;
	char path[256] = "";
	while ((c = getopt(argc, argv, "n:z:o:")) != -1) {
		switch (c) {
		case 'n': nev = strtoull(optarg, NULL, 0); break;
		case 'z': level = atoi(optarg); break;
		case 'o': snprintf(path, sizeof(path), "%s", optarg); break;
		default:
			fprintf(stderr, "usage: ctbench [-n EVENTS] [-z LEVEL] [-o FILE]\n");
			return 2;
		}
	}
	bool tmp = !path[0];
	if (tmp)
		snprintf(path, sizeof(path), "/tmp/ctbench.%d.npr", (int)getpid());
	double ws = 0, rs = 0, ds = 0, xs = 0, xds = 0;
	uint64_t ub = 0, ev1 = 0, ev2 = 0, ev3 = 0, ev4 = 0;
	int err = cb_write(path, nev, level, &ws, &ub);
	if (!err)
		err = cb_read(path, 0, &rs, &ev1);
	if (!err)
		err = cb_read(path, 1, &ds, &ev2);
	if (!err)
		err = cb_read(path, 2, &xs, &ev3);
	if (!err)
		err = cb_read(path, 3, &xds, &ev4);
	FILE *f = fopen(path, "rb");
	long size = 0;
	if (f) {
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		fclose(f);
	}
	if (tmp)
		unlink(path);
	if (err) {
		fprintf(stderr, "ctbench: %s\n", strerror(-err));
		return 1;
	}
	printf("events            %zu (64 flows, 4 hooks, %d per record), zstd level %d\n", nev, CB_BATCH, level);
	printf("file              %ld bytes, %.2f bytes/event (msgpack %.2f bytes/event)\n", size,
	       (double)size / (double)nev, (double)ub / (double)nev);
	printf("write (pack+zstd) %.2f M events/s, %.0f MB/s of msgpack\n", (double)nev / ws / 1e6, (double)ub / ws / 1e6);
	printf("read (reader)     %.2f M events/s, %.0f MB/s of msgpack (%" PRIu64 " events)\n",
	       (double)ev1 / rs / 1e6, (double)ub / rs / 1e6, ev1);
	printf("read + decode     %.2f M events/s (pktcols_unpack_events, %" PRIu64 " events)\n",
	       (double)ev2 / ds / 1e6, ev2);
	printf("read raw (reader) %.2f M events/s, %.0f MB/s of msgpack (np_reader_set_raw)\n",
	       (double)ev3 / xs / 1e6, (double)ub / xs / 1e6);
	printf("read raw + 10 col %.2f M events/s (pktcols_raw_*, the columns npanalyze reads)\n",
	       (double)ev4 / xds / 1e6);
	return ev1 == nev && ev2 == nev && ev3 == nev && ev4 == nev ? 0 : 1;
}
