/* Jaeger JSON (the query API / UI export): {"data": [trace...]}, a single
 * trace {"traceID", "spans", "processes"}, or an array of traces. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace.h"
#include "trace_json.h"


static const char *span_kind(json_t *sp)
{
	size_t i;
	json_t *tag;
	json_array_foreach(json_object_get(sp, "tags"), i, tag) {
		const char *k = trace_jstr(tag, "key");
		if (k && !strcmp(k, "span.kind")) return trace_jstr(tag, "value");
	}
	return NULL;
}

static int jaeger_span(json_t *sp, json_t *procs, size_t idx, struct trace_spans *s,
		       char *err, size_t errlen)
{
	static const struct trace_json_keys keys = { "traceID", "spanID", "startTime", "duration" };
	struct trace_json_head h;
	int rc = trace_json_head(sp, idx, &keys, s, &h, err, errlen);
	if (rc <= 0) return rc;
	const char *parent = trace_jstr(sp, "parentSpanID");
	bool async = false;
	size_t i;
	json_t *ref;
	json_array_foreach(json_object_get(sp, "references"), i, ref) {
		const char *rt = trace_jstr(ref, "refType"), *rid = trace_jstr(ref, "spanID");
		if (!rid) continue;
		parent = rid;
		async = rt && !strcmp(rt, "FOLLOWS_FROM");
		break;                          /* the first reference is the parent */
	}
	const char *kind = span_kind(sp), *svc = NULL;
	const char *pid = trace_jstr(sp, "processID");
	if (pid && json_is_object(procs)) svc = trace_jstr(json_object_get(procs, pid), "serviceName");
	if (kind && (!strcmp(kind, "producer") || !strcmp(kind, "consumer"))) async = true;
	return trace_spans_add(s, h.trace, h.id, parent, trace_jstr(sp, "operationName"), svc, h.start, h.dur, async,
			       kind && !strcmp(kind, "server"), kind && !strcmp(kind, "client"));
}

static int jaeger_trace(json_t *tr, size_t *idx, struct trace_spans *s, char *err, size_t errlen)
{
	json_t *spans = json_object_get(tr, "spans");
	if (!json_is_array(spans)) { snprintf(err, errlen, "trace without a \"spans\" array"); return -EINVAL; }
	json_t *procs = json_object_get(tr, "processes");
	size_t i;
	json_t *sp;
	json_array_foreach(spans, i, sp) {
		int rc = jaeger_span(sp, procs, (*idx)++, s, err, errlen);
		if (rc) return rc;
	}
	return 0;
}

int trace_jaeger_load_mem(const char *data, size_t len, const char *entry, struct pat_table *t,
			  char *err, size_t errlen)
{
	json_t *root = trace_json_parse(data, len, err, errlen);
	if (!root) return -EINVAL;
	json_t *traces = root;
	if (json_is_object(root)) traces = json_object_get(root, "data");
	struct trace_spans s = { 0 };
	int rc = 0;
	size_t idx = 0;
	if (json_is_object(root) && !traces && json_object_get(root, "spans")) {
		rc = jaeger_trace(root, &idx, &s, err, errlen);
	} else if (!json_is_array(traces)) {
		snprintf(err, errlen, "expected {\"data\": [traces]} or a trace object (Jaeger JSON)");
		rc = -EINVAL;
	} else {
		size_t i;
		json_t *tr;
		json_array_foreach(traces, i, tr) {
			if (!json_is_object(tr)) { snprintf(err, errlen, "trace %zu: not a JSON object", i); rc = -EINVAL; }
			else rc = jaeger_trace(tr, &idx, &s, err, errlen);
			if (rc) break;
		}
	}
	return trace_json_finish(rc, root, &s, entry, t, err, errlen);
}

int trace_jaeger_load(const char *path, const char *entry, struct pat_table *t, char *err, size_t errlen)
{
	return trace_load_file(path, trace_jaeger_load_mem, entry, t, err, errlen);
}
