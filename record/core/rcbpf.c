/* tp_btf/raw_tp selection and attach reporting for the REC-CORE families. */
#include "rcbpf.h"
#include "cpuslice.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "npmsg.h"
#include "rcdelta.h"
#include <bpf/bpf.h>

static struct btf *rc_btf;
static bool rc_btf_tried;

const struct btf *rc_vmlinux_btf(void)
{
	if (!rc_btf_tried) {
		rc_btf_tried = true;
		rc_btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(rc_btf))
			rc_btf = NULL;
	}
	return rc_btf;
}

const char *rc_btf_enum_name(const char *ename, long long val, const char *strip_prefix)
{
	/* btf__find_by_name_kind scans all of vmlinux's ~100k types with a
	 * strcmp each: called per drop record and interval it was most of
	 * nprec's own CPU under lossy bulk TCP. One enum is asked for in
	 * practice, so one remembered lookup is enough. */
	static char cached_name[64];
	static int cached_id = -1;
	const struct btf *btf = rc_vmlinux_btf();
	if (!btf)
		return NULL;
	int id = cached_id;
	if (id < 0 || strcmp(cached_name, ename) != 0) {
		id = btf__find_by_name_kind(btf, ename, BTF_KIND_ENUM);
		if (id >= 0 && strlen(ename) < sizeof(cached_name)) {
			strcpy(cached_name, ename);
			cached_id = id;
		}
	}
	if (id < 0)
		return NULL;
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_enum *e = btf_enum(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, e++) {
		if (e->val != val)
			continue;
		const char *s = btf__name_by_offset(btf, e->name_off);
		size_t pl = strip_prefix ? strlen(strip_prefix) : 0;
		if (s && pl && strncmp(s, strip_prefix, pl) == 0)
			s += pl;
		return s;
	}
	return NULL;
}

/* A tracepoint exists when BTF has its btf_trace_NAME typedef (tp_btf) or
 * tracefs lists it (raw_tp on kernels whose BTF lacks the typedef). */
/* NPREC_TEST_MISSING_TP=a,b (tests only): behave as if the kernel had no
 * tracepoint a or b, to test what nprec does on older kernels. */
static bool rc_tp_hidden(const char *name)
{
	const char *l = getenv("NPREC_TEST_MISSING_TP");
	size_t n = strlen(name);
	for (const char *p = l; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == 0))
			return true;
	return false;
}

static bool rc_tp_exists(const char *name, bool *has_btf)
{
	const struct btf *btf = rc_vmlinux_btf();
	char tn[128];
	if (rc_tp_hidden(name)) {
		*has_btf = false;
		return false;
	}
	snprintf(tn, sizeof(tn), "btf_trace_%s", name);
	*has_btf = btf && btf__find_by_name_kind(btf, tn, BTF_KIND_TYPEDEF) >= 0;
	return *has_btf;
}

bool rc_tp_raw_forced(void)
{
	const char *force = getenv("NPREC_TEST_FORCE_RAW_TP");
	return force && *force == '1';
}

int rc_tp_select(struct rec_ctx *ctx, const char *family, struct rc_tp *tps, size_t n,
		 bool use_raw, char *err, size_t errlen)
{
	if (rc_tp_raw_forced())
		use_raw = true;
	for (size_t i = 0; i < n; i++) {
		struct rc_tp *t = &tps[i];
		bool has_btf;
		t->present = rc_tp_exists(t->name, &has_btf);
		bool btf_on = t->present && !use_raw && t->btf_prog;
		bool raw_on = t->present && !btf_on && t->raw_prog;
		if (t->btf_prog)
			bpf_program__set_autoload(t->btf_prog, btf_on);
		if (t->raw_prog)
			bpf_program__set_autoload(t->raw_prog, raw_on);
		t->hub = (struct hub_member){ 0 };
		if (btf_on && t->hub_hook)
			hub_member_share(ctx, &t->hub, t->hub_hook, t->hub_slot, t->hub_map);
		if (!t->present) {
			rec_probe(ctx, family, t->name, REC_PROBE_SKIPPED, "tracepoint not in this kernel");
			if (t->required) {
				snprintf(err, errlen, "kernel lacks tracepoint %s, which the %s family needs (Linux 6.3+ has it)",
					 t->name, family);
				return -ENOENT;
			}
		}
	}
	return 0;
}

