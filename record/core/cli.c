/* nprec option parsing. Every option of struct rec_config is parsed here so
 * the families only read the config. */
#include "cli.h"
#include "csmsg.h"
#include "keyfile.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>
#include <sodium.h>

void rec_config_defaults(struct rec_config *c)
{
	memset(c, 0, sizeof(*c));
	c->interval_ns = 1000000000ull;
	c->zstd_level = 1;   /* docs/NPREC.md: why not 3 */
	c->netns_fd = -1;
	c->sample_tick = true;
	c->sample_hz = REC_TICK_FALLBACK_HZ;
	c->nice = 10;
	c->slice_us = 200;
	c->sample_n = 1;
	c->cgroup_root = "/sys/fs/cgroup";
	c->scale_x = 1.5;
	c->ewma_alpha = 0.125;
	c->alert_window_t = 10;
}

/* ---- value parsers ---- */

int rc_parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (toupper((unsigned char)*end)) {
	case 0:   break;
	case 'B': if (end[1]) return -1; end++; break;
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	default:  return -1;
	}
	if (shift) {   /* accept K, KB, KiB */
		if (*end == 'i' || *end == 'I') end++;
		if (*end == 'B' || *end == 'b') end++;
	}
	if (*end)
		return -1;
	if (shift && v > (ULLONG_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int rc_parse_duration(const char *s, int64_t *out_ns, int allow_negative)
{
	static const struct { const char *suf; double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	int neg = 0;
	char *end;
	if (!s)
		return -1;
	if (*s == '-' && allow_negative) { neg = 1; s++; }
	if (!isdigit((unsigned char)*s) && *s != '.')
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suf) == 0) {
			double ns = v * units[i].mult;
			if (ns > 9.2e18)
				return -1;
			*out_ns = (int64_t)(ns + 0.5) * (neg ? -1 : 1);
			return 0;
		}
	}
	return -1;
}

int rc_parse_sample(const char *s, uint32_t *n)
{
	char *end;
	if (!s)
		return -1;
	if (strncmp(s, "1/", 2) == 0)
		s += 2;
	if (!isdigit((unsigned char)*s))
		return -1;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v == 0 || v > UINT32_MAX)
		return -1;
	*n = (uint32_t)v;
	return 0;
}

static int rc_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int rc_parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int rc_parse_host(const char *s, struct rec_addr *a)
{
	struct in_addr v4;
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &v4) == 1) {
		a->addr.s6_addr[10] = 0xff;
		a->addr.s6_addr[11] = 0xff;
		memcpy(&a->addr.s6_addr[12], &v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, s, &a->addr) == 1 ? 0 : -1;
}

/* SECONDS (a duration) or SIZE (with a K/M/G/B suffix: upper case M is
 * mebibytes, lower case m is minutes). */
static int rc_parse_flight(struct rec_config *c, const char *s)
{
	size_t n = strlen(s);
	int64_t ns;
	if (n && (strchr("KMGTB", s[n - 1]) || strstr(s, "iB") || strstr(s, "KB")))
		return rc_parse_size(s, &c->flight_bytes);
	if (rc_parse_duration(s, &ns, 0) || ns <= 0)
		return -1;
	c->flight_seconds_ns = (uint64_t)ns;
	return 0;
}

static int rc_parse_rotate(struct rec_config *c, const char *s)
{
	char buf[64];
	unsigned long count = 0;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	char *comma = strchr(buf, ',');
	if (comma) {
		*comma = 0;
		if (rc_parse_uint(comma + 1, 1000000, &count))
			return -1;
	}
	if (rc_parse_size(buf, &c->rotate_size) || c->rotate_size == 0)
		return -1;
	c->rotate_count = (unsigned)count;
	return 0;
}

/* ---- options ---- */

