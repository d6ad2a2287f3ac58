/* npanalyze: merges the recordings of N hosts into one analysis file
 * (docs/ANALYSIS.md). `npanalyze patterns ...` runs the degradation-pattern
 * miner (analyze/patterns*.c). */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "numarg.h"
#include "patterns.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: npanalyze [-o OUT.npa] [--ref HOST] [--from T --to T] [--flow FILTER]\n"
"                 [--alias FILE=NAME] [-q] REC.npr...\n"
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
"  -q, --quiet         no progress on stderr\n"
"  -h, --help, -V, --version\n"
"\n"
"Exit status: 0 analysis written, no warnings; 1 analysis written with\n"
"warnings (damaged input, lost events, unaligned hosts ...); 2 usage error or\n"
"no analysis written.\n");
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

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "patterns"))
		return patterns_main(argc - 1, argv + 1);
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' }, { "ref", required_argument, NULL, 'r' },
		{ "from", required_argument, NULL, 'F' }, { "to", required_argument, NULL, 'T' },
		{ "flow", required_argument, NULL, 'f' }, { "alias", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' }, { "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* the reader allocates and frees large buffers per chunk: keep them in
	 * the heap instead of mmap/munmap (and page faults) every time */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	struct ana_options opt = { 0 };
	const char *out = "analysis.npa";
	bool dry = false;
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
	struct ana_model m;
	ana_model_init(&m, &opt);
	int nread = 0;
	double t0 = ana_cpu_s();
	for (int i = optind; i < argc; i++) {
		if (!opt.quiet)
			fprintf(stderr, "npanalyze: reading %s (%d/%d)\n", argv[i], i - optind + 1, argc - optind);
		if (ana_load_file(&m, argv[i], alias_for(&opt, argv[i])) == 0)
			nread++;
	}
	if (!nread) {
		for (size_t i = 0; i < m.warnings.n; i++)
			fprintf(stderr, "npanalyze: %s\n", m.warnings.v[i]);
		fprintf(stderr, "npanalyze: no input could be read\n");
		ana_model_free(&m);
		return 2;
	}
	if (!opt.quiet)
		fprintf(stderr, "npanalyze: %zu packet events from %zu host(s) read in %.3f s CPU; analysing\n",
			m.pev.n, m.hosts.n, ana_cpu_s() - t0);
	int rc = ana_run(&m, dry ? NULL : out, stdout);
	if (rc) {
		fprintf(stderr, "npanalyze: cannot write %s: %s\n", out, strerror(-rc));
		ana_model_free(&m);
		return 2;
	}
	if (!opt.quiet && !dry)
		fprintf(stderr, "npanalyze: wrote %s\n", out);
	int status = m.warnings.n ? 1 : 0;
	ana_model_free(&m);
	return status;
}
