/* Clock model between hosts (docs/CLOCKSYNC.md).
 *
 * Every message with a known send time on one host and receive time on the
 * other says "the receiver's clock, mapped, is later than the sender's". For
 * the map y = a*x + b from host H's clock x to host X's clock y, messages
 * H->X give points above the line, messages X->H points below it. Only the
 * lower convex hull of the first set and the upper hull of the second can
 * touch a separating line; the separating lines form a convex set in (a, b)
 * whose slope extremes bound the drift (Duda et al.; Jabbarifar &
 * Dagenais); the estimate is the line with the widest margin. Cristian's min-RTT estimate
 * (vnettracer SIII-B) is reported next to it for the sync exchanges. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"
#include "ana_cmsg.h"

#define ANA_CLK_SLOPE_RANGE 1e-3     /* search drift within +-1000 ppm */
#define ANA_CLK_MAX_BINS    65536

struct ana_bin { double x, y; bool set; };

struct ana_pairpts {
	struct ana_bin *b[2];       /* [0] hi->lo (above), [1] lo->hi (below) */
	size_t nbins;
	double binw;
	uint64_t n[2];
};

struct ana_clockpts {
	size_t nhosts;
	uint64_t *t0, *span;
	struct ana_pairpts *p;      /* nhosts * nhosts, only [lo][hi] used */
};

struct ana_clockpts *ana_clock_pts_new(const struct ana_model *m)
{
	struct ana_clockpts *cp = calloc(1, sizeof(*cp));
	if (!cp)
		return NULL;
	size_t n = m->hosts.n;
	cp->nhosts = n;
	cp->t0 = calloc(n ? n : 1, sizeof(uint64_t));
	cp->span = calloc(n ? n : 1, sizeof(uint64_t));
	cp->p = calloc(n ? n * n : 1, sizeof(*cp->p));
	if (!cp->t0 || !cp->span || !cp->p) {
		ana_clock_pts_free(cp);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		cp->t0[i] = m->hosts.v[i].t0;
		cp->span[i] = m->hosts.v[i].t_max - m->hosts.v[i].t0;
	}
	return cp;
}

void ana_clock_pts_free(struct ana_clockpts *cp)
{
	if (!cp)
		return;
	for (size_t i = 0; cp->p && i < cp->nhosts * cp->nhosts; i++) {
		free(cp->p[i].b[0]);
		free(cp->p[i].b[1]);
	}
	free(cp->p); free(cp->t0); free(cp->span);
	free(cp);
}

/* An empty set of points for the same hosts as cp (a thread's share). */
struct ana_clockpts *ana_clock_pts_like(const struct ana_clockpts *cp)
{
	struct ana_clockpts *c = calloc(1, sizeof(*c));
	size_t n = cp->nhosts;
	if (!c)
		return NULL;
	c->nhosts = n;
	c->t0 = malloc((n ? n : 1) * sizeof(uint64_t));
	c->span = malloc((n ? n : 1) * sizeof(uint64_t));
	c->p = calloc(n ? n * n : 1, sizeof(*c->p));
	if (!c->t0 || !c->span || !c->p) {
		ana_clock_pts_free(c);
		return NULL;
	}
	memcpy(c->t0, cp->t0, n * sizeof(uint64_t));
	memcpy(c->span, cp->span, n * sizeof(uint64_t));
	return c;
}

/* Bin by bin, src's point replaces dst's only when strictly closer to the
 * line, as ana_clock_add keeps the first of equals: src's points added
 * after dst's give what adding them one by one would. */
static void ana_pair_merge(struct ana_pairpts *d, const struct ana_pairpts *s)
{
	if (!d->nbins) {
		d->nbins = s->nbins;
		d->binw = s->binw;
	}
	for (int dir = 0; dir < 2; dir++) {
		d->n[dir] += s->n[dir];
		if (!s->b[dir])
			continue;
		if (!d->b[dir] && !(d->b[dir] = calloc(d->nbins, sizeof(struct ana_bin))))
			continue;
		for (size_t k = 0; k < d->nbins; k++) {
			const struct ana_bin *x = &s->b[dir][k];
			struct ana_bin *y = &d->b[dir][k];
			if (x->set && (!y->set || (dir == 0 ? x->y - x->x < y->y - y->x
							    : x->y - x->x > y->y - y->x)))
				*y = *x;
		}
	}
}