enum {
	OPT_PORT = 256, OPT_HOST, OPT_PID, OPT_CGROUP, OPT_NETNS, OPT_SAMPLE_HZ,
	OPT_REDACT, OPT_FSYNC, OPT_ZSTD, OPT_MAX_SIZE, OPT_ROTATE, OPT_FLIGHT,
	OPT_TRIGGER_ON, OPT_MAX_CPU, OPT_NICE, OPT_SLICE, OPT_PACKETS, OPT_SAMPLE, OPT_PER_FLOW_CAP,
	OPT_ACTIVE_IDS, OPT_CGROUP_ROOT, OPT_PROFILE_BASELINE, OPT_BASELINE,
	OPT_SCALE, OPT_EWMA, OPT_ALERT_WINDOW, OPT_SYNC_LISTEN, OPT_SYNC_PEER,
	OPT_CLOCK_SHIFT, OPT_NO_TXN, OPT_NO_FLOWS, OPT_NO_NETCPU, OPT_NO_THREADS,
	OPT_TRIGGER,
	OPT_SYNC_KEY, OPT_SYNC_BIND,
	OPT_FULL, OPT_TXN_EVENTS,
	OPT_NETCPU,
	OPT_REDACT_KEY,
	OPT_NO_SEND_CALLS, OPT_SEND_CALLS,
};

static const struct option rc_long_opts[] = {
	{ "output", required_argument, 0, 'o' },
	{ "duration", required_argument, 0, 'd' },
	{ "interval", required_argument, 0, 'I' },
	{ "iface", required_argument, 0, 'i' },
	{ "quiet", no_argument, 0, 'q' },
	{ "verbose", no_argument, 0, 'v' },
	{ "help", no_argument, 0, 'h' },
	{ "version", no_argument, 0, 'V' },
	{ "port", required_argument, 0, OPT_PORT },
	{ "host", required_argument, 0, OPT_HOST },
	{ "pid", required_argument, 0, OPT_PID },
	{ "cgroup", required_argument, 0, OPT_CGROUP },
	{ "netns", required_argument, 0, OPT_NETNS },
	{ "sample-hz", required_argument, 0, OPT_SAMPLE_HZ },
	{ "redact-paths", no_argument, 0, OPT_REDACT },
	{ "redact-key", required_argument, 0, OPT_REDACT_KEY },
	{ "fsync", no_argument, 0, OPT_FSYNC },
	{ "zstd-level", required_argument, 0, OPT_ZSTD },
	{ "max-size", required_argument, 0, OPT_MAX_SIZE },
	{ "rotate", required_argument, 0, OPT_ROTATE },
	{ "flight-recorder", required_argument, 0, OPT_FLIGHT },
	{ "trigger-on", required_argument, 0, OPT_TRIGGER_ON },
	{ "max-cpu", required_argument, 0, OPT_MAX_CPU },
	{ "nice", required_argument, 0, OPT_NICE },
	{ "cpu-slice", required_argument, 0, OPT_SLICE },
	{ "packets", no_argument, 0, OPT_PACKETS },
	{ "sample", required_argument, 0, OPT_SAMPLE },
	{ "per-flow-cap", required_argument, 0, OPT_PER_FLOW_CAP },
	{ "active-ids", no_argument, 0, OPT_ACTIVE_IDS },
	{ "cgroup-root", required_argument, 0, OPT_CGROUP_ROOT },
	{ "profile-baseline", required_argument, 0, OPT_PROFILE_BASELINE },
	{ "baseline", required_argument, 0, OPT_BASELINE },
	{ "scale", required_argument, 0, OPT_SCALE },
	{ "ewma-alpha", required_argument, 0, OPT_EWMA },
	{ "alert-window", required_argument, 0, OPT_ALERT_WINDOW },
	{ "sync-listen", required_argument, 0, OPT_SYNC_LISTEN },
	{ "sync-peer", required_argument, 0, OPT_SYNC_PEER },
	{ "test-clock-shift", required_argument, 0, OPT_CLOCK_SHIFT },
	{ "no-txn", no_argument, 0, OPT_NO_TXN },
	{ "no-flows", no_argument, 0, OPT_NO_FLOWS },
	{ "no-netcpu", no_argument, 0, OPT_NO_NETCPU },
	{ "no-threads", no_argument, 0, OPT_NO_THREADS },
	{ "netcpu", required_argument, 0, OPT_NETCPU },
	{ "trigger", required_argument, 0, OPT_TRIGGER },
	{ "sync-key", required_argument, 0, OPT_SYNC_KEY },
	{ "sync-bind", required_argument, 0, OPT_SYNC_BIND },
	{ "user", required_argument, 0, 'Z' },
	{ "full", no_argument, 0, OPT_FULL },
	{ "no-send-calls", no_argument, 0, OPT_NO_SEND_CALLS },
	{ "send-calls", no_argument, 0, OPT_SEND_CALLS },
	{ "txn-events", required_argument, 0, OPT_TXN_EVENTS },
	{ 0, 0, 0, 0 },
};

