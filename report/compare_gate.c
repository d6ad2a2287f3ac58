#include "compare_gate.h"
#include "sections.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rpt_fam_names[RPT_NFAM] = {
	"latency", "throughput", "loss", "netcpu", "hoststack", "other" };

/* Defaults: a p99 moving 10 % and 100 us is what users notice; host-stack
 * segments are microseconds, whose 20 % is noise next to one scheduler
 * delay, so they need 20 us too; loss is gated in absolute rate (0.2
 * percentage points: 0 -> 1 % gates, 1.0 -> 1.1 % does not; the drop
 * rate of 1 % injected loss measured 0.29-0.7 %, A/A pairs differed by less). */
static const struct rpt_mineff rpt_fam_default[RPT_NFAM] = {
	[RPT_FAM_LATENCY] = { 10, 100e3 }, [RPT_FAM_THROUGHPUT] = { 10, 0 },
	[RPT_FAM_LOSS] = { 10, 0.002 }, [RPT_FAM_NETCPU] = { 20, 0 },
	[RPT_FAM_HOSTSTACK] = { 20, 20e3 }, [RPT_FAM_OTHER] = { 5, 0 },
};

/* The built-in gate: "the network path got slower". */
static const char *const rpt_default_gate[][2] = {
	{ "transactions.p50", "endpoint|*" }, { "transactions.p99", "endpoint|*" },
	{ "transactions.p999", "endpoint|*" }, { "transactions.requests", "endpoint|*" },
	{ "transactions.rate", "endpoint|*" }, { "loss.loss_rate", NULL },
	{ "flows.retrans_rate", NULL }, { "flows.drop_rate", NULL },
	{ "netcpu.cpu_per_request", NULL },
};

const char *rpt_family_name(enum rpt_family f) { return f < RPT_NFAM ? rpt_fam_names[f] : "?"; }

void rpt_gate_init(struct rpt_gate *g)
{
	memset(g, 0, sizeof(*g));
	g->alpha = NAN;
	g->min_tail = RPT_GATE_MIN_TAIL;
	g->use_default = -1;
	memcpy(g->fam, rpt_fam_default, sizeof(g->fam));
}

void rpt_gate_free(struct rpt_gate *g)
{
	for (size_t i = 0; i < g->nrules; i++) {
		free(g->rules[i].metric);
		free(g->rules[i].key);
	}
	free(g->rules);
	g->rules = NULL;
	g->nrules = 0;
}

void rpt_gate_set_rel(struct rpt_gate *g, double rel_pct)
{
	for (size_t f = 0; f < RPT_NFAM; f++)
		g->fam[f].rel_pct = rel_pct;
}

/* "p99" -> 99/100, "p999" -> 999/1000, "jitter_p50_abs" -> 50/100: pN at
 * the start or after '_', up to the end or a '_'. Returns false otherwise. */
static bool rpt_quantile_frac(const char *m, unsigned long *num, unsigned long *den)
{
	for (const char *p = m; (p = strchr(p, 'p')); p++) {
		if (p != m && p[-1] != '_')
			continue;
		size_t nd = strspn(p + 1, "0123456789");
		if (!nd || nd > 6 || (p[1 + nd] && p[1 + nd] != '_'))
			continue;
		*num = strtoul(p + 1, NULL, 10);
		*den = 100;
		for (size_t i = 2; i < nd; i++)
			*den *= 10;
		return *num > 0 && *num < *den;
	}
	return false;
}

double rpt_quantile_needs(const char *metric, double min_tail)
{
	unsigned long num, den;
	if (!(min_tail > 0) || !rpt_quantile_frac(metric, &num, &den))
		return 0;
	unsigned long tail = num < den - num ? num : den - num;
	/* exact for integral min_tail: 10 x 1000 / 1 for p999, not 9999.99... */
	return ceil(min_tail * (double)den / (double)tail - 1e-9);
}

enum rpt_family rpt_family_of(const char *table, const char *metric, const char *unit)
{
	static const char *const loss[] = { "loss", "retrans", "lost", "drop", NULL };
	static const char *const tput[] = { "throughput", "goodput", "bps", NULL };
	static const char *const app[] = { "transactions", "service_graph", "critical_path",
					   "patterns", "pattern_requests", NULL };
	for (const char *const *p = loss; *p; p++)
		if (strstr(metric, *p))
			return RPT_FAM_LOSS;
	for (const char *const *p = tput; *p; p++)
		if (strstr(metric, *p))
			return RPT_FAM_THROUGHPUT;
	if (!strcmp(metric, "requests") || !strcmp(metric, "rate"))
		return RPT_FAM_THROUGHPUT;
	size_t sec = rpt_section_of(table);
	if (sec < rpt_nsections && !strcmp(rpt_sections[sec].name, "netcpu"))
		return RPT_FAM_NETCPU;
	bool ns = unit && !strcmp(unit, "ns");
	for (const char *const *p = app; *p; p++)
		if (!strcmp(table, *p))
			return ns ? RPT_FAM_LATENCY : RPT_FAM_OTHER;
	return ns ? RPT_FAM_HOSTSTACK : RPT_FAM_OTHER;
}

