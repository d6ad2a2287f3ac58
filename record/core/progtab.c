/* The program table (progtab.h): programs found by their descriptors,
 * their skipped runs read once per interval. */
#include "progtab.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "hookhub.h"
#include "npmsg.h"
#include "rcbpf.h"
#include "records.h"
#include "recschema.h"

uint64_t rec_prog_missed(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
		return 0;
	return info.recursion_misses;
}

/* fd is a BPF program's: "anon_inode:bpf-prog" (a map or link answers
 * BPF_OBJ_GET_INFO_BY_FD too, with another struct). */
static bool pt_is_prog_fd(int dirfd, const char *name)
{
	char link[64];
	ssize_t n = readlinkat(dirfd, name, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return strcmp(link, "anon_inode:bpf-prog") == 0;
}

static bool pt_has_id(const struct rec_progtab *t, uint32_t id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return true;
	return false;
}

/* The program's full name from its BTF: the kernel's copy in
 * bpf_prog_info.name keeps 15 characters. Left as is when there is none. */
static void pt_full_name(int fd, const struct bpf_prog_info *info, char *buf, size_t n)
{
	struct bpf_func_info fi;
	struct bpf_prog_info two;
	__u32 len = sizeof(two);

	memset(&two, 0, sizeof(two));
	memset(&fi, 0, sizeof(fi));
	two.nr_func_info = 1;
	two.func_info_rec_size = sizeof(fi);
	two.func_info = (__u64)(unsigned long)&fi;
	if (!info->btf_id || !info->nr_func_info || bpf_obj_get_info_by_fd(fd, &two, &len))
		return;
	struct btf *btf = btf__load_from_kernel_by_id(info->btf_id);
	if (libbpf_get_error(btf))
		return;
	const struct btf_type *ty = btf__type_by_id(btf, fi.type_id);
	const char *name = ty ? btf__name_by_offset(btf, ty->name_off) : NULL;
	if (name && *name)
		snprintf(buf, n, "%s", name);
	btf__free(btf);
}

static int pt_add(struct rec_progtab *t, int fd, const char *family)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || pt_has_id(t, info.id))
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 32;
		struct rec_prog *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	struct rec_prog *p = &t->v[t->n++];
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->id = info.id;
	p->type = info.type;
	snprintf(p->name, sizeof(p->name), "%.*s", (int)sizeof(info.name), info.name);
	pt_full_name(fd, &info, p->name, sizeof(p->name));
	snprintf(p->family, sizeof(p->family), "%s", family);
	return 0;
}

int rec_progtab_scan(struct rec_progtab *t, const struct rec_ctx *ctx, const char *family)
{
	int hub[HUB_NHOOKS];
	size_t nhub = hookhub_prog_fds(ctx, hub, HUB_NHOOKS);
	int rc = 0;
	for (size_t i = 0; i < nhub && !rc; i++)
		rc = pt_add(t, hub[i], "hub");
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -errno;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd == dirfd(d) || !pt_is_prog_fd(dirfd(d), e->d_name))
			continue;
		rc = pt_add(t, (int)fd, family);
	}
	closedir(d);
	return rc;
}

static void pt_pack_types(msgpack_packer *pk, const struct rec_progtab *t)
{
	np_pack_str(pk, NPK(PROGS, PROG_TYPE));
	msgpack_pack_array(pk, t->n);
	for (size_t i = 0; i < t->n; i++) {
		const char *s = libbpf_bpf_prog_type_str((enum bpf_prog_type)t->v[i].type);
		np_pack_str(pk, s ? s : "?");
	}
}

void rec_progtab_pack(struct rec_progtab *t, struct np_recbuf *rb, uint64_t t0, uint64_t t1)
{
	uint64_t *now = calloc(t->n ? t->n : 1, sizeof(*now));
	uint64_t *delta = calloc(t->n ? t->n : 1, sizeof(*delta));
	if (!now || !delta) {
		free(now);
		free(delta);
		return;
	}
	for (size_t i = 0; i < t->n; i++) {
		/* a program the kernel cannot read keeps its last count */
		uint64_t m = rec_prog_missed(t->v[i].fd);
		now[i] = m > t->v[i].missed_prev ? m : t->v[i].missed_prev;
		delta[i] = now[i] - t->v[i].missed_prev;
		t->v[i].missed_prev = now[i];
	}
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_PROGS, 1);
	msgpack_pack_map(pk, NPK_PROGS__N);
	np_pack_kv_u64(pk, NPK(PROGS, T0_NS), t0);
	np_pack_kv_u64(pk, NPK(PROGS, T1_NS), t1);
	np_pack_kv_u64(pk, NPK(PROGS, N), t->n);
	rc_pack_kv_strcol(pk, NPK(PROGS, PROG), t->n ? t->v[0].name : "", sizeof(*t->v), t->n);
	rc_pack_kv_strcol(pk, NPK(PROGS, FAMILY), t->n ? t->v[0].family : "", sizeof(*t->v), t->n);
	pt_pack_types(pk, t);
	np_pack_kv_u64_array(pk, NPK(PROGS, MISSED), delta, t->n);
	np_pack_kv_u64_array(pk, NPK(PROGS, MISSED_TOTAL), now, t->n);
	free(now);
	free(delta);
}

void rec_progtab_free(struct rec_progtab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
