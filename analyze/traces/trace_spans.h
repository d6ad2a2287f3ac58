/* Spans of Zipkin/Jaeger exports, normalised, and their reduction to a
 * request table (shared by trace_zipkin.c and trace_jaeger.c). */
#ifndef NP_TRACE_SPANS_H
#define NP_TRACE_SPANS_H

#include <stdbool.h>
#include <stddef.h>
#include "patterns.h"

struct trace_span {
	char *trace, *id, *parent;   /* owned; parent NULL for a root */
	char *name;                  /* owned: operation name */
	char *svc;                   /* owned or NULL: service name */
	double start, dur;           /* µs */
	bool async;                  /* FOLLOWS_FROM / PRODUCER / CONSUMER */
	bool server, client;
};

struct trace_spans {
	struct trace_span *v;
	size_t n, cap;
	size_t skipped;              /* spans without a duration */
};

/* Takes copies of the strings (parent, svc may be NULL). 0 or -ENOMEM. */
int  trace_spans_add(struct trace_spans *s, const char *trace, const char *id, const char *parent,
		     const char *name, const char *svc, double start, double dur, bool async,
		     bool server, bool client);
void trace_spans_free(struct trace_spans *s);
/* One row per entry span; see trace.h. Returns 0 or -errno (err set). */
int  trace_spans_to_table(struct trace_spans *s, const char *entry, struct pat_table *t,
			  char *err, size_t errlen);

#endif
