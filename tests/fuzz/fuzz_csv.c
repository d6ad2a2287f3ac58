/* libFuzzer: the CSV request-table importer, then the analysis on whatever
 * table it accepted (small inputs only, so each run stays fast). */
#include <stddef.h>
#include <stdint.h>
#include "patterns.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pat_table t;
	char err[512];
	pat_table_init(&t);
	if (trace_csv_load_mem((const char *)data, size, &t, err, sizeof(err)) == 0 && t.nrows <= 2000) {
		struct pat_opts o;
		pat_opts_default(&o);
		o.threads = 1;
		o.max_split = 4;
		struct pat_result r;
		if (pat_analyze(&t, &o, &r, err, sizeof(err)) == 0) {
			for (size_t k = 0; k < r.nitems; k++) pat_item_format(&t, &r.items[k], err, sizeof(err));
			pat_result_free(&r);
		}
	}
	pat_table_free(&t);
	return 0;
}
