/* Unit tests that write a small recording by hand: its HEADER record
 * (kind, producer, host with 2 CPUs, interval, start), committed. */
#ifndef NP_RECHDR_H
#define NP_RECHDR_H
#include <stdint.h>
#include "container.h"
#include "npmsg.h"
#include "records.h"

static inline void rechdr_commit(struct np_writer *w, struct np_recbuf *rb, const char *producer,
				 const char *hostname, const char *machine_id, uint64_t interval_ns,
				 uint64_t start_ns)
{
	msgpack_packer *pk = np_recbuf_begin(rb, NP_REC_HEADER, 1);
	msgpack_pack_map(pk, 5);
	np_pack_kv_str(pk, "kind", "recording");
	np_pack_kv_str(pk, "producer", producer);
	np_pack_str(pk, "host");
	msgpack_pack_map(pk, 3);
	np_pack_kv_str(pk, "hostname", hostname);
	np_pack_kv_str(pk, "machine_id", machine_id);
	np_pack_kv_u64(pk, "ncpus", 2);
	np_pack_kv_u64(pk, "interval_ns", interval_ns);
	np_pack_kv_u64(pk, "start_ns", start_ns);
	np_writer_commit(w, rb);
}
#endif
