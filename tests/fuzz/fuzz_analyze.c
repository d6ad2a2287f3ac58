/* libFuzzer target: the analyzer's whole decode and analysis path on
 * arbitrary bytes. The input is split at a 0xff 'N' 'P' marker (if any) into
 * two recordings of two hosts, so the cross-host code (sync pairing, clock
 * fit, matching) runs too, on 1-3 threads. Nothing is written. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ana.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* 1-3 threads by the input's length: the read-ahead and decoding
	 * workers, and the reading thread's own decoding while it waits, see
	 * damaged input too */
	struct ana_options opt = { .quiet = true, .threads = 1 + (unsigned)(size % 3) };
	struct ana_model m;
	ana_model_init(&m, &opt);
	size_t cut = size;
	for (size_t i = 0; i + 3 <= size; i++)
		if (data[i] == 0xff && data[i + 1] == 'N' && data[i + 2] == 'P') {
			cut = i;
			break;
		}
	ana_load_mem(&m, data, cut, "a.npr");
	if (cut + 3 <= size)
		ana_load_mem(&m, data + cut + 3, size - cut - 3, "b.npr");
	ana_run(&m, NULL, NULL);
	ana_model_free(&m);
	return 0;
}
