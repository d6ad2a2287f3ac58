/* Jaeger JSON (the query API / UI export): {"data": [trace...]}, a single
 * trace {"traceID", "spans", "processes"}, or an array of traces. */
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

static const char *span_kind(json_t *sp)
{
	size_t i;
	json_t *tag;
	json_array_foreach(json_object_get(sp, "tags"), i, tag) {
		const char *k = jstr(tag, "key");
		if (k && !strcmp(k, "span.kind")) return jstr(tag, "value");
	}
	return NULL;
}

static int jaeger_span(json_t *sp, json_t *procs, size_t idx, struct trace_spans *s,
		       char *err, size_t errlen)
{
	if (!json_is_object(sp)) { snprintf(err, errlen, "span %zu: not a JSON object", idx); return -EINVAL; }
	const char *trace = jstr(sp, "traceID"), *id = jstr(sp, "spanID");
	if (!trace || !id) {
		snprintf(err, errlen, "span %zu: missing \"%s\" (string)", idx, trace ? "spanID" : "traceID");
		return -EINVAL;
	}
	json_t *st = json_object_get(sp, "startTime"), *du = json_object_get(sp, "duration");
	if (!json_is_number(st) || !json_is_number(du)) { s->skipped++; return 0; }
	double dur = json_number_value(du);
	if (dur < 0) { snprintf(err, errlen, "span %zu (%s): negative duration", idx, id); return -EINVAL; }
	const char *parent = jstr(sp, "parentSpanID");
	bool async = false;
	size_t i;
	json_t *ref;
	json_array_foreach(json_object_get(sp, "references"), i, ref) {
		const char *rt = jstr(ref, "refType"), *rid = jstr(ref, "spanID");
		if (!rid) continue;
		parent = rid;
		async = rt && !strcmp(rt, "FOLLOWS_FROM");
		break;                          /* the first reference is the parent */
	}
	const char *kind = span_kind(sp), *svc = NULL;
	const char *pid = jstr(sp, "processID");
	if (pid && json_is_object(procs)) svc = jstr(json_object_get(procs, pid), "serviceName");
	if (kind && (!strcmp(kind, "producer") || !strcmp(kind, "consumer"))) async = true;
	return trace_spans_add(s, trace, id, parent, jstr(sp, "operationName"), svc,
			       json_number_value(st), dur, async,
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
	json_error_t je;
	json_t *root = json_loadb(data, len, 0, &je);
	if (!root) {
		snprintf(err, errlen, "line %d, column %d (byte %d): %s", je.line, je.column, je.position, je.text);
		return -EINVAL;
	}
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
	if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
	if (!rc) rc = trace_spans_to_table(&s, entry, t, err, errlen);
	trace_spans_free(&s);
	json_decref(root);
	return rc;
}

int trace_jaeger_load(const char *path, const char *entry, struct pat_table *t, char *err, size_t errlen)
{
	return trace_load_file(path, trace_jaeger_load_mem, entry, t, err, errlen);
}