void rc_cli_usage(FILE *f)
{
	fputs(
"usage: nprec -o FILE [options]      record this host's network behaviour\n"
"       nprec --trigger PIDFILE|PID  make a running nprec dump its flight recorder\n"
"\n"
"output:\n"
"  -o, --output FILE        recording to write (mode 0600; '-' = stdout)\n"
"  -d, --duration DUR       stop after DUR (e.g. 30s, 5m); default: until SIGINT/SIGTERM\n"
"  -I, --interval DUR       snapshot interval (default 1s)\n"
"  -q, --quiet / -v, --verbose\n"
"      --fsync              fsync every chunk\n"
"      --zstd-level N       compression level (default 1)\n"
"      --max-size SIZE      stop cleanly at SIZE (K/M/G suffixes)\n"
"      --rotate SIZE[,N]    new file every SIZE, keep at most N files\n"
"      --flight-recorder SECONDS|SIZE  keep only the last N seconds/bytes, dump on trigger\n"
"      --trigger-on EXPR    'alert', 'retrans>N/s', 'drops>N/s' (repeatable)\n"
"      --max-cpu PCT        lower packet sampling when nprec itself costs more\n"
"      --nice N             run N nice levels lower while nprec needs < 5 % of a CPU\n"
"                           (default 10, 0 = keep the priority it was started with)\n"
"      --cpu-slice USEC     give the CPU away after USEC of continuous work when\n"
"                           another task waits for it (default 200, 0 = never)\n"
"filters (applied in the kernel):\n"
"  -i, --iface IFACE        interface for TC hooks (repeatable)\n"
"      --port P  --host ADDR  --pid PID   (each repeatable, up to 16)\n"
"      --cgroup PATH        only this cgroup (v2 path, relative to the cgroup root)\n"
"      --netns NAME|PATH    only this network namespace (/var/run/netns/NAME)\n"
"families (default: flows, txn, netcpu, threads, no program on TCP send calls; target\n"
"<= 3 % of the busy CPU. End to end, the per-call programs cost saturated HTTP 1.7-2.4 %\n"
"of its req/s (five runs switching them off and on every 0.5 s, mean 2.2 %; 2.6-4.1 %\n"
"with --send-calls; tcpdump -w -s128 17-22 %); paced HTTP's p99 +3.3 % [0.3, 6.1]\n"
"(100 ms windows on a quiet host, control -0.3 %; +5.9 % before the hub skipped flows'\n"
"programs for TCP calls); profile shares 1.0 / 1.8 / 3.7 % of\n"
"samples under bulk TCP / saturated HTTP / paced HTTP on a 2-CPU VM (2026-11-28,\n"
"tcpdump 9.4 / 13.1 / 8.9 %; 1.0 / 1.9 / 3.5 % and 1.0 / 2.1 / 3.8 % in runs before;\n"
"--send-calls 1.1 / 2.3 / 4.1 %) (start-up ~0.4 s of CPU; idle ~1.2-1.4 ms of CPU a\n"
"second); docs/BENCHMARKS.md \"Current figures\"; opt-in, each costing more: --send-calls,\n"
"--full, --netcpu exact, --txn-events all, --packets, --active-ids):\n"
"      --sample-hz tick|N|0 NET_RX stack sampling: tick (default) = on the scheduler\n"
"                           tick under --netcpu exact, on the socket-time sampler's\n"
"                           timer (97 Hz per CPU) at the default --netcpu sample; N = a\n"
"                           cpu-clock timer at N Hz per CPU; 0 = off\n"
"      --redact-paths       store only HTTP method and a hash of the path, keyed by a\n"
"                           random key of this run (never written)\n"
"      --redact-key FILE    --redact-paths with the key from FILE (mode 0600): the same\n"
"                           file on every host keeps their path hashes comparable\n"
"      --no-flows --no-txn --no-netcpu --no-threads\n"
"      --send-calls         a program on every TCP send call (the default before\n"
"                           2026-11-28; implied by --full and --netcpu exact): client-\n"
"                           side HTTP request lines, servers' first-response times and\n"
"                           TCP send call counts recorded. Without it (or with\n"
"                           --no-send-calls) TCP bytes sent and received come from the\n"
"                           sockets at snapshots and closes, transactions' sends at\n"
"                           the next receive, a resent request's start at its\n"
"                           retransmission, UDP sends still counted per call;\n"
"                           npanalyze names client transactions from their servers'\n"
"                           recordings\n"
"      --txn-events auto|all|1/N  per-transaction events (call trees, per-request\n"
"                           paths) of which connections: auto (default) all until\n"
"                           they pass 2000/s, then 1 in 16 connections, chosen by a\n"
"                           hash both ends agree on; counts, bytes and the latency\n"
"                           sketch of every transaction stay exact either way\n"
"      --full               everything at full detail, the default before 2026-11-25\n"
"                           (--txn-events all --netcpu exact --send-calls): 4.7 /\n"
"                           7.5 / 8.0 %\n"
"      --netcpu sample|exact[:HZ]  socket send/receive and NET_RX/NET_TX CPU time.\n"
"                           sample (default, cost class of the defaults): estimated\n"
"                           from a cpu-clock timer at HZ per CPU (97), no per-call\n"
"                           hook; the analysis gives the 95 % interval and\n"
"                           sample count. Costs one timer interrupt per sample,\n"
"                           ~1-2 ms CPU/s.\n"
"                           exact (opt-in, costs more): every socket syscall and\n"
"                           softirq clocked;\n"
"                           a program on every syscall of the machine, all of them on\n"
"                           the slow path: the recorder's BPF time 2-4.5x the default's\n"
"                           (docs/BENCHMARKS.md); keeps the sampler as a cross-check\n"
"packet paths, host stack, clock sync:\n"
"      --packets            packet-path tracing\n"
"      --sample 1/N         consistent packet sampling   --per-flow-cap N  events/s per flow\n"
"      --active-ids         TCP option packet IDs (sock_ops)   --cgroup-root PATH\n"
"      --profile-baseline FILE | --baseline FILE [--scale X] [--ewma-alpha A] [--alert-window T]\n"
"      --sync-listen PORT   --sync-peer HOST:PORT   --test-clock-shift DUR (tests only)\n"
"      --sync-key FILE      authenticate the exchange (HMAC; file mode 0600)\n"
"      --sync-bind ADDR     listen on ADDR only (default: every address)\n"
"privileges:\n"
"  -Z, --user USER          run as USER once attached (default: nprec, else nobody;\n"
"                           -Z root keeps root)\n"
"  -h, --help  -V, --version\n"
"\n"
"exit status: 0 ok, 1 stopped by an error while recording, 2 usage error,\n"
"3 missing privileges, 4 kernel lacks BTF or a required hook, 5 cannot create the output\n",
	      f);
}

