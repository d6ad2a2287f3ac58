#include "incident.h"
#include "csvout.h"
#include "inctab.h"
#include "textrep.h"
#include "units.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const inc_kind_names[RPT_INC_NKINDS] = {
	"slow_endpoint", "slow_downstream", "time_spent", "pattern", "tail", "loss", "clock", "recorder",
};

const char *rpt_inc_kind_name(enum rpt_inc_kind k)
{
	return k < RPT_INC_NKINDS ? inc_kind_names[k] : "?";
}

struct rpt_inc_item *rpt_inc_add(struct rpt_incident *inc, enum rpt_inc_kind k, double impact,
				 const char *table, const char *fmt, ...)
{
	if (inc->n >= RPT_INC_MAX)
		return NULL;
	struct rpt_inc_item *it = &inc->items[inc->n++];
	memset(it, 0, sizeof(*it));
	it->kind = k;
	it->impact = impact;
	it->value_ns = it->baseline_ns = it->added_ns = it->bound_ns = it->count = NAN;
	snprintf(it->table, sizeof(it->table), "%s", table);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(it->text, sizeof(it->text), fmt, ap);
	va_end(ap);
	return it;
}

const char *rpt_inc_dur(char *buf, size_t n, double ns)
{
	rpt_fmt_auto(buf, n, ns, "ns");
	return buf;
}

static int inc_cmp_impact(const void *x, const void *y)
{
	const struct rpt_inc_item *a = x, *b = y;
	if (a->impact != b->impact)
		return a->impact < b->impact ? 1 : -1;
	return (int)a->kind - (int)b->kind;
}

void rpt_incident_build(const struct np_analysis *a, struct rpt_incident *inc)
{
	memset(inc, 0, sizeof(*inc));
	struct inc_eps eps;
	inc_eps_load(&eps, np_analysis_table(a, "transactions"));
	inc_slow_endpoints(inc, &eps);
	inc_time_spent(inc, np_analysis_table(a, "bottlenecks"));
	inc_pattern(inc, np_analysis_table(a, "patterns"));
	inc_loss(inc, a, &eps);
	inc_tails(inc, &eps, inc_lost_total(inc));
	/* stable order among equal impact: by kind */
	qsort(inc->items, inc->n, sizeof(inc->items[0]), inc_cmp_impact);
	inc_clock(inc, np_analysis_table(a, "clock"));
	inc_recorder(inc, a);
	inc_eps_free(&eps);
}

const char *rpt_inc_kind_label(enum rpt_inc_kind k)
{
	switch (k) {
	case RPT_INC_SLOW:     return "SLOW";
	case RPT_INC_CAUSE:    return "CAUSE";
	case RPT_INC_WHERE:    return "WHERE";
	case RPT_INC_PATTERN:  return "PATTERN";
	case RPT_INC_TAIL:     return "TAIL";
	case RPT_INC_LOSS:     return "LOSS";
	case RPT_INC_CLOCK:    return "CLOCK";
	case RPT_INC_RECORDER: return "RECORDER";
	default:               return "?";
	}
}

void rpt_incident_text(FILE *f, const struct rpt_incident *inc, size_t width)
{
	fputs("Incident summary (from the analysis alone; most added latency for users first)\n", f);
	if (inc->n == 0)
		fputs("  nothing to summarise: no endpoint, loss, clock or recorder table\n", f);
	for (size_t i = 0; i < inc->n; i++) {
		const struct rpt_inc_item *it = &inc->items[i];
		char head[32], line[sizeof(it->text) + sizeof(it->table) + 8];
		int hl = snprintf(head, sizeof(head), "%2zu. %-8s ", i + 1, rpt_inc_kind_label(it->kind));
		snprintf(line, sizeof(line), "%s  [%s]", it->text, it->table);
		fputs(head, f);
		rpt_wrap(f, line, (size_t)hl, (size_t)hl, width);
	}
	fputc('\n', f);
}

int rpt_incident_csv(FILE *f, const struct np_analysis *a)
{
	struct rpt_incident inc;
	rpt_incident_build(a, &inc);
	fputs("rank,kind,subject,host,value_ns,baseline_ns,added_ns,bound_ns,count,"
	      "impact_ns_per_s,tables,text\r\n", f);
	for (size_t i = 0; i < inc.n; i++) {
		const struct rpt_inc_item *it = &inc.items[i];
		const double nums[] = { it->value_ns, it->baseline_ns, it->added_ns, it->bound_ns,
					it->count, it->impact >= 0 ? it->impact : NAN };
		fprintf(f, "%zu,%s,", i + 1, rpt_inc_kind_name(it->kind));
		rpt_csv_str(f, it->subject);
		fputc(',', f);
		rpt_csv_str(f, it->host);
		for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
			fputc(',', f);
			rpt_csv_f64(f, nums[k]);
		}
		fputc(',', f);
		rpt_csv_str(f, it->table);
		fputc(',', f);
		rpt_csv_str(f, it->text);
		fputs("\r\n", f);
	}
	return ferror(f) ? -1 : 0;
}
