/* See fsbroker.h. One request at a time, synchronous: a rotation or a dump
 * costs one round trip to the helper, microseconds against the file write. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "fsbroker.h"
#include "privdrop.h"

enum fsb_op { FSB_OPEN = 1, FSB_UNLINK = 2, FSB_STAT = 3 };

struct fsb_req {
	int op;
	char name[NAME_MAX + 1];
};

struct fsb_rep {
	int rc;                 /* 0 or -errno */
	struct stat st;
};

static int fsb_sock = -1;
static pid_t fsb_child;

int fsb_pid(void)
{
	return fsb_child;
}

static int fsb_do_open(const char *name, int extra_flags)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | extra_flags, 0600);
	if (fd < 0)
		return -errno;
	/* an existing file keeps its mode under O_CREAT: force 0600 */
	if (fchmod(fd, 0600) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static void fsb_reply(int sock, struct fsb_rep *rep, int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = rep, .iov_len = sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		mh.msg_control = ctl;
		mh.msg_controllen = sizeof(ctl);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	(void)!sendmsg(sock, &mh, MSG_NOSIGNAL);
}

/* A plain name in the jail: never a path, never the directory itself. */
static bool fsb_name_ok(const char *n)
{
	return n[0] && !strchr(n, '/') && strcmp(n, ".") && strcmp(n, "..");
}

static void fsb_serve(int sock)
{
	struct fsb_req req;
	for (;;) {
		ssize_t n = recv(sock, &req, sizeof(req), 0);
		if (n <= 0)
			_exit(0);       /* nprec closed its end or is gone */
		struct fsb_rep rep = { .rc = -EINVAL };
		int fd = -1;
		req.name[NAME_MAX] = 0;
		if (n == (ssize_t)sizeof(req) && fsb_name_ok(req.name)) {
			switch (req.op) {
			case FSB_OPEN:   fd = fsb_do_open(req.name, O_NOFOLLOW); rep.rc = fd < 0 ? fd : 0; break;
			case FSB_UNLINK: rep.rc = unlink(req.name) < 0 ? -errno : 0; break;
			case FSB_STAT:   rep.rc = stat(req.name, &rep.st) < 0 ? -errno : 0; break;
			}
		}
		fsb_reply(sock, &rep, fd);
		if (fd >= 0)
			close(fd);
	}
}

/* In the child: only the socket stays open, signals meant for nprec's
 * process group (Ctrl-C) leave it alive until nprec's last dump is written;
 * it dies with nprec. */
static void fsb_child_main(int sock, const char *dir)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE };
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_IGN);
	if (dup2(sock, 3) < 0)
		_exit(1);
	close_range(4, ~0u, 0);
	if (chdir(dir) < 0 || chroot(".") < 0 || chdir("/") < 0)
		_exit(1);
	if (rec_privdrop_broker() < 0)
		_exit(1);
	fsb_serve(3);
}

static void fsb_dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == path)
		snprintf(dir, size, "/");
	else
		snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

int fsb_start(const char *path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	int sv[2];
	fsb_dir_of(path, dir, sizeof(dir));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "file helper: socketpair: %s", strerror(errno));
		return -errno;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		snprintf(err, errlen, "file helper: fork: %s", strerror(-e));
		close(sv[0]); close(sv[1]);
		return e;
	}
	if (pid == 0)
		fsb_child_main(sv[1], dir);
	close(sv[1]);
	/* did it get into its jail? one stat of the directory answers */
	fsb_sock = sv[0];
	fsb_child = pid;
	struct stat st;
	if (fsb_stat(".", &st) != -EINVAL) {
		snprintf(err, errlen, "file helper for %s did not start", dir);
		close(fsb_sock);
		fsb_sock = -1;
		waitpid(pid, NULL, 0);
		fsb_child = 0;
		return -ECHILD;
	}
	return 0;
}

static int fsb_call(int op, const char *path, struct stat *st, int *fd)
{
	struct fsb_req req = { .op = op };
	const char *slash = strrchr(path, '/');
	snprintf(req.name, sizeof(req.name), "%s", slash ? slash + 1 : path);
	if (send(fsb_sock, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		return -EPIPE;
	struct fsb_rep rep;
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &rep, .iov_len = sizeof(rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	if (recvmsg(fsb_sock, &mh, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(rep))
		return -EPIPE;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && fd)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (st)
		*st = rep.st;
	return rep.rc;
}

int fsb_open(const char *path)
{
	if (fsb_sock < 0)
		return fsb_do_open(path, 0);
	int fd = -1;
	int rc = fsb_call(FSB_OPEN, path, NULL, &fd);
	return rc < 0 ? rc : fd < 0 ? -EBADF : fd;
}

int fsb_unlink(const char *path)
{
	if (fsb_sock < 0)
		return unlink(path) < 0 ? -errno : 0;
	return fsb_call(FSB_UNLINK, path, NULL, NULL);
}

int fsb_stat(const char *path, struct stat *st)
{
	if (fsb_sock < 0)
		return stat(path, st) < 0 ? -errno : 0;
	return fsb_call(FSB_STAT, path, st, NULL);
}