/* --txn-events all|auto|1/N */
static int rc_parse_txn_events(struct rec_config *c, const char *a)
{
	uint32_t n;
	c->txn_events_given = true;
	if (a && !strcmp(a, "all"))
		n = 1;
	else if (a && !strcmp(a, "auto"))
		n = 0;
	else if (rc_parse_sample(a, &n) || n > 65536)
		return -1;
	c->txn_events_n = n;
	return 0;
}

static int rc_add_iface(struct rec_config *c, const char *s)
{
	if (c->nifaces >= REC_MAX_IFACES || strlen(s) >= sizeof(c->ifaces[0]) || !*s)
		return -1;
	strcpy(c->ifaces[c->nifaces++], s);
	return 0;
}

/* One option; 0 ok, -1 bad value. */
static int rc_cli_opt(struct rec_config *c, int opt, const char *a, struct rc_cli_result *res)
{
	unsigned long u;
	int64_t ns;
	switch (opt) {
	case 'o': c->output = a; return 0;
	case 'd': if (rc_parse_duration(a, &ns, 0)) return -1; c->duration_ns = (uint64_t)ns; return 0;
	case 'I':
		if (rc_parse_duration(a, &ns, 0) || ns < 10000000) return -1;
		c->interval_ns = (uint64_t)ns; return 0;
	case 'i': return rc_add_iface(c, a);
	case 'q': c->quiet = true; return 0;
	case 'v': c->verbose = true; return 0;
	case OPT_PORT:
		if (c->nports >= REC_MAX_FILTERS || rc_parse_uint(a, 65535, &u) || !u) return -1;
		c->ports[c->nports++] = (uint16_t)u; return 0;
	case OPT_HOST:
		if (c->nhosts >= REC_MAX_FILTERS || rc_parse_host(a, &c->hosts[c->nhosts])) return -1;
		c->nhosts++; return 0;
	case OPT_PID:
		if (c->npids >= REC_MAX_FILTERS || rc_parse_uint(a, 0x7fffffff, &u) || !u) return -1;
		c->pids[c->npids++] = (uint32_t)u; return 0;
	case OPT_CGROUP: c->cgroup_path = a; return 0;
	case OPT_NETNS: c->netns = a; return 0;
	case OPT_SAMPLE_HZ:
		if (a && strcmp(a, "tick") == 0) {
			c->sample_tick = true;
			c->sample_hz = REC_TICK_FALLBACK_HZ;
			return 0;
		}
		if (rc_parse_uint(a, 100000, &u)) return -1;
		c->sample_tick = false;
		c->sample_hz = (unsigned)u; return 0;
	case OPT_REDACT: c->redact_paths = true; return 0;
	case OPT_REDACT_KEY: c->redact_paths = true; c->redact_key_file = a; return 0;
	case OPT_FSYNC: c->fsync = true; return 0;
	case OPT_ZSTD:
		if (rc_parse_uint(a, 22, &u) || !u) return -1;
		c->zstd_level = (int)u; return 0;
	case OPT_MAX_SIZE: return rc_parse_size(a, &c->max_size) || !c->max_size ? -1 : 0;
	case OPT_ROTATE: return rc_parse_rotate(c, a);
	case OPT_FLIGHT: return rc_parse_flight(c, a);
	case OPT_TRIGGER_ON:
		if (c->ntrigger_on >= 8 || !*a) return -1;
		c->trigger_on[c->ntrigger_on++] = a; return 0;
	case OPT_MAX_CPU: return rc_parse_double(a, 0.1, 100.0 * 1024, &c->max_cpu_pct);
	case OPT_NICE:
		if (rc_parse_uint(a, 39, &u)) return -1;
		c->nice = (int)u; return 0;
	case OPT_SLICE:
		if (rc_parse_uint(a, 1000000, &u)) return -1;
		c->slice_us = (unsigned)u; return 0;
	case OPT_PACKETS: c->pktpath = true; return 0;
	case OPT_SAMPLE: return rc_parse_sample(a, &c->sample_n);
	case OPT_PER_FLOW_CAP:
		if (rc_parse_uint(a, UINT32_MAX, &u)) return -1;
		c->per_flow_cap = (uint32_t)u; return 0;
	case OPT_ACTIVE_IDS: c->active_ids = true; return 0;
	case OPT_CGROUP_ROOT: c->cgroup_root = a; return 0;
	case OPT_PROFILE_BASELINE: c->profile_baseline = a; return 0;
	case OPT_BASELINE: c->baseline = a; return 0;
	case OPT_SCALE: return rc_parse_double(a, 0.0001, 1e6, &c->scale_x);
	case OPT_EWMA: return rc_parse_double(a, 0.0001, 1.0, &c->ewma_alpha);
	case OPT_ALERT_WINDOW:
		if (rc_parse_uint(a, 1000000, &u)) return -1;
		c->alert_window_t = (unsigned)u; return 0;
	case OPT_SYNC_LISTEN:
		if (rc_parse_uint(a, 65535, &u) || !u) return -1;
		c->sync_listen_port = (uint16_t)u; return 0;
	case OPT_SYNC_PEER:
		if (c->nsync_peers >= 8 || !strchr(a, ':')) return -1;
		c->sync_peers[c->nsync_peers++] = a; return 0;
	case OPT_CLOCK_SHIFT: {
		/* a bare signed integer is ns here (the unit the tests think in) */
		char *end;
		errno = 0;
		long long v = strtoll(a, &end, 10);
		if (!errno && end != a && !*end)
			ns = v;
		else if (rc_parse_duration(a, &ns, 1))
			return -1;
		c->test_clock_shift_ns = ns; return 0;
	}
	case OPT_NO_TXN: c->no_txn = true; return 0;
	case OPT_NO_FLOWS: c->no_flows = true; return 0;
	case OPT_NO_NETCPU: c->no_netcpu = true; return 0;
	case OPT_NO_THREADS: c->no_threads = true; return 0;
	case OPT_NO_SEND_CALLS: c->no_send_calls = true; c->send_calls_given = true; return 0;
	case OPT_SEND_CALLS: c->no_send_calls = false; c->send_calls_given = true; return 0;
	case OPT_NETCPU: {
		/* sample|exact[:HZ], HZ the socket sampler's rate (exact: cross-check) */
		size_t k = strcspn(a, ":");
		c->netcpu_given = true;
		c->netcpu_exact = k == 5 && !strncmp(a, "exact", 5);
		if (!c->netcpu_exact && (k != 6 || strncmp(a, "sample", 6))) return -1;
		if (!a[k]) return 0;
		if (rc_parse_uint(a + k + 1, 10000, &u) || !u) return -1;
		c->netcpu_sock_hz = (unsigned)u; return 0;
	}
	case OPT_TRIGGER: res->action = RC_CLI_TRIGGER; res->trigger_target = a; return 0;
	case OPT_SYNC_KEY: c->sync_key_file = a; return 0;
	case OPT_SYNC_BIND: c->sync_bind = a; return 0;
	case 'Z': c->run_user = a; return 0;
	case OPT_FULL: c->full = true; return 0;
	case OPT_TXN_EVENTS: return rc_parse_txn_events(c, a);
	}
	return -1;
}

