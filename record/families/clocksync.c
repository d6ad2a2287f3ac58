/* Clock-sync exchange family: NTP-style 4-timestamp probes between nprec
 * instances over UDP (docs/CLOCKSYNC-EXCHANGE.md). Everything runs from
 * drain() on non-blocking sockets. Receive times are the kernel's socket
 * receive timestamps (CLOCK_REALTIME) mapped to CLOCK_MONOTONIC with the
 * offset interpolated between the clock pairs read when the sockets were last
 * emptied and right after recvmsg, so a late drain does not widen the
 * exchange and a slewing realtime clock does not shift it. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "family.h"
#include "npmsg.h"
#include "records.h"
#include "pknetns.h"
#include "csguard.h"
#include "csmsg.h"

#define CS_FAMILY      "clocksync"
#define CS_BURST       100             /* exchanges at start and at end */
#define CS_BURST_STEP  10              /* probes sent per drain during a burst */
#define CS_PERIOD_NS   250000000ull    /* between bursts: 4 per second */
#define CS_END_NS      1500000000ull   /* end burst this long before -d ends */
#define CS_MAX_PEERS   8
#define CS_MAX_STORED  100000          /* exchanges held per interval */
#define CS_SENT_SLOTS  1024            /* probes a reply may answer (a burst's budget) */
#define CS_REC_VERSION 2               /* NP_REC_SYNC: 2 adds auth, authenticated, rejected */

/* Why a received datagram was not used; stored per interval as "rejected". */
enum cs_reject {
	CSR_MALFORMED, CSR_NO_MAC, CSR_BAD_MAC, CSR_UNMATCHED, CSR_REPLAYED, CSR_RATE, CSR_N
};
static const char *const cs_reject_names[CSR_N] = {
	"malformed", "unauthenticated", "bad_mac", "unmatched", "replayed", "rate_limited",
};

struct cs_exchange {
	uint8_t role;          /* 0: we probed (T1, T4 ours); 1: we answered (T2, T3 ours) */
	uint8_t peer;          /* index into peers[] (role 0) or 0xff (role 1: peer_id only) */
	bool auth;             /* every message of it carried a MAC that verified */
	uint32_t seq;
	uint64_t peer_id;
	uint64_t t[4];
};

struct cs_sent {           /* a probe a reply may still answer */
	uint64_t t1;
	uint32_t seq;
	uint8_t state;         /* 0 free, 1 sent, 2 answered */
};

struct cs_peer {
	char name[128];
	int fd;
	uint32_t next_seq;
	uint64_t sent, replies, errors;
	bool reported_error, reported_silent;
	struct cs_sent probes[CS_SENT_SLOTS];
};

struct cs_state {
	struct rec_ctx *ctx;
	uint64_t self_id;
	int64_t shift;
	int listen_fd;
	struct cs_key key;
	struct cs_guard *guard;
	struct cs_peer peers[CS_MAX_PEERS];
	unsigned npeers;
	uint64_t start_ns, end_ns, next_probe_ns;
	unsigned burst_left;          /* replies still wanted in this burst */
	uint64_t burst_budget;        /* probes we may still send for it */
	bool end_burst_done;
	struct cs_exchange *ex;
	size_t nex, capex;
	uint64_t answered, reports, dropped;
	uint64_t rejected[CSR_N];
	/* realtime - monotonic read when the sockets were last emptied: a packet
	 * stamped since then is converted with the offset interpolated between
	 * that read and one right after its recvmsg. */
	int64_t ref_off;
	uint64_t ref_mono;
};

static uint64_t cs_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* realtime - monotonic, read back to back (mono twice, averaged). */
static int64_t cs_rt_minus_mono(void)
{
	uint64_t a = cs_clock(CLOCK_MONOTONIC), rt = cs_clock(CLOCK_REALTIME);
	uint64_t b = cs_clock(CLOCK_MONOTONIC);
	return (int64_t)(rt - (a + (b - a) / 2));
}

static void cs_mark_emptied(struct cs_state *s)
{
	s->ref_off = cs_rt_minus_mono();
	s->ref_mono = cs_clock(CLOCK_MONOTONIC);
}

