/* PROGS records: the runs the kernel skipped for each of the recorder's BPF
 * programs (record/core/progtab.c), summed per host, and the note naming
 * them. A note, not a warning: the recording is whole, only the events
 * those runs would have made are missing. */
#include <stdio.h>
#include <string.h>
#include "ana.h"
#include "npmsg.h"
#include "records.h"
#include "recschema.h"

static void pg_str(const struct np_cols *c, int key, size_t i, char *buf, size_t size)
{
	const msgpack_object *o = np_cols_obj(c, key, i);
	size_t n = o && o->type == MSGPACK_OBJECT_STR ? o->via.str.size : 0;
	if (n >= size)
		n = size - 1;
	memcpy(buf, n ? o->via.str.ptr : "", n);
	buf[n] = 0;
}

/* The host's slot of (prog, family); the last slot takes every program
 * that finds the table full. */
static struct ana_progmiss *pg_slot(struct ana_host *h, const char *prog, const char *family)
{
	size_t k = 0;
	for (; k < ANA_PROGMISS_MAX - 1 && h->prog_missed[k].prog[0]; k++)
		if (!strcmp(h->prog_missed[k].prog, prog) && !strcmp(h->prog_missed[k].family, family))
			return &h->prog_missed[k];
	struct ana_progmiss *s = &h->prog_missed[k];
	if (!s->prog[0] || k < ANA_PROGMISS_MAX - 1) {
		snprintf(s->prog, sizeof(s->prog), "%s", prog);
		snprintf(s->family, sizeof(s->family), "%s", family);
	} else if (strcmp(s->prog, prog) || strcmp(s->family, family)) {
		strcpy(s->prog, "others");
		s->family[0] = 0;
	}
	return s;
}

void ana_progs_load(struct ana_host *h, const msgpack_object *body)
{
	struct np_cols c;
	if (np_cols_open(&c, NP_REC_PROGS, body) == 0) {
		for (size_t i = 0; i < c.n; i++) {
			uint64_t n;
			char prog[sizeof(h->prog_missed[0].prog)], family[sizeof(h->prog_missed[0].family)];
			if (!np_cols_u64(&c, NPK_PROGS_MISSED, i, &n) || !n)
				continue;
			pg_str(&c, NPK_PROGS_PROG, i, prog, sizeof(prog));
			pg_str(&c, NPK_PROGS_FAMILY, i, family, sizeof(family));
			pg_slot(h, prog[0] ? prog : "?", family)->n += n;
		}
	}
	np_cols_close(&c);
}

void ana_progs_note(struct ana_model *m, const struct ana_host *h)
{
	char list[512] = "";
	size_t o = 0;
	for (size_t k = 0; k < ANA_PROGMISS_MAX && h->prog_missed[k].prog[0] && o < sizeof(list); k++) {
		const struct ana_progmiss *s = &h->prog_missed[k];
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s%s%s%s %llu", o ? ", " : "", s->prog,
				      s->family[0] ? " (" : "", s->family, s->family[0] ? ")" : "",
				      (unsigned long long)s->n);
	}
	if (list[0])
		ana_note(m, "%s: the kernel skipped runs of the recorder's BPF programs (%s): the "
			 "program was already running on that CPU, so the events those runs would have "
			 "recorded are missing (a hub program's runs are those of every family on its "
			 "tracepoint)", h->name, list);
}
