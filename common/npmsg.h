/* Small helpers over msgpack-c for the record bodies: packing key/value pairs
 * and looking keys up in a decoded map without trusting its shape. */
#ifndef NP_NPMSG_H
#define NP_NPMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <msgpack.h>

/* ---- packing ---- */
void np_pack_str(msgpack_packer *pk, const char *s);           /* NULL packs nil */
void np_pack_strn(msgpack_packer *pk, const char *s, size_t n);
void np_pack_kv_u64(msgpack_packer *pk, const char *key, uint64_t v);
void np_pack_kv_i64(msgpack_packer *pk, const char *key, int64_t v);
void np_pack_kv_f64(msgpack_packer *pk, const char *key, double v);
void np_pack_kv_bool(msgpack_packer *pk, const char *key, bool v);
void np_pack_kv_str(msgpack_packer *pk, const char *key, const char *v);
/* Packs an array of n u64 delta-encoded (first absolute, then v[i]-v[i-1] as
 * signed integers); the key should end in "_d". */
void np_pack_kv_u64_delta(msgpack_packer *pk, const char *key, const uint64_t *v, size_t n);
void np_pack_kv_u64_array(msgpack_packer *pk, const char *key, const uint64_t *v, size_t n);
void np_pack_kv_u32_array(msgpack_packer *pk, const char *key, const uint32_t *v, size_t n);

/* ---- reading: every getter checks the type; 0 ok, -1 missing or wrong type ---- */
const msgpack_object *np_map_get(const msgpack_object *map, const char *key);
int np_get_u64(const msgpack_object *map, const char *key, uint64_t *out);
int np_get_i64(const msgpack_object *map, const char *key, int64_t *out);
int np_get_f64(const msgpack_object *map, const char *key, double *out); /* ints too */
int np_get_bool(const msgpack_object *map, const char *key, bool *out);
/* String view (not NUL-terminated). */
int np_get_str(const msgpack_object *map, const char *key, const char **s, uint32_t *len);
/* Copies into buf (NUL-terminated, truncated to size-1). */
int np_get_strbuf(const msgpack_object *map, const char *key, char *buf, size_t size);
/* Returns the array or NULL. */
const msgpack_object_array *np_get_array(const msgpack_object *map, const char *key);
/* Object -> number with type check (positive/negative int, float). */
int np_obj_u64(const msgpack_object *o, uint64_t *out);
int np_obj_i64(const msgpack_object *o, int64_t *out);
int np_obj_f64(const msgpack_object *o, double *out);
/* Decodes a delta column (np_pack_kv_u64_delta) into a new malloc'd array of
 * *n values; returns NULL (and *n = 0) when missing or malformed. */
uint64_t *np_get_u64_delta(const msgpack_object *map, const char *key, size_t *n);
/* Plain integer column into a new malloc'd array. */
uint64_t *np_get_u64_array(const msgpack_object *map, const char *key, size_t *n);

/* Writes o as one line of JSON (bin as hex string, non-string map keys as
 * strings, invalid UTF-8 escaped). */
void np_obj_print_json(FILE *f, const msgpack_object *o);

#endif
