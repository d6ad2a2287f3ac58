#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "hookhub.h"
#include "hub.skel.h"
#include "hostinfo.h"

struct hookhub {
	struct hub_bpf *skel;
	struct rec_ctx *ctx;
	struct bpf_map *map[HUB_NHOOKS];                   /* the hook's prog array */
	struct bpf_program *head_prog[HUB_NHOOKS];
	struct bpf_link *head[HUB_NHOOKS];
	struct bpf_program *prog[HUB_NHOOKS][HUB_NSLOTS];   /* members */
	struct bpf_link *solo[HUB_NHOOKS][HUB_NSLOTS];      /* after dissolving */
	bool dissolved[HUB_NHOOKS];
	bool ungated[HUB_NHOOKS];                           /* a member joined before flows */
	struct hub_gate *gates;                             /* hub_gates, mapped */
	size_t gates_len;
	/* NPREC_TEST_HUB_TOGGLE_MS (hookhub_toggle_start) */
	pthread_t toggle_th;
	pthread_mutex_t toggle_mu;
	pthread_cond_t toggle_cv;   /* signalled to stop */
	bool toggling, toggle_stop;
	unsigned toggle_ms, toggle_mask;
	FILE *toggle_log;
};

static const char *const hub_tps[HUB_NHOOKS] = {
	[HUB_SOCK_SEND] = "sock_send_length",
	[HUB_SOCK_RECV] = "sock_recv_length",
	[HUB_SOCK_STATE] = "inet_sock_set_state",
	[HUB_SCHED_SWITCH] = "sched_switch",
};

const char *hookhub_tp(enum hub_hook hook)
{
	return hook > HUB_NONE && hook < HUB_NHOOKS ? hub_tps[hook] : "?";
}

static struct bpf_map *hub_map(struct hookhub *h, enum hub_hook hook)
{
	return hook > HUB_NONE && hook < HUB_NHOOKS ? h->map[hook] : NULL;
}

/* The object's array and head program of each hook, by hook number. */
static void hub_index(struct hookhub *h)
{
	struct hub_bpf *k = h->skel;
	h->map[HUB_SOCK_SEND] = k->maps.hub_sock_send;
	h->head_prog[HUB_SOCK_SEND] = k->progs.hub_send;
	h->map[HUB_SOCK_RECV] = k->maps.hub_sock_recv;
	h->head_prog[HUB_SOCK_RECV] = k->progs.hub_recv;
	h->map[HUB_SOCK_STATE] = k->maps.hub_sock_state;
	h->head_prog[HUB_SOCK_STATE] = k->progs.hub_state;
	h->map[HUB_SCHED_SWITCH] = k->maps.hub_sched_switch;
	h->head_prog[HUB_SCHED_SWITCH] = k->progs.hub_switch;
}

/* The gates mapped for user space (the map is BPF_F_MMAPABLE); without
 * them no gate is ever turned on and every call runs every member. */
static void hub_map_gates(struct hookhub *h)
{
	size_t len = (HUB_NHOOKS * sizeof(struct hub_gate) + 4095) & ~(size_t)4095;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(h->skel->maps.hub_gates), 0);
	if (p == MAP_FAILED)
		return;
	h->gates = p;
	h->gates_len = len;
}

static void hub_gate_off(struct hookhub *h, enum hub_hook hook)
{
	if (h->gates)
		__atomic_store_n(&h->gates[hook].on, 0, __ATOMIC_RELEASE);
}

/* The hub of ctx, loaded on first call; NULL (and ctx->hub_off) when it
 * is turned off or cannot load, said once in the probe list. */
