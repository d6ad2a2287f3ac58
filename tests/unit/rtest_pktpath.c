/* pktpath family, opened directly (root): a TCP transfer over loopback on a
 * private port must show up at the socket and device hooks with the right
 * byte counts, and the passive ID of a segment must be the same at every
 * hook that saw its header. Also checks the column encoding round trip. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/types.h>

#include "tap.h"
#include "family.h"
#include "hookhub.h"
#include "container.h"
#include "npmsg.h"
#include "records.h"
#include "pktcols.h"
#include "pktpath.h"
#include "recheader.h"

extern const struct rec_family rec_family_pktpath;

#define RT_BYTES (1u << 20)

static int rt_listen(uint16_t *port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	if (s < 0 || bind(s, (void *)&a, sizeof(a)) || listen(s, 1) ||
	    getsockname(s, (void *)&a, &l))
		return -1;
	*port = ntohs(a.sin_port);
	return s;
}

static void *rt_reader(void *arg)
{
	int ls = *(int *)arg, c = accept(ls, NULL, NULL);
	static char buf[65536];
	size_t got = 0;
	ssize_t r;
	while (c >= 0 && (r = read(c, buf, sizeof(buf))) > 0)
		got += r;
	if (c >= 0)
		close(c);
	return (void *)got;
}

static int rt_send(uint16_t port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (s < 0 || connect(s, (void *)&a, sizeof(a)))
		return -1;
	static char buf[16384];
	memset(buf, 'x', sizeof(buf));
	for (size_t sent = 0; sent < RT_BYTES; sent += sizeof(buf))
		if (write(s, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -1;
	close(s);
	return 0;
}

/* Sum of key over the `hooks` counters of hook name in rb's PKT_EVENTS
 * records; -1 when no record carries the key for that hook. */
static int64_t rt_hook_counter(struct np_recbuf *rb, const char *hook, const char *key)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	int64_t sum = -1;
	while (msgpack_unpack_next(&u, rb->sbuf.data, rb->sbuf.size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *r = &u.data;
		if (r->type != MSGPACK_OBJECT_ARRAY || r->via.array.size != 3 ||
		    r->via.array.ptr[0].via.u64 != NP_REC_PKT_EVENTS)
			continue;
		const msgpack_object *hooks = np_map_get(&r->via.array.ptr[2], "hooks");
		const msgpack_object *h = hooks ? np_map_get(hooks, hook) : NULL;
		uint64_t v;
		if (h && np_get_u64(h, key, &v) == 0)
			sum = (sum < 0 ? 0 : sum) + (int64_t)v;
	}
	msgpack_unpacked_destroy(&u);
	return sum;
}

static void rt_codec(void)
{
	struct pktcols_ev in[5] = {
		{ .ts = 1000, .flow = 0, .seq = 4294967000u, .end_seq = 4294967000u + 1448, .ack = 7,
		  .tsval = 99, .ipid = 65535, .hook = PK_HOOK_DEV_QUEUE, .doff = 8, .tcpflags = 0x10, .gso = 1448 },
		{ .ts = 1500, .flow = 1, .seq = 5, .end_seq = 5, .ack = 1, .uid = 77, .hook = 9 },
		{ .ts = 1600, .flow = 0, .seq = 4294967000u + 1448, .end_seq = 1152, .ack = 7,
		  .tsval = 100, .ipid = 0, .hook = PK_HOOK_DEV_QUEUE, .doff = 8, .tcpflags = 0x18 },
		{ .ts = 1600, .flow = 0, .seq = 100, .end_seq = 90, .ack = 3, .hook = 1, .flags = PK_F_RANGE },
		{ .ts = 99999999999ull, .flow = 2, .cpu = 1, .ifindex = 3, .len = 66 },
	};
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	msgpack_packer *pk = np_recbuf_begin(&rb, NP_REC_PKT_EVENTS, PKTCOLS_VERSION);
	msgpack_pack_map(pk, PKTCOLS_EVENT_KEYS);
	pktcols_pack_events(pk, in, 5);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	CHECK(msgpack_unpack_next(&u, rb.sbuf.data, rb.sbuf.size, &off) == MSGPACK_UNPACK_SUCCESS, "unpack");
	struct pktcols_ev *out = NULL;
	size_t n = 0;
	CHECK(pktcols_unpack_events(&u.data.via.array.ptr[2], &out, &n) == 0, "decode");
	CHECK_EQ_U(n, 5);
	for (size_t i = 0; out && i < n && i < 5; i++)
		CHECK(!memcmp(&in[i], &out[i], sizeof(in[i])), "event %zu round trip", i);
	if (out)
		CHECK(pktcols_id(&out[3]) == 0 && pktcols_id(&out[1]) == 77 && pktcols_id(&out[0]) != 0,
		      "ids");
	free(out);
	msgpack_unpacked_destroy(&u);
	np_recbuf_free(&rb);
}

