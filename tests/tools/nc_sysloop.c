/* nc_sysloop N: CPU cost of syscalls as the recorder's hooks see them.
 * Times (thread CPU clock) N getppid() calls (not a socket op: only the
 * syscall filter runs) and N 1-byte write()+read() pairs on a UNIX
 * socketpair (socket ops: fd lookup + op clock). Prints ns per call. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>

static double nc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int sv[2];
	char c = 'x';
	if (n <= 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		fprintf(stderr, "usage: nc_sysloop N\n");
		return 2;
	}
	double t0 = nc_now();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	double t1 = nc_now();
	for (long i = 0; i < n; i++)
		if (write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1)
			return 1;
	double t2 = nc_now();
	printf("getppid_ns=%.1f sockpair_rw_ns=%.1f\n", (t1 - t0) / n, (t2 - t1) / n / 2);
	return 0;
}