/* realtime - monotonic at monotonic time m (read at most at now, where it
 * was off_now). The kernel stamps receptions in CLOCK_REALTIME, which NTP
 * slews against monotonic (1600 ppm seen on a VM): converted with the offset
 * of the read after recvmsg, a request that had queued 16 ms put T2 26 us
 * before the peer's T1. Between two reads the slew is linear, so the offset
 * at the arrival is interpolated; before the reference read (a packet that
 * came while the sockets were being emptied) the reference offset holds. */
static int64_t cs_rt_off_at(const struct cs_state *s, uint64_t m, uint64_t now, int64_t off_now)
{
	if (!s->ref_mono || now <= s->ref_mono || m >= now)
		return off_now;
	if (m <= s->ref_mono)
		return s->ref_off;
	double f = (double)(m - s->ref_mono) / (double)(now - s->ref_mono);
	return s->ref_off + (int64_t)(f * (double)(off_now - s->ref_off));
}

static void cs_store(struct cs_state *s, const struct cs_exchange *e)
{
	if (s->nex == s->capex) {
		size_t cap = s->capex ? s->capex * 2 : 256;
		void *p = cap <= CS_MAX_STORED ? realloc(s->ex, cap * sizeof(*s->ex)) : NULL;
		if (!p) {
			s->dropped++;
			return;
		}
		s->ex = p;
		s->capex = cap;
	}
	s->ex[s->nex++] = *e;
}

static int cs_socket(int family)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Receives one datagram into buf (up to CS_MSG_LEN + 1, so an oversized one
 * shows); *rx_mono is its kernel receive time on our clock (shifted).
 * Returns its length, or -1 (EAGAIN or error). */
static ssize_t cs_recv(struct cs_state *s, int fd, uint8_t *buf, struct sockaddr_storage *from,
		       socklen_t *fromlen, uint64_t *rx_mono)
{
	char ctl[CMSG_SPACE(sizeof(struct timespec))];
	struct iovec iov = { .iov_base = buf, .iov_len = CS_MSG_LEN + 1 };
	struct msghdr mh = { .msg_name = from, .msg_namelen = from ? *fromlen : 0,
			     .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(fd, &mh, 0);
	if (n < 0)
		return -1;
	uint64_t now = cs_clock(CLOCK_MONOTONIC);
	int64_t off_now = cs_rt_minus_mono();
	*rx_mono = now;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			uint64_t rt = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
			uint64_t m = rt - (uint64_t)cs_rt_off_at(s, rt - (uint64_t)off_now, now, off_now);
			*rx_mono = m < now ? m : now;
		}
	}
	*rx_mono += (uint64_t)s->shift;
	if (fromlen)
		*fromlen = mh.msg_namelen;
	return n;
}

/* Sends m in the wire version the other side spoke (version 1 only ever
 * without a key: a keyed receiver refuses it). */
static int cs_send(struct cs_state *s, int fd, const struct cs_msg *m, unsigned version,
		   const struct sockaddr *to, socklen_t tolen)
{
	uint8_t w[CS_MSG_LEN];
	size_t len = cs_msg_encode(m, &s->key, w);
	if (version == CS_WIRE_V1 && !s->key.set) {
		w[5] = 0;
		len = CS_MSG_V1_LEN;
	}
	return sendto(fd, w, len, 0, to, tolen) == (ssize_t)len ? 0 : -errno;
}

/* Decodes and counts what is refused; true when m is usable. */
static bool cs_accept(struct cs_state *s, const uint8_t *buf, ssize_t n, struct cs_msg *m,
		      bool *auth)
{
	enum cs_verdict v = cs_msg_decode(buf, (size_t)n, &s->key, m);
	switch (v) {
	case CS_MSG_AUTH:      *auth = true; return true;
	case CS_MSG_PLAIN:     *auth = false; return true;
	case CS_MSG_MALFORMED: s->rejected[CSR_MALFORMED]++; return false;
	case CS_MSG_NO_MAC:    s->rejected[CSR_NO_MAC]++; return false;
	case CS_MSG_BAD_MAC:   s->rejected[CSR_BAD_MAC]++; return false;
	}
	return false;
}

