/* The JSON side the Zipkin and Jaeger readers share (jansson). */
#ifndef NP_TRACE_JSON_H
#define NP_TRACE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include "trace_spans.h"

/* The string value of key in object o, or NULL. */
const char *trace_jstr(json_t *o, const char *key);
/* The whole document, or NULL with err = "line L, column C (byte B): ...". */
json_t *trace_json_parse(const char *data, size_t len, char *err, size_t errlen);

/* The key names of a format's span fields. */
struct trace_json_keys { const char *trace, *id, *start, *dur; };
struct trace_json_head { const char *trace, *id; double start, dur; };
/* Reads span idx's ids and times into *h. Returns 1 when the span is
 * complete, 0 when it has no start or duration (counted in s->skipped),
 * -EINVAL (err set) when it is not an object, lacks an id or has a
 * negative duration. */
int trace_json_head(json_t *o, size_t idx, const struct trace_json_keys *k, struct trace_spans *s,
		    struct trace_json_head *h, char *err, size_t errlen);
/* After the spans were read with result rc: the request table (unless rc),
 * then s and root freed. Returns the first error. */
int trace_json_finish(int rc, json_t *root, struct trace_spans *s, const char *entry, struct pat_table *t,
		      char *err, size_t errlen);

#endif
