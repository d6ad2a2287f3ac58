/* nprec command line: option parsing into struct rec_config, size and
 * duration parsing, resolution of --netns/--cgroup, and `nprec --trigger`. */
#ifndef NP_REC_CLI_H
#define NP_REC_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "config.h"

enum rc_cli_action {
	RC_CLI_ERROR = -1,
	RC_CLI_RUN = 0,        /* record */
	RC_CLI_HELP,           /* --help printed */
	RC_CLI_VERSION,        /* --version printed */
	RC_CLI_TRIGGER,        /* --trigger PIDFILE|PID: signal a running nprec */
};

struct rc_cli_result {
	enum rc_cli_action action;
	const char *trigger_target;   /* for RC_CLI_TRIGGER */
};

/* Parses argv into c (which must hold rec_config_defaults()). Prints
 * --help/--version to out. On error fills err (one line, no prefix). */
enum rc_cli_action rc_cli_parse(struct rec_config *c, int argc, char **argv,
				struct rc_cli_result *res, FILE *out,
				char *err, size_t errlen);

/* "64M", "1G", "4096", "16KiB" -> bytes (binary multiples). 0 or -1. */
int rc_parse_size(const char *s, uint64_t *out);
/* "250ms", "2s", "1m", "1h", "500us", "100ns"; a bare number is seconds.
 * A leading '-' is accepted only with allow_negative. 0 or -1. */
int rc_parse_duration(const char *s, int64_t *out_ns, int allow_negative);
/* "1/16" or "16" -> 16. 0 or -1. */
int rc_parse_sample(const char *s, uint32_t *n);

/* Opens --netns and resolves --cgroup (needs the filesystem, not parsing). */
int rc_cli_resolve(struct rec_config *c, char *err, size_t errlen);

/* nprec --trigger PIDFILE|PID: sends SIGUSR1. 0 or -errno (err filled). */
int rc_cli_trigger(const char *target, char *err, size_t errlen);

void rc_cli_usage(FILE *f);

#endif
