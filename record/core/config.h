/* nprec configuration: every command-line option of every recorder family,
 * parsed once in record/core/cli.c and read by the families. */
#ifndef NP_REC_CONFIG_H
#define NP_REC_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#define REC_MAX_IFACES   16
#define REC_MAX_FILTERS  16
#define REC_TICK_FALLBACK_HZ 250   /* cpu-clock rate when the tick source fails */
#define REC_NETCPU_SOCK_HZ 97      /* socket-time sampler: no multiple of any HZ */

struct rec_addr {             /* --host ADDR (v4 stored as v4-mapped v6) */
	struct in6_addr addr;
};

struct rec_config {
	/* output (issue 3, 5) */
	const char *output;           /* -o FILE ("-" = stdout) */
	uint64_t duration_ns;         /* -d DURATION, 0 = until signal */
	uint64_t interval_ns;         /* -I INTERVAL, default 1 s */
	bool quiet, verbose;          /* -q, -v */
	bool fsync;                   /* --fsync */
	int  zstd_level;              /* --zstd-level, default 3 */
	uint64_t max_size;            /* --max-size SIZE, 0 = none */
	uint64_t rotate_size;         /* --rotate SIZE[,COUNT] */
	unsigned rotate_count;        /*   0 = keep all */
	uint64_t flight_seconds_ns;   /* --flight-recorder SECONDS (ns) */
	uint64_t flight_bytes;        /* --flight-recorder SIZE */
	const char *trigger_on[8];    /* --trigger-on EXPR (repeatable) */
	unsigned ntrigger_on;
	double max_cpu_pct;           /* --max-cpu PCT, 0 = no limit */
	int nice;                     /* --nice N while light, default 10, 0 = off */
	unsigned slice_us;            /* --cpu-slice: longest stretch of work before a yield, 0 = off */

	/* filters, applied in the kernel (issue 3) */
	char ifaces[REC_MAX_IFACES][16]; unsigned nifaces;     /* -i IFACE */
	uint16_t ports[REC_MAX_FILTERS]; unsigned nports;      /* --port P */
	struct rec_addr hosts[REC_MAX_FILTERS]; unsigned nhosts; /* --host ADDR */
	uint32_t pids[REC_MAX_FILTERS]; unsigned npids;        /* --pid PID */
	const char *cgroup_path;      /* --cgroup PATH */
	uint64_t cgroup_id;           /*   resolved id, 0 = no filter */
	const char *netns;            /* --netns NAME|PATH */
	uint64_t netns_ino;           /*   resolved inode, 0 = no filter */
	int netns_fd;                 /*   open fd of that netns, -1 if none */

	/* families (issue 3) */
	/* --sample-hz tick|N|0, NET_RX stack sampling (docs/NETCPU.md):
	 * tick (default): on the scheduler tick, no extra interrupt; sample_hz
	 * is then the cpu-clock rate used if the tick hook is unavailable.
	 * N: a perf_event cpu-clock timer at N Hz per CPU. 0: off. */
	bool sample_tick;
	unsigned sample_hz;
	bool redact_paths;            /* --redact-paths */
	const char *redact_key_file;  /* --redact-key FILE: key of the path hash */
	bool no_txn, no_flows, no_netcpu, no_threads;   /* --no-FAMILY */
	/* No work on TCP sends (sock_send_length), the default since
	 * 2026-11-28 unless --send-calls, --full or --netcpu exact: flows
	 * reads TCP bytes sent from the sockets, txn what connections wrote;
	 * client request lines are not recorded (issue 24; npanalyze names
	 * them from their servers' recordings); flows' send program counts
	 * UDP sends only */
	bool no_send_calls;
	bool send_calls_given;        /*   --send-calls / --no-send-calls given */
	bool full;                    /* --full: every family at full detail (the default before 0.x) */
	uint32_t txn_events_n;        /* --txn-events: 0 auto (default), 1 all, N: 1 in N connections */
	bool txn_events_given;        /*   given explicitly (--full does not override it) */
	/* --netcpu sample|exact: socket send/receive time estimated from the
	 * samples of --sample-hz (default), or stamped at every socket
	 * syscall of the machine (docs/NETCPU.md "Sampled socket time") */
	bool netcpu_exact;
	bool netcpu_given;            /*   given explicitly (--full does not override it) */
	unsigned netcpu_sock_hz;      /* --netcpu sample:HZ, 0 = REC_NETCPU_SOCK_HZ */

	/* packet paths, host stack, clock sync (issue 4) */
	bool pktpath;                 /* --packets: packet-path tracing on */
	uint32_t sample_n;            /* --sample 1/N (1 = all) */
	uint32_t per_flow_cap;        /* --per-flow-cap N events/s per flow, 0 = none */
	bool active_ids;              /* --active-ids */
	const char *cgroup_root;      /*   cgroup for sock_ops (default /sys/fs/cgroup) */
	const char *profile_baseline; /* --profile-baseline FILE */
	const char *baseline;         /* --baseline FILE */
	double scale_x;               /* --scale X (perfmon eq. 1), default 1.5 */
	double ewma_alpha;            /* --ewma-alpha A, default 0.125 */
	unsigned alert_window_t;      /* --alert-window T, default 10 */
	uint16_t sync_listen_port;    /* --sync-listen PORT */
	const char *sync_peers[8]; unsigned nsync_peers;  /* --sync-peer HOST:PORT */
	int64_t test_clock_shift_ns;  /* --test-clock-shift NS (test only) */
	const char *sync_key_file;    /* --sync-key FILE: authenticated exchange */
	const char *sync_bind;        /* --sync-bind ADDR: listener address */
	const char *run_user;         /* -Z USER after attach (NULL: default) */

	/* the whole command line, for the header */
	int argc; char **argv;
};

void rec_config_defaults(struct rec_config *c);

#endif
