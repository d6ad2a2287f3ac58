/* Uniform access to the items of a record body, whether the recorder wrote
 * them as a list of maps under one key or as columns (one array per field,
 * "_d" columns delta-encoded). Keeps the loader independent of that choice. */
#ifndef NP_ANA_ROWS_H
#define NP_ANA_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>

#define ANA_ROWS_CACHE 24

struct ana_rows {
	const msgpack_object *body;
	const msgpack_object_array *list;   /* list of maps, or NULL = columnar */
	size_t n;
	struct { char key[32]; uint64_t *v; size_t n; } cache[ANA_ROWS_CACHE];
	int ncache;
};

/* listkeys: NULL-terminated candidates for the list-of-maps form. */
void ana_rows_open(struct ana_rows *r, const msgpack_object *body, const char *const *listkeys);
void ana_rows_close(struct ana_rows *r);
/* Field of item i as u64 (tries key, then key"_d" columns); false if absent. */
bool ana_rows_u64(struct ana_rows *r, size_t i, const char *key, uint64_t *out);
/* Whole integer column (decoded, owned by r) or NULL; *n its length. */
const uint64_t *ana_rows_col(struct ana_rows *r, const char *key, size_t *n);
bool ana_rows_str(struct ana_rows *r, size_t i, const char *key, char *buf, size_t size);
const msgpack_object *ana_rows_obj(struct ana_rows *r, size_t i, const char *key);

/* Address object (string, or 4/16-byte bin, or u32 IPv4) into text. */
bool ana_obj_addr(const msgpack_object *o, char *buf, size_t size);

#endif
