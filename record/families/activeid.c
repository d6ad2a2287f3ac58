/* See activeid.h. The sock_ops program is attached to the cgroup root (every
 * socket of the machine passes it) and filters on the netns cookie of the
 * recorded namespace, taken from a socket created inside it. */
#include "activeid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <linux/types.h>
#include <bpf/bpf.h>

#include "activeid.h"
#include "pknetns.h"
#include "../bpf/activeid.h"
#include "activeid.skel.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

struct aid_state {
	struct activeid_bpf *skel;
	struct bpf_link *link;
	int ncpus;
};

#define AID_CGROUP2_MAGIC 0x63677270

/* A cgroup v2 directory fd for root; on hybrid v1/v2 hosts the v2
 * hierarchy is usually mounted at ROOT/unified. */
static int aid_cgroup_fd(const char *root, char *used, size_t usedlen)
{
	const char *cand[2] = { root, NULL };
	char alt[512];
	snprintf(alt, sizeof(alt), "%s/unified", root);
	cand[1] = alt;
	for (int i = 0; i < 2; i++) {
		struct statfs sf;
		if (statfs(cand[i], &sf) < 0 || sf.f_type != AID_CGROUP2_MAGIC)
			continue;
		snprintf(used, usedlen, "%s", cand[i]);
		return open(cand[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	errno = ENOTDIR;
	return -1;
}

static int aid_netns_cookie(int netns_fd, uint64_t *cookie)
{
	int saved, rc = pk_netns_enter(netns_fd, &saved);
	if (rc < 0)
		return rc;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	socklen_t l = sizeof(*cookie);
	rc = s < 0 || getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &l) < 0 ? -errno : 0;
	if (s >= 0)
		close(s);
	pk_netns_leave(saved);
	return rc;
}

int aid_open(struct rec_ctx *ctx, struct ring_buffer **rb, ring_buffer_sample_fn cb, void *cbctx,
	     struct aid_state **out, char *err, size_t errlen)
{
	const struct rec_config *c = ctx->cfg;
	struct aid_state *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->ncpus = libbpf_num_possible_cpus();
	uint64_t cookie = 0;
	int rc = aid_netns_cookie(c->netns_fd, &cookie);
	if (rc < 0) {
		snprintf(err, errlen, "active IDs: cannot read the netns cookie: %s (kernel 5.14+)",
			 strerror(-rc));
		free(a);
		return rc;
	}
	a->skel = activeid_bpf__open();
	if (!a->skel) {
		rc = -errno;
		snprintf(err, errlen, "active IDs: cannot open BPF object: %s", strerror(-rc));
		free(a);
		return rc;
	}
	a->skel->rodata->netns_cookie = cookie;
	rc = activeid_bpf__load(a->skel);
	if (rc) {
		snprintf(err, errlen, "active IDs: cannot load the sock_ops program: %s "
			 "(needs kernel 5.10+ with bpf_reserve_hdr_opt)", strerror(-rc));
		aid_close(a);
		return rc;
	}
	const char *root = c->cgroup_root ? c->cgroup_root : "/sys/fs/cgroup";
	char used[512] = "";
	int cg = aid_cgroup_fd(root, used, sizeof(used));
	if (cg < 0) {
		rc = -errno;
		snprintf(err, errlen, "active IDs: no cgroup v2 hierarchy at %s (nor %s/unified): "
			 "use --cgroup-root", root, root);
		aid_close(a);
		return rc;
	}
	a->link = bpf_program__attach_cgroup(a->skel->progs.aid_sockops, cg);
	rc = a->link ? 0 : -errno;
	close(cg);
	if (rc) {
		snprintf(err, errlen, "active IDs: cannot attach sock_ops to %s: %s", used, strerror(-rc));
		aid_close(a);
		return rc;
	}
	int mfd = bpf_map__fd(a->skel->maps.aid_events);
	rc = *rb ? ring_buffer__add(*rb, mfd, cb, cbctx) : 0;
	if (!*rb && !(*rb = ring_buffer__new(mfd, cb, cbctx, NULL)))
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "active IDs: ring buffer: %s", strerror(-rc));
		aid_close(a);
		return rc;
	}
	rec_probe(ctx, "pktpath", "sock_ops/active-ids", REC_PROBE_ATTACHED, NULL);
	*out = a;
	return 0;
}

void aid_counters(struct aid_state *a, uint64_t *out)
{
	memset(out, 0, AID_C_MAX * sizeof(*out));
	uint64_t *v = calloc(a->ncpus, sizeof(*v));
	if (!v)
		return;
	for (__u32 k = 0; k < AID_C_MAX; k++)
		if (bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.aid_counts), &k, v) == 0)
			for (int cpu = 0; cpu < a->ncpus; cpu++)
				out[k] += v[cpu];
	free(v);
}

void aid_close(struct aid_state *a)
{
	if (!a)
		return;
	bpf_link__destroy(a->link);
	activeid_bpf__destroy(a->skel);
	free(a);
}
