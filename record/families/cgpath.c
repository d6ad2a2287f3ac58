#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cgpath.h"
#include "kfs.h"

#define NT_CG_MAX_DEPTH 32

struct nt_cg {
	uint64_t id;
	char *path;
};

struct cgpaths {
	char root[512];
	dev_t dev;
	struct nt_cg *v;
	size_t n, cap;
	bool may_rescan;
};

static void cgpath_clear(struct cgpaths *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	c->n = 0;
}

static int cgpath_add(struct cgpaths *c, uint64_t id, const char *rel)
{
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 256;
		struct nt_cg *nv = realloc(c->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = nc;
	}
	c->v[c->n].path = strdup(rel[0] ? rel : "/");
	if (!c->v[c->n].path)
		return -ENOMEM;
	c->v[c->n++].id = id;
	return 0;
}

/* rel: path below the root, "" for the root itself, else "/a/b". */
static void cgpath_walk(struct cgpaths *c, const char *rel, int depth)
{
	char abs[4096];
	struct stat st;
	snprintf(abs, sizeof(abs), "%s%s", c->root, rel);
	if (stat(abs, &st) < 0)
		return;
	if (depth == 0)
		c->dev = st.st_dev;
	else if (st.st_dev != c->dev)
		return;     /* another mount below: not this hierarchy */
	if (cgpath_add(c, (uint64_t)st.st_ino, rel) < 0)
		return;
	if (depth >= NT_CG_MAX_DEPTH)
		return;
	DIR *d = opendir(abs);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char sub[4096];
		if (snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name) < (int)sizeof(sub))
			cgpath_walk(c, sub, depth + 1);
	}
	closedir(d);
}

static void cgpath_scan(struct cgpaths *c)
{
	cgpath_clear(c);
	cgpath_walk(c, "", 0);
}

int cgpath_open(struct cgpaths **out, const char *root)
{
	struct cgpaths *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (root) {
		snprintf(c->root, sizeof(c->root), "%s", root);
	} else {
		int rc = kfs_find_mount("cgroup2", c->root, sizeof(c->root));
		if (rc < 0) {
			free(c);
			return rc;
		}
	}
	cgpath_scan(c);
	if (c->n == 0) {
		cgpath_free(c);
		return -ENOENT;
	}
	*out = c;
	return 0;
}

void cgpath_new_round(struct cgpaths *c)
{
	if (c)
		c->may_rescan = true;
}

static const char *cgpath_find(const struct cgpaths *c, uint64_t id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].id == id)
			return c->v[i].path;
	return NULL;
}

const char *cgpath_get(struct cgpaths *c, uint64_t id)
{
	if (!c)
		return NULL;
	const char *p = cgpath_find(c, id);
	if (p || !c->may_rescan)
		return p;
	c->may_rescan = false;
	cgpath_scan(c);
	return cgpath_find(c, id);
}

void cgpath_free(struct cgpaths *c)
{
	if (!c)
		return;
	cgpath_clear(c);
	free(c->v);
	free(c);
}
