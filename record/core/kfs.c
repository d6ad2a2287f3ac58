/* See kfs.h. perf and bpftrace mount tracefs themselves when it is missing;
 * nprec does the same, but in a mount namespace of its own so that nothing
 * of it stays on the host. */
#include "kfs.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "npmsg.h"

/* libbpf's tracefs_path(): the debugfs copy when that path exists */
#define KFS_TRACING_DEBUG "/sys/kernel/debug/tracing"
#define KFS_TRACING       "/sys/kernel/tracing"

/* header key and /proc/filesystems name of each */
static const char *const kfs_keys[KFS_NFS]   = { "tracefs", "cgroup2", "debugfs", "bpffs" };
static const char *const kfs_fstype[KFS_NFS] = { "tracefs", "cgroup2", "debugfs", "bpf" };

const char *kfs_fs_name(enum kfs_fs fs)
{
	return fs < KFS_NFS ? kfs_keys[fs] : "?";
}

const char *kfs_state_name(enum kfs_state st)
{
	switch (st) {
	case KFS_PRESENT:     return "present";
	case KFS_MOUNTED:     return "mounted";
	case KFS_NO_PRIV:     return "no-privilege";
	case KFS_UNSUPPORTED: return "unsupported";
	case KFS_FAILED:      return "failed";
	case KFS_ABSENT:      return "absent";
	}
	return "unknown";
}

static const char *kfs_perf_name(enum kfs_perf p)
{
	switch (p) {
	case KFS_PERF_ALLOWED: return "allowed";
	case KFS_PERF_BLOCKED: return "blocked";
	case KFS_PERF_UNKNOWN: return "unknown";
	}
	return "unknown";
}

/* /proc/filesystems lists it ("nodev\ttracefs"). Unreadable: assume yes
 * and let mount() tell. */
static bool kfs_kernel_has(const char *fstype)
{
	const char *alt = getenv("NPREC_TEST_FILESYSTEMS");
	FILE *f = fopen(alt ? alt : "/proc/filesystems", "r");
	char line[128];
	bool found = false;
	if (!f)
		return true;
	while (!found && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, '\t');
		name = name ? name + 1 : line;
		name[strcspn(name, "\n")] = 0;
		found = strcmp(name, fstype) == 0;
	}
	fclose(f);
	return found;
}

static bool kfs_statfs_is(const char *path, unsigned long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == magic;
}

/* Mount-info lines: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - TYPE SRC OPTS".
 * A mount of the filesystem's root is preferred over a bind mount of a
 * subtree (containers bind cgroup subtrees). */
int kfs_find_mount(const char *fstype, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[1024];
	int rc = -ENOENT;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char root[512], mnt[512], type[64];
		const char *sep = strstr(line, " - ");
		if (!sep || sscanf(sep, " - %63s", type) != 1 || strcmp(type, fstype) != 0 ||
		    sscanf(line, "%*s %*s %*s %511s %511s", root, mnt) != 2)
			continue;
		if (rc == 0 && strcmp(root, "/") != 0)
			continue;
		snprintf(buf, len, "%s", mnt);
		rc = 0;
		if (strcmp(root, "/") == 0)
			break;
	}
	fclose(f);
	return rc;
}

static void kfs_observe_one(struct kfs_entry *e, const char *fstype, bool mounted)
{
	e->st = mounted ? KFS_PRESENT : kfs_kernel_has(fstype) ? KFS_ABSENT : KFS_UNSUPPORTED;
}

/* Where cgroup2 goes: hybrid v1/v2 hosts leave an empty unified/ for it. */
static const char *kfs_cgroup2_target(void)
{
	struct stat st;
	if (stat("/sys/fs/cgroup/unified", &st) == 0 && S_ISDIR(st.st_mode))
		return "/sys/fs/cgroup/unified";
	return "/sys/fs/cgroup";
}

