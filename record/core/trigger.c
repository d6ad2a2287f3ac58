/* --trigger-on conditions, evaluated on the records an interval produced.
 * The counters are decoded back from the msgpack bodies the families wrote,
 * so triggers need no hook into any family. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "recschema.h"
#include "trigger.h"

enum trg_metric { TRG_ALERT, TRG_RETRANS, TRG_DROPS };

struct trg_cond {
	char expr[64];
	enum trg_metric metric;
	double threshold;
	bool per_second;    /* rate (retrans, drops) or count per interval (alert) */
	bool armed;         /* false after firing, until an interval is below */
};

struct rec_trigger {
	struct trg_cond *cond;
	unsigned n;
	struct rec_trigger_fire last;
	bool fired;
};

static const char *const trg_names[] = { "alert", "retrans", "drops" };

/* ALERTS is not on the record schema yet: its count key (stackmon.c packs
 * "n"), first match wins. Delta columns ("_d") are decoded and summed;
 * plain arrays summed; integers taken as they are. */
static const char *const trg_keys_alerts[] = { "n", "count", NULL };

static int trg_parse_one(struct trg_cond *c, const char *s, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->expr, sizeof(c->expr), "%s", s);
	c->armed = true;
	while (isspace((unsigned char)*s))
		s++;
	const char *name = s;
	while (isalpha((unsigned char)*s))
		s++;
	size_t nlen = (size_t)(s - name);
	if (nlen == 5 && strncmp(name, "alert", 5) == 0)
		c->metric = TRG_ALERT;
	else if (nlen == 6 && strncmp(name, "alerts", 6) == 0)
		c->metric = TRG_ALERT;
	else if (nlen == 7 && strncmp(name, "retrans", 7) == 0)
		c->metric = TRG_RETRANS;
	else if (nlen == 5 && strncmp(name, "drops", 5) == 0)
		c->metric = TRG_DROPS;
	else
		goto bad;
	c->per_second = c->metric != TRG_ALERT;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s) {
		if (c->metric != TRG_ALERT)
			goto bad;      /* a rate needs a threshold */
		c->threshold = 0;
		return 0;
	}
	if (*s != '>')
		goto bad;
	s++;
	char *end;
	c->threshold = strtod(s, &end);
	if (end == s || c->threshold < 0 || c->threshold != c->threshold)
		goto bad;
	s = end;
	while (isspace((unsigned char)*s))
		s++;
	if (strcmp(s, "/s") == 0)
		s += 2;
	if (*s)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "--trigger-on '%s': expected 'alert', 'alert>N', 'retrans>N/s' "
		 "or 'drops>N/s'", c->expr);
	return -EINVAL;
}

int rec_trigger_parse(struct rec_trigger **tp, const char *const *exprs, unsigned n,
		      char *err, size_t errlen)
{
	struct rec_trigger *t = calloc(1, sizeof(*t));
	if (!t || !(t->cond = calloc(n ? n : 1, sizeof(*t->cond)))) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		int rc = trg_parse_one(&t->cond[i], exprs[i], err, errlen);
		if (rc < 0) {
			rec_trigger_free(t);
			return rc;
		}
	}
	t->n = n;
	*tp = t;
	return 0;
}

void rec_trigger_free(struct rec_trigger *t)
{
	if (!t)
		return;
	free(t->cond);
	free(t);
}

/* ---- decoding the counters ---- */

static const msgpack_object *trg_get(const msgpack_object *map, const char *key)
{
	size_t klen = strlen(key);
	for (uint32_t i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
		    memcmp(k->via.str.ptr, key, klen) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

static bool trg_int(const msgpack_object *o, int64_t *v)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*v = o->via.u64 > INT64_MAX ? INT64_MAX : (int64_t)o->via.u64;
		return true;
	}
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*v = o->via.i64;
		return true;
	}
	return false;
}

/* Sum of a counter column; a delta column holds first value then
 * differences, so the running value is summed. */
static uint64_t trg_sum(const msgpack_object *v, bool delta)
{
	int64_t x;
	if (trg_int(v, &x))
		return x > 0 ? (uint64_t)x : 0;
	if (v->type != MSGPACK_OBJECT_ARRAY)
		return 0;
	int64_t run = 0;
	uint64_t sum = 0;
	for (uint32_t i = 0; i < v->via.array.size; i++) {
		if (!trg_int(&v->via.array.ptr[i], &x))
			continue;
		run = delta ? run + x : x;
		if (run > 0)
			sum += (uint64_t)run;
	}
	return sum;
}

