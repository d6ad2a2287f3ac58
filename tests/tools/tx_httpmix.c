/* tx_httpmix: HTTP/1.1 keep-alive client mixing several paths, for the
 * per-endpoint transaction test. Sends K GET requests over C keep-alive
 * connections used round-robin, one request in flight at a time; request i
 * goes on connection i % C with path (i + i / C) % P, so every connection
 * alternates between the paths. Every request is timed from just before
 * write() to the read() that completes the response (Content-Length).
 * With -s N every request is written in two parts, N bytes and the rest,
 * 2 ms apart (a request line split across the server's reads).
 * Prints one line per path with the exact figures it saw:
 *   path=/x requests=N errors=E p50_ns=... p90_ns=... p99_ns=... mean_ns=...
 *   preempted=M lo50_ns=... lo99_ns=...
 * M counts the requests during which this thread was preempted
 * (involuntary context switches, getrusage RUSAGE_THREAD): only those can
 * hold more than a syscall's worth of the client's own time outside the
 * kernel's view (before write(), after read()), with one more that the
 * thread cannot see: the hypervisor taking its vCPU (steal), or a softirq
 * run between read()'s receive hook and the clock read (a fresh-clone CI
 * read /slow's p99 59.6 us under the client's, no preemption counted).
 * loQ_ns is the value M + 1 ranks below the Q rank: a recorder's Q
 * percentile of the same requests, which each lie inside the client's
 * time, is at most pQ_ns and at least loQ_ns (less a syscall's worth).
 * usage: tx_httpmix -h ADDR -p PORT -u PATH[,PATH...] [-n K] [-c C] [-s N] */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "httpload.h"

#define TX_MAXPATHS 8

struct tx_path { char *path; char req[512]; int reqlen; uint64_t *lat; long done, errors, preempted; };

static void tx_print(const struct tx_path *p)
{
	uint64_t *l = p->lat;
	long n = p->done;
	qsort(l, (size_t)n, sizeof(*l), hl_cmp_u64);
	double sum = 0;
	for (long i = 0; i < n; i++)
		sum += (double)l[i];
#define TX_RANK(q) ((long)((q) * (double)(n - 1) + 0.5))
#define TX_PCT(q) (n ? l[TX_RANK(q)] : 0)
#define TX_UNSEEN (p->preempted + 1)
#define TX_LO(q) (n ? l[TX_RANK(q) > TX_UNSEEN ? TX_RANK(q) - TX_UNSEEN : 0] : 0)
	printf("path=%s requests=%ld errors=%ld p50_ns=%llu p90_ns=%llu p99_ns=%llu mean_ns=%.0f "
	       "preempted=%ld lo50_ns=%llu lo99_ns=%llu\n", p->path, n,
	       p->errors, (unsigned long long)TX_PCT(0.50), (unsigned long long)TX_PCT(0.90),
	       (unsigned long long)TX_PCT(0.99), n ? sum / (double)n : 0.0, p->preempted,
	       (unsigned long long)TX_LO(0.50), (unsigned long long)TX_LO(0.99));
}

static int tx_send(int fd, const struct tx_path *q, long split)
{
	if (split <= 0 || split >= q->reqlen)
		return write(fd, q->req, (size_t)q->reqlen) == q->reqlen ? 0 : -1;
	if (write(fd, q->req, (size_t)split) != split)
		return -1;
	struct timespec gap = { 0, 2000000 };
	nanosleep(&gap, NULL);
	return write(fd, q->req + split, (size_t)(q->reqlen - split)) == q->reqlen - split ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1";
	char *paths = NULL;
	int port = 80, opt;
	long k = 100, c = 1, split = 0;
	while ((opt = getopt(argc, argv, "h:p:n:c:u:s:")) != -1) {
		switch (opt) {
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': k = atol(optarg); break;
		case 'c': c = atol(optarg); break;
		case 'u': paths = optarg; break;
		case 's': split = atol(optarg); break;
		default:
			fprintf(stderr, "usage: tx_httpmix -h ADDR -p PORT -u PATH[,PATH...] [-n K] [-c C] [-s N]\n");
			return 2;
		}
	}
	if (!paths || k <= 0 || c <= 0 || c > 1024)
		return 2;
	struct tx_path p[TX_MAXPATHS];
	int np = 0;
	for (char *s = strtok(paths, ","); s && np < TX_MAXPATHS; s = strtok(NULL, ","), np++) {
		p[np].path = s;
		p[np].reqlen = snprintf(p[np].req, sizeof(p[np].req),
					"GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tx_httpmix\r\n\r\n", s, host);
		p[np].lat = calloc((size_t)k, sizeof(uint64_t));
		p[np].done = p[np].errors = p[np].preempted = 0;
		if (!p[np].lat)
			return 1;
	}
	int *fds = calloc((size_t)c, sizeof(int));
	size_t bufsz = 1 << 20;
	char *buf = malloc(bufsz);
	if (!np || !fds || !buf)
		return 1;
	for (long i = 0; i < c; i++)
		if ((fds[i] = hl_connect(host, port)) < 0) {
			fprintf(stderr, "tx_httpmix: connect %s:%d: %s\n", host, port, strerror(errno));
			return 1;
		}
	long errors = 0;
	for (long i = 0; i < k; i++) {
		int fd = fds[i % c];
		struct tx_path *q = &p[(i + i / c) % np];
		struct rusage r0, r1;
		getrusage(RUSAGE_THREAD, &r0);
		uint64_t t0 = hl_now_ns();
		if (tx_send(fd, q, split) < 0 || hl_read_response(fd, buf, bufsz) < 0) {
			q->errors++;
			errors++;
			continue;
		}
		q->lat[q->done++] = hl_now_ns() - t0;
		getrusage(RUSAGE_THREAD, &r1);
		q->preempted += r1.ru_nivcsw != r0.ru_nivcsw;
	}
	for (long i = 0; i < c; i++)
		close(fds[i]);
	for (int i = 0; i < np; i++) {
		tx_print(&p[i]);
		free(p[i].lat);
	}
	free(fds);
	free(buf);
	return errors ? 1 : 0;
}
