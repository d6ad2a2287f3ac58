// SPDX-License-Identifier: GPL-2.0
/* npreport's tables, plots and HTML hold the addresses, paths and process
 * names of the recordings they come from, which nprec and npanalyze write
 * 0600 (np_open_private): the report must not leak them to the group or
 * the world through a 022 umask. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "outfile.h"
#include "../common/container.h"

FILE *rpt_create(const char *path)
{
	int fd = np_open_private(AT_FDCWD, path, 0);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}
