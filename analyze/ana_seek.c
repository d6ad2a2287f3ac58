/* npanalyze --from/--to reads only the chunks near the window
 * (np_reader_set_window, through each file's chunk index).
 *
 * The window is on the reference timeline, which only exists after the
 * clock fit; chunks must be chosen before. So it is taken to each file's
 * clock through the wall clock its HEADER pairs with the monotonic one
 * (realtime - mono at start), ANA_SEEK_MARGIN_NS wider on each side for
 * the error of that mapping between hosts and for events a chunk holds from
 * before its interval. The exact window is then applied as before, after
 * the clock fit (pipeline.c), which sees only the chunks read. The first
 * input is the reference (npanalyze's default); with --ref naming another
 * host, or --from and --to of different kinds, every chunk is read. */
#include <string.h>
#include "ana.h"
#include "npmsg.h"

#define ANA_SEEK_MARGIN_NS (10 * 1000000000ll)

static int64_t ana_seek_add(int64_t a, int64_t b)
{
	int64_t s;
	if (a == INT64_MIN || a == INT64_MAX)
		return a;                 /* open ends stay open */
	if (b == INT64_MIN)
		return INT64_MIN;
	return __builtin_add_overflow(a, b, &s) ? (b < 0 ? INT64_MIN : INT64_MAX) : s;
}

/* realtime - mono of the HEADER's clock pair */
static bool ana_seek_rt_off(const msgpack_object *hdr, int64_t *off)
{
	const msgpack_object *clk = hdr ? np_map_get(hdr, "clock") : NULL;
	uint64_t mono, rt;
	if (!clk || np_get_u64(clk, "mono_ns", &mono) || np_get_u64(clk, "rt_ns", &rt))
		return false;
	*off = (int64_t)(rt - mono);
	return true;
}

/* This file's window, from the reference's window on its clock (lo, hi)
 * through the wall clock; without a clock pair on either side the clocks are
 * taken as one (as pipeline.c does for a host it cannot align). */
static void ana_seek_file(struct ana_model *m, int host, struct np_reader *r)
{
	const struct ana_seek *s = &m->seek;
	int64_t d = m->hosts.v[host].seek_d;
	np_reader_set_window(r, ana_seek_add(s->lo_m, d), ana_seek_add(s->hi_m, d), false);
}

/* --ref names the first input's host: as ana_pick_ref matches it, by what
 * is known before the display names are made (an alias, the hostname, the
 * file stem; a display name with a netns label leaves the seek off) */
static bool ana_seek_is_ref(const struct ana_host *h, const char *ref)
{
	return !strcmp(ref, h->name) || !strcmp(ref, h->hostname) || !strcmp(ref, h->stem);
}

void ana_seek_begin(struct ana_model *m, int host, struct np_reader *r, const msgpack_object *hdr)
{
	const struct ana_options *o = m->opt;
	struct ana_seek *s = &m->seek;
	int64_t off = 0;
	bool has_off = ana_seek_rt_off(hdr, &off);
	/* the streamed analysis windows every host through the first file's
	 * clock pair, with or without --from/--to */
	if (!s->d_based) {
		s->d_based = true;
		s->d_has = has_off;
		s->d_off0 = off;
	}
	m->hosts.v[host].seek_d = has_off && s->d_has ? s->d_off0 - off : 0;
	if (!o || !(o->from_set || o->to_set) || s->off)
		return;
	if (s->nfiles++ == 0) {
		if ((o->ref && !o->seek_first_clock && !ana_seek_is_ref(&m->hosts.v[host], o->ref)) ||
		    (o->from_set && o->to_set && o->from_rel != o->to_rel)) {
			s->off = true;
			return;
		}
		s->rel = o->from_set ? o->from_rel : o->to_rel;
		int64_t margin = o->seek_margin_ns ? o->seek_margin_ns : ANA_SEEK_MARGIN_NS;
		s->lo = o->from_set ? ana_seek_add((int64_t)o->from_ns, -margin) : INT64_MIN;
		s->hi = o->to_set ? ana_seek_add((int64_t)o->to_ns, margin) : INT64_MAX;
		np_reader_set_window(r, s->lo, s->hi, s->rel);
		return;
	}
	if (s->based)
		ana_seek_file(m, host, r);
}

void ana_seek_end(struct ana_model *m, int host, struct np_reader *r)
{
	struct ana_seek *s = &m->seek;
	struct ana_host *h = &m->hosts.v[host];
	uint64_t first;
	if (np_reader_seek_mode(r) == NP_SEEK_NONE || !np_reader_first_time(r, &first))
		return;
	/* the host's first time as a full read sees it: relative windows
	 * count from it (pipeline.c) */
	if (first && first < h->t_min)
		h->t_min = first;
	if (first > h->t_max)
		h->t_max = first;             /* nothing read inside the window */
	if (s->nfiles != 1 || s->based)
		return;
	int64_t base = s->rel ? (int64_t)first : 0;
	s->lo_m = ana_seek_add(s->lo, base);
	s->hi_m = ana_seek_add(s->hi, base);
	s->based = true;
}
