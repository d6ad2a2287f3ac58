/* Zipkin v2 JSON: an array of spans, or an array of traces (arrays of
 * spans) as /api/v2/traces returns. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace.h"
#include "trace_json.h"


static int zipkin_span(json_t *o, size_t idx, struct trace_spans *s, char *err, size_t errlen)
{
	static const struct trace_json_keys keys = { "traceId", "id", "timestamp", "duration" };
	struct trace_json_head h;
	int rc = trace_json_head(o, idx, &keys, s, &h, err, errlen);
	if (rc <= 0) return rc;
	const char *kind = trace_jstr(o, "kind");
	const char *svc = NULL;
	json_t *le = json_object_get(o, "localEndpoint");
	if (json_is_object(le)) svc = trace_jstr(le, "serviceName");
	bool async = kind && (!strcmp(kind, "PRODUCER") || !strcmp(kind, "CONSUMER"));
	bool server = kind && !strcmp(kind, "SERVER"), client = kind && !strcmp(kind, "CLIENT");
	return trace_spans_add(s, h.trace, h.id, trace_jstr(o, "parentId"), trace_jstr(o, "name"), svc, h.start, h.dur,
			       async, server, client);
}

int trace_zipkin_load_mem(const char *data, size_t len, const char *entry, struct pat_table *t,
			  char *err, size_t errlen)
{
	json_t *root = trace_json_parse(data, len, err, errlen);
	if (!root) return -EINVAL;
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
	return trace_json_finish(rc, root, &s, entry, t, err, errlen);
}

int trace_zipkin_load(const char *path, const char *entry, struct pat_table *t, char *err, size_t errlen)
{
	return trace_load_file(path, trace_zipkin_load_mem, entry, t, err, errlen);
}