static const char *rc_opt_name(int opt)
{
	for (const struct option *o = rc_long_opts; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

static enum rc_cli_action rc_cli_check(struct rec_config *c, struct rc_cli_result *res,
				       char *err, size_t errlen)
{
	if (res->action == RC_CLI_TRIGGER)
		return RC_CLI_TRIGGER;
	if (!c->output) {
		snprintf(err, errlen, "no output file: use -o FILE (see --help)");
		return RC_CLI_ERROR;
	}
	if (c->baseline && c->profile_baseline) {
		snprintf(err, errlen, "--baseline and --profile-baseline exclude each other");
		return RC_CLI_ERROR;
	}
	if ((c->rotate_size ? 1 : 0) + ((c->flight_bytes || c->flight_seconds_ns) ? 1 : 0) > 1) {
		snprintf(err, errlen, "--rotate and --flight-recorder exclude each other");
		return RC_CLI_ERROR;
	}
	if (c->full && !c->txn_events_given)
		c->txn_events_n = 1;
	if (c->full && !c->netcpu_given)
		c->netcpu_exact = true;
	/* send calls are hooked only where asked for, or where what was
	 * asked for clocks them anyway */
	if (!c->send_calls_given)
		c->no_send_calls = !c->full && !(c->netcpu_exact && !c->no_netcpu);
	if (c->no_send_calls && c->netcpu_exact && !c->no_netcpu) {
		snprintf(err, errlen, "--no-send-calls and --netcpu exact (or --full) exclude each other: "
			 "exact mode clocks every socket send call");
		return RC_CLI_ERROR;
	}
	return RC_CLI_RUN;
}

enum rc_cli_action rc_cli_parse(struct rec_config *c, int argc, char **argv,
				struct rc_cli_result *res, FILE *out,
				char *err, size_t errlen)
{
	int opt;
	memset(res, 0, sizeof(*res));
	res->action = RC_CLI_RUN;
	c->argc = argc;
	c->argv = argv;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:d:I:i:qvhVZ:", rc_long_opts, NULL)) != -1) {
		if (opt == 'h') {
			rc_cli_usage(out);
			return res->action = RC_CLI_HELP;
		}
		if (opt == 'V') {
			fprintf(out, "nprec %s\n", NP_VERSION);
			return res->action = RC_CLI_VERSION;
		}
		if (opt == '?' || opt == ':') {
			const char *bad = argv[optind - 1];
			snprintf(err, errlen, "%s option %s (see --help)",
				 opt == ':' ? "missing value for" : "unknown", bad ? bad : "?");
			return res->action = RC_CLI_ERROR;
		}
		if (rc_cli_opt(c, opt, optarg, res)) {
			char name[32];
			if (opt < 256) snprintf(name, sizeof(name), "-%c", opt);
			else snprintf(name, sizeof(name), "--%s", rc_opt_name(opt));
			snprintf(err, errlen, "invalid value '%s' for %s (see --help)",
				 optarg ? optarg : "", name);
			return res->action = RC_CLI_ERROR;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		return res->action = RC_CLI_ERROR;
	}
	return res->action = rc_cli_check(c, res, err, errlen);
}

/* ---- resolution ---- */

static int rc_resolve_netns(struct rec_config *c, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	if (strchr(c->netns, '/'))
		snprintf(path, sizeof(path), "%s", c->netns);
	else
		snprintf(path, sizeof(path), "/var/run/netns/%s", c->netns);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0) close(fd);
		snprintf(err, errlen, "cannot open network namespace %s: %s (create it with 'ip netns add NAME' or pass /proc/PID/ns/net)",
			 path, strerror(e));
		return -e;
	}
	c->netns_fd = fd;
	c->netns_ino = (uint64_t)st.st_ino;
	return 0;
}

