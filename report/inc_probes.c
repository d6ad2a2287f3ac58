/* The incident summary's word on missing probes (RECORDER line), from the
 * analysis' probes table (npanalyze: the recordings' HEADER and PROBES
 * records). A probe the recorder could not attach leaves a hole in the data
 * a reader must know about; what the recorder skipped by design (a family
 * turned off, a variant not needed) is not named. */
#include <stdio.h>
#include <string.h>
#include "inctab.h"

enum inc_pcol { PC_HOST, PC_FAM, PC_PROBE, PC_STATE, PC_REASON, PC_N };

/* The part of a probe name after its last '/', up to a '<' or '_<':
 * "tracepoint/syscalls/sys_enter_<socket calls>" -> "sys_enter". */
static size_t inc_probe_stem(const char *probe, const char **stem)
{
	const char *s = strrchr(probe, '/');
	s = s ? s + 1 : probe;
	size_t n = strcspn(s, "<");
	while (n && s[n - 1] == '_')
		n--;
	*stem = s;
	return n;
}

/* An attached probe of the same host and family that does the failed one's
 * job: one of the two names' stems is a prefix of the other's (the recorder
 * names a fallback after the hook it replaces, e.g. netcpu's per-syscall
 * tracepoints and tp_btf/sys_enter). NULL when there is none. */
static const char *inc_probe_instead(const struct np_table *t, const int *c, size_t r)
{
	const char *fs, *host = inc_str(t, r, c[PC_HOST]), *fam = inc_str(t, r, c[PC_FAM]);
	size_t fn = inc_probe_stem(inc_str(t, r, c[PC_PROBE]), &fs);
	for (size_t k = 0; fn && k < t->nrows; k++) {
		const char *as;
		if (k == r || strcmp(inc_str(t, k, c[PC_STATE]), "attached") ||
		    strcmp(inc_str(t, k, c[PC_HOST]), host) || strcmp(inc_str(t, k, c[PC_FAM]), fam))
			continue;
		size_t an = inc_probe_stem(inc_str(t, k, c[PC_PROBE]), &as);
		size_t m = an < fn ? an : fn;
		if (m && !strncmp(as, fs, m))
			return inc_str(t, k, c[PC_PROBE]);
	}
	return NULL;
}

/* Failed probe, or a whole family the recorder turned off for a reason
 * other than the user's choice (nprec writes "off" then). */
static bool inc_probe_missing(const struct np_table *t, const int *c, size_t r)
{
	const char *st = inc_str(t, r, c[PC_STATE]);
	if (!strcmp(st, "failed"))
		return true;
	return !strcmp(st, "skipped") && !strcmp(inc_str(t, r, c[PC_PROBE]), "(family)") &&
	       strcmp(inc_str(t, r, c[PC_REASON]), "off") && *inc_str(t, r, c[PC_REASON]);
}

size_t inc_probes_text(const struct np_table *t, bool name_hosts, char *buf, size_t size)
{
	static const char *const names[PC_N][2] = {
		{ "host", NULL }, { "family", NULL }, { "probe", NULL }, { "state", NULL }, { "reason", NULL } };
	int c[PC_N];
	size_t o = 0, n = 0;
	if (size)
		buf[0] = 0;
	for (int i = 0; i < PC_N; i++)
		if ((c[i] = inc_col(t, names[i])) < 0)
			return 0;
	for (size_t r = 0; r < t->nrows && o + 1 < size; r++) {
		if (!inc_probe_missing(t, c, r))
			continue;
		const char *why = inc_str(t, r, c[PC_REASON]), *instead = inc_probe_instead(t, c, r);
		bool fam = !strcmp(inc_str(t, r, c[PC_PROBE]), "(family)");
		int wl = (int)strlen(why);
		o += (size_t)snprintf(buf + o, size - o, "%s%s%s%s: %s%s%s%.*s%s%s", n ? "; " : "",
				      name_hosts ? inc_str(t, r, c[PC_HOST]) : "", name_hosts ? " " : "",
				      inc_str(t, r, c[PC_FAM]), fam ? "family off" : inc_str(t, r, c[PC_PROBE]),
				      fam ? "" : " failed", *why ? " (" : "", wl > 120 ? 120 : wl, why,
				      wl > 120 ? "…" : "", *why ? ")" : "");
		if (instead && o + 1 < size)
			o += (size_t)snprintf(buf + o, size - o, ", using %s", instead);
		n++;
	}
	if (o >= size && size > 4)
		memcpy(buf + size - 4, "…", 4);
	return n;
}
