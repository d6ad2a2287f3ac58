/* See privdrop.h. Raw capset/prctl rather than libcap: five calls on one
 * 64-bit mask, and nprec already speaks to the kernel directly (rc_has_caps);
 * libcap would add a dependency for text conversions we do not need. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>

#include "fsbroker.h"
#include "privdrop.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#define PD_BIT(c) (1ull << (c))

static uint64_t pd_eff, pd_teardown;   /* what the main process kept */

static int pd_capset(uint64_t eff, uint64_t perm)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (uint32_t)eff, .permitted = (uint32_t)perm },
		{ .effective = (uint32_t)(eff >> 32), .permitted = (uint32_t)(perm >> 32) },
	};
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

static void pd_capget(uint64_t *eff, uint64_t *perm)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	syscall(SYS_capget, &h, d);
	*eff = d[0].effective | ((uint64_t)d[1].effective << 32);
	*perm = d[0].permitted | ((uint64_t)d[1].permitted << 32);
}

/* Bounding set, securebits, no_new_privs: nothing dropped can come back,
 * not through setuid(0), not through an exec of a file with capabilities.
 * Needs CAP_SETPCAP, so it runs before the capabilities go. */
static int pd_lock(uint64_t keep)
{
	uint64_t eff, perm;
	pd_capget(&eff, &perm);
	/* a non-root nprec with file capabilities may lack CAP_SETPCAP: then
	 * no_new_privs alone keeps an exec from gaining any */
	for (int c = 0; (eff & PD_BIT(CAP_SETPCAP)) && c < 64 && prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		if (!(keep & PD_BIT(c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
			return -errno;
	if ((eff & PD_BIT(CAP_SETPCAP)) &&
	    prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		  SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
		  SECBIT_KEEP_CAPS_LOCKED, 0, 0, 0) < 0)
		return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

int rec_privdrop_broker(void)
{
	uint64_t keep = PD_BIT(CAP_DAC_OVERRIDE) | PD_BIT(CAP_FOWNER);
	int rc = pd_lock(keep);
	return rc ? rc : pd_capset(keep, keep);
}

/* -Z USER, else "nprec" (a dedicated user, as tcpdump's), else "nobody".
 * 1: stay root (asked for, or no such user by default). */
static int pd_user(const char *want, struct passwd *out, char *buf, size_t blen,
		   char *err, size_t errlen)
{
	static const char *const defaults[] = { "nprec", "nobody", NULL };
	struct passwd *pw = NULL;
	if (want) {
		if (getpwnam_r(want, out, buf, blen, &pw) || !pw) {
			snprintf(err, errlen, "-Z %s: no such user", want);
			return -ENOENT;
		}
		return pw->pw_uid == 0;
	}
	for (int i = 0; defaults[i]; i++)
		if (!getpwnam_r(defaults[i], out, buf, blen, &pw) && pw)
			return pw->pw_uid == 0;
	return 1;
}

/* --nice goes back up to the start priority later: RLIMIT_NICE lets an
 * unprivileged process do that, so CAP_SYS_NICE need not stay. */
static void pd_nice_limit(int base_nice)
{
	int lim = 20 - base_nice;
	struct rlimit rl = { .rlim_cur = (rlim_t)(lim < 1 ? 1 : lim > 40 ? 40 : lim) };
	rl.rlim_max = rl.rlim_cur;
	setrlimit(RLIMIT_NICE, &rl);
}

/* Whether map reads through fds we hold still work without CAP_BPF
 * (kernels >= 6.5 check only map and program creation; older ones with
 * unprivileged BPF disabled refuse every bpf() call). */
static bool pd_maps_need_cap_bpf(int map_fd)
{
	uint32_t k = 0, v;
	return map_fd >= 0 && bpf_map_lookup_elem(map_fd, &k, &v) < 0 && (errno == EPERM || errno == EACCES);
}

static int pd_switch(const struct passwd *pw)
{
	if (setgroups(1, &pw->pw_gid) < 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
		return -errno;
	return 0;
}

static int pd_caps(int probe_fd, uint64_t teardown)
{
	int rc = pd_capset(0, teardown | PD_BIT(CAP_BPF));
	if (rc)
		return rc;
	pd_eff = pd_maps_need_cap_bpf(probe_fd) ? PD_BIT(CAP_BPF) : 0;
	pd_teardown = teardown;
	return pd_capset(pd_eff, pd_eff | teardown);
}

int rec_privdrop_apply(const struct rec_privdrop *req, struct rec_privdrop_result *res,
		       char *err, size_t errlen)
{
	struct passwd pw;
	char buf[4096];
	memset(res, 0, sizeof(*res));
	int rc = pd_user(req->user, &pw, buf, sizeof(buf), err, errlen);
	if (rc)
		return rc;
	/* started as a user with file capabilities: that user stays, only the
	 * capabilities go (its files need no helper) */
	bool root = geteuid() == 0;
	if (!root && !req->user) {
		pw.pw_uid = geteuid();
		pw.pw_gid = getegid();
		pw.pw_name = "(the starting user)";
	}
	pd_nice_limit(req->base_nice);
	const char *files[2] = { req->files[0], req->files[1] };
	if (files[0] && !strcmp(files[0], "-"))
		files[0] = NULL;
	if (!files[0]) {                /* the helper's root is the first directory */
		files[0] = files[1];
		files[1] = NULL;
	}
	if (root && (rc = fsb_start(files, 2, err, errlen)))
		return rc;
	uint64_t teardown = req->tc_teardown ? PD_BIT(CAP_NET_ADMIN) | PD_BIT(CAP_SYS_ADMIN) : 0;
	int probe_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "np_privprobe", 4, 4, 1, NULL);
	const char *step = "lock";
	rc = pd_lock(teardown | PD_BIT(CAP_BPF));
	if (!rc && (root || req->user)) {
		step = "switch user";
		rc = pd_switch(&pw);
	}
	if (!rc) {
		step = "set capabilities";
		rc = pd_caps(probe_fd, teardown);
	}
	if (probe_fd >= 0)
		close(probe_fd);
	if (rc) {
		snprintf(err, errlen, "dropping privileges to %s: %s: %s", pw.pw_name, step, strerror(-rc));
		return rc;
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	res->dropped = true;
	res->switched = root || req->user;
	snprintf(res->user, sizeof(res->user), "%s", pw.pw_name);
	res->uid = pw.pw_uid;
	res->gid = pw.pw_gid;
	pd_capget(&res->caps_eff, &res->caps_perm);
	res->helper_pid = fsb_pid();
	return 0;
}

void rec_privdrop_teardown(void)
{
	if (pd_teardown)
		pd_capset(pd_eff | pd_teardown, pd_eff | pd_teardown);
}