static struct hookhub *hub_get(struct rec_ctx *ctx)
{
	if (ctx->hub || ctx->hub_off)
		return ctx->hub;
	const char *off = getenv("NPREC_TEST_NO_HUB");
	if (off && *off == '1') {
		ctx->hub_off = true;
		rec_probe(ctx, "hub", "tp_btf/<shared tracepoints>", REC_PROBE_SKIPPED,
			  "NPREC_TEST_NO_HUB=1: each family attaches its own programs");
		return NULL;
	}
	struct hookhub *h = calloc(1, sizeof(*h));
	int e = h ? 0 : ENOMEM;
	if (h && !(h->skel = hub_bpf__open_and_load()))
		e = errno;
	if (e) {
		char why[160];
		snprintf(why, sizeof(why), "hub not loaded (%s): each family attaches its own programs",
			 strerror(e));
		rec_probe(ctx, "hub", "tp_btf/<shared tracepoints>", REC_PROBE_FAILED, why);
		free(h);
		ctx->hub_off = true;
		return NULL;
	}
	h->ctx = ctx;
	hub_index(h);
	hub_map_gates(h);
	ctx->hub = h;
	return h;
}

struct hookhub *hookhub_share(struct rec_ctx *ctx, enum hub_hook hook, struct bpf_map *m)
{
	struct hookhub *h = hub_get(ctx);
	if (!h || !m || !hub_map(h, hook))
		return NULL;
	return bpf_map__reuse_fd(m, bpf_map__fd(hub_map(h, hook))) ? NULL : h;
}

bool hookhub_share_gates(struct rec_ctx *ctx, struct bpf_map *m)
{
	struct hookhub *h = hub_get(ctx);
	return h && m && bpf_map__reuse_fd(m, bpf_map__fd(h->skel->maps.hub_gates)) == 0;
}

bool hookhub_gate(struct hookhub *h, enum hub_hook hook, __u32 sample)
{
	if (!h || !h->gates || !hub_map(h, hook) || h->dissolved[hook] || h->ungated[hook] ||
	    !h->prog[hook][HUB_SLOT_FLOWS] || (sample & (sample - 1)))
		return false;
	h->gates[hook].sample = sample;
	__atomic_store_n(&h->gates[hook].on, 1, __ATOMIC_RELEASE);
	return true;
}

/* A join failed after others joined: a member that attached on its own
 * would tail-call into the others' slots and run them twice. So the hook
 * goes back to one program per family: every member leaves the array and
 * is attached on its own (links owned here), the head is detached, later
 * joins are refused (their families attach their own; the array stays
 * empty, so their tail calls fall through). */
static void hub_dissolve(struct hookhub *h, enum hub_hook hook, int why)
{
	char probe[80], reason[160];
	int fd = bpf_map__fd(hub_map(h, hook));
	for (unsigned i = 0; i < HUB_NSLOTS; i++) {
		__u32 key = i;
		if (!h->prog[hook][i])
			continue;
		bpf_map_delete_elem(fd, &key);
		h->solo[hook][i] = bpf_program__attach(h->prog[hook][i]);
	}
	bpf_link__destroy(h->head[hook]);
	h->head[hook] = NULL;
	h->dissolved[hook] = true;
	hub_gate_off(h, hook);
	snprintf(probe, sizeof(probe), "tp_btf/%s", hookhub_tp(hook));
	snprintf(reason, sizeof(reason), "a family could not join (%s): each attached its own program",
		 strerror(why));
	rec_probe(h->ctx, "hub", probe, REC_PROBE_FAILED, reason);
}

/* NPREC_TEST_HUB_REFUSE=SLOT: the join of that slot fails (tests the
 * dissolving path on kernels where joins never fail). */
static bool hub_test_refuse(unsigned slot)
{
	const char *v = getenv("NPREC_TEST_HUB_REFUSE");
	return v && *v && (unsigned)atoi(v) == slot;
}

