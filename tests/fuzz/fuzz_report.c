/* libFuzzer target: npreport's renderers on arbitrary analysis tables. The
 * input is one msgpack ANA_TABLE body (any shape np_table_unpack accepts);
 * the table is presented under each name the incident summary and the
 * plots read by column name (transactions, lost_packets, clock, ...), so
 * odd column types, nil cells, huge or NAN numbers and strings without the
 * expected separators reach the summary (also its missing-probes line), the text table, the CSV and the
 * plot data writers. Nothing may crash or read out of bounds. */
#include "anatable.h"
#include "container.h"
#include "csvout.h"
#include "incident.h"
#include "plots.h"
#include "textrep.h"

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fz_names[] = { "transactions", "lost_packets", "clock", "bottlenecks",
					"patterns", "pattern_requests", "loss", "pkt_flows", "decomp",
					"hosts", "probes" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	/* as the container reader does: walk first, so msgpack-c never
	 * allocates for elements the input cannot hold */
	uint64_t objs = 0;
	size_t len = np_mp_walk(data, size, &objs);
	if (len == 0 || objs > NP_REC_MAX_OBJS)
		return 0;
	msgpack_zone zone;
	msgpack_object obj;
	msgpack_zone_init(&zone, 4096);
	size_t off = 0;
	if (msgpack_unpack((const char *)data, len, &off, &zone, &obj) != MSGPACK_UNPACK_SUCCESS) {
		msgpack_zone_destroy(&zone);
		return 0;
	}
	struct np_table *t = np_table_unpack(&obj);
	if (t) {
		char *orig = t->name;
		for (size_t i = 0; i < sizeof(fz_names) / sizeof(fz_names[0]); i++) {
			t->name = (char *)fz_names[i];
			struct np_table *tabs[] = { t };
			struct np_analysis a = { .ntables = 1, .tables = tabs };
			a.meta.type = MSGPACK_OBJECT_NIL;
			struct rpt_incident inc;
			rpt_incident_build(&a, &inc);
			rpt_incident_text(devnull, &inc, 80);
			rpt_incident_csv(devnull, &a);
			struct rpt_textopt o = { .width = 80, .max_rows = 20, .strip = "vm/" };
			rpt_text_table(devnull, t, &o);
			rpt_csv_table(devnull, t);
		}
		t->name = orig;
		np_table_free(t);
	}
	msgpack_zone_destroy(&zone);
	return 0;
}
