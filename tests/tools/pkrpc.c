/* Ping-pong RPC load for the stackmon tests: one TCP connection, fixed
 * request and response sizes, a bounded number of calls or a time limit.
 *   pkrpc server PORT RESP_BYTES
 *   pkrpc client HOST PORT REQ_BYTES RESP_BYTES SECONDS [GAP_US]
 * The server answers every REQ_BYTES-sized request (it learns the size from
 * a 4-byte header) with RESP_BYTES; the client sends header and body in one
 * write, waits GAP_US between calls, and prints calls and p50/p99 in
 * microseconds. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 20];

static int rpc_full(int fd, void *p, size_t n, int wr)
{
	size_t d = 0;
	while (d < n) {
		ssize_t r = wr ? write(fd, (char *)p + d, n - d) : read(fd, (char *)p + d, n - d);
		if (r <= 0)
			return -1;
		d += (size_t)r;
	}
	return 0;
}

static uint64_t rpc_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec;
}

static int rpc_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int rpc_server(int port, size_t resp)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (void *)&a, sizeof(a)) || listen(ls, 4))
		return perror("pkrpc: bind"), 1;
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			continue;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		uint32_t len;
		while (rpc_full(c, &len, 4, 0) == 0) {
			len = ntohl(len);
			if (len > sizeof(buf) || rpc_full(c, buf, len, 0) || rpc_full(c, buf, resp, 1))
				break;
		}
		close(c);
	}
}

static int rpc_client(const char *host, const char *port, size_t req, size_t resp, double secs,
		      long gap_us)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai;
	if (getaddrinfo(host, port, &h, &ai))
		return fprintf(stderr, "pkrpc: cannot resolve %s\n", host), 1;
	int fd = socket(ai->ai_family, SOCK_STREAM, 0), one = 1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen))
		return perror("pkrpc: connect"), 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	size_t cap = 1 << 20, n = 0;
	uint64_t *lat = malloc(cap * sizeof(*lat)), end = rpc_now() + (uint64_t)(secs * 1e9);
	if (req + 4 > sizeof(buf) || resp > sizeof(buf))
		return fprintf(stderr, "pkrpc: sizes up to %zu bytes\n", sizeof(buf) - 4), 1;
	static char out[sizeof(buf)];
	uint32_t len = htonl((uint32_t)req);
	memcpy(out, &len, 4);
	struct timespec gap = { .tv_sec = gap_us / 1000000, .tv_nsec = (gap_us % 1000000) * 1000 };
	while (rpc_now() < end && n < cap) {
		uint64_t t0 = rpc_now();
		if (rpc_full(fd, out, req + 4, 1) || rpc_full(fd, buf, resp, 0))
			return fprintf(stderr, "pkrpc: connection lost\n"), 1;
		lat[n++] = rpc_now() - t0;
		if (gap_us > 0)
			nanosleep(&gap, NULL);
	}
	qsort(lat, n, sizeof(*lat), rpc_cmp);
	printf("calls=%zu\np50_us=%.1f\np99_us=%.1f\n", n, n ? lat[n / 2] / 1e3 : 0,
	       n ? lat[(size_t)(n * 0.99)] / 1e3 : 0);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "server"))
		return rpc_server(atoi(argv[2]), (size_t)atol(argv[3]));
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "client"))
		return rpc_client(argv[2], argv[3], (size_t)atol(argv[4]), (size_t)atol(argv[5]),
				  atof(argv[6]), argc == 8 ? atol(argv[7]) : 0);
	fprintf(stderr, "usage: pkrpc server PORT RESP | client HOST PORT REQ RESP SECONDS [GAP_US]\n");
	return 2;
}
