/* The JSON side the Zipkin and Jaeger readers share: parsing with a
 * located error, a span's ids and times under the format's key names, and
 * the reduction to a request table at the end. */
#include <errno.h>
#include <stdio.h>
#include "trace_json.h"

const char *trace_jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

json_t *trace_json_parse(const char *data, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(data, len, 0, &je);
	if (!root)
		snprintf(err, errlen, "line %d, column %d (byte %d): %s", je.line, je.column, je.position, je.text);
	return root;
}

int trace_json_head(json_t *o, size_t idx, const struct trace_json_keys *k, struct trace_spans *s,
		    struct trace_json_head *h, char *err, size_t errlen)
{
	if (!json_is_object(o)) { snprintf(err, errlen, "span %zu: not a JSON object", idx); return -EINVAL; }
	h->trace = trace_jstr(o, k->trace);
	h->id = trace_jstr(o, k->id);
	if (!h->trace || !h->id) {
		snprintf(err, errlen, "span %zu: missing \"%s\" (string)", idx, h->trace ? k->id : k->trace);
		return -EINVAL;
	}
	json_t *st = json_object_get(o, k->start), *du = json_object_get(o, k->dur);
	if (!json_is_number(st) || !json_is_number(du)) { s->skipped++; return 0; }  /* incomplete span */
	h->start = json_number_value(st);
	h->dur = json_number_value(du);
	if (h->dur < 0) { snprintf(err, errlen, "span %zu (%s): negative duration", idx, h->id); return -EINVAL; }
	return 1;
}

int trace_json_finish(int rc, json_t *root, struct trace_spans *s, const char *entry, struct pat_table *t,
		      char *err, size_t errlen)
{
	if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
	if (!rc) rc = trace_spans_to_table(s, entry, t, err, errlen);
	trace_spans_free(s);
	json_decref(root);
	return rc;
}
