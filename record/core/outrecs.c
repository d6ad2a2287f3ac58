/* Copying and rewriting records at the msgpack level (see outrecs.h). */
#include <stdbool.h>
#include <string.h>

#include "outrecs.h"
#include "records.h"

static bool outrecs_key_is(const msgpack_object *k, const char *s)
{
	size_t n = strlen(s);
	return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
	       memcmp(k->via.str.ptr, s, n) == 0;
}

/* Type of a record [type, version, body], or -1 for anything else. */
static int outrecs_type(const msgpack_object *ob)
{
	if (ob->type != MSGPACK_OBJECT_ARRAY || ob->via.array.size != 3 ||
	    ob->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    ob->via.array.ptr[0].via.u64 > 0xffff ||
	    ob->via.array.ptr[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    ob->via.array.ptr[2].type != MSGPACK_OBJECT_MAP)
		return -1;
	return (int)ob->via.array.ptr[0].via.u64;
}

static void outrecs_raw(struct np_recbuf *rb, const char *p, size_t n, int type)
{
	msgpack_sbuffer_write(&rb->sbuf, p, n);
	rb->nrecords++;
	if (type < 0)
		type = NP_CHUNK_TYPE_MIXED;
	if (rb->type == -1)
		rb->type = type;
	else if (rb->type != type)
		rb->type = NP_CHUNK_TYPE_MIXED;
}

static void outrecs_rewrite(struct np_recbuf *dst, const msgpack_object *ob, const char *key,
			    const char *val, size_t vlen)
{
	const msgpack_object_map *m = &ob->via.array.ptr[2].via.map;
	uint32_t keep = 0;
	for (uint32_t i = 0; i < m->size; i++)
		keep += !outrecs_key_is(&m->ptr[i].key, key);
	msgpack_packer *pk = np_recbuf_begin(dst, NP_REC_HEADER,
					     (uint16_t)ob->via.array.ptr[1].via.u64);
	msgpack_pack_map(pk, keep + 1);
	for (uint32_t i = 0; i < m->size; i++) {
		if (outrecs_key_is(&m->ptr[i].key, key))
			continue;
		msgpack_pack_object(pk, m->ptr[i].key);
		msgpack_pack_object(pk, m->ptr[i].val);
	}
	size_t kl = strlen(key);
	msgpack_pack_str(pk, kl);
	msgpack_pack_str_body(pk, key, kl);
	msgpack_sbuffer_write(&dst->sbuf, val, vlen);
}

void outrecs_header_with(struct np_recbuf *dst, const char *src, size_t len,
			 const char *key, const char *val, size_t vlen)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	bool done = false;
	while (off < len) {
		size_t prev = off;
		if (msgpack_unpack_next(&u, src, len, &off) != MSGPACK_UNPACK_SUCCESS) {
			outrecs_raw(dst, src + prev, len - prev, -1);
			break;
		}
		int type = outrecs_type(&u.data);
		if (!done && type == NP_REC_HEADER) {
			outrecs_rewrite(dst, &u.data, key, val, vlen);
			done = true;
		} else {
			outrecs_raw(dst, src + prev, off - prev, type);
		}
	}
	msgpack_unpacked_destroy(&u);
}

void outrecs_filter(struct np_recbuf *rb, int type)
{
	struct np_recbuf keep;
	np_recbuf_init(&keep);
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0;
	while (off < rb->sbuf.size) {
		size_t prev = off;
		if (msgpack_unpack_next(&u, rb->sbuf.data, rb->sbuf.size, &off) != MSGPACK_UNPACK_SUCCESS)
			break;
		if (outrecs_type(&u.data) == type)
			outrecs_raw(&keep, rb->sbuf.data + prev, off - prev, type);
	}
	msgpack_unpacked_destroy(&u);
	np_recbuf_reset(rb);
	msgpack_sbuffer_write(&rb->sbuf, keep.sbuf.data, keep.sbuf.size);
	rb->nrecords = keep.nrecords;
	rb->type = keep.type;
	np_recbuf_free(&keep);
}