int hookhub_join(struct hookhub *h, enum hub_hook hook, unsigned slot, struct bpf_program *p)
{
	if (!h || !hub_map(h, hook) || slot >= HUB_NSLOTS || !p)
		return -EINVAL;
	if (h->dissolved[hook])
		return -EBUSY;
	if (slot < HUB_SLOT_FLOWS) {
		/* the gate would skip this member too */
		h->ungated[hook] = true;
		hub_gate_off(h, hook);
	}
	__u32 key = slot;
	int fd = bpf_program__fd(p), e = 0;
	if (hub_test_refuse(slot))
		e = EPERM;
	else if (bpf_map_update_elem(bpf_map__fd(hub_map(h, hook)), &key, &fd, BPF_ANY))
		e = errno;
	else if (!h->head[hook] && !(h->head[hook] = bpf_program__attach(h->head_prog[hook]))) {
		e = errno;
		bpf_map_delete_elem(bpf_map__fd(hub_map(h, hook)), &key);
	}
	if (e) {
		hub_dissolve(h, hook, e);
		return -e;
	}
	h->prog[hook][slot] = p;
	return 0;
}

void hookhub_leave(struct hookhub *h, enum hub_hook hook, unsigned slot)
{
	if (!h || !hub_map(h, hook) || slot >= HUB_NSLOTS || !h->prog[hook][slot])
		return;
	__u32 key = slot;
	h->prog[hook][slot] = NULL;
	if (slot == HUB_SLOT_FLOWS)
		hub_gate_off(h, hook);
	if (h->solo[hook][slot]) {
		bpf_link__destroy(h->solo[hook][slot]);
		h->solo[hook][slot] = NULL;
		return;
	}
	bpf_map_delete_elem(bpf_map__fd(hub_map(h, hook)), &key);
	for (unsigned i = 0; i < HUB_NSLOTS; i++)
		if (h->prog[hook][i])
			return;
	bpf_link__destroy(h->head[hook]);
	h->head[hook] = NULL;
}

size_t hookhub_prog_fds(const struct rec_ctx *ctx, int *fds, size_t max)
{
	size_t n = 0;
	for (int i = 0; ctx->hub && i < HUB_NHOOKS && n < max; i++)
		if (ctx->hub->head_prog[i] && bpf_program__fd(ctx->hub->head_prog[i]) >= 0)
			fds[n++] = bpf_program__fd(ctx->hub->head_prog[i]);
	return n;
}

/* The hooks in mask attached (on) or detached; false when an attach
 * failed (the others stay as they are). */
static bool hub_heads_set(struct hookhub *h, unsigned mask, bool on)
{
	bool ok = true;
	for (int i = 0; i < HUB_NHOOKS; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (!on) {
			bpf_link__destroy(h->head[i]);
			h->head[i] = NULL;
		} else if (!h->head[i] && !(h->head[i] = bpf_program__attach(h->head_prog[i]))) {
			ok = false;
		}
	}
	return ok;
}

static void *hub_toggle_main(void *arg)
{
	struct hookhub *h = arg;
	bool on = true;
	struct timespec at;
	clock_gettime(CLOCK_MONOTONIC, &at);
	pthread_mutex_lock(&h->toggle_mu);
	for (;;) {
		/* one wakeup a switch: what nprec's process costs stays its own */
		at.tv_nsec += (long)(h->toggle_ms % 1000) * 1000000;
		at.tv_sec += h->toggle_ms / 1000 + at.tv_nsec / 1000000000;
		at.tv_nsec %= 1000000000;
		while (!h->toggle_stop && pthread_cond_timedwait(&h->toggle_cv, &h->toggle_mu, &at) != ETIMEDOUT)
			;
		if (h->toggle_stop)
			break;
		on = !on;
		if (!hub_heads_set(h, h->toggle_mask, on))
			fprintf(stderr, "nprec: NPREC_TEST_HUB_TOGGLE_MS: cannot attach a hub head: %s"
				" (run with -Z root)\n", strerror(errno));
		fprintf(h->toggle_log, "%llu %d\n", (unsigned long long)np_mono_ns(), on);
		fflush(h->toggle_log);
	}
	pthread_mutex_unlock(&h->toggle_mu);
	hub_heads_set(h, h->toggle_mask, true);
	return NULL;
}