static void kfs_observe(struct rec_kfs *k)
{
	struct kfs_entry *fs = k->fs;
	const char *tp = access(KFS_TRACING_DEBUG, F_OK) == 0 ? KFS_TRACING_DEBUG : KFS_TRACING;
	snprintf(fs[KFS_TRACEFS].path, sizeof(fs[KFS_TRACEFS].path), "%s", tp);
	kfs_observe_one(&fs[KFS_TRACEFS], "tracefs", kfs_statfs_is(tp, TRACEFS_MAGIC));

	bool cg = kfs_find_mount("cgroup2", fs[KFS_CGROUP2].path, sizeof(fs[KFS_CGROUP2].path)) == 0;
	if (!cg)
		snprintf(fs[KFS_CGROUP2].path, sizeof(fs[KFS_CGROUP2].path), "%s", kfs_cgroup2_target());
	kfs_observe_one(&fs[KFS_CGROUP2], "cgroup2", cg);

	snprintf(fs[KFS_DEBUGFS].path, sizeof(fs[KFS_DEBUGFS].path), "/sys/kernel/debug");
	kfs_observe_one(&fs[KFS_DEBUGFS], "debugfs", kfs_statfs_is("/sys/kernel/debug", DEBUGFS_MAGIC));

	bool bpffs = kfs_find_mount("bpf", fs[KFS_BPFFS].path, sizeof(fs[KFS_BPFFS].path)) == 0;
	if (!bpffs)
		snprintf(fs[KFS_BPFFS].path, sizeof(fs[KFS_BPFFS].path), "/sys/fs/bpf");
	kfs_observe_one(&fs[KFS_BPFFS], "bpf", bpffs);
}

static bool kfs_cap(unsigned cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

/* A mount namespace of nprec's own. Slave, not private: a disk the host
 * mounts while nprec runs (its output directory) still shows up here,
 * while nothing mounted here reaches the host. 0 or -errno. */
static int kfs_enter_ns(struct rec_kfs *k)
{
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	k->private_ns = true;
	/* still shared with the host after a failure here: then mount nothing */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -errno;
	return 0;
}

static enum kfs_state kfs_fail_state(int err)
{
	if (err == EPERM || err == EACCES)
		return KFS_NO_PRIV;
	return err == ENODEV ? KFS_UNSUPPORTED : KFS_FAILED;
}

static void kfs_mount(struct kfs_entry *e, const char *fstype)
{
	if (mount(fstype, e->path, fstype, MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) {
		e->st = KFS_MOUNTED;
		return;
	}
	e->err = errno;
	e->st = kfs_fail_state(errno);
}

/* kernel.perf_event_paranoid above 2 (Debian's and Android's "3") refuses
 * perf_event_open to all but CAP_SYS_ADMIN; up to 2, CAP_PERFMON (which
 * nprec needs anyway) passes. */
static void kfs_perf(struct rec_kfs *k)
{
	const char *alt = getenv("NPREC_TEST_PERF_PARANOID");
	FILE *f = fopen(alt ? alt : "/proc/sys/kernel/perf_event_paranoid", "r");
	bool ok = f && fscanf(f, "%d", &k->paranoid) == 1;
	if (f)
		fclose(f);
	if (!ok)
		k->perf = KFS_PERF_UNKNOWN;
	else
		k->perf = k->paranoid > 2 && !kfs_cap(CAP_SYS_ADMIN) ? KFS_PERF_BLOCKED : KFS_PERF_ALLOWED;
}

void kfs_prepare(struct rec_kfs *k)
{
	static const enum kfs_fs wanted[] = { KFS_TRACEFS, KFS_CGROUP2 };
	memset(k, 0, sizeof(*k));
	kfs_observe(k);
	kfs_perf(k);
	bool need = false;
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		need |= k->fs[wanted[i]].st == KFS_ABSENT;
	if (!need)
		return;
	int rc = kfs_enter_ns(k);
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		struct kfs_entry *e = &k->fs[wanted[i]];
		if (e->st != KFS_ABSENT)
			continue;
		if (rc < 0) {
			e->err = -rc;
			e->st = kfs_fail_state(-rc);
		} else {
			kfs_mount(e, kfs_fstype[wanted[i]]);
		}
	}
}

const char *kfs_cgroup2(const struct rec_kfs *k)
{
	return kfs_usable(k, KFS_CGROUP2) ? k->fs[KFS_CGROUP2].path : "";
}

/* Why a needed filesystem is not there, for the report. */
static void kfs_why(const struct kfs_entry *e, const char *name, char *buf, size_t len)
{
	switch (e->st) {
	case KFS_NO_PRIV:
		snprintf(buf, len, "%s is not mounted and nprec may not mount it (needs CAP_SYS_ADMIN)", name);
		break;
	case KFS_UNSUPPORTED:
		snprintf(buf, len, "this kernel has no %s", name);
		break;
	default:
		snprintf(buf, len, "%s is not mounted and mounting it at %s failed: %s", name, e->path,
			 strerror(e->err));
		break;
	}
}

bool kfs_usable(const struct rec_kfs *k, enum kfs_fs fs)
{
	return !k || k->fs[fs].st == KFS_PRESENT || k->fs[fs].st == KFS_MOUNTED;
}

static void kfs_report_mounted(const struct rec_kfs *k, FILE *out)
{
	char what[320] = "";
	size_t n = 0;
	for (int i = 0; i < KFS_NFS; i++)
		if (k->fs[i].st == KFS_MOUNTED && n < sizeof(what))
			n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%s at %s", n ? ", " : "",
					      kfs_keys[i], k->fs[i].path);
	if (n)
		fprintf(out, "nprec: mounted %s in a mount namespace of its own "
			"(gone when nprec exits; the host's mounts are unchanged)\n", what);
}

