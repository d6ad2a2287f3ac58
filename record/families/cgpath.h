/* cgroup v2 id -> path. A cgroup's id (bpf_get_current_cgroup_id) is the
 * inode number of its directory under the cgroup2 mount, so walking the
 * mount once maps every id; an unknown id triggers one rescan per
 * snapshot (new containers), not one per lookup. */
#ifndef NP_REC_CGPATH_H
#define NP_REC_CGPATH_H

#include <stdint.h>

struct cgpaths;

/* root: the cgroup2 mount, NULL = find it in /proc/self/mountinfo.
 * 0 or -errno (-ENOENT: no cgroup2 mount). */
int cgpath_open(struct cgpaths **out, const char *root);
/* Allows one rescan during the following lookups (call once per snapshot). */
void cgpath_new_round(struct cgpaths *c);
/* Path relative to the mount ("/" for the root, "/system.slice/x.service"),
 * or NULL when unknown even after a rescan. */
const char *cgpath_get(struct cgpaths *c, uint64_t id);
void cgpath_free(struct cgpaths *c);

#endif