void hookhub_toggle_start(struct rec_ctx *ctx)
{
	struct hookhub *h = ctx->hub;
	const char *ms = getenv("NPREC_TEST_HUB_TOGGLE_MS");
	if (!h || !ms || atoi(ms) <= 0 || h->toggling)
		return;
	const char *path = getenv("NPREC_TEST_HUB_TOGGLE_LOG");
	h->toggle_log = path && *path ? fopen(path, "w") : NULL;
	if (!h->toggle_log)
		h->toggle_log = stderr;
	h->toggle_ms = (unsigned)atoi(ms);
	/* NPREC_TEST_HUB_TOGGLE_HOOKS=TP[,TP...]: only those tracepoints'
	 * heads ("sock_send_length"), to split the cost by hook */
	const char *only = getenv("NPREC_TEST_HUB_TOGGLE_HOOKS");
	for (int i = 0; i < HUB_NHOOKS; i++)
		if (h->head[i] && (!only || !*only || strstr(only, hub_tps[i])))
			h->toggle_mask |= 1u << i;
	fprintf(h->toggle_log, "%llu 1\n", (unsigned long long)np_mono_ns());
	h->toggle_stop = false;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->toggle_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&h->toggle_mu, NULL);
	h->toggling = pthread_create(&h->toggle_th, NULL, hub_toggle_main, h) == 0;
}

void hookhub_toggle_stop(struct rec_ctx *ctx)
{
	struct hookhub *h = ctx->hub;
	if (!h || !h->toggling)
		return;
	pthread_mutex_lock(&h->toggle_mu);
	h->toggle_stop = true;
	pthread_cond_signal(&h->toggle_cv);
	pthread_mutex_unlock(&h->toggle_mu);
	pthread_join(h->toggle_th, NULL);
	h->toggling = false;
	pthread_cond_destroy(&h->toggle_cv);
	pthread_mutex_destroy(&h->toggle_mu);
	if (h->toggle_log != stderr)
		fclose(h->toggle_log);
	h->toggle_log = NULL;
}

void hookhub_free(struct rec_ctx *ctx)
{
	struct hookhub *h = ctx->hub;
	if (!h)
		return;
	hookhub_toggle_stop(ctx);
	for (int i = 0; i < HUB_NHOOKS; i++) {
		bpf_link__destroy(h->head[i]);
		for (int j = 0; j < HUB_NSLOTS; j++)
			bpf_link__destroy(h->solo[i][j]);
	}
	if (h->gates)
		munmap(h->gates, h->gates_len);
	hub_bpf__destroy(h->skel);
	free(h);
	ctx->hub = NULL;
}

void hub_member_share(struct rec_ctx *ctx, struct hub_member *m, enum hub_hook hook, unsigned slot,
		      struct bpf_map *map)
{
	m->hook = hook;
	m->slot = slot;
	m->joined = false;
	m->hub = hookhub_share(ctx, hook, map);
}

bool hub_member_join(struct rec_ctx *ctx, const char *family, struct hub_member *m,
		     struct bpf_program *p)
{
	char probe[80];
	if (!m->hub || hookhub_join(m->hub, m->hook, m->slot, p) != 0)
		return false;
	m->joined = true;
	snprintf(probe, sizeof(probe), "tp_btf/%s", hookhub_tp(m->hook));
	rec_probe(ctx, family, probe, REC_PROBE_ATTACHED, "shared program (hub)");
	return true;
}

bool hub_member_attach(struct rec_ctx *ctx, const char *family, struct hub_member *m,
		       struct bpf_program *p, struct bpf_link **link)
{
	char probe[80], why[160];
	if (hub_member_join(ctx, family, m, p))
		return true;
	snprintf(probe, sizeof(probe), "tp_btf/%s", hookhub_tp(m->hook));
	*link = bpf_program__attach(p);
	if (!*link) {
		snprintf(why, sizeof(why), "attach failed: %s", strerror(errno));
		rec_probe(ctx, family, probe, REC_PROBE_FAILED, why);
		return false;
	}
	rec_probe(ctx, family, probe, REC_PROBE_ATTACHED, NULL);
	return true;
}

void hub_member_leave(struct hub_member *m)
{
	if (m->joined)
		hookhub_leave(m->hub, m->hook, m->slot);
	m->joined = false;
}