/* Walks the records of rb, decoding PKT_EVENTS into one array. */
static size_t rt_collect(struct np_recbuf *rb, struct pktcols_ev **all)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0, total = 0;
	*all = NULL;
	while (msgpack_unpack_next(&u, rb->sbuf.data, rb->sbuf.size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *r = &u.data;
		if (r->type != MSGPACK_OBJECT_ARRAY || r->via.array.size != 3 ||
		    r->via.array.ptr[0].via.u64 != NP_REC_PKT_EVENTS)
			continue;
		struct pktcols_ev *ev;
		size_t n;
		if (pktcols_unpack_events(&r->via.array.ptr[2], &ev, &n))
			continue;
		*all = realloc(*all, (total + n) * sizeof(*ev));
		memcpy(*all + total, ev, n * sizeof(*ev));
		total += n;
		free(ev);
	}
	msgpack_unpacked_destroy(&u);
	return total;
}

/* The family opened on ctx (one CHECK); NULL when it did not open. */
static void *rt_open(struct rec_ctx *ctx, const char *what)
{
	void *st = NULL;
	char err[256] = "";
	CHECK(rec_family_pktpath.open(ctx, &st, err, sizeof(err)) == 0, "open %s: %s", what, err);
	return st;
}

/* After wait_us for the ring: the interval's records into rb (initialised
 * here), their PKT_EVENTS into *ev; the number of events. */
static size_t rt_snapshot(void *st, struct rec_ctx *ctx, unsigned wait_us, struct np_recbuf *rb,
			  struct pktcols_ev **ev)
{
	usleep(wait_us);
	rec_family_pktpath.drain(st);
	np_recbuf_init(rb);
	rec_family_pktpath.snapshot(st, ctx, rb, 0, 1);
	return rt_collect(rb, ev);
}

/* What rt_open and rt_snapshot made, freed. */
static void rt_close(void *st, struct np_recbuf *rb, struct pktcols_ev *ev)
{
	free(ev);
	np_recbuf_free(rb);
	rec_family_pktpath.close(st);
}

/* UDP over loopback: each datagram's best-effort ID is the same at the
 * sending and the receiving device hook, and distinct datagrams differ. */
static void rt_udp(struct rec_config *cfg, struct rec_ctx *ctx)
{
	int r = socket(AF_INET, SOCK_DGRAM, 0), w = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	CHECK(r >= 0 && w >= 0 && !bind(r, (void *)&a, sizeof(a)) && !getsockname(r, (void *)&a, &l),
	      "udp sockets");
	cfg->ports[0] = ntohs(a.sin_port);
	cfg->nports = 1;
	cfg->per_flow_cap = 0;
	void *st = rt_open(ctx, "udp");
	if (!st)
		return;
	char msg[64];
	for (int i = 0; i < 20; i++) {
		snprintf(msg, sizeof(msg), "datagram number %04d", i);
		sendto(w, msg, strlen(msg), 0, (void *)&a, sizeof(a));
		recv(r, msg, sizeof(msg), 0);
	}
	struct np_recbuf rb;
	struct pktcols_ev *ev;
	size_t n = rt_snapshot(st, ctx, 50000, &rb, &ev), q = 0, same = 0;
	uint32_t ids[64];
	for (size_t i = 0; i < n; i++) {
		if (ev[i].hook != PK_HOOK_DEV_QUEUE || q >= 64)
			continue;
		ids[q++] = pktcols_id(&ev[i]);
		for (size_t j = 0; j < n; j++)
			if (ev[j].hook == PK_HOOK_NETIF_RECEIVE && pktcols_id(&ev[j]) == ids[q - 1]) {
				same++;
				break;
			}
	}
	size_t distinct = q;
	for (size_t i = 0; i < q; i++)
		for (size_t j = i + 1; j < q; j++)
			if (ids[i] == ids[j]) { distinct--; break; }
	CHECK_EQ_U(q, 20);
	CHECK_EQ_U(same, 20);
	CHECK_EQ_U(distinct, 20);
	rt_close(st, &rb, ev);
	close(r);
	close(w);
}

