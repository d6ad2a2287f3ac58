// SPDX-License-Identifier: GPL-2.0
/* See keyfile.h. The file is opened without following a symlink and checked
 * on the opened descriptor, so what is checked is what is read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sodium.h>
#include "keyfile.h"

static int rc_keyfile_check(const char *opt, const char *path, const struct stat *st,
			    char *err, size_t errlen)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s %s: not a regular file", opt, path);
		return -EINVAL;
	}
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		snprintf(err, errlen, "%s %s: owned by uid %u, not by us or root", opt, path,
			 (unsigned)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & 077) {
		snprintf(err, errlen, "%s %s: permissions %04o are too open: the key must "
			 "not be accessible by group or others (chmod 600 %s)", opt, path,
			 (unsigned)(st->st_mode & 07777), path);
		return -EPERM;
	}
	if (st->st_size < RC_KEYFILE_MIN || st->st_size > RC_KEYFILE_MAX) {
		snprintf(err, errlen, "%s %s: %lld bytes; a key file holds %d..%d bytes "
			 "(e.g. head -c 32 /dev/urandom)", opt, path, (long long)st->st_size,
			 RC_KEYFILE_MIN, RC_KEYFILE_MAX);
		return -EINVAL;
	}
	return 0;
}

int rc_keyfile_load(const char *opt, const char *path, uint8_t *key, size_t keylen,
		    char *err, size_t errlen)
{
	uint8_t buf[RC_KEYFILE_MAX];
	struct stat st;
	memset(key, 0, keylen);
	if (sodium_init() < 0) {
		snprintf(err, errlen, "%s: libsodium failed to initialise", opt);
		return -EIO;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s %s: %s", opt, path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	int rc = rc_keyfile_check(opt, path, &st, err, errlen);
	ssize_t n = rc ? 0 : read(fd, buf, sizeof(buf));
	close(fd);
	if (rc)
		return rc;
	if (n < RC_KEYFILE_MIN) {
		snprintf(err, errlen, "%s %s: short read", opt, path);
		return -EIO;
	}
	crypto_generichash(key, keylen, buf, (size_t)n, NULL, 0);
	sodium_memzero(buf, sizeof(buf));
	return 0;
}
