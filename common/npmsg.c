/* msgpack helpers for record bodies. */
#include "npmsg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void np_pack_strn(msgpack_packer *pk, const char *s, size_t n)
{
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

void np_pack_str(msgpack_packer *pk, const char *s)
{
	if (!s)
		msgpack_pack_nil(pk);
	else
		np_pack_strn(pk, s, strlen(s));
}

void np_pack_kv_u64(msgpack_packer *pk, const char *key, uint64_t v)
{
	np_pack_str(pk, key);
	msgpack_pack_uint64(pk, v);
}

void np_pack_kv_i64(msgpack_packer *pk, const char *key, int64_t v)
{
	np_pack_str(pk, key);
	msgpack_pack_int64(pk, v);
}

void np_pack_kv_f64(msgpack_packer *pk, const char *key, double v)
{
	np_pack_str(pk, key);
	msgpack_pack_double(pk, v);
}

void np_pack_kv_bool(msgpack_packer *pk, const char *key, bool v)
{
	np_pack_str(pk, key);
	if (v)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
}

void np_pack_kv_str(msgpack_packer *pk, const char *key, const char *v)
{
	np_pack_str(pk, key);
	np_pack_str(pk, v);
}

void np_pack_kv_u64_delta(msgpack_packer *pk, const char *key, const uint64_t *v, size_t n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0)
			msgpack_pack_uint64(pk, v[0]);
		else
			msgpack_pack_int64(pk, (int64_t)(v[i] - prev));
		prev = v[i];
	}
}

void np_pack_kv_u64_array(msgpack_packer *pk, const char *key, const uint64_t *v, size_t n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_uint64(pk, v[i]);
}

void np_pack_kv_u32_array(msgpack_packer *pk, const char *key, const uint32_t *v, size_t n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_uint32(pk, v[i]);
}

const msgpack_object *np_map_get(const msgpack_object *map, const char *key)
{
	if (!map || map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	size_t klen = strlen(key);
	for (uint32_t i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
		    memcmp(k->via.str.ptr, key, klen) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

int np_obj_u64(const msgpack_object *o, uint64_t *out)
{
	if (!o)
		return -1;
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*out = o->via.u64;
		return 0;
	}
	return -1;
}

int np_obj_i64(const msgpack_object *o, int64_t *out)
{
	if (!o)
		return -1;
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*out = o->via.i64;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT64_MAX) {
		*out = (int64_t)o->via.u64;
		return 0;
	}
	return -1;
}

int np_obj_f64(const msgpack_object *o, double *out)
{
	if (!o)
		return -1;
	switch (o->type) {
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64: *out = o->via.f64; return 0;
	case MSGPACK_OBJECT_POSITIVE_INTEGER: *out = (double)o->via.u64; return 0;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER: *out = (double)o->via.i64; return 0;
	default: return -1;
	}
}

int np_get_u64(const msgpack_object *map, const char *key, uint64_t *out)
{
	return np_obj_u64(np_map_get(map, key), out);
}

int np_get_i64(const msgpack_object *map, const char *key, int64_t *out)
{
	return np_obj_i64(np_map_get(map, key), out);
}

int np_get_f64(const msgpack_object *map, const char *key, double *out)
{
	return np_obj_f64(np_map_get(map, key), out);
}

int np_get_bool(const msgpack_object *map, const char *key, bool *out)
{
	const msgpack_object *o = np_map_get(map, key);
	if (!o || o->type != MSGPACK_OBJECT_BOOLEAN)
		return -1;
	*out = o->via.boolean;
	return 0;
}

int np_get_str(const msgpack_object *map, const char *key, const char **s, uint32_t *len)
{
	const msgpack_object *o = np_map_get(map, key);
	if (!o || o->type != MSGPACK_OBJECT_STR)
		return -1;
	*s = o->via.str.ptr;
	*len = o->via.str.size;
	return 0;
}

int np_get_strbuf(const msgpack_object *map, const char *key, char *buf, size_t size)
{
	const char *s;
	uint32_t n;
	if (size == 0 || np_get_str(map, key, &s, &n) < 0)
		return -1;
	if (n >= size)
		n = (uint32_t)(size - 1);
	memcpy(buf, s, n);
	buf[n] = 0;
	return 0;
}

const msgpack_object_array *np_get_array(const msgpack_object *map, const char *key)
{
	const msgpack_object *o = np_map_get(map, key);
	if (!o || o->type != MSGPACK_OBJECT_ARRAY)
		return NULL;
	return &o->via.array;
}

uint64_t *np_get_u64_delta(const msgpack_object *map, const char *key, size_t *n)
{
	*n = 0;
	const msgpack_object_array *a = np_get_array(map, key);
	if (!a)
		return NULL;
	uint64_t *v = malloc((a->size ? a->size : 1) * sizeof(*v));
	if (!v)
		return NULL;
	uint64_t acc = 0;
	for (uint32_t i = 0; i < a->size; i++) {
		const msgpack_object *o = &a->ptr[i];
		if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
			acc = i == 0 ? o->via.u64 : acc + o->via.u64;
		else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && i > 0)
			acc += (uint64_t)o->via.i64;
		else {
			free(v);
			return NULL;
		}
		v[i] = acc;
	}
	*n = a->size;
	return v;
}

