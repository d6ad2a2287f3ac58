/* Recorder unit tests of kernel symbols (rtest_ksyms, rtest_netrxstrip): a
 * kallsyms text of made-up addresses (A(offset) in the kernel text) written
 * to a temporary file and loaded. */
#ifndef NP_KSYMFIX_H
#define NP_KSYMFIX_H
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ksyms.h"
#include "tap.h"

#define A(x) (0xffffffff81000000ull + (x))

/* text in a new temporary file: its path (one of two buffers, used in
 * turn), NULL when it cannot be written. */
static inline char *ksymfix_write(const char *text)
{
	static char path[2][64];
	static int k;
	char *p = path[k++ & 1];
	snprintf(p, 64, "/tmp/np_kallsyms.XXXXXX");
	int fd = mkstemp(p);
	if (fd < 0)
		return NULL;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? p : NULL;
}

/* text written (*path, for the caller to unlink; NULL after a failed
 * CHECK) and loaded into *k (a second CHECK): ksyms_load's result. */
static inline int ksymfix_load(const char *text, char **path, struct ksyms **k)
{
	*k = NULL;
	*path = ksymfix_write(text);
	CHECK(*path != NULL, "tmp file");
	if (!*path)
		return -1;
	int rc = ksyms_load(k, *path);
	CHECK(rc == 0, "load: %d", rc);
	return rc;
}
#endif
