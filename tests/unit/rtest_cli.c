/* nprec command-line parsing (record/core/cli.c): every option lands in the
 * right rec_config field, sizes/durations/sample rates parse with their
 * suffixes, and bad values are refused with a message naming the option. */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "cli.h"
#include "kfs.h"
#include "tap.h"

static enum rc_cli_action parse(struct rec_config *c, char *err, int argc, char **argv)
{
	struct rc_cli_result res;
	FILE *devnull = fopen("/dev/null", "w");
	rec_config_defaults(c);
	err[0] = 0;
	enum rc_cli_action a = rc_cli_parse(c, argc, argv, &res, devnull, err, 256);
	fclose(devnull);
	return a;
}

#define ARGV(...) (char *[]){ "nprec", __VA_ARGS__, NULL }
#define NARGS(...) (int)(sizeof((char *[]){ "nprec", __VA_ARGS__ }) / sizeof(char *))
#define PARSE(c, err, ...) parse(c, err, NARGS(__VA_ARGS__), ARGV(__VA_ARGS__))

static void test_sizes(void)
{
	uint64_t v;
	CHECK(rc_parse_size("4096", &v) == 0 && v == 4096, "plain");
	CHECK(rc_parse_size("64K", &v) == 0 && v == 65536, "K");
	CHECK(rc_parse_size("64M", &v) == 0 && v == 64ull << 20, "M");
	CHECK(rc_parse_size("2G", &v) == 0 && v == 2ull << 30, "G");
	CHECK(rc_parse_size("16KiB", &v) == 0 && v == 16384, "KiB");
	CHECK(rc_parse_size("1mb", &v) == 0 && v == 1ull << 20, "mb");
	CHECK(rc_parse_size("12B", &v) == 0 && v == 12, "B");
	CHECK(rc_parse_size("", &v) < 0, "empty");
	CHECK(rc_parse_size("-1", &v) < 0, "negative");
	CHECK(rc_parse_size("10X", &v) < 0, "bad suffix");
	CHECK(rc_parse_size("99999999999999999999", &v) < 0, "overflow");
	CHECK(rc_parse_size("20000000000G", &v) < 0, "shift overflow");
}

static void test_durations(void)
{
	int64_t ns;
	CHECK(rc_parse_duration("2", &ns, 0) == 0 && ns == 2000000000ll, "bare = s");
	CHECK(rc_parse_duration("1.5", &ns, 0) == 0 && ns == 1500000000ll, "fraction");
	CHECK(rc_parse_duration("250ms", &ns, 0) == 0 && ns == 250000000ll, "ms");
	CHECK(rc_parse_duration("500us", &ns, 0) == 0 && ns == 500000ll, "us");
	CHECK(rc_parse_duration("100ns", &ns, 0) == 0 && ns == 100, "ns");
	CHECK(rc_parse_duration("2m", &ns, 0) == 0 && ns == 120000000000ll, "m");
	CHECK(rc_parse_duration("1h", &ns, 0) == 0 && ns == 3600000000000ll, "h");
	CHECK(rc_parse_duration("-3ms", &ns, 1) == 0 && ns == -3000000ll, "negative allowed");
	CHECK(rc_parse_duration("-3ms", &ns, 0) < 0, "negative refused");
	CHECK(rc_parse_duration("3 s", &ns, 0) < 0, "space");
	CHECK(rc_parse_duration("s", &ns, 0) < 0, "no number");
	CHECK(rc_parse_duration("5parsecs", &ns, 0) < 0, "unknown unit");
}

static void test_sample(void)
{
	uint32_t n;
	CHECK(rc_parse_sample("1/16", &n) == 0 && n == 16, "1/16");
	CHECK(rc_parse_sample("8", &n) == 0 && n == 8, "8");
	CHECK(rc_parse_sample("1/0", &n) < 0, "zero");
	CHECK(rc_parse_sample("2/16", &n) < 0, "2/16");
}