static uint64_t cs_addr_hash(const struct sockaddr_storage *a, bool with_port)
{
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)a;
		return csg_hash(&s6->sin6_addr, 16) ^ (with_port ? s6->sin6_port : 0);
	}
	const struct sockaddr_in *s4 = (const void *)a;
	return csg_hash(&s4->sin_addr, 4) ^ (with_port ? s4->sin_port : 0);
}

static void cs_answer(struct cs_state *s, struct cs_msg *m, const struct sockaddr_storage *from,
		      socklen_t fl, uint64_t rx)
{
	m->type = CS_REPLY;
	m->sender_id = s->self_id;
	m->t2 = rx;
	m->t3 = cs_clock(CLOCK_MONOTONIC) + (uint64_t)s->shift;
	if (cs_send(s, s->listen_fd, m, m->version, (const struct sockaddr *)from, fl) != 0)
		return;
	s->answered++;
}

static void cs_take_report(struct cs_state *s, const struct cs_msg *m, uint64_t src, bool auth)
{
	switch (csg_report(s->guard, m->sender_id, m->seq, src, m->t2, m->t3)) {
	case CSG_UNMATCHED: s->rejected[CSR_UNMATCHED]++; return;
	case CSG_REPLAYED:  s->rejected[CSR_REPLAYED]++; return;
	case CSG_MATCHED:   break;
	}
	struct cs_exchange e = { .role = 1, .peer = 0xff, .auth = auth, .seq = m->seq,
				 .peer_id = m->sender_id, .t = { m->t1, m->t2, m->t3, m->t4 } };
	s->reports++;
	cs_store(s, &e);
}

static void cs_serve(struct cs_state *s)
{
	for (int i = 0; i < 256; i++) {
		uint8_t buf[CS_MSG_LEN + 1];
		struct cs_msg m;
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		uint64_t rx;
		bool auth;
		ssize_t n = cs_recv(s, s->listen_fd, buf, &from, &fl, &rx);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			continue;
		}
		/* the cheap check first: a flood costs no MAC computations */
		if (!csg_admit(s->guard, cs_addr_hash(&from, false), cs_clock(CLOCK_MONOTONIC))) {
			s->rejected[CSR_RATE]++;
			continue;
		}
		if (!cs_accept(s, buf, n, &m, &auth))
			continue;
		uint64_t src = cs_addr_hash(&from, true);
		if (m.type == CS_REQ) {
			uint64_t requester = m.sender_id;
			cs_answer(s, &m, &from, fl, rx);
			csg_answered(s->guard, requester, m.seq, src, m.t2, m.t3);
		} else if (m.type == CS_REPORT) {
			cs_take_report(s, &m, src, auth);
		} else {
			s->rejected[CSR_UNMATCHED]++;
		}
	}
}

/* A reply must answer a probe of ours (sequence and T1) that no earlier
 * reply answered. */
static bool cs_reply_matches(struct cs_state *s, struct cs_peer *p, const struct cs_msg *m)
{
	struct cs_sent *q = &p->probes[m->seq % CS_SENT_SLOTS];
	if (m->type != CS_REPLY || !q->state || q->seq != m->seq || q->t1 != m->t1) {
		s->rejected[CSR_UNMATCHED]++;
		return false;
	}
	if (q->state == 2) {
		s->rejected[CSR_REPLAYED]++;
		return false;
	}
	q->state = 2;
	return true;
}

static void cs_peer_error(struct cs_state *s, struct cs_peer *p, int err)
{
	p->errors++;
	if (!p->reported_error && cs_clock(CLOCK_MONOTONIC) > s->start_ns + 1000000000ull) {
		fprintf(stderr, "nprec: clocksync: peer %s unreachable: %s (recording goes on)\n",
			p->name, strerror(err));
		p->reported_error = true;
	}
}

static void cs_collect_replies(struct cs_state *s, unsigned pi)
{
	struct cs_peer *p = &s->peers[pi];
	for (int i = 0; i < 256; i++) {
		uint8_t buf[CS_MSG_LEN + 1];
		struct cs_msg m;
		uint64_t rx;
		bool auth;
		ssize_t n = cs_recv(s, p->fd, buf, NULL, NULL, &rx);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == ECONNREFUSED)
				cs_peer_error(s, p, errno);
			else
				p->errors++;
			continue;
		}
		if (!cs_accept(s, buf, n, &m, &auth) || !cs_reply_matches(s, p, &m))
			continue;
		p->replies++;
		if (s->burst_left)
			s->burst_left--;
		struct cs_exchange e = { .role = 0, .peer = pi, .auth = auth, .seq = m.seq,
					 .peer_id = m.sender_id, .t = { m.t1, m.t2, m.t3, rx } };
		cs_store(s, &e);
		m.type = CS_REPORT;
		m.sender_id = s->self_id;
		m.t4 = rx;
		cs_send(s, p->fd, &m, m.version, NULL, 0);
	}
}

