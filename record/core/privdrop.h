/* Least privilege for nprec (docs/NPREC.md, "Privileges"): once the
 * programs are loaded and attached and the output is open, nprec switches to
 * an unprivileged user (-Z USER; default "nprec", else "nobody") and keeps
 * only the capabilities its main loop and teardown still need. */
#ifndef NP_REC_PRIVDROP_H
#define NP_REC_PRIVDROP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rec_privdrop {
	const char *user;           /* -Z; NULL: default */
	const char *files[2];       /* files written after the drop: -o (NULL or "-":
				     * none), --profile-baseline; the first is the
				     * helper's root */
	bool tc_teardown;           /* TC filters attached: detaching them at exit
				     * needs CAP_NET_ADMIN (+ CAP_SYS_ADMIN for setns) */
	int base_nice;              /* nice nprec started with (--nice goes back to it) */
};

/* Result for the caller's notice. */
struct rec_privdrop_result {
	bool dropped;               /* capabilities reduced */
	bool switched;              /* uid changed */
	char user[64];
	unsigned uid, gid;
	uint64_t caps_eff, caps_perm;
	int helper_pid;
};

/* 0 done, 1 kept root on purpose (-Z root), -errno on failure (err filled:
 * nprec stops, it never silently runs with more privilege than asked). */
int rec_privdrop_apply(const struct rec_privdrop *req, struct rec_privdrop_result *res,
		       char *err, size_t errlen);
/* Before the families close: makes the teardown capabilities effective. */
void rec_privdrop_teardown(void);
/* In the file helper (fsbroker.c), after its chroot: CAP_DAC_OVERRIDE and
 * CAP_FOWNER only, nothing it could regain. */
int rec_privdrop_broker(void);

#endif
