/* libFuzzer: the Zipkin v2 and Jaeger JSON importers on the same input
 * (the input length picks the entry span name, so --entry paths are fuzzed
 * too without a prefix byte that would make every input invalid JSON). */
#include <stddef.h>
#include <stdint.h>
#include "patterns.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const entries[] = { NULL, "a", "svc:a", "gethome" };
	const char *entry = entries[size % 4];
	char err[512];
	struct pat_table t;
	pat_table_init(&t);
	trace_zipkin_load_mem((const char *)data, size, entry, &t, err, sizeof(err));
	pat_table_free(&t);
	pat_table_init(&t);
	trace_jaeger_load_mem((const char *)data, size, entry, &t, err, sizeof(err));
	pat_table_free(&t);
	return 0;
}