void ana_clock_pts_merge(struct ana_clockpts *dst, struct ana_clockpts *src)
{
	for (size_t i = 0; i < dst->nhosts * dst->nhosts; i++)
		if (src->p[i].nbins)
			ana_pair_merge(&dst->p[i], &src->p[i]);
	ana_clock_pts_free(src);
}

/* Keeps per time bin the point closest to the line (minimum one-way delay):
 * only those can be hull vertices for any slope near 1. */
void ana_clock_add(struct ana_clockpts *cp, int s, uint64_t ts, int r, uint64_t tr)
{
	if (!cp || s == r || s < 0 || r < 0 || (size_t)s >= cp->nhosts || (size_t)r >= cp->nhosts)
		return;
	int lo = s < r ? s : r, hi = s < r ? r : s;
	struct ana_pairpts *pp = &cp->p[(size_t)lo * cp->nhosts + hi];
	if (!pp->nbins) {
		double span = (double)cp->span[hi] + 1.0;
		pp->binw = span / ANA_CLK_MAX_BINS > 1e6 ? span / ANA_CLK_MAX_BINS : 1e6;
		pp->nbins = (size_t)(span / pp->binw) + 2;
	}
	int dir = s == hi ? 0 : 1;
	if (!pp->b[dir]) {
		pp->b[dir] = calloc(pp->nbins, sizeof(struct ana_bin));
		if (!pp->b[dir])
			return;
	}
	double t0 = (double)cp->t0[hi];
	double x = dir == 0 ? (double)ts - t0 : (double)tr - t0;
	double y = dir == 0 ? (double)tr - t0 : (double)ts - t0;
	double bi = x / pp->binw;
	size_t k = bi < 0 ? 0 : bi >= (double)(pp->nbins - 1) ? pp->nbins - 1 : (size_t)bi;
	struct ana_bin *bn = &pp->b[dir][k];
	double d = y - x;
	if (!bn->set || (dir == 0 ? d < bn->y - bn->x : d > bn->y - bn->x)) {
		bn->x = x; bn->y = y; bn->set = true;
	}
	pp->n[dir]++;
}

/* ana_clock_add over n messages in order (the same bins as n calls). The
 * pair's origin, width and bins are looked up again only when the pair
 * changes (a path's messages go both ways between the same two hosts). */
void ana_clock_add_n(struct ana_clockpts *cp, const struct ana_cmsg *msg, size_t n)
{
	struct ana_pairpts *pp = NULL;
	double t0 = 0, last = 0;
	int plo = -1, phi = -1;
	for (size_t i = 0; i < n; i++) {
		int s = msg[i].s, r = msg[i].r;
		int lo = s < r ? s : r, hi = s < r ? r : s, dir = s == hi ? 0 : 1;
		if (lo != plo || hi != phi || !pp->b[dir]) {
			ana_clock_add(cp, s, msg[i].ts, r, msg[i].tr);   /* sets the pair up */
			plo = phi = -1;
			if (!cp || s == r || (size_t)hi >= cp->nhosts)
				continue;
			pp = &cp->p[(size_t)lo * cp->nhosts + hi];
			t0 = (double)cp->t0[hi];
			last = (double)(pp->nbins - 1);
			plo = lo; phi = hi;
			continue;
		}
		double x = dir == 0 ? (double)msg[i].ts - t0 : (double)msg[i].tr - t0;
		double y = dir == 0 ? (double)msg[i].tr - t0 : (double)msg[i].ts - t0;
		double bi = x / pp->binw;
		size_t k = bi < 0 ? 0 : bi >= last ? pp->nbins - 1 : (size_t)bi;
		struct ana_bin *bn = &pp->b[dir][k];
		double d = y - x;
		if (!bn->set || (dir == 0 ? d < bn->y - bn->x : d > bn->y - bn->x)) {
			bn->x = x; bn->y = y; bn->set = true;
		}
		pp->n[dir]++;
	}
}

static double ana_cross(struct ana_hull_pt o, struct ana_hull_pt a, struct ana_hull_pt b)
{
	return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/* Monotone chain over points sorted by x; lower = true keeps the lower hull.
 * Works in place, returns the hull size. */
static size_t ana_hull(struct ana_hull_pt *p, size_t n, bool lower)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		while (k >= 2) {
			double c = ana_cross(p[k - 2], p[k - 1], p[i]);
			if (lower ? c <= 0 : c >= 0)
				k--;
			else
				break;
		}
		p[k++] = p[i];
	}
	return k;
}

