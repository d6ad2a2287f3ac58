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

#include "container.h"
#include "fsbroker.h"
#include "privdrop.h"

enum fsb_op { FSB_OPEN = 1, FSB_UNLINK = 2, FSB_STAT = 3 };

struct fsb_req {
	int op;
	unsigned dir;           /* index into the directories given to fsb_start */
	char name[NAME_MAX + 1];
};

struct fsb_rep {
	int rc;                 /* 0 or -errno */
	struct stat st;
};

static int fsb_sock = -1;
static pid_t fsb_child;
static char fsb_dirs[FSB_MAX_DIRS][PATH_MAX];   /* as the main process names them */
static unsigned fsb_ndirs;

int fsb_pid(void)
{
	return fsb_child;
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

/* dirfds[0] is the jail's root; the others were opened before the chroot. */
static void fsb_serve(int sock, const int *dirfds, unsigned ndirs)
{
	struct fsb_req req;
	for (;;) {
		ssize_t n = recv(sock, &req, sizeof(req), 0);
		if (n <= 0)
			_exit(0);       /* nprec closed its end or is gone */
		struct fsb_rep rep = { .rc = -EINVAL };
		int fd = -1;
		req.name[NAME_MAX] = 0;
		if (n == (ssize_t)sizeof(req) && req.dir < ndirs && fsb_name_ok(req.name)) {
			int d = dirfds[req.dir];
			switch (req.op) {
			case FSB_OPEN:
				fd = np_open_private(d, req.name, O_NOFOLLOW);
				rep.rc = fd < 0 ? fd : 0;
				break;
			case FSB_UNLINK: rep.rc = unlinkat(d, req.name, 0) < 0 ? -errno : 0; break;
			case FSB_STAT:   rep.rc = fstatat(d, req.name, &rep.st, 0) < 0 ? -errno : 0; break;
			}
		}
		fsb_reply(sock, &rep, fd);
		if (fd >= 0)
			close(fd);
	}
}

/* In the child: only the socket and the directories stay open, signals
 * meant for nprec's process group (Ctrl-C) leave it alive until nprec's
 * last dump is written; it dies with nprec. Its root is the first
 * directory (the output's). */
static void fsb_child_main(int sock)
{
	int dirfds[FSB_MAX_DIRS];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE };
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_IGN);
	if (dup2(sock, 3) < 0)
		_exit(1);
	for (unsigned i = 0; i < fsb_ndirs; i++)
		if (dup2(open(fsb_dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC), 4 + (int)i) < 0)
			_exit(1);
	close_range(4 + fsb_ndirs, ~0u, 0);
	if (fchdir(4) < 0 || chroot(".") < 0 || chdir("/") < 0)
		_exit(1);
	if (rec_privdrop_broker() < 0)
		_exit(1);
	for (unsigned i = 0; i < fsb_ndirs; i++)
		dirfds[i] = 4 + (int)i;
	fsb_serve(3, dirfds, fsb_ndirs);
}

void fsb_dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == path)
		snprintf(dir, size, "/");
	else
		snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

static int fsb_request(struct fsb_req *req, struct stat *st, int *fd)
{
	if (send(fsb_sock, req, sizeof(*req), MSG_NOSIGNAL) != (ssize_t)sizeof(*req))
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

static void fsb_add_dir(const char *path)
{
	char dir[PATH_MAX];
	fsb_dir_of(path, dir, sizeof(dir));
	for (unsigned i = 0; i < fsb_ndirs; i++)
		if (!strcmp(fsb_dirs[i], dir))
			return;
	if (fsb_ndirs < FSB_MAX_DIRS)
		snprintf(fsb_dirs[fsb_ndirs++], PATH_MAX, "%s", dir);
}

int fsb_start(const char *const *paths, unsigned npaths, char *err, size_t errlen)
{
	int sv[2];
	for (unsigned i = 0; i < npaths; i++)
		if (paths[i])
			fsb_add_dir(paths[i]);
	if (!fsb_ndirs)
		return 0;
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
		fsb_child_main(sv[1]);
	close(sv[1]);
	fsb_sock = sv[0];
	fsb_child = pid;
	/* did it get into its jail? once it serves, it refuses "." */
	struct fsb_req probe = { .op = FSB_STAT, .name = "." };
	if (fsb_request(&probe, NULL, NULL) != -EINVAL) {
		snprintf(err, errlen, "file helper for %s did not start", fsb_dirs[0]);
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
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	fsb_dir_of(path, dir, sizeof(dir));
	while (req.dir < fsb_ndirs && strcmp(fsb_dirs[req.dir], dir))
		req.dir++;
	if (req.dir == fsb_ndirs)
		return -EXDEV;          /* not a directory the helper was given */
	snprintf(req.name, sizeof(req.name), "%s", slash ? slash + 1 : path);
	return fsb_request(&req, st, fd);
}

int fsb_open(const char *path)
{
	if (fsb_sock < 0)
		return np_open_private(AT_FDCWD, path, 0);
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
