#!/bin/bash
# What reading TCP sockets' own counters once an interval would cost
# (issue 24: flows' TCP accounting from tcp_sock instead of per call,
# /work/notes/j27d.md). NCONN loopback connections (2 x NCONN sockets) in
# a namespace of this script's own; two BPF iterators, each reading
# bytes_acked/received, segs_in/out, total_retrans, srtt, cwnd:
#   iter/tcp                 every TCP socket of the reader's namespace
#                            (it also gives each one socket storage);
#   iter/bpf_sk_storage_map  only the sockets with that storage, any namespace.
# Prints ms per read and ns per socket, REPS reads each.
# Usage: bash bench/flows_iterprobe.sh   Env: NCONN (5000), REPS (5), NS (flowsit<pid>).
# Needs root, clang, bpftool, libbpf-dev and the build's vmlinux.h (make).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${NP_BUILD:-$ROOT/build}
NS=${NS:-flowsit$$} TMP=$(mktemp -d /tmp/np-flowsit.XXXXXX)
PY=""
cleanup() {
	[ -n "$PY" ] && kill "$PY" 2>/dev/null
	wait 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ -r "$B/vmlinux.h" ] || { echo "flows_iterprobe: $B/vmlinux.h missing (make first)" >&2; exit 2; }
cat > "$TMP/it.bpf.c" <<'BPF'
// SPDX-License-Identifier: GPL-2.0
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
char LICENSE[] SEC("license") = "GPL";
struct v { __u64 acked, rcvd; __u32 in, out, rt, srtt, cwnd, pad; };
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct v);
} st SEC(".maps");
__u64 nsk;
static void fill(struct v *v, const struct tcp_sock *tp)
{
	v->acked = tp->bytes_acked; v->rcvd = tp->bytes_received;
	v->in = tp->segs_in; v->out = tp->segs_out; v->rt = tp->total_retrans;
	v->srtt = tp->srtt_us >> 3; v->cwnd = tp->snd_cwnd;
}
SEC("iter/tcp")
int all_tcp(struct bpf_iter__tcp *ctx)
{
	/* one load of the pointer: the verifier tracks the NULL test on it */
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp = skc ? bpf_skc_to_tcp_sock(skc) : NULL;
	struct v *v = tp ? bpf_sk_storage_get(&st, tp, 0, BPF_SK_STORAGE_GET_F_CREATE) : NULL;
	if (v) {
		fill(v, tp);
		nsk++;
	}
	return 0;
}
SEC("iter/bpf_sk_storage_map")
int stored(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct sock *sk = ctx->sk;
	struct tcp_sock *tp = sk ? bpf_skc_to_tcp_sock(sk) : NULL;
	struct v *v = ctx->value;
	if (tp && v) {
		fill(v, tp);
		nsk++;
	}
	return 0;
}
BPF
cat > "$TMP/run.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "it.skel.h"
static double ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
/* one full read of the iterator: ms */
static double one(struct bpf_link *l)
{
	char b[64];
	double t0 = ms();
	int fd = bpf_iter_create(bpf_link__fd(l));
	while (fd >= 0 && read(fd, b, sizeof(b)) > 0)
		;
	close(fd);
	return ms() - t0;
}
static void reps(const char *what, struct it_bpf *s, struct bpf_link *l, int n)
{
	for (int i = 0; i < n; i++) {
		s->bss->nsk = 0;
		double t = one(l);
		unsigned long long k = s->bss->nsk;
		printf("%-24s %6llu sockets %8.3f ms %6.0f ns/socket\n", what, k, t, k ? t * 1e6 / k : 0);
	}
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	struct it_bpf *s = it_bpf__open_and_load();
	if (!s)
		return fprintf(stderr, "flows_iterprobe: load failed\n"), 1;
	union bpf_iter_link_info li = { .map.map_fd = bpf_map__fd(s->maps.st) };
	LIBBPF_OPTS(bpf_iter_attach_opts, o, .link_info = &li, .link_info_len = sizeof(li));
	struct bpf_link *a = bpf_program__attach_iter(s->progs.all_tcp, NULL);
	struct bpf_link *b = bpf_program__attach_iter(s->progs.stored, &o);
	if (!a || !b)
		return fprintf(stderr, "flows_iterprobe: attach failed\n"), 1;
	reps("iter/tcp", s, a, n);
	reps("iter/bpf_sk_storage_map", s, b, n);
	return 0;
}
C
cat > "$TMP/conns.py" <<'PYS'
import socket, sys, time
n = int(sys.argv[1])
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(4096)
keep = []
for _ in range(n):
    c = socket.create_connection(ls.getsockname()); s, _ = ls.accept(); keep += [c, s]
    c.sendall(b"x"); s.recv(1)
print("ready", flush=True)
time.sleep(600)
PYS
clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -mcpu=v3 -I"$B" -c "$TMP/it.bpf.c" -o "$TMP/it.bpf.o"
bpftool gen skeleton "$TMP/it.bpf.o" > "$TMP/it.skel.h"
cc -O2 -I"$TMP" -o "$TMP/run" "$TMP/run.c" -lbpf -lelf
ip netns add "$NS"
ip -n "$NS" link set lo up
ip netns exec "$NS" python3 "$TMP/conns.py" "${NCONN:-5000}" > "$TMP/conns.out" & PY=$!
for _ in $(seq 600); do grep -q ready "$TMP/conns.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$TMP/conns.out" || { echo "flows_iterprobe: connections not up" >&2; exit 1; }
echo "flows_iterprobe: $((2 * ${NCONN:-5000})) sockets (+1 listening) in $NS; load $(cut -d' ' -f1-3 /proc/loadavg)"
ip netns exec "$NS" "$TMP/run" "${REPS:-5}"