static void test_defaults(void)
{
	struct rec_config c;
	char err[256];
	/* not PARSE(): c.argv points into the array, which must outlive the checks */
	char *av[] = { "nprec", "-o", "x.npr", NULL };
	CHECK(parse(&c, err, 3, av) == RC_CLI_RUN, "%s", err);
	CHECK_EQ_U(c.interval_ns, 1000000000ull);
	/* NET_RX sampling on the scheduler tick; cpu-clock fallback rate */
	CHECK(c.sample_tick, "tick source by default");
	CHECK_EQ_U(c.sample_hz, REC_TICK_FALLBACK_HZ);
	CHECK_EQ_U(c.nice, 10);
	CHECK_EQ_U(c.sample_n, 1);
	CHECK_EQ_U(c.zstd_level, 1);
	CHECK(c.netns_fd == -1, "netns fd");
	CHECK_NEAR(c.scale_x, 1.5, 1e-12);
	CHECK_NEAR(c.ewma_alpha, 0.125, 1e-12);
	CHECK_EQ_U(c.alert_window_t, 10);
	CHECK_EQ_U(c.slice_us, 200);
	CHECK(!strcmp(c.output, "x.npr"), "output");
	CHECK(c.argc == 3 && !strcmp(c.argv[1], "-o"), "argv kept");
}

static void test_all_options(void)
{
	struct rec_config c;
	char err[256];
	enum rc_cli_action a = PARSE(&c, err, "-o", "out.npr", "-d", "30s", "-I", "500ms", "-i", "eth0", "-i", "veth1",
		"--port", "80", "--port", "443", "--host", "10.0.0.1", "--host", "fe80::1", "--pid", "42",
		"--cgroup", "system.slice", "--netns", "blue", "--sample-hz", "0", "--redact-paths", "-q", "-v",
		"--fsync", "--zstd-level", "9", "--max-size", "1G", "--rotate", "64M,5",
		"--trigger-on", "alert", "--trigger-on", "retrans>100/s", "--max-cpu", "2.5", "--nice", "5", "--cpu-slice", "50",
		"--packets", "--sample", "1/16", "--per-flow-cap", "1000", "--active-ids",
		"--cgroup-root", "/cg", "--baseline", "b.npr", "--scale", "2.0", "--ewma-alpha", "0.25",
		"--alert-window", "20", "--sync-listen", "7777", "--sync-peer", "10.0.0.2:7777",
		"--test-clock-shift", "-3000000", "--no-txn", "--no-flows", "--no-netcpu", "--no-threads");
	CHECK(a == RC_CLI_RUN, "%s", err);
	CHECK_EQ_U(c.duration_ns, 30000000000ull);
	CHECK_EQ_U(c.interval_ns, 500000000ull);
	CHECK(c.nifaces == 2 && !strcmp(c.ifaces[1], "veth1"), "ifaces");
	CHECK(c.nports == 2 && c.ports[0] == 80 && c.ports[1] == 443, "ports");
	CHECK(c.nhosts == 2, "hosts");
	CHECK(c.hosts[0].addr.s6_addr[10] == 0xff && c.hosts[0].addr.s6_addr[11] == 0xff &&
	      c.hosts[0].addr.s6_addr[12] == 10 && c.hosts[0].addr.s6_addr[15] == 1, "v4 mapped");
	CHECK(c.hosts[1].addr.s6_addr[0] == 0xfe && c.hosts[1].addr.s6_addr[15] == 1, "v6");
	CHECK(c.npids == 1 && c.pids[0] == 42, "pid");
	CHECK(!strcmp(c.cgroup_path, "system.slice") && !strcmp(c.netns, "blue"), "cgroup, netns");
	CHECK(c.sample_hz == 0 && !c.sample_tick && c.redact_paths && c.quiet && c.verbose && c.fsync, "flags");
	CHECK_EQ_U(c.zstd_level, 9);
	CHECK_EQ_U(c.max_size, 1ull << 30);
	CHECK(c.rotate_size == 64ull << 20 && c.rotate_count == 5, "rotate");
	CHECK(c.ntrigger_on == 2 && !strcmp(c.trigger_on[1], "retrans>100/s"), "trigger-on");
	CHECK_NEAR(c.max_cpu_pct, 2.5, 1e-12);
	CHECK_EQ_U(c.nice, 5);
	CHECK_EQ_U(c.slice_us, 50);
	CHECK(c.pktpath && c.sample_n == 16 && c.per_flow_cap == 1000 && c.active_ids, "packets");
	CHECK(!strcmp(c.cgroup_root, "/cg") && !strcmp(c.baseline, "b.npr"), "cgroup root, baseline");
	CHECK_NEAR(c.scale_x, 2.0, 1e-12);
	CHECK_NEAR(c.ewma_alpha, 0.25, 1e-12);
	CHECK_EQ_U(c.alert_window_t, 20);
	CHECK(c.sync_listen_port == 7777 && c.nsync_peers == 1 && !strcmp(c.sync_peers[0], "10.0.0.2:7777"), "sync");
	CHECK(c.test_clock_shift_ns == -3000000, "shift %lld", (long long)c.test_clock_shift_ns);
	CHECK(c.no_txn && c.no_flows && c.no_netcpu && c.no_threads, "no-families");
}