static bool trg_sum_keys(const msgpack_object *body, const char *const *keys, uint64_t *out)
{
	for (; *keys; keys++) {
		const msgpack_object *v = trg_get(body, *keys);
		if (!v)
			continue;
		size_t kl = strlen(*keys);
		bool delta = kl > 2 && strcmp(*keys + kl - 2, "_d") == 0;
		*out += trg_sum(v, delta);
		return true;
	}
	return false;
}

/* Sum of the schema column key of a body (0 if absent). */
static uint64_t trg_sum_col(const msgpack_object *body, const char *key)
{
	const msgpack_object *v = trg_get(body, key);
	return v ? trg_sum(v, false) : 0;
}

/* Alerts in one ALERTS record: an explicit count, else the length of the
 * first column, else one. */
static uint64_t trg_alerts(const msgpack_object *body)
{
	uint64_t n = 0;
	if (trg_sum_keys(body, trg_keys_alerts, &n))
		return n;
	for (uint32_t i = 0; i < body->via.map.size; i++) {
		const msgpack_object *v = &body->via.map.ptr[i].val;
		if (v->type == MSGPACK_OBJECT_ARRAY)
			return v->via.array.size;
	}
	return 1;
}

static void trg_count_record(const msgpack_object *ob, struct rec_trigger_counts *c)
{
	if (ob->type != MSGPACK_OBJECT_ARRAY || ob->via.array.size != 3 ||
	    ob->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    ob->via.array.ptr[2].type != MSGPACK_OBJECT_MAP)
		return;
	const msgpack_object *body = &ob->via.array.ptr[2];
	switch (ob->via.array.ptr[0].via.u64) {
	case NP_REC_FLOWS:
		c->retrans += trg_sum_col(body, NPK(FLOWS, RETRANS));
		break;
	case NP_REC_DROPS:
		c->drops += trg_sum_col(body, NPK(DROPS, COUNT));
		break;
	case NP_REC_ALERTS:
		c->alerts += trg_alerts(body);
		break;
	}
}

void rec_trigger_count(const struct np_recbuf *rb, struct rec_trigger_counts *out)
{
	memset(out, 0, sizeof(*out));
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	while (off < rb->sbuf.size &&
	       msgpack_unpack_next(&u, rb->sbuf.data, rb->sbuf.size, &off) == MSGPACK_UNPACK_SUCCESS)
		trg_count_record(&u.data, out);
	msgpack_unpacked_destroy(&u);
}

int rec_trigger_check(struct rec_trigger *t, const struct np_recbuf *rb, uint64_t interval_ns,
		      char *why, size_t whylen)
{
	if (!t || !t->n)
		return 0;
	struct rec_trigger_counts cnt;
	rec_trigger_count(rb, &cnt);
	double secs = interval_ns ? (double)interval_ns / 1e9 : 1.0;
	int fired = 0;
	for (unsigned i = 0; i < t->n; i++) {
		struct trg_cond *c = &t->cond[i];
		uint64_t raw = c->metric == TRG_ALERT ? cnt.alerts
			: c->metric == TRG_RETRANS ? cnt.retrans : cnt.drops;
		double value = c->per_second ? (double)raw / secs : (double)raw;
		bool over = value > c->threshold;
		if (!over) {
			c->armed = true;
			continue;
		}
		if (!c->armed)
			continue;
		c->armed = false;      /* also when another condition made this dump */
		if (fired)
			continue;
		fired = 1;
		t->last = (struct rec_trigger_fire){ .expr = c->expr, .metric = trg_names[c->metric],
						     .value = value, .threshold = c->threshold };
		t->fired = true;
		if (c->per_second)
			snprintf(why, whylen, "%s: %.1f/s", c->expr, value);
		else
			snprintf(why, whylen, "%s: %.0f alert%s", c->expr, value, value == 1 ? "" : "s");
	}
	return fired;
}

const struct rec_trigger_fire *rec_trigger_last(const struct rec_trigger *t)
{
	return t && t->fired ? &t->last : NULL;
}
