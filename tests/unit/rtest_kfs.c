/* record/core/kfs.c: the states it decides on, checked against the mount table
 * it leaves behind. Runs in a mount namespace of its own (made here first,
 * private) where it unmounts tracefs and cgroup2, so the host's mounts are
 * never touched and the result does not depend on how the host is set up. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <msgpack.h>

#include "kfs.h"
#include "npmsg.h"
#include "tap.h"

static char tmpdir[] = "/tmp/rtest_kfs.XXXXXX";

static bool is_fs(const char *path, unsigned long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == magic;
}

/* Every mount of fstype in this (private) namespace. */
static void unmount_all(const char *fstype)
{
	char mnt[512];
	while (kfs_find_mount(fstype, mnt, sizeof(mnt)) == 0)
		if (umount2(mnt, MNT_DETACH) != 0) {
			CHECK(0, "umount %s: %s", mnt, strerror(errno));
			return;
		}
}

static const char *write_tmp(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

static void test_find_mount(void)
{
	char buf[256];
	CHECK(kfs_find_mount("proc", buf, sizeof(buf)) == 0 && strcmp(buf, "/proc") == 0, "proc at %s", buf);
	CHECK(kfs_find_mount("no-such-fs", buf, sizeof(buf)) == -ENOENT, "unknown type: -ENOENT");
	const char *seen[8] = { 0 };
	for (int st = KFS_PRESENT; st <= KFS_ABSENT; st++) {
		seen[st] = kfs_state_name((enum kfs_state)st);
		CHECK(strcmp(seen[st], "unknown") != 0, "state %d named", st);
		for (int o = KFS_PRESENT; o < st; o++)
			CHECK(strcmp(seen[o], seen[st]) != 0, "states %d and %d share a name", o, st);
	}
}

/* A kernel without tracefs and cgroup2: nothing tried, nothing mounted. */
static void test_unsupported(void)
{
	setenv("NPREC_TEST_FILESYSTEMS", write_tmp("filesystems", "nodev\tsysfs\nnodev\tproc\n\text4\n"), 1);
	struct rec_kfs k;
	kfs_prepare(&k);
	unsetenv("NPREC_TEST_FILESYSTEMS");
	CHECK(k.fs[KFS_TRACEFS].st == KFS_UNSUPPORTED, "tracefs %s", kfs_state_name(k.fs[KFS_TRACEFS].st));
	CHECK(k.fs[KFS_CGROUP2].st == KFS_UNSUPPORTED, "cgroup2 %s", kfs_state_name(k.fs[KFS_CGROUP2].st));
	CHECK(k.fs[KFS_DEBUGFS].st == KFS_UNSUPPORTED, "debugfs %s", kfs_state_name(k.fs[KFS_DEBUGFS].st));
	CHECK(!k.private_ns, "no namespace entered for nothing to mount");
	CHECK(kfs_cgroup2(&k)[0] == 0, "no cgroup2 path");
	CHECK(!is_fs("/sys/kernel/tracing", TRACEFS_MAGIC), "nothing mounted");
}

/* Missing and allowed: mounted in a further namespace of kfs's own. */
static void test_mount(void)
{
	struct rec_kfs k;
	kfs_prepare(&k);
	CHECK(k.private_ns, "entered a mount namespace of its own");
	CHECK(k.fs[KFS_TRACEFS].st == KFS_MOUNTED && is_fs(k.fs[KFS_TRACEFS].path, TRACEFS_MAGIC),
	      "tracefs %s at %s", kfs_state_name(k.fs[KFS_TRACEFS].st), k.fs[KFS_TRACEFS].path);
	CHECK(k.fs[KFS_CGROUP2].st == KFS_MOUNTED && is_fs(kfs_cgroup2(&k), CGROUP2_SUPER_MAGIC),
	      "cgroup2 %s at '%s'", kfs_state_name(k.fs[KFS_CGROUP2].st), kfs_cgroup2(&k));
	char buf[256];
	CHECK(kfs_find_mount("cgroup2", buf, sizeof(buf)) == 0 && strcmp(buf, kfs_cgroup2(&k)) == 0,
	      "mount table agrees: %s", buf);

	/* a second look finds them there and mounts nothing */
	struct rec_kfs again;
	kfs_prepare(&again);
	CHECK(again.fs[KFS_TRACEFS].st == KFS_PRESENT && again.fs[KFS_CGROUP2].st == KFS_PRESENT,
	      "second look: %s %s", kfs_state_name(again.fs[KFS_TRACEFS].st),
	      kfs_state_name(again.fs[KFS_CGROUP2].st));
	CHECK(!again.private_ns, "second look stays in the namespace");
}

static void test_perf(void)
{
	struct rec_kfs k;
	setenv("NPREC_TEST_PERF_PARANOID", write_tmp("paranoid", "3\n"), 1);
	kfs_prepare(&k);
	/* root has CAP_SYS_ADMIN: 3 does not block it */
	CHECK(k.perf == KFS_PERF_ALLOWED && k.paranoid == 3, "paranoid 3 as root: %d %d", k.perf, k.paranoid);
	setenv("NPREC_TEST_PERF_PARANOID", write_tmp("paranoid", "x\n"), 1);
	kfs_prepare(&k);
	CHECK(k.perf == KFS_PERF_UNKNOWN, "unreadable setting: unknown (%d)", k.perf);
	unsetenv("NPREC_TEST_PERF_PARANOID");
}

static void test_pack(void)
{
	struct rec_kfs k;
	kfs_prepare(&k);
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	kfs_pack(&pk, &k);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	CHECK(msgpack_unpack_next(&u, sb.data, sb.size, NULL) == MSGPACK_UNPACK_SUCCESS, "unpacks");
	const msgpack_object *m = &u.data;
	CHECK(m->type == MSGPACK_OBJECT_MAP && m->via.map.size == 2 + KFS_NFS, "map of %u keys",
	      m->type == MSGPACK_OBJECT_MAP ? m->via.map.size : 0);
	char st[32] = "", ns[16] = "";
	const msgpack_object *tr = np_map_get(m, "tracefs");
	CHECK(tr && np_get_strbuf(tr, "state", st, sizeof(st)) == 0 && strcmp(st, "present") == 0,
	      "tracefs.state %s", st);
	CHECK(np_get_strbuf(m, "mount_ns", ns, sizeof(ns)) == 0 && strcmp(ns, "host") == 0, "mount_ns %s", ns);
	for (int i = 0; i < KFS_NFS; i++)
		CHECK(np_map_get(m, kfs_fs_name((enum kfs_fs)i)) != NULL, "%s packed", kfs_fs_name((enum kfs_fs)i));
	CHECK(np_map_get(m, "perf_event") != NULL, "perf_event packed");
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);
}

int main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP rtest_kfs: needs root (mount namespaces)\n");
		return tap_done();
	}
	/* our own namespace first: everything below unmounts and mounts there */
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		CHECK(0, "private mount namespace: %s", strerror(errno));
		return tap_done();
	}
	if (!tap_mkdtemp(tmpdir))
		return tap_done();
	test_find_mount();
	unmount_all("tracefs");
	unmount_all("debugfs");
	unmount_all("cgroup2");
	test_unsupported();
	test_mount();
	test_perf();
	test_pack();
	unlink(write_tmp("filesystems", ""));
	unlink(write_tmp("paranoid", ""));
	rmdir(tmpdir);
	return tap_done();
}