/* --txn-events auto|all|1/N (default auto = 0); --full = all unless given */
static void test_txn_events(void)
{
	struct rec_config c;
	char err[256];
	CHECK(PARSE(&c, err, "-o", "x") == RC_CLI_RUN && c.txn_events_n == 0 && !c.full, "default auto");
	CHECK(PARSE(&c, err, "-o", "x", "--txn-events", "all") == RC_CLI_RUN && c.txn_events_n == 1, "all");
	CHECK(PARSE(&c, err, "-o", "x", "--txn-events", "1/8") == RC_CLI_RUN && c.txn_events_n == 8, "1/8");
	CHECK(PARSE(&c, err, "-o", "x", "--full") == RC_CLI_RUN && c.full && c.txn_events_n == 1, "--full: all");
	CHECK(PARSE(&c, err, "-o", "x", "--txn-events", "auto", "--full") == RC_CLI_RUN && c.txn_events_n == 0,
	      "--full keeps an explicit --txn-events");
	CHECK(PARSE(&c, err, "-o", "x", "--txn-events", "some") == RC_CLI_ERROR, "bad word refused");
	CHECK(PARSE(&c, err, "-o", "x", "--txn-events", "1/0") == RC_CLI_ERROR, "1/0 refused");
	CHECK(PARSE(&c, err, "-o", "x", "--txn-events", "1/65537") == RC_CLI_ERROR, "beyond the hash refused");
}

/* Send calls unhooked by default; hooked with --send-calls, --full or
 * --netcpu exact (which clocks every send call: --no-send-calls refused
 * with it) */
static void test_no_send_calls(void)
{
	struct rec_config c;
	char err[256];
	CHECK(PARSE(&c, err, "-o", "x") == RC_CLI_RUN && c.no_send_calls, "default: send calls not hooked");
	CHECK(PARSE(&c, err, "-o", "x", "--send-calls") == RC_CLI_RUN && !c.no_send_calls, "--send-calls");
	CHECK(PARSE(&c, err, "-o", "x", "--full") == RC_CLI_RUN && !c.no_send_calls, "--full hooks them");
	CHECK(PARSE(&c, err, "-o", "x", "--netcpu", "exact") == RC_CLI_RUN && !c.no_send_calls,
	      "--netcpu exact hooks them");
	CHECK(PARSE(&c, err, "-o", "x", "--netcpu", "exact", "--no-netcpu") == RC_CLI_RUN && c.no_send_calls,
	      "--netcpu exact with netcpu off: not hooked");
	CHECK(PARSE(&c, err, "-o", "x", "--send-calls", "--no-send-calls") == RC_CLI_RUN && c.no_send_calls,
	      "the last of --send-calls / --no-send-calls counts");
	CHECK(PARSE(&c, err, "-o", "x", "--no-send-calls") == RC_CLI_RUN && c.no_send_calls, "--no-send-calls");
	CHECK(PARSE(&c, err, "-o", "x", "--no-send-calls", "--netcpu", "exact") == RC_CLI_ERROR &&
	      strstr(err, "--no-send-calls"), "with --netcpu exact refused: %s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--full", "--no-send-calls") == RC_CLI_ERROR, "with --full refused");
	CHECK(PARSE(&c, err, "-o", "x", "--full", "--netcpu", "sample", "--no-send-calls") == RC_CLI_RUN &&
	      c.no_send_calls && c.txn_events_n == 1, "--full with sampled netcpu: %s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--netcpu", "exact", "--no-netcpu", "--no-send-calls") == RC_CLI_RUN,
	      "exact netcpu switched off: %s", err);
}

