/* The program table (record/core/progtab.c) against the kernel's own count:
 * a test program (bpf/recurtest.bpf.c) that makes the kernel skip a nested
 * run of itself once per page fault this process takes in kernel mode, and
 * counts those itself. The PROGS record must list it, with the family it
 * was scanned for, and its skipped runs equal to its own count. Needs
 * root; skips otherwise. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <msgpack.h>

#include "family.h"
#include "progtab.h"
#include "records.h"
#include "recschema.h"
#include "recurtest.skel.h"
#include "tap.h"

#define RT_PAGES 16

struct rt_row { bool found; char family[24], type[32]; uint64_t missed, total; };

static void rt_str(const struct np_cols *c, int key, size_t i, char *buf, size_t n)
{
	const msgpack_object *o = np_cols_obj(c, key, i);
	size_t len = o && o->type == MSGPACK_OBJECT_STR ? o->via.str.size : 0;
	len = len < n ? len : n - 1;
	memcpy(buf, len ? o->via.str.ptr : "", len);
	buf[len] = 0;
}

/* The row of program name in the (only) PROGS record of rb. */
static struct rt_row rt_find(const struct np_recbuf *rb, const char *name, size_t *nrows)
{
	struct rt_row row = { 0 };
	msgpack_unpacked u;
	size_t off = 0;
	msgpack_unpacked_init(&u);
	while (msgpack_unpack_next(&u, rb->sbuf.data, rb->sbuf.size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *o = &u.data;
		struct np_cols c;
		char err[160];
		if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 3 ||
		    o->via.array.ptr[0].via.u64 != NP_REC_PROGS)
			continue;
		CHECK(np_schema_check(NP_REC_PROGS, &o->via.array.ptr[2], true, err, sizeof(err)) == 0,
		      "PROGS conforms: %s", err);
		np_cols_open(&c, NP_REC_PROGS, &o->via.array.ptr[2]);
		*nrows = c.n;
		for (size_t i = 0; i < c.n; i++) {
			char prog[48];
			rt_str(&c, NPK_PROGS_PROG, i, prog, sizeof(prog));
			if (strcmp(prog, name))
				continue;
			row.found = true;
			rt_str(&c, NPK_PROGS_FAMILY, i, row.family, sizeof(row.family));
			rt_str(&c, NPK_PROGS_PROG_TYPE, i, row.type, sizeof(row.type));
			np_cols_u64(&c, NPK_PROGS_MISSED, i, &row.missed);
			np_cols_u64(&c, NPK_PROGS_MISSED_TOTAL, i, &row.total);
		}
		np_cols_close(&c);
	}
	msgpack_unpacked_destroy(&u);
	return row;
}

/* Kernel-mode page faults: read() into pages never touched before. */
static void rt_fault(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, RT_PAGES * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/dev/zero", O_RDONLY);
	for (int i = 0; m != MAP_FAILED && fd >= 0 && i < RT_PAGES; i++)
		if (read(fd, m + (size_t)i * pg, 1) != 1)
			break;
	if (fd >= 0)
		close(fd);
	if (m != MAP_FAILED)
		munmap(m, RT_PAGES * pg);
}

static void rt_recursion(void)
{
	struct rec_ctx ctx = { 0 };
	struct rec_progtab t = { 0 };
	struct np_recbuf rb;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), nrows = 0;
	void *bad = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct recurtest_bpf *skel = recurtest_bpf__open();
	CHECK(bad != MAP_FAILED && skel, "test object opened");
	if (bad == MAP_FAILED || !skel)
		return;
	skel->rodata->rt_tgid = (__u32)getpid();
	skel->rodata->rt_bad_addr = (__u64)(unsigned long)bad;
	int rc = recurtest_bpf__load(skel);
	if (!rc)
		rc = recurtest_bpf__attach(skel);
	CHECK(rc == 0, "load and attach tp_btf/page_fault_kernel: %d", rc);
	np_recbuf_init(&rb);
	CHECK(rec_progtab_scan(&t, &ctx, "test") == 0, "scan");
	rec_progtab_pack(&t, &rb, 1, 2);   /* before: nothing skipped */
	struct rt_row r0 = rt_find(&rb, "rt_recursion_fault", &nrows);
	/* found by its full name (18 characters; the kernel keeps 15) */
	CHECK(r0.found && !strcmp(r0.family, "test") && !strcmp(r0.type, "tracing"),
	      "listed by its full name as the test's tracing program (%s, %s)", r0.family, r0.type);
	CHECK_EQ_U(r0.total, skel->bss->rt_nested);
	rt_fault();
	np_recbuf_reset(&rb);
	rec_progtab_pack(&t, &rb, 2, 3);
	struct rt_row r1 = rt_find(&rb, "rt_recursion_fault", &nrows);
	uint64_t nested = skel->bss->rt_nested;
	CHECK(nested >= 1 && skel->bss->rt_runs == nested, "%llu runs, %llu nested faults",
	      (unsigned long long)skel->bss->rt_runs, (unsigned long long)nested);
	CHECK_EQ_U(r1.total, nested);
	CHECK_EQ_U(r1.missed, nested - r0.total);
	CHECK(rec_prog_missed(-1) == 0, "no program, no count");
	fprintf(stderr, "  %zu programs listed; rt_recursion_fault: %llu runs skipped of %llu nested faults\n",
		nrows, (unsigned long long)r1.total, (unsigned long long)nested);
	np_recbuf_free(&rb);
	rec_progtab_free(&t);
	recurtest_bpf__destroy(skel);
	munmap(bad, pg);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP rtest_progtab: needs root (BPF)\n");
		return tap_done();
	}
	rt_recursion();
	return tap_done();
}
