/* Internals of the incident summary (report/incident.c): reading the
 * analysis tables by column name, and the statement builders. */
#ifndef RPT_INCTAB_H
#define RPT_INCTAB_H

#include <stdbool.h>
#include "anatable.h"
#include "incident.h"

/* Column readers that tolerate a missing column (c < 0). */
const char *inc_str(const struct np_table *t, size_t r, int c);
double inc_num(const struct np_table *t, size_t r, int c);
/* First of the names that is a column of t, or -1. */
int inc_col(const struct np_table *t, const char *const *names);

/* One endpoint as the summary sees it: the server side's row when there is
 * one (time inside the service), else the client side's. */
struct inc_ep {
	const char *key, *host;      /* "ip:port METHOD /path", recording host */
	char svc[64];                /* "ip:port" */
	const char *name;            /* "METHOD /path" */
	double p50, p99, rate, n;
	double base;                 /* median p50 of the service's other endpoints */
	bool user;                   /* called by a host that serves nothing */
};
struct inc_eps {
	size_t n;
	struct inc_ep *v;
};
void inc_eps_load(struct inc_eps *e, const struct np_table *txn);
void inc_eps_free(struct inc_eps *e);
/* Host serving ip:port according to the endpoints (NULL if unknown). */
const char *inc_eps_server(const struct inc_eps *e, const char *svc);

struct rpt_inc_item *rpt_inc_add(struct rpt_incident *inc, enum rpt_inc_kind k, double impact,
				 const char *table, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
const char *rpt_inc_dur(char *buf, size_t n, double ns);

void inc_slow_endpoints(struct rpt_incident *inc, const struct inc_eps *e);
void inc_tails(struct rpt_incident *inc, const struct inc_eps *e, double lost);
void inc_time_spent(struct rpt_incident *inc, const struct np_table *bn);
void inc_pattern(struct rpt_incident *inc, const struct np_table *pat);
void inc_loss(struct rpt_incident *inc, const struct np_analysis *a, const struct inc_eps *e);
double inc_lost_total(const struct rpt_incident *inc);
void inc_clock(struct rpt_incident *inc, const struct np_table *clk);
void inc_recorder(struct rpt_incident *inc, const struct np_analysis *a);
/* Failed probes (and families off for a reason) of the probes table into
 * buf, "family: probe failed (reason), using fallback; ..."; returns how
 * many were named. name_hosts: prefix each with its host. */
size_t inc_probes_text(const struct np_table *t, bool name_hosts, char *buf, size_t size);

#endif
