/* npreport: renders an analysis (.npa) as text, CSV and plots, compares two
 * analyses for CI, and dumps any np file. Placeholder main until the report
 * modules land: it keeps the build linking for everyone. */
#include <stdio.h>
#include <string.h>

#if __has_include("dump.h")
#include "dump.h"
#define RPT_HAVE_DUMP 1
#endif

static void rpt_usage(FILE *f)
{
	fprintf(f, "usage: npreport FILE.npa [--section NAME]... [--format text|csv] [-o DIR] [--plots DIR]\n"
		   "       npreport compare BASE.npa NEW.npa [--threshold PCT] [--alpha A] [--metric M]...\n"
		   "       npreport dump FILE\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		rpt_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("npreport %s\n", NP_VERSION);
		return 0;
	}
#ifdef RPT_HAVE_DUMP
	if (!strcmp(argv[1], "dump"))
		return dump_main(argc - 1, argv + 1);
#endif
	fprintf(stderr, "npreport: not implemented yet\n");
	return 2;
}
