#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *unit; enum rpt_ukind kind; } rpt_unit_names[] = {
	{ "ns", RPT_U_NS }, { "time_ns", RPT_U_TIME }, { "bytes", RPT_U_BYTES },
	{ "bps", RPT_U_BPS }, { "rate", RPT_U_RATE }, { "ratio", RPT_U_RATIO },
	{ "pct", RPT_U_PCT }, { "ppm", RPT_U_PPM }, { "count", RPT_U_COUNT },
	{ "str", RPT_U_STR }, { "id", RPT_U_STR }, { "bool", RPT_U_BOOL },
};

enum rpt_ukind rpt_ukind_of(const char *unit)
{
	if (!unit || !*unit)
		return RPT_U_PLAIN;
	for (size_t i = 0; i < sizeof(rpt_unit_names) / sizeof(rpt_unit_names[0]); i++)
		if (strcmp(unit, rpt_unit_names[i].unit) == 0)
			return rpt_unit_names[i].kind;
	return RPT_U_PLAIN;
}

struct rpt_step { double div; const char *label; };

/* Largest step whose divisor does not exceed the typical magnitude. */
static struct rpt_step rpt_pick_step(const struct rpt_step *steps, size_t n, double typical)
{
	struct rpt_step s = steps[0];
	for (size_t i = 1; i < n; i++)
		if (typical >= steps[i].div)
			s = steps[i];
	return s;
}

static const struct rpt_step rpt_ns_steps[] = {
	{ 1, "ns" }, { 1e3, "µs" }, { 1e6, "ms" }, { 1e9, "s" } };
static const struct rpt_step rpt_byte_steps[] = {
	{ 1, "B" }, { 1e3, "KB" }, { 1e6, "MB" }, { 1e9, "GB" }, { 1e12, "TB" } };
static const struct rpt_step rpt_bps_steps[] = {
	{ 1, "bps" }, { 1e3, "Kbps" }, { 1e6, "Mbps" }, { 1e9, "Gbps" } };
static const struct rpt_step rpt_rate_steps[] = {
	{ 1, "/s" }, { 1e3, "k/s" }, { 1e6, "M/s" } };
#define RPT_NSTEPS(a) (sizeof(a) / sizeof(a[0]))

static int rpt_decimals_for(double scaled_typical)
{
	if (scaled_typical == 0)
		return 2;
	if (scaled_typical < 10)
		return 2;
	if (scaled_typical < 100)
		return 1;
	return 0;
}

struct rpt_scale rpt_scale_pick(enum rpt_ukind k, const char *unit, double typical, int all_integral)
{
	struct rpt_scale s = { .kind = k, .label = "", .div = 1, .offset = 0, .decimals = 0 };
	struct rpt_step st = { 1, "" };
	typical = fabs(typical);
	switch (k) {
	case RPT_U_NS:    st = rpt_pick_step(rpt_ns_steps, RPT_NSTEPS(rpt_ns_steps), typical); break;
	case RPT_U_BYTES: st = rpt_pick_step(rpt_byte_steps, RPT_NSTEPS(rpt_byte_steps), typical); break;
	case RPT_U_BPS:   st = rpt_pick_step(rpt_bps_steps, RPT_NSTEPS(rpt_bps_steps), typical); break;
	case RPT_U_RATE:  st = rpt_pick_step(rpt_rate_steps, RPT_NSTEPS(rpt_rate_steps), typical); break;
	case RPT_U_TIME:  st = (struct rpt_step){ 1e9, "s" }; break;
	case RPT_U_RATIO: st = (struct rpt_step){ 0.01, "%" }; break;
	case RPT_U_PCT:   st = (struct rpt_step){ 1, "%" }; break;
	case RPT_U_PPM:   st = (struct rpt_step){ 1, "ppm" }; break;
	case RPT_U_PLAIN: st = (struct rpt_step){ 1, unit ? unit : "" }; break;
	default:          break;
	}
	s.div = st.div;
	s.label = st.label;
	if (k == RPT_U_TIME)
		s.decimals = 3;
	else if ((k == RPT_U_COUNT || k == RPT_U_PLAIN || st.div == 1) && all_integral)
		s.decimals = 0;
	else
		s.decimals = rpt_decimals_for(typical / s.div);
	return s;
}

int rpt_fmt_scaled(char *buf, size_t n, double v, const struct rpt_scale *s)
{
	if (isnan(v))
		return snprintf(buf, n, "-");
	if (s->kind == RPT_U_BOOL)
		return snprintf(buf, n, "%s", v != 0 ? "yes" : "no");
	double d = (v - s->offset) / s->div;
	if (isinf(d))
		return snprintf(buf, n, "%s", d > 0 ? "inf" : "-inf");
	if (s->kind == RPT_U_TIME)
		return snprintf(buf, n, "+%.*f", s->decimals, d);
	return snprintf(buf, n, "%.*f", s->decimals, d);
}

int rpt_fmt_auto(char *buf, size_t n, double v, const char *unit)
{
	enum rpt_ukind k = rpt_ukind_of(unit);
	struct rpt_scale s = rpt_scale_pick(k, unit, v, v == floor(v));
	if (k == RPT_U_TIME)
		s.decimals = 3;
	int len = rpt_fmt_scaled(buf, n, v, &s);
	if (len < 0 || (size_t)len >= n || !*s.label || isnan(v))
		return len;
	const char *sep = (k == RPT_U_RATIO || k == RPT_U_PCT || k == RPT_U_RATE) ? "" : " ";
	return len + snprintf(buf + len, n - (size_t)len, "%s%s", sep, s.label);
}

size_t rpt_strwidth(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

static int rpt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double rpt_typical(double *v, size_t n)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]) && v[i] != 0)
			v[m++] = fabs(v[i]);
	if (m == 0)
		return 0;
	qsort(v, m, sizeof(*v), rpt_cmp_double);
	return v[m / 2];
}
