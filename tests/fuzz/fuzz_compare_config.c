/* libFuzzer: npreport compare's gate config parser (a file a CI repository
 * keeps), then the gate it built on a few metrics, and the stable-key
 * rewrite (ports, pids) on the same bytes as a row key. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "compare_gate.h"
#include "compare_keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpt_gate g;
	struct rpt_mineff eff;
	char err[256];
	rpt_gate_init(&g);
	if (rpt_gate_parse(&g, (const char *)data, size, err, sizeof(err)) == 0) {
		rpt_gate_match(&g, "transactions", "endpoint|10.0.0.2:80 GET /x|h|server", "p99", "ns", &eff);
		rpt_gate_match(&g, "flows", "h|tcp 10.0.0.2:80>10.0.0.1:*", "drop_rate", "ratio", &eff);
		rpt_gate_match(&g, "decomp", "all|wire", "p50", "ns", &eff);
	}
	rpt_gate_free(&g);
	char *s = malloc(size + 1);
	if (s) {
		memcpy(s, data, size);
		s[size] = 0;
		free(rpt_stable_key(s));
		free(s);
	}
	return 0;
}
