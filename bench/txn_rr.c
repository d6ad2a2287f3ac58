/* Request/response rounds for bench/txn_callcost.sh and bench/txn_nspair.sh:
 *   txn_rr ROUNDS SWEEP_KIB NCONN RESP NETNS_PATH [NETNS_PATH2]
 * NCONN loopback TCP connections in each namespace; every round a
 * SWEEP_KIB KiB memory walk (cold caches), then, timed: a 100 B request
 * sent and received, a RESP-byte response sent and received (four socket
 * calls, both transaction roles). With two namespaces the rounds
 * alternate between them (ROUNDS in all). Prints the median round time
 * (ns) per namespace. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

static long long now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int full(int fd, char *b, int n)
{
	for (int got = 0, r; got < n; got += r)
		if ((r = recv(fd, b + got, n - got, 0)) <= 0)
			return -1;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* nc connected pairs on loopback in the namespace at path */
static int pairs(const char *path, int nc, int *c, int *s)
{
	int one = 1, fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		return -1;
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (bind(ls, (void *)&a, sizeof(a)) || listen(ls, 256) || getsockname(ls, (void *)&a, &al))
		return -1;
	for (int i = 0; i < nc; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(c[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(c[i], (void *)&a, sizeof(a)) || (s[i] = accept(ls, NULL, NULL)) < 0)
			return -1;
		setsockopt(s[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 6)
		return 1;
	int nns = argc > 6 ? 2 : 1;
	int n = atoi(argv[1]) / nns, sweep = atoi(argv[2]) * 1024, nc = atoi(argv[3]), resp = atoi(argv[4]);
	static int c[2][256], s[2][256];
	static char req[100], out[65536], in[65536];
	if (n < 1 || nc < 1 || nc > 256 || resp < 1 || resp > 65536)
		return 1;
	for (int w = 0; w < nns; w++)
		if (pairs(argv[5 + w], nc, c[w], s[w]))
			return 1;
	volatile char *buf = calloc(1, (size_t)sweep + 64);
	long long *t[2] = { calloc(n, sizeof(long long)), calloc(n, sizeof(long long)) };
	for (int r = 0; r < nns * n; r++) {
		for (int k = 0; k < sweep; k += 64)
			buf[k]++;
		int w = r % nns, i = (r / nns) % nc;
		long long t0 = now();
		if (send(c[w][i], req, sizeof(req), 0) != sizeof(req) || full(s[w][i], in, sizeof(req)) ||
		    send(s[w][i], out, resp, 0) != resp || full(c[w][i], in, resp))
			return 2;
		t[w][r / nns] = now() - t0;
	}
	for (int w = 0; w < nns; w++) {
		qsort(t[w], n, sizeof(long long), cmp);
		printf(w ? " %lld" : "%lld", t[w][n / 2]);
	}
	printf("\n");
	return 0;
}
