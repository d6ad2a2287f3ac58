/* Maps families share, by name (family.h): the registry that replaced
 * family.h's netcpu-only fields. */
#include <errno.h>
#include <string.h>
#include "family.h"

int rec_shared_map_put(struct rec_ctx *ctx, const char *name, int fd)
{
	if (ctx->nshared_maps == REC_SHARED_MAPS)
		return -ENOSPC;
	ctx->shared_maps[ctx->nshared_maps++] = (struct rec_shared_map){ .name = name, .fd = fd };
	return 0;
}

int rec_shared_map_get(const struct rec_ctx *ctx, const char *name)
{
	for (unsigned i = 0; i < ctx->nshared_maps; i++)
		if (!strcmp(ctx->shared_maps[i].name, name))
			return ctx->shared_maps[i].fd;
	return -1;
}