static double ana_min_off(const struct ana_hull_pt *p, size_t n, double a)
{
	double m = INFINITY;
	for (size_t i = 0; i < n; i++)
		if (p[i].y - a * p[i].x < m)
			m = p[i].y - a * p[i].x;
	return m;
}

static double ana_max_off(const struct ana_hull_pt *p, size_t n, double a)
{
	double m = -INFINITY;
	for (size_t i = 0; i < n; i++)
		if (p[i].y - a * p[i].x > m)
			m = p[i].y - a * p[i].x;
	return m;
}

/* Width of the feasible offset band for slope a (concave in a). */
static double ana_gap(const struct ana_hull_pt *u, size_t nu, const struct ana_hull_pt *l,
		      size_t nl, double a)
{
	return ana_min_off(u, nu, a) - ana_max_off(l, nl, a);
}

/* One side only: the hull edge under (over) the middle of the data. */
static void ana_fit_one_side(const struct ana_hull_pt *h, size_t n, bool upper_set,
			     double *a, double *b)
{
	*a = 1.0;
	if (n >= 2) {
		double xm = (h[0].x + h[n - 1].x) / 2;
		size_t i = 0;
		while (i + 2 < n && h[i + 1].x < xm)
			i++;
		double dx = h[i + 1].x - h[i].x;
		if (dx > 0) {
			double s = (h[i + 1].y - h[i].y) / dx;
			if (fabs(s - 1.0) <= ANA_CLK_SLOPE_RANGE)
				*a = s;
		}
	}
	*b = upper_set ? ana_min_off(h, n, *a) : ana_max_off(h, n, *a);
}

int ana_clock_fit(const struct ana_hull_pt *up, size_t nup, const struct ana_hull_pt *lo,
		  size_t nlo, double *a, double *b, double *err, double *a_lo, double *a_hi)
{
	*a = 1.0; *b = 0; *err = NAN; *a_lo = NAN; *a_hi = NAN;
	if (!nup && !nlo)
		return ANA_CLK_UNALIGNED;
	struct ana_hull_pt *u = malloc((nup + 1) * sizeof(*u));
	struct ana_hull_pt *l = malloc((nlo + 1) * sizeof(*l));
	if (!u || !l) {
		free(u); free(l);
		return ANA_CLK_FAILED;
	}
	if (nup)
		memcpy(u, up, nup * sizeof(*u));
	if (nlo)
		memcpy(l, lo, nlo * sizeof(*l));
	size_t nu = ana_hull(u, nup, true), nl = ana_hull(l, nlo, false);
	int q;
	if (!nu || !nl) {
		ana_fit_one_side(nu ? u : l, nu ? nu : nl, nu != 0, a, b);
		q = ANA_CLK_APPROX;
		goto out;
	}
	/* maximise the concave gap over the slope, then find its zero crossings */
	double lo_a = 1.0 - ANA_CLK_SLOPE_RANGE, hi_a = 1.0 + ANA_CLK_SLOPE_RANGE;
	double x1 = lo_a, x2 = hi_a;
	for (int it = 0; it < 200 && x2 - x1 > 1e-15; it++) {
		double m1 = x1 + (x2 - x1) / 3, m2 = x2 - (x2 - x1) / 3;
		if (ana_gap(u, nu, l, nl, m1) < ana_gap(u, nu, l, nl, m2))
			x1 = m1;
		else
			x2 = m2;
	}
	double best = (x1 + x2) / 2;
	if (ana_gap(u, nu, l, nl, best) < 0) {
		*a = best;
		*b = (ana_min_off(u, nu, best) + ana_max_off(l, nl, best)) / 2;
		q = ANA_CLK_FAILED;
		goto out;
	}
	double p = lo_a, r = best;
	for (int it = 0; it < 100; it++) {
		double mid = (p + r) / 2;
		if (ana_gap(u, nu, l, nl, mid) >= 0) r = mid; else p = mid;
	}
	*a_lo = r;
	p = best; r = hi_a;
	for (int it = 0; it < 100; it++) {
		double mid = (p + r) / 2;
		if (ana_gap(u, nu, l, nl, mid) >= 0) p = mid; else r = mid;
	}
	*a_hi = p;
	/* the estimate: the slope where the feasible band is widest (the line
	 * farthest from both hulls), offset in the middle of that band; on
	 * generated data this is 10-30x closer to the truth than the middle of
	 * the two extreme slopes */
	*a = best;
	/* the drift is not determined by the data (one instant): assume none */
	if (*a_hi - *a_lo > ANA_CLK_SLOPE_RANGE && ana_gap(u, nu, l, nl, 1.0) >= 0)
		*a = 1.0;
	double bu = ana_min_off(u, nu, *a), bl = ana_max_off(l, nl, *a);
	*b = (bu + bl) / 2;
	/* the bound at x = 0 (the host's first timestamp) covers every
	 * feasible line, whatever its slope: the data may lie seconds later */
	double hi_b = bu, lo_b = bl;
	for (int k = 0; k <= 256; k++) {
		double s = *a_lo + (*a_hi - *a_lo) * k / 256.0;
		double u1 = ana_min_off(u, nu, s), l1 = ana_max_off(l, nl, s);
		if (u1 < l1)
			continue;
		if (u1 > hi_b) hi_b = u1;
		if (l1 < lo_b) lo_b = l1;
	}
	*err = fmax(hi_b - *b, *b - lo_b);
	q = ANA_CLK_ACCURATE;
out:
	free(u); free(l);
	return q;
}