void kfs_report(const struct rec_kfs *k, FILE *out)
{
	char why[320];
	kfs_report_mounted(k, out);
	if (!kfs_usable(k, KFS_TRACEFS)) {
		kfs_why(&k->fs[KFS_TRACEFS], "tracefs", why, sizeof(why));
		fprintf(out, "nprec: %s: classic tracepoints are off "
			"(NPREC_TEST_SYSCALL_HOOK=per-call falls back to tp_btf/sys_enter)\n", why);
	}
	if (!kfs_usable(k, KFS_CGROUP2)) {
		kfs_why(&k->fs[KFS_CGROUP2], "cgroup2", why, sizeof(why));
		fprintf(out, "nprec: %s: --cgroup, --active-ids (sock_ops) and the threads' cgroup "
			"paths are off\n", why);
	}
	if (k->perf == KFS_PERF_BLOCKED)
		fprintf(out, "nprec: kernel.perf_event_paranoid is %d and nprec lacks CAP_SYS_ADMIN: "
			"perf_event programs (cpu-clock sampling) will be refused\n", k->paranoid);
}

static void kfs_pack_entry(msgpack_packer *pk, const struct kfs_entry *e)
{
	msgpack_pack_map(pk, 3);
	np_pack_kv_str(pk, "state", kfs_state_name(e->st));
	np_pack_kv_str(pk, "path", e->path);
	np_pack_kv_str(pk, "error", e->err ? strerror(e->err) : "");
}

void kfs_pack(msgpack_packer *pk, const struct rec_kfs *k)
{
	msgpack_pack_map(pk, 2 + KFS_NFS);
	np_pack_kv_str(pk, "mount_ns", k->private_ns ? "private" : "host");
	for (int i = 0; i < KFS_NFS; i++) {
		np_pack_str(pk, kfs_keys[i]);
		kfs_pack_entry(pk, &k->fs[i]);
	}
	np_pack_str(pk, "perf_event");
	msgpack_pack_map(pk, 2);
	np_pack_kv_str(pk, "state", kfs_perf_name(k->perf));
	np_pack_kv_i64(pk, "paranoid", k->perf == KFS_PERF_UNKNOWN ? 0 : k->paranoid);
}
