/* What the HTTP load clients of the transaction tests (rc_httpc,
 * tx_httpmix) share: their clock, a TCP_NODELAY connection, and reading
 * one Content-Length response, the point at which a request is complete
 * by the client's own clock. */
#ifndef NP_TOOLS_HTTPLOAD_H
#define NP_TOOLS_HTTPLOAD_H
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t hl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int hl_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static inline int hl_connect(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One response (headers + Content-Length body): 0 ok, -1 error. Only a
 * 200 counts: only successful requests are ground truth. */
static inline int hl_read_response(int fd, char *buf, size_t size)
{
	size_t have = 0, hdr_end = 0;
	long body = -1;
	for (;;) {
		ssize_t n = read(fd, buf + have, size - have - 1);
		if (n <= 0)
			return -1;
		have += (size_t)n;
		buf[have] = 0;
		if (!hdr_end) {
			char *e = strstr(buf, "\r\n\r\n");
			if (!e)
				continue;
			hdr_end = (size_t)(e - buf) + 4;
			if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0)
				return -1;
			char *cl = strcasestr(buf, "\r\nContent-Length:");
			if (!cl || cl > e)
				return -1;
			body = strtol(cl + 17, NULL, 10);
			if (body < 0 || hdr_end + (size_t)body >= size)
				return -1;
		}
		if (have >= hdr_end + (size_t)body)
			return have == hdr_end + (size_t)body ? 0 : -1;
	}
}

#endif
