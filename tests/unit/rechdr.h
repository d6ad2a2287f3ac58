/* Unit tests that write a small recording by hand: the writer and record
 * buffer opened and closed, and its HEADER record (kind, producer, host
 * with 2 CPUs, interval, start), committed. */
#ifndef NP_RECHDR_H
#define NP_RECHDR_H
#include <stdint.h>
#include "container.h"
#include "npmsg.h"
#include "records.h"

/* A recording writer on path and an empty record buffer; -1 when the file
 * cannot be created. */
static inline int rechdr_open(struct np_writer **w, struct np_recbuf *rb, const char *path)
{
	struct np_writer_opts wo = { 0 };
	if (np_writer_open(w, path, NP_KIND_RECORDING, &wo))
		return -1;
	np_recbuf_init(rb);
	return 0;
}

/* What rechdr_open made, closed: np_writer_close's result. */
static inline int rechdr_close(struct np_writer *w, struct np_recbuf *rb)
{
	np_recbuf_free(rb);
	return np_writer_close(w);
}

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