int rpt_gate_add(struct rpt_gate *g, const char *pattern, bool exclude, struct rpt_mineff eff)
{
	if (g->nrules >= RPT_GATE_MAX_RULES)
		return -1;
	void *p = realloc(g->rules, (g->nrules + 1) * sizeof(*g->rules));
	if (!p)
		return -1;
	g->rules = p;
	struct rpt_gate_rule *r = &g->rules[g->nrules];
	const char *at = strchr(pattern, '@');
	r->metric = at ? strndup(pattern, (size_t)(at - pattern)) : strdup(pattern);
	r->key = at ? strdup(at + 1) : NULL;
	r->eff = eff;
	r->exclude = exclude;
	if (!r->metric || (at && !r->key)) {
		free(r->metric);
		free(r->key);
		return -1;
	}
	g->nrules++;
	return 0;
}

static bool rpt_metric_matches(const char *pat, const char *table, const char *metric)
{
	char full[512];
	snprintf(full, sizeof(full), "%s.%s", table, metric);
	size_t sec = rpt_section_of(table);
	return !fnmatch(pat, full, 0) || !fnmatch(pat, metric, 0) || !strcmp(pat, table) ||
	       (sec < rpt_nsections && !strcmp(pat, rpt_sections[sec].name));
}

static bool rpt_rule_matches(const char *metric_pat, const char *key_pat, const char *table,
			     const char *key, const char *metric)
{
	return rpt_metric_matches(metric_pat, table, metric) &&
	       (!key_pat || !fnmatch(key_pat, key, 0));
}

bool rpt_gate_match(const struct rpt_gate *g, const char *table, const char *key,
		    const char *metric, const char *unit, struct rpt_mineff *eff)
{
	*eff = g->fam[rpt_family_of(table, metric, unit)];
	bool gated = false;
	size_t explicit = 0;
	for (size_t i = 0; i < g->nrules; i++) {
		const struct rpt_gate_rule *r = &g->rules[i];
		explicit += !r->exclude;
		if (!rpt_rule_matches(r->metric, r->key, table, key, metric))
			continue;
		if (r->exclude)
			return false;
		if (!gated) {
			gated = true;
			if (!isnan(r->eff.rel_pct))
				eff->rel_pct = r->eff.rel_pct;
			if (!isnan(r->eff.abs))
				eff->abs = r->eff.abs;
		}
	}
	bool use_default = g->use_default < 0 ? explicit == 0 : g->use_default;
	for (size_t i = 0; !gated && use_default && i < sizeof(rpt_default_gate) / sizeof(rpt_default_gate[0]); i++)
		gated = rpt_rule_matches(rpt_default_gate[i][0], rpt_default_gate[i][1], table, key, metric);
	return gated;
}

/* ---- config file ---- */

/* "10%" -> 0.1 (or 10 as a percentage), "100us" -> 100000 (ns), "0.5" -> 0.5. */
static int rpt_parse_value(const char *s, bool pct_is_percent, double *out)
{
	static const struct { const char *suf; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 } };
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0 || v > 1e15)
		return -1;
	if (!strcmp(end, "%")) {
		*out = pct_is_percent ? v : v / 100;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].suf)) {
			*out = v * units[i].mul;
			return 0;
		}
	return -1;
}

/* "rel PCT" / "abs VALUE" pairs from tok[i..n). */
static const char *rpt_parse_eff(char **tok, size_t i, size_t n, struct rpt_mineff *eff)
{
	for (; i < n; i += 2) {
		if (i + 1 >= n)
			return "'rel' and 'abs' need a value";
		if (!strcmp(tok[i], "rel")) {
			if (rpt_parse_value(tok[i + 1], true, &eff->rel_pct) < 0)
				return "bad 'rel' value (a percentage, e.g. 10 or 10%)";
		} else if (!strcmp(tok[i], "abs")) {
			if (rpt_parse_value(tok[i + 1], false, &eff->abs) < 0)
				return "bad 'abs' value (a number with ns/us/ms/s or %)";
		} else {
			return "expected 'rel' or 'abs'";
		}
	}
	return NULL;
}