static void cs_probe_all(struct cs_state *s, unsigned count)
{
	for (unsigned pi = 0; pi < s->npeers; pi++) {
		struct cs_peer *p = &s->peers[pi];
		for (unsigned k = 0; k < count; k++) {
			struct cs_msg m = { .type = CS_REQ, .seq = p->next_seq++, .sender_id = s->self_id };
			m.t1 = cs_clock(CLOCK_MONOTONIC) + (uint64_t)s->shift;
			int rc = cs_send(s, p->fd, &m, CS_WIRE_V2, NULL, 0);
			if (rc < 0) {
				cs_peer_error(s, p, -rc);
				break;
			}
			p->probes[m.seq % CS_SENT_SLOTS] = (struct cs_sent){ m.t1, m.seq, 1 };
			p->sent++;
		}
		if (p->sent >= CS_BURST && !p->replies && !p->reported_silent) {
			fprintf(stderr, "nprec: clocksync: no reply from peer %s after %llu probes%s (recording goes on)\n",
				p->name, (unsigned long long)p->sent,
				s->key.set ? " (does it use the same --sync-key?)" : "");
			p->reported_silent = true;
		}
	}
}

static int cs_drain(void *state)
{
	struct cs_state *s = state;
	if (s->listen_fd >= 0)
		cs_serve(s);
	for (unsigned i = 0; i < s->npeers; i++)
		cs_collect_replies(s, i);
	cs_mark_emptied(s);
	if (!s->npeers)
		return 0;
	uint64_t now = cs_clock(CLOCK_MONOTONIC);
	if (s->end_ns && !s->end_burst_done && now + CS_END_NS >= s->end_ns) {
		s->end_burst_done = true;
		s->burst_left = CS_BURST;
		s->burst_budget = 10 * CS_BURST;
	}
	/* A burst lasts until CS_BURST replies came back (a peer that starts a
	 * little later still gets a full burst), within a budget of probes. */
	if (s->burst_left && s->burst_budget) {
		unsigned k = s->burst_left < CS_BURST_STEP ? s->burst_left : CS_BURST_STEP;
		cs_probe_all(s, k);
		s->burst_budget = s->burst_budget > k ? s->burst_budget - k : 0;
	} else if (now >= s->next_probe_ns) {
		cs_probe_all(s, 1);
		s->next_probe_ns = now + CS_PERIOD_NS;
	}
	return 0;
}

static int cs_open_peer(struct cs_state *s, const char *spec, char *err, size_t errlen)
{
	struct cs_peer *p = &s->peers[s->npeers];
	char host[128];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host)) {
		snprintf(err, errlen, "clocksync: --sync-peer %s: expected HOST:PORT", spec);
		return -EINVAL;
	}
	memcpy(host, spec, colon - spec);
	host[colon - spec] = 0;
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
	int g = getaddrinfo(host, colon + 1, &hints, &ai);
	if (g) {
		snprintf(err, errlen, "clocksync: --sync-peer %s: %s", spec, gai_strerror(g));
		return -EINVAL;
	}
	p->fd = cs_socket(ai->ai_family);
	int rc = p->fd < 0 ? -errno : 0;
	if (!rc && connect(p->fd, ai->ai_addr, ai->ai_addrlen) < 0)
		rc = -errno;
	freeaddrinfo(ai);
	if (rc) {
		snprintf(err, errlen, "clocksync: --sync-peer %s: %s", spec, strerror(-rc));
		if (p->fd >= 0)
			close(p->fd);
		return rc;
	}
	snprintf(p->name, sizeof(p->name), "%s", spec);
	s->npeers++;
	return 0;
}

