/* The kernel filesystems and settings nprec assumes besides BTF, checked
 * (and where needed mounted) before any BPF object opens:
 *  - tracefs: libbpf reads a classic tracepoint's id there (netcpu's
 *    per-syscall tracepoints, NPREC_TEST_SYSCALL_HOOK=per-call);
 *  - cgroup2: sock_ops attaches to its root (--active-ids), --cgroup names
 *    a group in it, the threads family reads cgroup paths from it;
 *  - perf_event_paranoid: perf_event programs (cpu-clock sampling);
 *  - debugfs and bpffs: observed only (libbpf needs debugfs for nothing
 *    tracefs does not give, and nprec pins nothing in bpffs).
 * A fresh machine often mounts neither tracefs nor debugfs. When tracefs or
 * cgroup2 is missing and nprec may mount, it enters a mount namespace of
 * its own (mounts of the host still reach it, its own go nowhere) and
 * mounts them there: they disappear when nprec exits. docs/NPREC.md. */
#ifndef NP_REC_KFS_H
#define NP_REC_KFS_H

#include <stdbool.h>
#include <stdio.h>
#include <msgpack.h>

enum kfs_state {
	KFS_PRESENT = 1,   /* mounted before nprec started */
	KFS_MOUNTED,       /* nprec mounted it in its own mount namespace */
	KFS_NO_PRIV,       /* not mounted, and nprec may not mount (no CAP_SYS_ADMIN) */
	KFS_UNSUPPORTED,   /* the kernel has no such filesystem */
	KFS_FAILED,        /* mounting was tried and failed (err) */
	KFS_ABSENT,        /* not mounted; observed only, nprec does not need it */
};

enum kfs_fs { KFS_TRACEFS, KFS_CGROUP2, KFS_DEBUGFS, KFS_BPFFS, KFS_NFS };

enum kfs_perf {
	KFS_PERF_ALLOWED = 1, /* perf_event_open as nprec runs it is allowed */
	KFS_PERF_BLOCKED,     /* perf_event_paranoid > 2 without CAP_SYS_ADMIN */
	KFS_PERF_UNKNOWN,     /* the setting could not be read */
};

struct kfs_entry {
	enum kfs_state st;
	char path[128];    /* where it is (PRESENT/MOUNTED/ABSENT) or was to go */
	int err;           /* errno of the step that failed (NO_PRIV, FAILED) */
};

struct rec_kfs {
	bool private_ns;   /* nprec entered a mount namespace of its own */
	struct kfs_entry fs[KFS_NFS];
	enum kfs_perf perf;
	int paranoid;      /* kernel.perf_event_paranoid (valid unless UNKNOWN) */
};

/* Checks every interface and mounts tracefs / cgroup2 where missing and
 * allowed. Call before anything that uses libbpf (libbpf picks its tracefs
 * path once) and while nprec is single-threaded. Never fails: the states
 * say what happened. NPREC_TEST_FILESYSTEMS=PATH (tests) reads PATH as
 * /proc/filesystems, so a test can play a kernel without tracefs. */
void kfs_prepare(struct rec_kfs *k);
/* The filesystem is mounted (before nprec or by it); NULL k: unknown, true. */
bool kfs_usable(const struct rec_kfs *k, enum kfs_fs fs);
/* The cgroup2 mount point, "" when there is none (after kfs_prepare). */
const char *kfs_cgroup2(const struct rec_kfs *k);
/* What nprec did and what is off because of a missing interface, one line
 * per subject, "nprec: " prefixed. Prints nothing when all was there. */
void kfs_report(const struct rec_kfs *k, FILE *out);
/* The header's kernel_fs map (docs/records/recorder-core.md). */
void kfs_pack(msgpack_packer *pk, const struct rec_kfs *k);
const char *kfs_state_name(enum kfs_state st);
const char *kfs_fs_name(enum kfs_fs fs);

/* First mount point of filesystem type fstype in /proc/self/mountinfo:
 * 0, or -ENOENT / -errno. */
int kfs_find_mount(const char *fstype, char *buf, size_t len);

#endif