/* ---- solving all pairs and aligning hosts ---- */

struct ana_pairfit {
	int q;
	double a, b, err, a_lo, a_hi;   /* hi-host clock -> lo-host clock, relative to t0[hi] */
	uint64_t nsync, nsync_auth, npkt_up, npkt_lo;
	double min_rtt, cristian;       /* Cristian: lo - hi offset at min-RTT exchange */
};

static size_t ana_collect(const struct ana_bin *b, size_t n, struct ana_hull_pt *out)
{
	size_t k = 0;
	for (size_t i = 0; b && i < n; i++)
		if (b[i].set)
			out[k++] = (struct ana_hull_pt){ b[i].x, b[i].y };
	return k;
}

static void ana_pair_fit(struct ana_clockpts *cp, int lo, int hi, struct ana_pairfit *f)
{
	struct ana_pairpts *pp = &cp->p[(size_t)lo * cp->nhosts + hi];
	f->q = ANA_CLK_UNALIGNED;
	if (!pp->nbins)
		return;
	struct ana_hull_pt *u = malloc(pp->nbins * sizeof(*u));
	struct ana_hull_pt *l = malloc(pp->nbins * sizeof(*l));
	if (u && l) {
		size_t nu = ana_collect(pp->b[0], pp->nbins, u);
		size_t nl = ana_collect(pp->b[1], pp->nbins, l);
		f->q = ana_clock_fit(u, nu, l, nl, &f->a, &f->b, &f->err, &f->a_lo, &f->a_hi);
	}
	f->npkt_up = pp->n[0];
	f->npkt_lo = pp->n[1];
	free(u); free(l);
}

/* Map of host h onto host x as absolute: t_x = A*(t_h - t0_h) + C. */
struct ana_map { double A, C, err; };

static bool ana_pair_map(const struct ana_clockpts *cp, const struct ana_pairfit *fits,
			 int h, int x, struct ana_map *mp)
{
	int lo = h < x ? h : x, hi = h < x ? x : h;
	const struct ana_pairfit *f = &fits[(size_t)lo * cp->nhosts + hi];
	if (f->q != ANA_CLK_ACCURATE && f->q != ANA_CLK_APPROX)
		return false;
	double t0h = (double)cp->t0[hi];
	double err = isnan(f->err) ? 0 : f->err;
	if (h == hi) {                      /* direct: t_lo = a*(t_hi - t0_hi) + b + t0_hi */
		mp->A = f->a;
		mp->C = f->b + t0h;
	} else {                            /* inverse: t_hi = (t_lo - b - t0_hi)/a + t0_hi */
		double t0l = (double)cp->t0[lo];
		mp->A = 1.0 / f->a;
		mp->C = (t0l - f->b - t0h) / f->a + t0h;
	}
	mp->err = err;
	return true;
}