/* --redact-key FILE implies --redact-paths; a key file anyone may read is a
 * usage error found before recording (rc_cli_resolve). */
static void test_redact_key(void)
{
	struct rec_config c;
	char err[256];
	CHECK(PARSE(&c, err, "-o", "x", "--redact-key", "/proc/self/status") == RC_CLI_RUN &&
	      c.redact_paths && !strcmp(c.redact_key_file, "/proc/self/status"), "--redact-key: %s", err);
	CHECK(rc_cli_resolve(&c, err, sizeof(err)) < 0 && strstr(err, "--redact-key /proc/self/status"),
	      "a world-readable key file refused: %s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--redact-paths") == RC_CLI_RUN && c.redact_paths && !c.redact_key_file,
	      "--redact-paths alone: no key file (random key)");
}

/* --sample-hz tick|N|0: the last one given wins */
static void test_sample_hz(void)
{
	struct rec_config c;
	char err[256];
	CHECK(PARSE(&c, err, "-o", "x", "--sample-hz", "1000") == RC_CLI_RUN, "%s", err);
	CHECK(!c.sample_tick && c.sample_hz == 1000, "N: cpu-clock at N Hz");
	CHECK(PARSE(&c, err, "-o", "x", "--sample-hz", "1000", "--sample-hz", "tick") == RC_CLI_RUN,
	      "%s", err);
	CHECK(c.sample_tick && c.sample_hz == REC_TICK_FALLBACK_HZ, "tick after N");
	CHECK(PARSE(&c, err, "-o", "x", "--sample-hz", "tick", "--sample-hz", "0") == RC_CLI_RUN,
	      "%s", err);
	CHECK(!c.sample_tick && c.sample_hz == 0, "0: off");
	CHECK(PARSE(&c, err, "-o", "x", "--sample-hz", "Tick") == RC_CLI_ERROR, "case matters");
	CHECK(PARSE(&c, err, "-o", "x", "--sample-hz", "ticks") == RC_CLI_ERROR, "ticks");
	CHECK(PARSE(&c, err, "-o", "x", "--sample-hz", "100001") == RC_CLI_ERROR, "too fast");
}

static void test_flight_and_shift(void)
{
	struct rec_config c;
	char err[256];
	CHECK(PARSE(&c, err, "-o", "x", "--flight-recorder", "60") == RC_CLI_RUN, "%s", err);
	CHECK(c.flight_seconds_ns == 60000000000ull && c.flight_bytes == 0, "60 = seconds");
	CHECK(PARSE(&c, err, "-o", "x", "--flight-recorder", "5m") == RC_CLI_RUN, "%s", err);
	CHECK_EQ_U(c.flight_seconds_ns, 300000000000ull);
	CHECK(PARSE(&c, err, "-o", "x", "--flight-recorder", "256M") == RC_CLI_RUN, "%s", err);
	CHECK(c.flight_bytes == 256ull << 20 && c.flight_seconds_ns == 0, "256M = bytes");
	CHECK(PARSE(&c, err, "-o", "x", "--test-clock-shift", "3ms") == RC_CLI_RUN, "%s", err);
	CHECK(c.test_clock_shift_ns == 3000000, "3ms");
	CHECK(PARSE(&c, err, "-o", "x", "--rotate", "1M") == RC_CLI_RUN && c.rotate_count == 0, "rotate no count");
}