/* On cgroup v2 the id BPF sees (bpf_get_current_cgroup_id) is the
 * kernfs inode number of the cgroup directory. */
static int rc_resolve_cgroup(struct rec_config *c, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	if (c->cgroup_path[0] == '/' && strncmp(c->cgroup_path, c->cgroup_root, strlen(c->cgroup_root)) == 0)
		snprintf(path, sizeof(path), "%s", c->cgroup_path);
	else
		snprintf(path, sizeof(path), "%s/%s", c->cgroup_root,
			 c->cgroup_path + (c->cgroup_path[0] == '/'));
	struct statfs sf;
	int e = stat(path, &st) < 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
	if (e) {
		snprintf(err, errlen, "cannot use cgroup %s: %s (give a cgroup v2 directory)", path, strerror(e));
		return -e;
	}
	/* a v1 or tmpfs directory has an inode too, but no cgroup id */
	if (statfs(path, &sf) < 0 || (unsigned long)sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errlen, "cannot use cgroup %s: not in a cgroup v2 hierarchy (no cgroup2 mounted?)", path);
		return -ENOTDIR;
	}
	c->cgroup_id = (uint64_t)st.st_ino;
	return 0;
}

/* Hybrid cgroup setups (v1 controllers at /sys/fs/cgroup) keep the v2
 * hierarchy, whose ids BPF sees, at /sys/fs/cgroup/unified. */