static void ana_sync_points(struct ana_model *m, struct ana_clockpts *cp, struct ana_pairfit *fits)
{
	for (size_t i = 0; i < m->syncs.n; i++) {
		const struct ana_sync *s = &m->syncs.v[i];
		ana_clock_add(cp, s->client, s->t1, s->server, s->t2);
		ana_clock_add(cp, s->server, s->t3, s->client, s->t4);
		int lo = s->client < s->server ? s->client : s->server;
		int hi = s->client < s->server ? s->server : s->client;
		struct ana_pairfit *f = &fits[(size_t)lo * cp->nhosts + hi];
		double rtt = (double)(s->t4 - s->t1) - (double)(s->t3 - s->t2);
		/* server - client offset at this exchange */
		double off = ((double)s->t2 - (double)s->t1 + (double)s->t3 - (double)s->t4) / 2;
		if (!f->nsync || rtt < f->min_rtt) {
			f->min_rtt = rtt;
			f->cristian = s->server == lo ? off : -off;
		}
		f->nsync++;
		f->nsync_auth += s->auth;
	}
}

/* Whether a pair's sync exchanges were MAC-verified (--sync-key); NULL
 * when it had none (aligned from matched traffic only). */
static const char *ana_sync_auth(const struct ana_pairfit *f)
{
	if (!f->nsync)
		return NULL;
	return f->nsync_auth == f->nsync ? "authenticated" : f->nsync_auth ? "mixed" : "unauthenticated";
}

static const struct ana_pairfit *ana_fit_of(const struct ana_pairfit *fits, size_t n, int a, int b)
{
	return &fits[(size_t)(a < b ? a : b) * n + (size_t)(a < b ? b : a)];
}

static void ana_clock_tables(struct ana_model *m, struct ana_clockpts *cp,
			     struct ana_pairfit *fits, struct ana_out *o)
{
	/* columns of "clock", in the order of the np_table_col_at calls below */
	enum { CLK_HOST, CLK_REF, CLK_QUALITY, CLK_OFFSET, CLK_DRIFT, CLK_OFFSET_ERR, CLK_VIA,
	       CLK_FIRST_NS, CLK_SYNC_AUTH, CLK_NCOLS };
	struct np_table *t = np_table_new("clock", "Clock model per host vs the reference", 1);
	np_table_col_at(t, CLK_HOST, "host", "str", "host");
	np_table_col_at(t, CLK_REF, "ref", "str", "reference host");
	np_table_col_at(t, CLK_QUALITY, "quality", "str", "reference/accurate/approximate/failed/unaligned");
	np_table_col_at(t, CLK_OFFSET, "offset", "ns", "host clock minus reference clock at the host's first timestamp");
	np_table_col_at(t, CLK_DRIFT, "drift", "ppm", "host clock rate vs reference, minus 1 (host runs fast if > 0)");
	np_table_col_at(t, CLK_OFFSET_ERR, "offset_err", "ns", "error bound of the offset (half the feasible band)");
	np_table_col_at(t, CLK_VIA, "via", "str", "host the alignment was chained through");
	np_table_col_at(t, CLK_FIRST_NS, "first_ns", "time_ns", "first timestamp of the host on the reference timeline");
	np_table_col_at(t, CLK_SYNC_AUTH, "sync_auth", "str", "sync exchanges of the link it was aligned through: "
			"authenticated (--sync-key) / unauthenticated / mixed");
	for (size_t i = 0; i < m->hosts.n; i++) {
		struct ana_host *h = &m->hosts.v[i];
		size_t r = np_table_row(t);
		np_table_set_str(t, r, CLK_HOST, h->name);
		np_table_set_str(t, r, CLK_REF, m->hosts.v[m->ref].name);
		np_table_set_str(t, r, CLK_QUALITY, ana_clock_quality_name(h->clk_quality));
		if (ana_host_aligned(m, (int)i)) {
			np_table_set_i64(t, r, CLK_OFFSET, llround((double)h->t0 - h->clk_b));
			np_table_set_f64(t, r, CLK_DRIFT, (1.0 / h->clk_a - 1.0) * 1e6);
			if (!isnan(h->clk_err_ns))
				np_table_set_f64(t, r, CLK_OFFSET_ERR, h->clk_err_ns);
			np_table_set_i64(t, r, CLK_FIRST_NS, ana_to_ref(m, (int)i, h->t0));
		}
		if (h->clk_via >= 0)
			np_table_set_str(t, r, CLK_VIA, m->hosts.v[h->clk_via].name);
		int link = h->clk_via >= 0 ? h->clk_via : m->ref;
		const char *au = (int)i == m->ref ? NULL : ana_sync_auth(ana_fit_of(fits, cp->nhosts, (int)i, link));
		if (au && ana_host_aligned(m, (int)i))
			np_table_set_str(t, r, CLK_SYNC_AUTH, au);
	}
	ana_out_table(o, t);

