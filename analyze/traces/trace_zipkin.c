/* Zipkin v2 JSON: an array of spans, or an array of traces (arrays of
 * spans) as /api/v2/traces returns. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace.h"
#include "trace_spans.h"


static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int zipkin_span(json_t *o, size_t idx, struct trace_spans *s, char *err, size_t errlen)
{
	if (!json_is_object(o)) { snprintf(err, errlen, "span %zu: not a JSON object", idx); return -EINVAL; }
	const char *trace = jstr(o, "traceId"), *id = jstr(o, "id");
	if (!trace || !id) {
		snprintf(err, errlen, "span %zu: missing \"%s\" (string)", idx, trace ? "id" : "traceId");
		return -EINVAL;
	}
	json_t *ts = json_object_get(o, "timestamp"), *du = json_object_get(o, "duration");
	if (!json_is_number(ts) || !json_is_number(du)) { s->skipped++; return 0; }  /* incomplete span */
	double start = json_number_value(ts), dur = json_number_value(du);
	if (dur < 0) { snprintf(err, errlen, "span %zu (%s): negative duration", idx, id); return -EINVAL; }
	const char *kind = jstr(o, "kind");
	const char *svc = NULL;
	json_t *le = json_object_get(o, "localEndpoint");
	if (json_is_object(le)) svc = jstr(le, "serviceName");
	bool async = kind && (!strcmp(kind, "PRODUCER") || !strcmp(kind, "CONSUMER"));
	bool server = kind && !strcmp(kind, "SERVER"), client = kind && !strcmp(kind, "CLIENT");
	return trace_spans_add(s, trace, id, jstr(o, "parentId"), jstr(o, "name"), svc, start, dur,
			       async, server, client);
}

int trace_zipkin_load_mem(const char *data, size_t len, const char *entry, struct pat_table *t,
			  char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(data, len, 0, &je);
	if (!root) {
		snprintf(err, errlen, "line %d, column %d (byte %d): %s", je.line, je.column, je.position, je.text);
		return -EINVAL;
	}
	struct trace_spans s = { 0 };
	int rc = 0;
	if (!json_is_array(root)) {
		snprintf(err, errlen, "expected a JSON array of spans (Zipkin v2)");
		rc = -EINVAL;
	}
	size_t i, idx = 0;
	json_t *el;
	json_array_foreach(rc ? NULL : root, i, el) {
		if (json_is_array(el)) {
			size_t k;
			json_t *sp;
			json_array_foreach(el, k, sp) {
				if ((rc = zipkin_span(sp, idx++, &s, err, errlen))) break;
			}
		} else {
			rc = zipkin_span(el, idx++, &s, err, errlen);
		}
		if (rc) break;
	}
	if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
	if (!rc) rc = trace_spans_to_table(&s, entry, t, err, errlen);
	trace_spans_free(&s);
	json_decref(root);
	return rc;
}

int trace_zipkin_load(const char *path, const char *entry, struct pat_table *t, char *err, size_t errlen)
{
	return trace_load_file(path, trace_zipkin_load_mem, entry, t, err, errlen);
}
