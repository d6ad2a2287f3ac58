/* npanalyze: merges the recordings of N hosts into one analysis file
 * (docs/ANALYSIS.md). `npanalyze patterns ...` runs the degradation-pattern
 * miner (analyze/patterns/). */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "ana.h"
#include "ana_progress.h"
#include "numarg.h"
#include "patterns.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: npanalyze [-o OUT.npa] [--ref HOST] [--from T --to T] [--flow FILTER]\n"
"                 [--alias FILE=NAME] [--threads N] [--mem SIZE] [--window S|auto]\n"
"                 [--horizon S] [-q] REC.npr...\n"
"       npanalyze patterns ...   (latency degradation patterns; --help there)\n"
"\n"
"Merges the recordings of several hosts (rotated sets of one host are grouped\n"
"by identity), aligns their clocks on the reference host, and writes one\n"
"analysis file: clock model, packet-path decomposition, jitter, loss,\n"
"throughput, transactions, network CPU, bottlenecks, service graph.\n"
"\n"
"  -o, --output FILE   analysis file to write (default: analysis.npa)\n"
"  -n, --dry-run       analyse and print the summary, write nothing\n"
"      --ref HOST      reference host for the timeline (default: first input)\n"
"      --from T, --to T  only packets in this window; T in seconds from the\n"
"                      first reference timestamp (e.g. 2.5) or absolute ns\n"
"                      with suffix 'ns'\n"
"      --flow FILTER   only flows whose key contains FILTER (e.g. ':8080')\n"
"      --alias FILE=NAME  host name for the recording FILE (e.g. one without header)\n"
"      --threads N     threads reading chunks, decoding, joining and decomposing\n"
"                      (default: one per CPU); the analysis is the same byte for\n"
"                      byte for any N\n"
"      --mem SIZE      refuse (exit 2) when the predicted peak memory passes\n"
"                      SIZE (e.g. 2G), checked while reading, before it is used\n"
"      --window S      streamed analysis in windows of S seconds of the reference\n"
"                      host's clock: memory bounded by one window, inputs read 3\n"
"                      times; the same tables, jitter percentiles from a sketch\n"
"                      (docs/ANALYSIS.md, \"Scale\")\n"
"      --window auto   in memory, or streamed in the longest window that fits\n"
"                      --mem when the predicted peak passes it (needs --mem)\n"
"      --horizon S     streamed: also read S seconds each side of a window\n"
"                      (default 0.2): more than a packet's first-to-last hook\n"
"                      time plus the hosts' wall-clock error (warned when not)\n"
"  -q, --quiet         no progress on stderr\n"
"  -h, --help, -V, --version\n"
"\n"
"Exit status: 0 analysis written (minor notes only: events lost below 0.1 %%\n"
"of a host's events); 1 analysis written with warnings (damaged input, lost\n"
"events, unaligned hosts ...); 2 usage error or no analysis written: an input\n"
"missing, not an np recording, or given twice (also as a copy), or the\n"
"predicted peak memory above --mem.\n");
}

static int parse_time(const char *s, uint64_t *ns, bool *relative)
{
	const char *end;
	double v;
	if (np_parse_num(s, 0, DBL_MAX, &v, &end))
		return -1;
	if (!strcmp(end, "ns")) {
		*ns = (uint64_t)v;
		*relative = false;
		return 0;
	}
	if (*end && strcmp(end, "s"))
		return -1;
	*ns = (uint64_t)(v * 1e9);
	*relative = true;
	return 0;
}