	/* columns of "clock_pairs", in the order of the np_table_col_at calls below */
	enum { CP_HOST_A, CP_HOST_B, CP_QUALITY, CP_OFFSET, CP_DRIFT, CP_OFFSET_ERR,
	       CP_DRIFT_LO, CP_DRIFT_HI, CP_SYNC_COUNT, CP_MSGS_B_TO_A, CP_MSGS_A_TO_B,
	       CP_MIN_RTT, CP_CRISTIAN_OFFSET, CP_SYNC_AUTH, CP_NCOLS };
	t = np_table_new("clock_pairs", "Clock fit per host pair (host_b clock -> host_a clock)", 2);
	np_table_col_at(t, CP_HOST_A, "host_a", "str", NULL);
	np_table_col_at(t, CP_HOST_B, "host_b", "str", NULL);
	np_table_col_at(t, CP_QUALITY, "quality", "str", NULL);
	np_table_col_at(t, CP_OFFSET, "offset", "ns", "host_b minus host_a clock at host_b's first timestamp");
	np_table_col_at(t, CP_DRIFT, "drift", "ppm", "rate of host_b's clock vs host_a's, minus 1");
	np_table_col_at(t, CP_OFFSET_ERR, "offset_err", "ns", "half width of the feasible offset band");
	np_table_col_at(t, CP_DRIFT_LO, "drift_lo", "ppm", "steepest/shallowest separating lines");
	np_table_col_at(t, CP_DRIFT_HI, "drift_hi", "ppm", NULL);
	np_table_col_at(t, CP_SYNC_COUNT, "sync_count", "count", "sync exchanges");
	np_table_col_at(t, CP_MSGS_B_TO_A, "msgs_b_to_a", "count", "messages (sync + packets) host_b -> host_a");
	np_table_col_at(t, CP_MSGS_A_TO_B, "msgs_a_to_b", "count", "messages host_a -> host_b");
	np_table_col_at(t, CP_MIN_RTT, "min_rtt", "ns", "minimum sync RTT minus server time");
	np_table_col_at(t, CP_CRISTIAN_OFFSET, "cristian_offset", "ns", "Cristian min-RTT estimate of host_b minus host_a");
	np_table_col_at(t, CP_SYNC_AUTH, "sync_auth", "str", "authenticated / unauthenticated / mixed sync exchanges");
	for (size_t lo = 0; lo < m->hosts.n; lo++)
		for (size_t hi = lo + 1; hi < m->hosts.n; hi++) {
			const struct ana_pairfit *f = &fits[lo * cp->nhosts + hi];
			if (f->q == ANA_CLK_UNALIGNED && !f->nsync)
				continue;
			size_t r = np_table_row(t);
			np_table_set_str(t, r, CP_HOST_A, m->hosts.v[lo].name);
			np_table_set_str(t, r, CP_HOST_B, m->hosts.v[hi].name);
			np_table_set_str(t, r, CP_QUALITY, ana_clock_quality_name(f->q));
			np_table_set_i64(t, r, CP_OFFSET, llround(-f->b));
			np_table_set_f64(t, r, CP_DRIFT, (1.0 / f->a - 1.0) * 1e6);
			if (!isnan(f->err)) np_table_set_f64(t, r, CP_OFFSET_ERR, f->err);
			if (!isnan(f->a_hi)) np_table_set_f64(t, r, CP_DRIFT_LO, (1.0 / f->a_hi - 1.0) * 1e6);
			if (!isnan(f->a_lo)) np_table_set_f64(t, r, CP_DRIFT_HI, (1.0 / f->a_lo - 1.0) * 1e6);
			np_table_set_u64(t, r, CP_SYNC_COUNT, f->nsync);
			np_table_set_u64(t, r, CP_MSGS_B_TO_A, f->npkt_up);
			np_table_set_u64(t, r, CP_MSGS_A_TO_B, f->npkt_lo);
			if (f->nsync) {
				np_table_set_f64(t, r, CP_MIN_RTT, f->min_rtt);
				np_table_set_f64(t, r, CP_CRISTIAN_OFFSET, -f->cristian);
				np_table_set_str(t, r, CP_SYNC_AUTH, ana_sync_auth(f));
			}
		}
	ana_out_table(o, t);
}

