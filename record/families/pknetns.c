/* See pknetns.h. setns() switches only the calling thread, so callers must
 * not block between enter and leave. */
#include "pknetns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <net/if.h>

int pk_netns_enter(int netns_fd, int *saved)
{
	*saved = -1;
	if (netns_fd < 0)
		return 0;
	int cur = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	if (setns(netns_fd, CLONE_NEWNET) < 0) {
		int e = -errno;
		close(cur);
		return e;
	}
	*saved = cur;
	return 0;
}

int pk_netns_leave(int saved)
{
	if (saved < 0)
		return 0;
	int rc = setns(saved, CLONE_NEWNET) < 0 ? -errno : 0;
	close(saved);
	return rc;
}

unsigned pk_netns_ifindex(int netns_fd, const char *iface)
{
	int saved;
	if (pk_netns_enter(netns_fd, &saved) < 0)
		return 0;
	unsigned idx = if_nametoindex(iface);
	pk_netns_leave(saved);
	return idx;
}