static void rc_resolve_cgroup_root(struct rec_config *c)
{
	static const char def[] = "/sys/fs/cgroup";
	if (strcmp(c->cgroup_root, def) != 0 || access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		return;
	if (access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0)
		c->cgroup_root = "/sys/fs/cgroup/unified";
}

/* A --sync-key that would be refused later is a usage error, found now. */
static int rc_check_sync_key(const struct rec_config *c, char *err, size_t errlen)
{
	struct cs_key k;
	int r = cs_key_load(c->sync_key_file, &k, err, errlen);
	cs_key_wipe(&k);
	return r;
}

/* And a --redact-key: read now, before the recording starts. */
static int rc_check_redact_key(const struct rec_config *c, char *err, size_t errlen)
{
	uint8_t k[RC_KEYFILE_MIN];
	int r = rc_keyfile_load("--redact-key", c->redact_key_file, k, sizeof(k), err, errlen);
	sodium_memzero(k, sizeof(k));
	return r;
}

int rc_cli_resolve(struct rec_config *c, char *err, size_t errlen)
{
	int r;
	rc_resolve_cgroup_root(c);
	if (c->sync_key_file && (r = rc_check_sync_key(c, err, errlen)))
		return r;
	if (c->redact_key_file && (r = rc_check_redact_key(c, err, errlen)))
		return r;
	if (c->netns && (r = rc_resolve_netns(c, err, errlen)))
		return r;
	if (c->cgroup_path && (r = rc_resolve_cgroup(c, err, errlen)))
		return r;
	return 0;
}

/* ---- nprec --trigger ---- */

static int rc_read_pidfile(const char *path, long *pid)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	buf[n] = 0;
	char *end;
	*pid = strtol(buf, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	return (*end || *pid <= 0) ? -EINVAL : 0;
}

int rc_cli_trigger(const char *target, char *err, size_t errlen)
{
	long pid;
	char *end;
	pid = strtol(target, &end, 10);
	if (*end || pid <= 0) {
		int r = rc_read_pidfile(target, &pid);
		if (r) {
			snprintf(err, errlen, "cannot read a pid from %s: %s", target, strerror(-r));
			return r;
		}
	}
	if (kill((pid_t)pid, SIGUSR1) < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot signal nprec pid %ld: %s", pid, strerror(e));
		return -e;
	}
	return 0;
}