/* --sync-bind ADDR: that address only; else every address, v4 and v6. */
static int cs_listen_addr(const char *bind_addr, uint16_t port, struct sockaddr_storage *a,
			  socklen_t *alen)
{
	memset(a, 0, sizeof(*a));
	if (!bind_addr) {
		struct sockaddr_in6 *a6 = (void *)a;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		a6->sin6_addr = in6addr_any;
		*alen = sizeof(*a6);
		return 0;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST },
			*ai = NULL;
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(bind_addr, ps, &hints, &ai) || !ai)
		return -EINVAL;
	memcpy(a, ai->ai_addr, ai->ai_addrlen);
	*alen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static int cs_open_listener(struct cs_state *s, const char *bind_addr, uint16_t port,
			    char *err, size_t errlen)
{
	struct sockaddr_storage a;
	socklen_t alen;
	if (cs_listen_addr(bind_addr, port, &a, &alen) < 0) {
		snprintf(err, errlen, "clocksync: --sync-bind %s: not a numeric IPv4/IPv6 address",
			 bind_addr);
		return -EINVAL;
	}
	int fd = cs_socket(a.ss_family);
	if (fd < 0) {
		snprintf(err, errlen, "clocksync: socket: %s", strerror(errno));
		return -errno;
	}
	int zero = 0;
	if (!bind_addr)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&a, alen) < 0) {
		int e = -errno;
		snprintf(err, errlen, "clocksync: --sync-listen %u%s%s: %s", port,
			 bind_addr ? " --sync-bind " : "", bind_addr ? bind_addr : "", strerror(-e));
		close(fd);
		return e;
	}
	s->listen_fd = fd;
	return 0;
}

static void cs_close(void *state);

static int cs_open(struct rec_ctx *ctx, void **state, char *err, size_t errlen)
{
	struct rec_config *c = ctx->cfg;
	if (!c->sync_listen_port && !c->nsync_peers)
		return REC_FAM_OFF_OPTION;
	struct cs_state *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "clocksync: out of memory");
		return -ENOMEM;
	}
	s->ctx = ctx;
	s->listen_fd = -1;
	s->shift = ctx->shift_ns;
	s->guard = calloc(1, sizeof(*s->guard));
	int rc = s->guard ? 0 : -ENOMEM;
	if (rc)
		snprintf(err, errlen, "clocksync: out of memory");
	else if (c->sync_key_file)
		rc = cs_key_load(c->sync_key_file, &s->key, err, errlen);
	if (rc < 0) {
		cs_close(s);
		return rc;
	}
	if (getrandom(&s->self_id, sizeof(s->self_id), 0) != sizeof(s->self_id))
		s->self_id = cs_clock(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32);
	/* Sockets belong to the netns they are created in: make them there. */
	int saved;
	rc = pk_netns_enter(c->netns_fd, &saved);
	if (rc < 0) {
		snprintf(err, errlen, "clocksync: cannot enter the netns: %s", strerror(-rc));
		cs_close(s);
		return rc;
	}
	if (c->sync_listen_port)
		rc = cs_open_listener(s, c->sync_bind, c->sync_listen_port, err, errlen);
	for (unsigned i = 0; rc == 0 && i < c->nsync_peers && i < CS_MAX_PEERS; i++)
		rc = cs_open_peer(s, c->sync_peers[i], err, errlen);
	pk_netns_leave(saved);
	if (rc < 0) {
		cs_close(s);
		return rc;
	}
	cs_mark_emptied(s);
	s->start_ns = cs_clock(CLOCK_MONOTONIC);
	s->end_ns = c->duration_ns ? s->start_ns + c->duration_ns : 0;
	s->burst_left = s->npeers ? CS_BURST : 0;
	s->burst_budget = 10 * CS_BURST;
	if (s->end_ns && s->end_ns - s->start_ns < 2 * CS_END_NS)
		s->end_burst_done = true;   /* short run: the start burst covers it */
	rec_probe(ctx, CS_FAMILY, "udp", REC_PROBE_ATTACHED,
		  s->key.set ? NULL : "unauthenticated: no --sync-key");
	*state = s;
	return 0;
}