static void test_errors(void)
{
	struct rec_config c;
	char err[256];
	CHECK(PARSE(&c, err, "-d", "1s") == RC_CLI_ERROR && strstr(err, "no output file"), "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--port", "0") == RC_CLI_ERROR && strstr(err, "--port"), "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--port", "65536") == RC_CLI_ERROR, "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--host", "not-an-ip") == RC_CLI_ERROR && strstr(err, "--host"), "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "-I", "1ms") == RC_CLI_ERROR && strstr(err, "-I"), "interval too small: %s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--zstd-level", "23") == RC_CLI_ERROR, "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--sync-peer", "nocolon") == RC_CLI_ERROR, "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--frobnicate") == RC_CLI_ERROR && strstr(err, "unknown option"), "%s", err);
	CHECK(PARSE(&c, err, "-o") == RC_CLI_ERROR && strstr(err, "missing value"), "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "extra") == RC_CLI_ERROR && strstr(err, "unexpected argument"), "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--rotate", "1M", "--flight-recorder", "10") == RC_CLI_ERROR, "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--baseline", "a", "--profile-baseline", "b") == RC_CLI_ERROR, "%s", err);
	char *many[40] = { "nprec", "-o", "x" };
	int n = 3;
	for (int i = 0; i < 17; i++) { many[n++] = "--port"; many[n++] = "80"; }
	CHECK(parse(&c, err, n, many) == RC_CLI_ERROR, "17 ports refused");
}

static void test_actions(void)
{
	struct rec_config c;
	char err[256];
	struct rc_cli_result res;
	rec_config_defaults(&c);
	FILE *devnull = fopen("/dev/null", "w");
	CHECK(rc_cli_parse(&c, 2, ARGV("--help"), &res, devnull, err, sizeof(err)) == RC_CLI_HELP, "help");
	CHECK(rc_cli_parse(&c, 2, ARGV("-V"), &res, devnull, err, sizeof(err)) == RC_CLI_VERSION, "version");
	CHECK(rc_cli_parse(&c, 3, ARGV("--trigger", "/run/nprec.pid"), &res, devnull, err, sizeof(err)) == RC_CLI_TRIGGER &&
	      !strcmp(res.trigger_target, "/run/nprec.pid"), "trigger");
	fclose(devnull);
	CHECK(rc_cli_trigger("/nonexistent/pidfile", err, sizeof(err)) < 0 && strstr(err, "cannot read a pid"), "%s", err);
}

static void test_resolve(void)
{
	struct rec_config c;
	char err[256];
	/* as nprec does: cgroup2 mounted in a namespace of our own where the
	 * machine has none (root only; unprivileged, the check below fails
	 * as nprec would) */
	struct rec_kfs kfs;
	kfs_prepare(&kfs);
	kfs_report(&kfs, stderr);
	CHECK(PARSE(&c, err, "-o", "x", "--netns", "/proc/self/ns/net") == RC_CLI_RUN, "%s", err);
	CHECK(rc_cli_resolve(&c, err, sizeof(err)) == 0 && c.netns_ino != 0 && c.netns_fd >= 0, "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--netns", "rc-surely-missing") == RC_CLI_RUN, "%s", err);
	CHECK(rc_cli_resolve(&c, err, sizeof(err)) < 0 && strstr(err, "/var/run/netns/rc-surely-missing"), "%s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--cgroup", "/", "--cgroup-root", "/sys/fs/cgroup") == RC_CLI_RUN, "%s", err);
	CHECK(rc_cli_resolve(&c, err, sizeof(err)) == 0 && c.cgroup_id != 0, "root cgroup id: %s", err);
	CHECK(PARSE(&c, err, "-o", "x", "--cgroup", "no/such/group") == RC_CLI_RUN, "%s", err);
	CHECK(rc_cli_resolve(&c, err, sizeof(err)) < 0, "missing cgroup");
	CHECK(PARSE(&c, err, "-o", "x", "--cgroup", "/", "--cgroup-root", "/proc") == RC_CLI_RUN, "%s", err);
	CHECK(rc_cli_resolve(&c, err, sizeof(err)) < 0 && strstr(err, "not in a cgroup v2 hierarchy"),
	      "a directory outside cgroup2 refused: %s", err);
}

int main(void)
{
	test_sizes();
	test_durations();
	test_sample();
	test_defaults();
	test_all_options();
	test_txn_events();
	test_no_send_calls();
	test_redact_key();
	test_sample_hz();
	test_flight_and_shift();
	test_errors();
	test_actions();
	test_resolve();
	return tap_done();
}
