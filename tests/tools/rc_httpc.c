/* rc_httpc: a plain HTTP/1.1 load client for the transaction tests. Sends
 * K GET requests over C keep-alive connections (one request in flight per
 * connection, connections used round-robin), measures every request from
 * just before write() to the read() that completes the response
 * (Content-Length), and prints the exact percentiles it saw and the time
 * from its first request's start (before write()) to its last one's:
 *   requests=K errors=E p50_ns=... p90_ns=... p99_ns=... mean_ns=... start_span_ns=...
 *   start_span_min_ns=... start_span_max_ns=...
 * The kernel sends a request between the clock reads before and after its
 * write(): the span between the first and the last send is within
 * [last's before - first's after, last's after - first's before], however
 * long this process was descheduled around either write.
 * With -l FILE it also writes one latency (ns) per line.
 * usage: rc_httpc -h ADDR -p PORT [-n K] [-c C] [-u PATH] [-l FILE] */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "httpload.h"

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1", *path = "/", *logf = NULL;
	int port = 80, opt;
	long k = 100, c = 1;
	while ((opt = getopt(argc, argv, "h:p:n:c:u:l:")) != -1) {
		switch (opt) {
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': k = atol(optarg); break;
		case 'c': c = atol(optarg); break;
		case 'u': path = optarg; break;
		case 'l': logf = optarg; break;
		default:
			fprintf(stderr, "usage: rc_httpc -h ADDR -p PORT [-n K] [-c C] [-u PATH] [-l FILE]\n");
			return 2;
		}
	}
	if (k <= 0 || c <= 0 || c > 1024)
		return 2;
	int *fds = calloc((size_t)c, sizeof(int));
	uint64_t *lat = calloc((size_t)k, sizeof(uint64_t));
	size_t bufsz = 1 << 20;
	char *buf = malloc(bufsz), req[512];
	if (!fds || !lat || !buf)
		return 1;
	for (long i = 0; i < c; i++)
		if ((fds[i] = hl_connect(host, port)) < 0) {
			fprintf(stderr, "rc_httpc: connect %s:%d: %s\n", host, port, strerror(errno));
			return 1;
		}
	int rl = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: rc_httpc\r\n\r\n", path, host);
	long errors = 0, done = 0;
	uint64_t first = 0, last = 0;      /* starts of the first and last completed request */
	uint64_t first_out = 0, last_out = 0;  /* ... and when their write() returned */
	for (long i = 0; i < k; i++) {
		int fd = fds[i % c];
		uint64_t t0 = hl_now_ns();
		if (write(fd, req, (size_t)rl) != rl) {
			errors++;
			continue;
		}
		uint64_t t_out = hl_now_ns();
		if (hl_read_response(fd, buf, bufsz) < 0) {
			errors++;
			continue;
		}
		lat[done++] = hl_now_ns() - t0;
		if (!first) {
			first = t0;
			first_out = t_out;
		}
		last = t0;
		last_out = t_out;
	}
	for (long i = 0; i < c; i++)
		close(fds[i]);
	if (logf) {
		FILE *f = fopen(logf, "w");
		for (long i = 0; f && i < done; i++)
			fprintf(f, "%llu\n", (unsigned long long)lat[i]);
		if (f) fclose(f);
	}
	qsort(lat, (size_t)done, sizeof(uint64_t), hl_cmp_u64);
	double sum = 0;
	for (long i = 0; i < done; i++)
		sum += (double)lat[i];
#define PCT(q) (done ? lat[(size_t)((q) * (double)(done - 1) + 0.5)] : 0)
	uint64_t span_min = last > first_out ? last - first_out : 0;
	printf("requests=%ld errors=%ld p50_ns=%llu p90_ns=%llu p99_ns=%llu mean_ns=%.0f start_span_ns=%llu"
	       " start_span_min_ns=%llu start_span_max_ns=%llu\n",
	       done, errors, (unsigned long long)PCT(0.50), (unsigned long long)PCT(0.90),
	       (unsigned long long)PCT(0.99), done ? sum / (double)done : 0.0, (unsigned long long)(last - first),
	       (unsigned long long)span_min, (unsigned long long)(last_out - first));
	free(fds); free(lat); free(buf);
	return errors ? 1 : 0;
}