uint64_t *np_get_u64_array(const msgpack_object *map, const char *key, size_t *n)
{
	*n = 0;
	const msgpack_object_array *a = np_get_array(map, key);
	if (!a)
		return NULL;
	uint64_t *v = malloc((a->size ? a->size : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < a->size; i++) {
		if (np_obj_u64(&a->ptr[i], &v[i]) < 0) {
			free(v);
			return NULL;
		}
	}
	*n = a->size;
	return v;
}

/* ---- JSON output ---- */

/* Length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629 table 3-7:
 * no overlong forms, no surrogates D800-DFFF, nothing above U+10FFFF), 0 if
 * s does not start one. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;
	if (c >= 0xc2 && c <= 0xdf) need = 1;
	else if (c >= 0xe0 && c <= 0xef) need = 2;
	else if (c >= 0xf0 && c <= 0xf4) need = 3;
	else return 0;                      /* 80-C1 (stray, overlong 2-byte), F5-FF */
	if (c == 0xe0) lo = 0xa0;            /* overlong 3-byte */
	else if (c == 0xed) hi = 0x9f;       /* surrogates */
	else if (c == 0xf0) lo = 0x90;       /* overlong 4-byte */
	else if (c == 0xf4) hi = 0x8f;       /* above U+10FFFF */
	if (need >= n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k <= need; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	return need + 1;
}

/* FORMAT.md 8: well-formed UTF-8 passes through; every byte that is not
 * part of a well-formed sequence is written as \u00XX (so the output is
 * always valid UTF-8, and the byte value is still visible). */
static void json_str(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = u[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (c < 0x80) {
			fputc(c, f);
		} else {
			size_t l = utf8_seq_len(u + i, n - i);
			if (l) {
				fwrite(u + i, 1, l, f);
				i += l - 1;
			} else {
				fprintf(f, "\\u%04x", c);
			}
		}
	}
	fputc('"', f);
}

/* FORMAT.md 8: the shortest decimal that reads back as the same float64
 * (%.15g, else %.16g, else %.17g), always with a '.' or an exponent so a
 * float never looks like an integer (1.0, -0.0, 1e+16). */
static void json_float(FILE *f, double v)
{
	char buf[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v && (signbit(strtod(buf, NULL)) == signbit(v)))
			break;
	}
	if (!strpbrk(buf, ".e"))
		strcat(buf, ".0");
	fputs(buf, f);
}

void np_obj_print_json(FILE *f, const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL: fputs("null", f); break;
	case MSGPACK_OBJECT_BOOLEAN: fputs(o->via.boolean ? "true" : "false", f); break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER: fprintf(f, "%llu", (unsigned long long)o->via.u64); break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER: fprintf(f, "%lld", (long long)o->via.i64); break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (isfinite(o->via.f64))
			json_float(f, o->via.f64);
		else
			fputs("null", f);
		break;
	case MSGPACK_OBJECT_STR: json_str(f, o->via.str.ptr, o->via.str.size); break;
	case MSGPACK_OBJECT_BIN:
	case MSGPACK_OBJECT_EXT: {
		const char *p = o->type == MSGPACK_OBJECT_BIN ? o->via.bin.ptr : o->via.ext.ptr;
		uint32_t n = o->type == MSGPACK_OBJECT_BIN ? o->via.bin.size : o->via.ext.size;
		fputc('"', f);
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "%02x", (unsigned char)p[i]);
		fputc('"', f);
		break;
	}
	case MSGPACK_OBJECT_ARRAY:
		fputc('[', f);
		for (uint32_t i = 0; i < o->via.array.size; i++) {
			if (i)
				fputc(',', f);
			np_obj_print_json(f, &o->via.array.ptr[i]);
		}
		fputc(']', f);
		break;
	case MSGPACK_OBJECT_MAP:
		fputc('{', f);
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			const msgpack_object *k = &o->via.map.ptr[i].key;
			if (i)
				fputc(',', f);
			if (k->type == MSGPACK_OBJECT_STR) {
				json_str(f, k->via.str.ptr, k->via.str.size);
			} else {
				/* JSON keys must be strings: print the key as JSON, quoted. */
				char *buf = NULL;
				size_t len = 0;
				FILE *m = open_memstream(&buf, &len);
				if (m) {
					np_obj_print_json(m, k);
					fclose(m);
					json_str(f, buf, len);
					free(buf);
				} else {
					fputs("\"?\"", f);
				}
			}
			fputc(':', f);
			np_obj_print_json(f, &o->via.map.ptr[i].val);
		}
		fputc('}', f);
		break;
	default: fputs("null", f); break;
	}
}