/* --per-flow-cap N: at most N events per flow and second reach the ring. */
static void rt_cap(struct rec_config *cfg, struct rec_ctx *ctx)
{
	uint16_t port = 0;
	int ls = rt_listen(&port);
	cfg->ports[0] = port;
	cfg->nports = 1;
	cfg->per_flow_cap = 25;
	void *st = rt_open(ctx, "cap");
	if (!st)
		return;
	pthread_t th;
	pthread_create(&th, NULL, rt_reader, &ls);
	rt_send(port);
	pthread_join(th, NULL);
	struct np_recbuf rb;
	struct pktcols_ev *ev;
	size_t n = rt_snapshot(st, ctx, 50000, &rb, &ev);
	/* two directions = two flows; the transfer takes well under a second */
	CHECK(n > 0 && n <= 2 * 25, "%zu events with a cap of 25 per flow", n);
	rt_close(st, &rb, ev);
	cfg->per_flow_cap = 0;
	close(ls);
}

/* IPv6 over ::1: 16-byte addresses, no IP ID; the IDs still pair up. */
static void *rt_reader6(void *arg)
{
	return rt_reader(arg);
}

static void rt_v6(struct rec_config *cfg, struct rec_ctx *ctx)
{
	int ls = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	socklen_t l = sizeof(a);
	if (ls < 0 || bind(ls, (void *)&a, sizeof(a)) || listen(ls, 1) || getsockname(ls, (void *)&a, &l)) {
		fprintf(stderr, "rtest_pktpath: no IPv6 loopback, v6 part skipped\n");
		return;
	}
	cfg->ports[0] = ntohs(a.sin6_port);
	cfg->nports = 1;
	void *st = rt_open(ctx, "v6");
	if (!st)
		return;
	pthread_t th;
	pthread_create(&th, NULL, rt_reader6, &ls);
	int c = socket(AF_INET6, SOCK_STREAM, 0);
	static char buf[16384];
	CHECK(connect(c, (void *)&a, sizeof(a)) == 0, "connect ::1");
	for (int i = 0; i < 32; i++)
		if (write(c, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
	close(c);
	void *got;
	pthread_join(th, &got);
	CHECK_EQ_U((size_t)got, 32 * sizeof(buf));
	struct np_recbuf rb;
	struct pktcols_ev *ev;
	size_t n = rt_snapshot(st, ctx, 50000, &rb, &ev), q = 0, matched = 0, v6 = 0;
	for (size_t i = 0; i < n; i++) {
		v6 += (ev[i].flags & PK_F_V6) != 0;
		if (ev[i].hook != PK_HOOK_DEV_QUEUE || ev[i].end_seq == ev[i].seq)
			continue;
		q++;
		for (size_t j = 0; j < n; j++)
			if (ev[j].hook == PK_HOOK_NETIF_RECEIVE && pktcols_id(&ev[j]) == pktcols_id(&ev[i])) {
				matched++;
				break;
			}
	}
	CHECK(n > 0 && v6 == n, "all %zu events IPv6 (%zu)", n, v6);
	CHECK(q > 0 && matched == q, "v6: %zu of %zu data segments matched", matched, q);
	rt_close(st, &rb, ev);
	close(ls);
}

int main(void)
{
	rt_codec();
	if (geteuid() != 0) {
		fprintf(stderr, "rtest_pktpath: not root, kernel part skipped\n");
		return tap_done();
	}
	uint16_t port = 0;
	int ls = rt_listen(&port);
	CHECK(ls >= 0, "listen");
	struct rec_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.netns_fd = -1;
	cfg.pktpath = true;
	cfg.sample_n = 1;
	cfg.ports[0] = port;
	cfg.nports = 1;
	struct rec_ctx ctx = { .cfg = &cfg, .shift_ns = 5000 };
	void *st = NULL;
	char err[256] = "";
	int rc = rec_family_pktpath.open(&ctx, &st, err, sizeof(err));
	CHECK(rc == 0, "open: %d %s", rc, err);
	if (rc)
		return tap_done();
	pthread_t th;
	pthread_create(&th, NULL, rt_reader, &ls);
	CHECK(rt_send(port) == 0, "send");
	void *got;
	pthread_join(th, &got);
	CHECK_EQ_U((size_t)got, RT_BYTES);
	struct np_recbuf rb;
	struct pktcols_ev *ev;
	size_t n = rt_snapshot(st, &ctx, 100000, &rb, &ev);
	uint64_t send_bytes = 0, copy_bytes = 0, nhook[PK_HOOK_MAX] = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (ev[i].hook < PK_HOOK_MAX)
			nhook[ev[i].hook]++;
		if (ev[i].hook == PK_HOOK_SOCK_SEND)
			send_bytes += ev[i].end_seq - ev[i].seq;
		if (ev[i].hook == PK_HOOK_COPY_TO_USER)
			copy_bytes += ev[i].len;
	}
	for (unsigned h = 1; h < PK_HOOK_MAX; h++)
		fprintf(stderr, "  %-16s %llu\n", pktcols_hook_name(h), (unsigned long long)nhook[h]);
	CHECK_EQ_U(send_bytes, RT_BYTES);
	CHECK_EQ_U(copy_bytes, RT_BYTES);
	CHECK(nhook[PK_HOOK_DEV_QUEUE] > 0 && nhook[PK_HOOK_NETIF_RECEIVE] > 0 &&
	      nhook[PK_HOOK_TCP_RCV] > 0 && nhook[PK_HOOK_DEV_START_XMIT] > 0 &&
	      nhook[PK_HOOK_DEV_XMIT] > 0, "device and socket hooks seen");
	/* Loopback: every data segment queued is received with the same ID. */
	size_t data_q = 0, matched = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].hook != PK_HOOK_DEV_QUEUE || ev[i].end_seq == ev[i].seq)
			continue;
		data_q++;
		uint32_t id = pktcols_id(&ev[i]);
		for (size_t j = 0; j < n; j++)
			if (ev[j].hook == PK_HOOK_NETIF_RECEIVE && pktcols_id(&ev[j]) == id &&
			    ev[j].seq == ev[i].seq && ev[j].ts >= ev[i].ts) {
				matched++;
				break;
			}
	}
	CHECK(data_q > 0 && matched == data_q, "%zu of %zu data segments matched", matched, data_q);
	/* The interval's counters agree with its events (sample 1, no cap, nothing
	 * lost), and every hook carries the kernel's skipped-run count. Loopback
	 * receive runs in softirq only: netif_receive never nests on itself. */
	CHECK_EQ_U(rt_hook_counter(&rb, "netif_receive", "seen"), nhook[PK_HOOK_NETIF_RECEIVE]);
	CHECK_EQ_U(rt_hook_counter(&rb, "dev_queue", "seen"), nhook[PK_HOOK_DEV_QUEUE]);
	CHECK(rt_hook_counter(&rb, "tcp_rcv", "prog_missed") >= 0, "tcp_rcv prog_missed present");
	CHECK_EQ_U(rt_hook_counter(&rb, "netif_receive", "prog_missed"), 0);
	CHECK(n == 0 || ev[0].ts > 5000, "shifted ts");
	CHECK_EQ_U(rec_family_pktpath.lost(st), 0);
	rt_close(st, &rb, ev);
	close(ls);
	rt_udp(&cfg, &ctx);
	rt_cap(&cfg, &ctx);
	rt_v6(&cfg, &ctx);
	hookhub_free(&ctx);
	rc_probes_free(&ctx);
	return tap_done();
}