int rc_tp_attach(struct rec_ctx *ctx, const char *family, struct rc_tp *tps, size_t n,
		 bool use_raw, char *err, size_t errlen)
{
	char probe[80], reason[160];
	for (size_t i = 0; i < n; i++) {
		struct rc_tp *t = &tps[i];
		if (!t->present)
			continue;
		bool btf_on = !use_raw && t->btf_prog;
		struct bpf_program *p = btf_on ? t->btf_prog : t->raw_prog;
		snprintf(probe, sizeof(probe), "%s/%s", btf_on ? "tp_btf" : "raw_tp", t->name);
		if (!p) {
			rec_probe(ctx, family, probe, REC_PROBE_SKIPPED, "no program variant");
			continue;
		}
		if (btf_on && hub_member_join(ctx, family, &t->hub, p))
			continue;
		t->link = bpf_program__attach(p);
		long e = libbpf_get_error(t->link);
		if (!e) {
			rec_probe(ctx, family, probe, REC_PROBE_ATTACHED, "");
			continue;
		}
		t->link = NULL;
		snprintf(reason, sizeof(reason), "attach failed: %s", strerror((int)-e));
		rec_probe(ctx, family, probe, REC_PROBE_FAILED, reason);
		if (t->required) {
			snprintf(err, errlen, "cannot attach %s: %s", probe, strerror((int)-e));
			return (int)e;
		}
	}
	return 0;
}

void rc_tp_detach(struct rc_tp *tps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		hub_member_leave(&tps[i].hub);
		bpf_link__destroy(tps[i].link);
		tps[i].link = NULL;
	}
}

int rc_ncpus(void)
{
	int n = libbpf_num_possible_cpus();
	return n > 0 ? n : 1;
}

void rc_format_addr(const uint32_t a[4], char *buf, size_t n)
{
	if (a[0] == 0 && a[1] == 0 && a[2] == htonl(0xffff))
		inet_ntop(AF_INET, &a[3], buf, (socklen_t)n);
	else
		inet_ntop(AF_INET6, a, buf, (socklen_t)n);
}

void rc_pack_kv_strcol(msgpack_packer *pk, const char *key, const char *base, size_t stride, size_t n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		np_pack_str(pk, base + i * stride);
}

int rc_map_keys(int fd, size_t keysz, void **keys, size_t *n)
{
	struct rc_dtab seen;
	size_t cap = 256;
	char *out = malloc(cap * keysz), *key = malloc(keysz), *next = malloc(keysz);
	bool first = true;
	*n = 0;
	if (!out || !key || !next || rc_dtab_init(&seen, keysz, 1)) {
		free(out); free(key); free(next);
		return -ENOMEM;
	}
	while (bpf_map_get_next_key(fd, first ? NULL : key, next) == 0) {
		cpuslice_point();
		first = false;
		memcpy(key, next, keysz);
		if (rc_dtab_find(&seen, key))
			continue;
		if (!rc_dtab_put(&seen, key))
			break;
		if (*n == cap) {
			char *q = realloc(out, 2 * cap * keysz);
			if (!q)
				break;
			out = q;
			cap *= 2;
		}
		memcpy(out + *n * keysz, key, keysz);
		(*n)++;
	}
	rc_dtab_free(&seen);
	free(key);
	free(next);
	*keys = out;
	return 0;
}

void rc_size_pcpu_map(struct bpf_map *m, int ncpus)
{
	size_t per = (size_t)ncpus * rc_pcpu_stride(bpf_map__value_size(m)) + bpf_map__key_size(m);
	size_t cap = RC_PCPU_MAP_BUDGET / (per ? per : 1);
	if (cap < 1024)
		cap = 1024;
	if (bpf_map__max_entries(m) > cap)
		bpf_map__set_max_entries(m, (uint32_t)cap);
}

int rc_iter_run(struct bpf_link *link)
{
	char buf[64];
	ssize_t n;
	int fd = bpf_iter_create(bpf_link__fd(link));

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
	int rc = n < 0 ? -errno : 0;
	close(fd);
	return rc;
}

struct bpf_link *rc_iter_attach_sk_storage(struct bpf_program *prog, const struct bpf_map *map)
{
	union bpf_iter_link_info li = { .map.map_fd = (__u32)bpf_map__fd(map) };
	LIBBPF_OPTS(bpf_iter_attach_opts, o, .link_info = &li, .link_info_len = sizeof(li));
	return bpf_program__attach_iter(prog, &o);
}