/* "2G", "500M", "64k", bytes without a suffix; at least 1 MB. */
static int parse_size(const char *s, uint64_t *out)
{
	const char *end;
	double v;
	if (np_parse_num(s, 0, 1e18, &v, &end))
		return -1;
	double mul = !*end ? 1 : strchr("kK", *end) ? 1024.0 : strchr("mM", *end) ? 1048576.0
		     : strchr("gG", *end) ? 1073741824.0 : strchr("tT", *end) ? 1099511627776.0 : 0;
	if (!mul || (*end && end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB")) || v * mul < 1048576)
		return -1;
	*out = (uint64_t)(v * mul);
	return 0;
}

/* Resident bytes now (/proc/self/statm), 0 when unknown. */
static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *alias_for(const struct ana_options *o, const char *path)
{
	for (size_t i = 0; i < o->naliases; i++) {
		const char *eq = strchr(o->aliases[i], '=');
		if (eq && (size_t)(eq - o->aliases[i]) == strlen(path) &&
		    !strncmp(o->aliases[i], path, (size_t)(eq - o->aliases[i])))
			return eq + 1;
	}
	return NULL;
}

/* What tells two inputs apart: the file itself, and its size plus a hash
 * of its first 64 KiB (header, clock reference and first interval: a copy
 * of a recording has the same, another recording or a rotated part not). */
struct input_id { dev_t dev; ino_t ino; off_t size; uint64_t head; };

static int input_id_of(const char *path, struct input_id *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int e = -errno;
		close(fd);
		return e;
	}
	static unsigned char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	uint64_t h = 1469598103934665603ull;
	for (ssize_t i = 0; i < n; i++)
		h = (h ^ buf[i]) * 1099511628211ull;
	*id = (struct input_id){ st.st_dev, st.st_ino, st.st_size, h };
	return S_ISDIR(st.st_mode) ? -EISDIR : 0;
}

/* Refuses inputs that cannot be analysed as given, with one line each:
 * missing or unreadable, or the same recording twice (counts would double). */
static int check_inputs(char **paths, int n)
{
	struct input_id *ids = calloc((size_t)n, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		int rc = input_id_of(paths[i], &ids[i]);
		if (rc) {
			fprintf(stderr, "npanalyze: %s: %s\n", paths[i], strerror(-rc));
			bad = 1;
			continue;
		}
		for (int j = 0; j < i; j++) {
			bool same = ids[j].dev == ids[i].dev && ids[j].ino == ids[i].ino;
			bool copy = ids[j].size == ids[i].size && ids[j].head == ids[i].head;
			if (same || copy) {
				fprintf(stderr, "npanalyze: %s: %s %s, given twice\n", paths[i],
					same ? "is the same file as" : "is a copy of", paths[j]);
				bad = 1;
				break;
			}
		}
	}
	free(ids);
	return bad ? -EINVAL : 0;
}

/* --window: the streamed analysis (ana_stream.c). */
static int run_streamed(struct ana_options *opt, char **files, int n, const char *out)
{
	const char **aliases = calloc((size_t)n, sizeof(*aliases));
	if (!aliases)
		return 2;
	for (int i = 0; i < n; i++)
		aliases[i] = alias_for(opt, files[i]);
	opt->prog = NULL;
	malloc_trim(0);     /* what an abandoned in-memory read held goes back */
	opt->mem_base = ana_rss_now();
	int rc = ana_stream_main(opt, files, aliases, n, out, stdout);
	free(aliases);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "patterns"))
		return patterns_main(argc - 1, argv + 1);
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' }, { "ref", required_argument, NULL, 'r' },
		{ "from", required_argument, NULL, 'F' }, { "to", required_argument, NULL, 'T' },
		{ "flow", required_argument, NULL, 'f' }, { "alias", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' }, { "dry-run", no_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 'j' }, { "mem", required_argument, NULL, 'm' },
		{ "window", required_argument, NULL, 'w' }, { "horizon", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* the reader allocates and frees large buffers per chunk: keep them in
	 * the heap instead of mmap/munmap (and page faults) every time */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	/* worker threads allocate a few large blocks each: one heap, so what
	 * they free serves the later phases instead of idling in their arenas */
	mallopt(M_ARENA_MAX, 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct ana_options opt = { .threads = ncpu > 0 ? (unsigned)ncpu : 1 };
	const char *out = "analysis.npa";
	bool dry = false, win_auto = false;
	int c;
	while ((c = getopt_long(argc, argv, "o:qnhV", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'r': opt.ref = optarg; break;
		case 'F':
			if (parse_time(optarg, &opt.from_ns, &opt.from_rel)) {
				fprintf(stderr, "npanalyze: --from %s: not a time (seconds, or NNNns)\n", optarg);
				return 2;
			}
			opt.from_set = true;
			break;
		case 'T':
			if (parse_time(optarg, &opt.to_ns, &opt.to_rel)) {
				fprintf(stderr, "npanalyze: --to %s: not a time (seconds, or NNNns)\n", optarg);
				return 2;
			}
			opt.to_set = true;
			break;
		case 'f': opt.flow_filter = optarg; break;
		case 'a':
			if (!strchr(optarg, '=') || opt.naliases >= 64) {
				fprintf(stderr, "npanalyze: --alias wants FILE=NAME\n");
				return 2;
			}
			opt.aliases[opt.naliases++] = optarg;
			break;
		case 'j': {
			double v;
			const char *end;
			if (np_parse_num(optarg, 1, 64, &v, &end) || *end || v != (double)(unsigned)v) {
				fprintf(stderr, "npanalyze: --threads %s: not a count of 1 to 64\n", optarg);
				return 2;
			}
			opt.threads = (unsigned)v;
			break;
		}
		case 'm':
			if (parse_size(optarg, &opt.mem_limit)) {
				fprintf(stderr, "npanalyze: --mem %s: not a size (e.g. 2G, 500M)\n", optarg);
				return 2;
			}
			break;
		case 'w': {
			bool rel;
			if (!strcmp(optarg, "auto")) {
				win_auto = true;
			} else if (parse_time(optarg, &opt.window_ns, &rel) || !opt.window_ns) {
				fprintf(stderr, "npanalyze: --window %s: not a duration (seconds, or NNNns) "
					"nor auto\n", optarg);
				return 2;
			}
			break;
		}
		case 'H': {
			bool rel;
			if (parse_time(optarg, &opt.horizon_ns, &rel) || !opt.horizon_ns) {
				fprintf(stderr, "npanalyze: --horizon %s: not a duration (seconds, or NNNns)\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'q': opt.quiet = true; break;
		case 'n': dry = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("npanalyze %s\n", NP_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "npanalyze: no recording given\n");
		usage(stderr);
		return 2;
	}
	if (check_inputs(argv + optind, argc - optind))
		return 2;
	if ((opt.window_ns || win_auto) && (opt.from_set || opt.to_set || opt.flow_filter)) {
		fprintf(stderr, "npanalyze: --window does not combine with --from, --to or --flow\n");
		return 2;
	}
	if (win_auto && !opt.mem_limit) {
		fprintf(stderr, "npanalyze: --window auto needs --mem\n");
		return 2;
	}
	if (opt.window_ns)
		return run_streamed(&opt, argv + optind, argc - optind, dry ? NULL : out);
	struct ana_model m;
	ana_model_init(&m, &opt);
	int nread = 0;
	double t0 = ana_cpu_s(), tm0 = ana_thread_cpu_s(), w0 = wall_s();
	struct ana_progress prog;
	ana_progress_init(&prog, !opt.quiet && isatty(STDERR_FILENO), argv + optind, argc - optind);
	opt.prog = &prog;
	opt.mem_base = ana_rss_now();
	for (int i = optind; i < argc; i++) {
		ana_progress_clear(&prog);
		if (!opt.quiet)
			fprintf(stderr, "npanalyze: reading %s (%d/%d)\n", argv[i], i - optind + 1, argc - optind);
		ana_progress_file(&prog, i - optind + 1, argv[i]);
		int rc = ana_load_file(&m, argv[i], alias_for(&opt, argv[i]));
		if (rc == ANA_LOAD_OVER_MEM && win_auto) {
			ana_progress_clear(&prog);
			if (!opt.quiet)
				fprintf(stderr, "npanalyze: the analysis in memory would need more than "
					"--mem %.0f MB: streamed instead\n", (double)opt.mem_limit / 1048576);
			ana_model_free(&m);
			return run_streamed(&opt, argv + optind, argc - optind, dry ? NULL : out);
		}
		if (rc == ANA_LOAD_OVER_MEM) {
			ana_progress_clear(&prog);
			fprintf(stderr, "npanalyze: %s: stopped reading: the analysis would need about "
				"%.0f MB (%zu packet events so far, ~%d bytes each), more than --mem %.0f MB\n",
				argv[i], (double)ana_mem_predict(&m) / 1048576, m.pev.n, ANA_MEM_PER_EVENT,
				(double)opt.mem_limit / 1048576);
			ana_model_free(&m);
			return 2;
		}
		if (rc == ANA_LOAD_NOT_NP) {
			fprintf(stderr, "npanalyze: %s: not an np recording (no np file header or "
				"chunk anywhere in it)\n", argv[i]);
			ana_model_free(&m);
			return 2;
		}
		if (rc == 0)
			nread++;
	}
	ana_progress_clear(&prog);
	opt.prog = NULL;
	if (!nread) {
		for (size_t i = 0; i < m.warnings.n; i++)
			fprintf(stderr, "npanalyze: %s\n", m.warnings.v[i]);
		fprintf(stderr, "npanalyze: no input could be read\n");
		ana_model_free(&m);
		return 2;
	}
	if (!opt.quiet)
		fprintf(stderr, "npanalyze: %zu packet events from %zu host(s) read in %.3f s CPU %.3f s main "
			"%.3f s wall; analysing (predicted peak memory %.0f MB)\n", m.pev.n, m.hosts.n,
			ana_cpu_s() - t0, ana_thread_cpu_s() - tm0, wall_s() - w0,
			(double)ana_mem_predict(&m) / 1048576);
	size_t nev = m.pev.n;       /* ana_run frees the events after the join */
	int rc = ana_run(&m, dry ? NULL : out, stdout);
	if (rc) {
		fprintf(stderr, "npanalyze: cannot write %s: %s\n", out, strerror(-rc));
		ana_model_free(&m);
		return 2;
	}
	if (!opt.quiet && !dry)
		fprintf(stderr, "npanalyze: wrote %s\n", out);
	struct rusage ru;
	if (!opt.quiet && !getrusage(RUSAGE_SELF, &ru))
		fprintf(stderr, "npanalyze: peak memory %.0f MB (%.0f bytes per packet event)\n",
			(double)ru.ru_maxrss / 1024, nev ? (double)ru.ru_maxrss * 1024 / (double)nev : 0);
	int status = m.warnings.n > m.nminor ? 1 : 0;
	ana_model_free(&m);
	return status;
}