/* Anyone who could send UDP to a recorder without --sync-key could have
 * moved this pair's clocks: a finding candidate per pair (no warning:
 * loopback and lab runs without a key are normal, and warnings mean the
 * analysis itself went wrong). */
static void ana_clock_auth_note(struct ana_model *m, const struct ana_pairfit *fits, struct ana_out *o)
{
	size_t n = m->hosts.n;
	for (size_t lo = 0; lo < n; lo++)
		for (size_t hi = lo + 1; hi < n; hi++) {
			const struct ana_pairfit *f = &fits[lo * n + hi];
			if (!f->nsync || f->nsync_auth == f->nsync)
				continue;
			char key[300];
			snprintf(key, sizeof(key), "%s/%s", m->hosts.v[lo].name, m->hosts.v[hi].name);
			ana_out_candidate(o, 0.5, 1, "clock_pairs", key, "sync_auth",
					  (double)(f->nsync - f->nsync_auth),
					  "clock %s: %llu of %llu sync exchanges unauthenticated "
					  "(recorded without --sync-key): not evidence against a forger",
					  key, (unsigned long long)(f->nsync - f->nsync_auth),
					  (unsigned long long)f->nsync);
		}
}

static int ana_pick_ref(struct ana_model *m)
{
	const char *want = m->opt ? m->opt->ref : NULL;
	if (want) {
		for (size_t i = 0; i < m->hosts.n; i++)
			if (!strcmp(m->hosts.v[i].name, want) || !strcmp(m->hosts.v[i].hostname, want) ||
			    !strcmp(m->hosts.v[i].stem, want))
				return (int)i;
		ana_warn(m, "--ref %s: no such host; using %s", want,
			 m->hosts.n ? m->hosts.v[0].name : "none");
	}
	return 0;
}

/* Local time the recordings span (the longest host), ns. */
static double ana_run_span(const struct ana_model *m)
{
	double span = 0;
	for (size_t i = 0; i < m->hosts.n; i++) {
		const struct ana_host *h = &m->hosts.v[i];
		if (h->t_max > h->t_min && (double)(h->t_max - h->t_min) > span)
			span = (double)(h->t_max - h->t_min);
	}
	return span;
}

/* How far the pair's mapping can move over span from the drift's
 * uncertainty alone (half the [a_lo, a_hi] slope interval). */
static double ana_drift_bound(const struct ana_pairfit *f, double span)
{
	double w = f->a_hi - f->a_lo;
	return isfinite(w) && w > 0 ? w / 2 * span : 0;
}

/* Hosts that neither exchange nor matched traffic aligned, recorded on
 * the boot of an aligned one (network namespaces or containers of one
 * machine, recorded without --sync-peer), read that host's
 * CLOCK_MONOTONIC (ana_sync_impossible relies on it too): aligned to it
 * exactly, less the two recorders' --test-clock-shift. Not a fit: no
 * drift of their own, the error bound that host's. */
static void ana_clock_same_boot(struct ana_model *m)
{
	for (size_t i = 0; i < m->hosts.n; i++) {
		struct ana_host *h = &m->hosts.v[i];
		if (ana_host_aligned(m, (int)i) || !h->has_header || !h->boot_id[0])
			continue;
		for (size_t x = 0; x < m->hosts.n; x++) {
			const struct ana_host *hx = &m->hosts.v[x];
			if (x == i || !ana_host_aligned(m, (int)x) || hx->clk_same_boot || !hx->has_header ||
			    strcmp(hx->boot_id, h->boot_id))
				continue;
			/* h's t is x's t - shift_h + shift_x */
			double d = (double)(int64_t)(h->t0 - hx->t0) + (double)(hx->clock_shift_ns - h->clock_shift_ns);
			h->clk_a = hx->clk_a;
			h->clk_b = hx->clk_b + hx->clk_a * d;
			h->clk_err_ns = hx->clk_err_ns;
			h->clk_quality = hx->clk_quality == ANA_CLK_REF ? ANA_CLK_ACCURATE : hx->clk_quality;
			h->clk_via = (int)x == m->ref ? -1 : (int)x;
			h->clk_same_boot = true;
			ana_note(m, "host %s aligned to %s by their shared boot (one machine's clock, no "
				 "clock-sync exchange between them)", h->name, hx->name);
			break;
		}
	}
}