#define RPT_MAX_TOKENS 8

static const char *rpt_parse_line(struct rpt_gate *g, char **tok, size_t n)
{
	struct rpt_mineff eff = { NAN, NAN };
	const char *why;
	if (!strcmp(tok[0], "alpha")) {
		double a;
		if (n != 2 || rpt_parse_value(tok[1], false, &a) < 0 || a <= 0 || a > 0.5)
			return "alpha takes one value in (0, 0.5]";
		g->alpha = a;
	} else if (!strcmp(tok[0], "min-tail")) {
		char *end;
		double v = n == 2 ? strtod(tok[1], &end) : NAN;
		if (n != 2 || end == tok[1] || *end || !(v >= 0 && v <= 1e6))
			return "min-tail takes one number (observations beyond a quantile; 0: off)";
		g->min_tail = v;
	} else if (!strcmp(tok[0], "default")) {
		if (n != 2 || (strcmp(tok[1], "on") && strcmp(tok[1], "off")))
			return "default takes 'on' or 'off'";
		g->use_default = !strcmp(tok[1], "on");
	} else if (!strcmp(tok[0], "family")) {
		size_t f = 0;
		while (f < RPT_NFAM && (n < 2 || strcmp(tok[1], rpt_fam_names[f])))
			f++;
		if (f == RPT_NFAM)
			return "unknown family (latency, throughput, loss, netcpu, hoststack, other)";
		eff = g->fam[f];
		if (n < 4 || (why = rpt_parse_eff(tok, 2, n, &eff)))
			return n < 4 ? "family NAME needs rel and/or abs" : why;
		g->fam[f] = eff;
	} else if (!strcmp(tok[0], "gate") || !strcmp(tok[0], "ignore")) {
		bool ign = !strcmp(tok[0], "ignore");
		if (n < 2 || (ign && n != 2))
			return ign ? "ignore takes one pattern" : "gate needs a pattern";
		if ((why = rpt_parse_eff(tok, 2, n, &eff)))
			return why;
		if (rpt_gate_add(g, tok[1], ign, eff) < 0)
			return "too many rules or out of memory";
	} else {
		return "unknown directive (alpha, default, family, gate, ignore, min-tail)";
	}
	return NULL;
}

/* Words split at blanks; "a quoted word" may hold blanks (a path). */
static const char *rpt_tokenize(char *line, char **tok, size_t *n)
{
	char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			return NULL;
		if (*n >= RPT_MAX_TOKENS)
			return "too many words";
		if (*p == '"') {
			char *q = strchr(p + 1, '"');
			if (!q)
				return "unterminated quote";
			tok[(*n)++] = p + 1;
			*q = 0;
			p = q + 1;
			continue;
		}
		tok[(*n)++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (*p)
			*p++ = 0;
	}
}

int rpt_gate_parse(struct rpt_gate *g, const char *text, size_t len, char *err, size_t errlen)
{
	char line[512];
	size_t lineno = 0, pos = 0;
	while (pos < len) {
		size_t e = pos;
		while (e < len && text[e] != '\n')
			e++;
		lineno++;
		size_t ll = e - pos;
		if (ll >= sizeof(line)) {
			snprintf(err, errlen, "line %zu: longer than %zu characters", lineno, sizeof(line) - 1);
			return -1;
		}
		memcpy(line, text + pos, ll);
		line[ll] = 0;
		pos = e + 1;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		if (memchr(text + pos - ll - 1, 0, ll)) {
			snprintf(err, errlen, "line %zu: NUL byte", lineno);
			return -1;
		}
		char *tok[RPT_MAX_TOKENS + 1];
		size_t n = 0;
		const char *why = rpt_tokenize(line, tok, &n);
		if (!why && n == 0)
			continue;
		if (!why)
			why = rpt_parse_line(g, tok, n);
		if (why) {
			snprintf(err, errlen, "line %zu: %s", lineno, why);
			return -1;
		}
	}
	return 0;
}

int rpt_gate_load(struct rpt_gate *g, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	char *buf = malloc(RPT_GATE_MAX_FILE + 1);
	size_t n = buf ? fread(buf, 1, RPT_GATE_MAX_FILE + 1, f) : 0;
	int bad = ferror(f);
	fclose(f);
	if (!buf || bad || n > RPT_GATE_MAX_FILE) {
		snprintf(err, errlen, "%s", !buf ? "out of memory" : bad ? "read error"
			 : "larger than 64 KiB");
		free(buf);
		return -1;
	}
	int ret = rpt_gate_parse(g, buf, n, err, errlen);
	free(buf);
	return ret;
}
