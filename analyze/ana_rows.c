/* Row access over list-of-maps or columnar record bodies. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ana_rows.h"
#include "npmsg.h"

static size_t ana_rows_guess_n(const msgpack_object *body)
{
	uint64_t n;
	if (np_get_u64(body, "n", &n) == 0)
		return (size_t)n;
	if (!body || body->type != MSGPACK_OBJECT_MAP)
		return 0;
	size_t best = 0;
	for (uint32_t i = 0; i < body->via.map.size; i++) {
		const msgpack_object *v = &body->via.map.ptr[i].val;
		if (v->type == MSGPACK_OBJECT_ARRAY && v->via.array.size > best)
			best = v->via.array.size;
	}
	return best;
}

void ana_rows_open(struct ana_rows *r, const msgpack_object *body, const char *const *listkeys)
{
	memset(r, 0, sizeof(*r));
	r->body = body;
	for (; listkeys && *listkeys; listkeys++) {
		const msgpack_object_array *a = np_get_array(body, *listkeys);
		if (a && (a->size == 0 || a->ptr[0].type == MSGPACK_OBJECT_MAP)) {
			r->list = a;
			r->n = a->size;
			return;
		}
	}
	r->n = ana_rows_guess_n(body);
}

void ana_rows_close(struct ana_rows *r)
{
	for (int i = 0; i < r->ncache; i++)
		free(r->cache[i].v);
	r->ncache = 0;
}

const uint64_t *ana_rows_col(struct ana_rows *r, const char *key, size_t *n)
{
	*n = 0;
	if (r->list)
		return NULL;
	for (int i = 0; i < r->ncache; i++)
		if (!strcmp(r->cache[i].key, key)) {
			*n = r->cache[i].n;
			return r->cache[i].v;
		}
	if (r->ncache == ANA_ROWS_CACHE)
		return NULL;
	char dkey[40];
	snprintf(dkey, sizeof(dkey), "%s_d", key);
	size_t cn = 0;
	uint64_t *v = np_get_u64_delta(r->body, dkey, &cn);
	if (!v)
		v = np_get_u64_array(r->body, key, &cn);
	if (!v)
		return NULL;
	int c = r->ncache++;
	snprintf(r->cache[c].key, sizeof(r->cache[c].key), "%s", key);
	r->cache[c].v = v;
	r->cache[c].n = cn;
	*n = cn;
	return v;
}

bool ana_rows_u64(struct ana_rows *r, size_t i, const char *key, uint64_t *out)
{
	if (i >= r->n)
		return false;
	if (r->list)
		return np_get_u64(&r->list->ptr[i], key, out) == 0;
	size_t n;
	const uint64_t *c = ana_rows_col(r, key, &n);
	if (!c || i >= n)
		return false;
	*out = c[i];
	return true;
}

const msgpack_object *ana_rows_obj(struct ana_rows *r, size_t i, const char *key)
{
	if (i >= r->n)
		return NULL;
	if (r->list)
		return np_map_get(&r->list->ptr[i], key);
	const msgpack_object_array *a = np_get_array(r->body, key);
	return a && i < a->size ? &a->ptr[i] : NULL;
}

bool ana_rows_str(struct ana_rows *r, size_t i, const char *key, char *buf, size_t size)
{
	const msgpack_object *o = ana_rows_obj(r, i, key);
	if (!o || o->type != MSGPACK_OBJECT_STR || !size)
		return false;
	size_t n = o->via.str.size < size - 1 ? o->via.str.size : size - 1;
	memcpy(buf, o->via.str.ptr, n);
	buf[n] = 0;
	for (size_t k = 0; k < n; k++)      /* keep table cells printable */
		if ((unsigned char)buf[k] < 0x20)
			buf[k] = '?';
	return true;
}

bool ana_obj_addr(const msgpack_object *o, char *buf, size_t size)
{
	if (!o || !size)
		return false;
	if (o->type == MSGPACK_OBJECT_STR) {
		size_t n = o->via.str.size < size - 1 ? o->via.str.size : size - 1;
		memcpy(buf, o->via.str.ptr, n);
		buf[n] = 0;
		return true;
	}
	if (o->type == MSGPACK_OBJECT_BIN && o->via.bin.size == 4)
		return inet_ntop(AF_INET, o->via.bin.ptr, buf, (socklen_t)size) != NULL;
	if (o->type == MSGPACK_OBJECT_BIN && o->via.bin.size == 16) {
		const unsigned char *p = (const unsigned char *)o->via.bin.ptr;
		static const unsigned char v4m[12] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff };
		if (!memcmp(p, v4m, 12))
			return inet_ntop(AF_INET, p + 12, buf, (socklen_t)size) != NULL;
		return inet_ntop(AF_INET6, p, buf, (socklen_t)size) != NULL;
	}
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= 0xffffffffu) {
		uint32_t a = htonl((uint32_t)o->via.u64);
		return inet_ntop(AF_INET, &a, buf, (socklen_t)size) != NULL;
	}
	return false;
}