void ana_clock_run(struct ana_model *m, struct ana_clockpts *cp, struct ana_out *o)
{
	size_t n = m->hosts.n;
	if (!n)
		return;
	m->ref = ana_pick_ref(m);
	struct ana_pairfit *fits = calloc(n * n, sizeof(*fits));
	if (!fits || !cp) {
		free(fits);
		return;
	}
	ana_sync_points(m, cp, fits);
	for (size_t lo = 0; lo < n; lo++)
		for (size_t hi = lo + 1; hi < n; hi++)
			ana_pair_fit(cp, (int)lo, (int)hi, &fits[lo * n + hi]);

	struct ana_host *ref = &m->hosts.v[m->ref];
	ref->clk_a = 1.0; ref->clk_b = (double)ref->t0; ref->clk_err_ns = 0;
	ref->clk_quality = ANA_CLK_REF;
	/* cheapest bound first from the reference (accurate links before
	 * approximate): a host is chained through the pair whose error bound
	 * over the whole run is smallest, the drift's uncertainty times the
	 * run's span included, not through the fewest hops (a direct pair of
	 * a hundred sync exchanges loses to a balancer with matched traffic) */
	double span = ana_run_span(m);
	for (int pass = 0; pass < 2; pass++) {
		for (;;) {
			int bx = -1, bh = -1;
			double bcost = INFINITY;
			struct ana_map bm = { 0 };
			for (size_t x = 0; x < n; x++) {
				if (!ana_host_aligned(m, (int)x))
					continue;
				for (size_t h = 0; h < n; h++) {
					if (ana_host_aligned(m, (int)h))
						continue;
					size_t lo = h < x ? h : x, hi = h < x ? x : h;
					const struct ana_pairfit *f = &fits[lo * n + hi];
					if (f->q != ANA_CLK_ACCURATE && !(pass == 1 && f->q == ANA_CLK_APPROX))
						continue;
					struct ana_map mp;
					if (!ana_pair_map(cp, fits, (int)h, (int)x, &mp))
						continue;
					double ex = m->hosts.v[x].clk_err_ns;
					double c = (isnan(ex) ? 0 : ex) + (isnan(mp.err) ? 0 : mp.err) +
						   ana_drift_bound(f, span);
					if (c < bcost) {
						bcost = c; bx = (int)x; bh = (int)h; bm = mp;
					}
				}
			}
			if (bx < 0)
				break;
			size_t lo = bh < bx ? (size_t)bh : (size_t)bx, hi = bh < bx ? (size_t)bx : (size_t)bh;
			const struct ana_pairfit *f = &fits[lo * n + hi];
			struct ana_host *hx = &m->hosts.v[bx], *hh = &m->hosts.v[bh];
			hh->clk_a = hx->clk_a * bm.A;
			hh->clk_b = hx->clk_a * (bm.C - (double)hx->t0) + hx->clk_b;
			hh->clk_err_ns = f->q == ANA_CLK_APPROX || isnan(hx->clk_err_ns) ? NAN : bcost;
			hh->clk_quality = hx->clk_quality == ANA_CLK_APPROX ? ANA_CLK_APPROX : f->q;
			hh->clk_via = bx == m->ref ? -1 : bx;
		}
	}
	ana_clock_same_boot(m);
	for (size_t lo = 0; lo < n; lo++)
		for (size_t hi = lo + 1; hi < n; hi++)
			if (fits[lo * n + hi].q == ANA_CLK_FAILED)
				ana_warn(m, "clock fit %s / %s failed (the bounds cross: a clock stepped, "
					 "or events were mis-matched); not applied",
					 m->hosts.v[lo].name, m->hosts.v[hi].name);
	for (size_t i = 0; i < n; i++) {
		struct ana_host *h = &m->hosts.v[i];
		if (ana_host_aligned(m, (int)i))
			continue;
		h->clk_quality = ANA_CLK_UNALIGNED;
		ana_warn(m, "host %s shares no clock-sync exchange and no matched traffic with %s: "
			 "left unaligned, cross-host figures for it are omitted",
			 h->name, ref->name);
	}
	ana_clock_auth_note(m, fits, o);
	ana_clock_tables(m, cp, fits, o);
	free(fits);
}
