#include "sections.h"

#include <stdlib.h>
#include <string.h>

static const char *const rpt_p_summary[]  = { "summary", "overview", NULL };
static const char *const rpt_p_hosts[]    = { "hosts", "host", "inputs", "probes", NULL };
static const char *const rpt_p_clock[]    = { "clock", "sync", "skew", NULL };
static const char *const rpt_p_flows[]    = { "flows", "flow", "pkt_flows", "throughput", NULL };
static const char *const rpt_p_decomp[]   = { "decomp", "segments", "latency", NULL };
static const char *const rpt_p_jitter[]   = { "jitter", NULL };
static const char *const rpt_p_loss[]     = { "loss", "lost", "drops", "drop", "retrans", NULL };
static const char *const rpt_p_txn[]      = { "txn", "transactions", "endpoints", "endpoint",
					      "conns", "containers", NULL };
static const char *const rpt_p_netcpu[]   = { "netcpu", "cpu", "netrx", "power", "threads", NULL };
static const char *const rpt_p_stack[]    = { "hoststack", "stack", "bottleneck", "bottlenecks", "alerts",
					      "perfmon", NULL };
static const char *const rpt_p_graph[]    = { "graph", "service", "svc", "critical", "callgraph",
					      "rpc", NULL };
static const char *const rpt_p_patterns[] = { "patterns", "pattern", NULL };

const struct rpt_section rpt_sections[] = {
	{ "summary",  "Summary",                          rpt_p_summary },
	{ "hosts",    "Hosts",                            rpt_p_hosts },
	{ "clock",    "Clock corrections",                rpt_p_clock },
	{ "flows",    "Flows",                            rpt_p_flows },
	{ "decomp",   "Latency decomposition",            rpt_p_decomp },
	{ "jitter",   "Jitter",                           rpt_p_jitter },
	{ "loss",     "Loss and drops",                   rpt_p_loss },
	{ "txn",      "Transactions by endpoint",         rpt_p_txn },
	{ "netcpu",   "Network CPU cost",                 rpt_p_netcpu },
	{ "hoststack","Host-stack bottlenecks",           rpt_p_stack },
	{ "graph",    "Service graph and critical path",  rpt_p_graph },
	{ "patterns", "Degradation patterns",             rpt_p_patterns },
};
const size_t rpt_nsections = sizeof(rpt_sections) / sizeof(rpt_sections[0]);

/* "decomp", "decomp_flow" and "decomp-seg" match prefix "decomp"; "decompose" does not. */
static bool rpt_prefix_match(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0)
		return false;
	return name[n] == '\0' || name[n] == '_' || name[n] == '-' || name[n] == '.';
}

size_t rpt_section_of(const char *table_name)
{
	for (size_t s = 0; s < rpt_nsections; s++)
		for (const char *const *p = rpt_sections[s].prefixes; *p; p++)
			if (rpt_prefix_match(table_name, *p))
				return s;
	return rpt_nsections;
}

size_t rpt_tables_ordered(const struct np_analysis *a, const struct np_table ***out)
{
	const struct np_table **v = calloc(a->ntables + 1, sizeof(*v));
	size_t n = 0;
	if (!v) {
		*out = NULL;
		return 0;
	}
	for (size_t s = 0; s <= rpt_nsections; s++)
		for (size_t i = 0; i < a->ntables; i++)
			if (rpt_section_of(a->tables[i]->name) == s)
				v[n++] = a->tables[i];
	*out = v;
	return n;
}

bool rpt_selector_matches(const char *sel, const struct np_table *t)
{
	if (strcmp(sel, t->name) == 0)
		return true;
	size_t s = rpt_section_of(t->name);
	return s < rpt_nsections && strcmp(rpt_sections[s].name, sel) == 0;
}

bool rpt_selector_known(const char *sel)
{
	if (!strcmp(sel, RPT_SEC_SUMMARY) || !strcmp(sel, RPT_SEC_FINDINGS) || !strcmp(sel, RPT_SEC_INCIDENT) ||
	    !strcmp(sel, RPT_SEC_SERIES) || !strcmp(sel, RPT_SEC_SKETCHES))
		return true;
	for (size_t s = 0; s < rpt_nsections; s++)
		if (!strcmp(rpt_sections[s].name, sel))
			return true;
	return false;
}

bool rpt_selected_table(const struct rpt_selection *sel, const struct np_table *t)
{
	if (sel->n == 0)
		return true;
	for (size_t i = 0; i < sel->n; i++)
		if (rpt_selector_matches(sel->names[i], t))
			return true;
	return false;
}

bool rpt_selected_name(const struct rpt_selection *sel, const char *name, bool dflt)
{
	if (sel->n == 0)
		return dflt;
	for (size_t i = 0; i < sel->n; i++)
		if (!strcmp(sel->names[i], name))
			return true;
	return false;
}