static void cs_pack_u64_col(msgpack_packer *pk, const char *key, const struct cs_exchange *e,
			    size_t n, int which)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) {
		switch (which) {
		case 0: case 1: case 2: case 3: msgpack_pack_uint64(pk, e[i].t[which]); break;
		case 4: msgpack_pack_uint64(pk, e[i].peer_id); break;
		case 6: msgpack_pack_uint32(pk, e[i].seq); break;
		}
	}
}

/* Version 2: whether the exchange was authenticated, and what was refused. */
static void cs_pack_auth(const struct cs_state *s, msgpack_packer *pk)
{
	np_pack_kv_str(pk, "auth", s->key.set ? "hmac-sha512-256" : "none");
	np_pack_str(pk, "authenticated");
	msgpack_pack_array(pk, s->nex);
	for (size_t i = 0; i < s->nex; i++)
		s->ex[i].auth ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
	np_pack_str(pk, "rejected");
	msgpack_pack_map(pk, CSR_N);
	for (int i = 0; i < CSR_N; i++)
		np_pack_kv_u64(pk, cs_reject_names[i], s->rejected[i]);
}

static int cs_snapshot(void *state, struct rec_ctx *ctx, struct np_recbuf *rb, uint64_t t0,
		       uint64_t t1)
{
	struct cs_state *s = state;
	(void)ctx;
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_SYNC, CS_REC_VERSION);
	msgpack_pack_map(pk, 18);
	np_pack_kv_u64(pk, "t0_ns", t0);
	np_pack_kv_u64(pk, "t1_ns", t1);
	np_pack_kv_u64(pk, "self_id", s->self_id);
	np_pack_kv_u64(pk, "n", s->nex);
	np_pack_str(pk, "role");
	msgpack_pack_array(pk, s->nex);
	for (size_t i = 0; i < s->nex; i++)
		np_pack_str(pk, s->ex[i].role ? "server" : "client");
	cs_pack_u64_col(pk, "peer_id", s->ex, s->nex, 4);
	np_pack_str(pk, "peer");
	msgpack_pack_array(pk, s->nex);
	for (size_t i = 0; i < s->nex; i++)
		np_pack_str(pk, s->ex[i].peer < s->npeers ? s->peers[s->ex[i].peer].name : "");
	cs_pack_u64_col(pk, "seq", s->ex, s->nex, 6);
	cs_pack_u64_col(pk, "t1", s->ex, s->nex, 0);
	cs_pack_u64_col(pk, "t2", s->ex, s->nex, 1);
	cs_pack_u64_col(pk, "t3", s->ex, s->nex, 2);
	cs_pack_u64_col(pk, "t4", s->ex, s->nex, 3);
	cs_pack_auth(s, pk);
	uint64_t sent = 0, replies = 0, errors = 0;
	for (unsigned i = 0; i < s->npeers; i++) {
		sent += s->peers[i].sent;
		replies += s->peers[i].replies;
		errors += s->peers[i].errors;
	}
	np_pack_str(pk, "probes");
	msgpack_pack_map(pk, 4);
	np_pack_kv_u64(pk, "sent", sent);
	np_pack_kv_u64(pk, "replies", replies);
	np_pack_kv_u64(pk, "errors", errors);
	np_pack_kv_u64(pk, "answered", s->answered);
	np_pack_kv_u64(pk, "reports", s->reports);
	np_pack_kv_u64(pk, "dropped", s->dropped);
	s->nex = 0;
	return 0;
}

static uint64_t cs_lost(void *state)
{
	return ((struct cs_state *)state)->dropped;
}

static uint64_t cs_events(void *state)
{
	struct cs_state *s = state;
	uint64_t n = s->reports;
	for (unsigned i = 0; i < s->npeers; i++)
		n += s->peers[i].replies;
	return n;
}

static void cs_close(void *state)
{
	struct cs_state *s = state;
	if (!s)
		return;
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	for (unsigned i = 0; i < s->npeers; i++)
		close(s->peers[i].fd);
	cs_key_wipe(&s->key);
	free(s->guard);
	free(s->ex);
	free(s);
}

const struct rec_family rec_family_clocksync = {
	.name = CS_FAMILY,
	.open = cs_open,
	.drain = cs_drain,
	.snapshot = cs_snapshot,
	.lost = cs_lost,
	.events = cs_events,
	.close = cs_close,
};
