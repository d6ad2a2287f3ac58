/* Record body schemas (common/recschema.h) and the conformance check debug
 * builds run on every finished record. */
#include "recschema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npmsg.h"
#include "records.h"

#define NP_SCH_ROW(T, ID, k, ty, en, op, u) \
	[NPK_##T##_##ID] = { .key = k, .type = NP_FT_##ty, .enc = NP_FE_##en, .optional = op, .unit = u },
#define NP_SCH_DEF(T) \
	const struct np_recfield np_schema_##T[] = { NP_SCHEMA_##T(NP_SCH_ROW) }; \
	const struct np_recschema np_recschema_##T = { NP_REC_##T, np_schema_##T, NPK_##T##__N }; \
	_Static_assert(NPK_##T##__N <= 64, "np_schema_check marks at most 64 keys");
NP_SCHEMA_TYPES(NP_SCH_DEF)

const struct np_recschema *np_recschema_of(int type)
{
#define NP_SCH_CASE(T) case NP_REC_##T: return &np_recschema_##T;
	switch (type) {
	NP_SCHEMA_TYPES(NP_SCH_CASE)
	default: return NULL;
	}
#undef NP_SCH_CASE
}

static const struct np_recfield *schema_field(const struct np_recschema *s, const msgpack_object_str *k)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->f[i].key) == k->size && !memcmp(s->f[i].key, k->ptr, k->size))
			return &s->f[i];
	return NULL;
}

static bool value_is(const msgpack_object *o, int type)
{
	switch (type) {
	case NP_FT_U64:  return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER;
	case NP_FT_F64:  return o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32 ||
				o->type == MSGPACK_OBJECT_POSITIVE_INTEGER;
	case NP_FT_BOOL: return o->type == MSGPACK_OBJECT_BOOLEAN;
	case NP_FT_STR:  return o->type == MSGPACK_OBJECT_STR;
	case NP_FT_MAP:  return o->type == MSGPACK_OBJECT_MAP;
	case NP_FT_BIN:  return o->type == MSGPACK_OBJECT_BIN;
	}
	return false;
}

/* The fault of one key's value, NULL if it fits; *len the column length. */
static const char *field_fault(const struct np_recfield *f, const msgpack_object *v, int64_t *len)
{
	*len = -1;
	if (f->enc == NP_FE_SCALAR)
		return value_is(v, f->type) ? NULL : "scalar of the wrong type";
	if (v->type != MSGPACK_OBJECT_ARRAY)
		return "not an array";
	for (uint32_t i = 0; i < v->via.array.size; i++) {
		const msgpack_object *e = &v->via.array.ptr[i];
		/* a delta column's differences may be negative */
		if (!value_is(e, f->type) && !(f->enc == NP_FE_DELTA && e->type == MSGPACK_OBJECT_NEGATIVE_INTEGER))
			return "array element of the wrong type";
	}
	*len = v->via.array.size;
	return NULL;
}

int np_schema_check(int type, const msgpack_object *body, bool complete, char *err, size_t errlen)
{
	const struct np_recschema *s = np_recschema_of(type);
	if (!s)
		return 0;
	if (body->type != MSGPACK_OBJECT_MAP) {
		snprintf(err, errlen, "%s: body is not a map", np_rec_type_name(type));
		return -1;
	}
	bool seen[64] = { false };
	int64_t n = -1, len;
	for (uint32_t i = 0; i < body->via.map.size; i++) {
		const msgpack_object_kv *kv = &body->via.map.ptr[i];
		const struct np_recfield *f = kv->key.type == MSGPACK_OBJECT_STR ?
			schema_field(s, &kv->key.via.str) : NULL;
		if (!f) {
			const msgpack_object_str *k = &kv->key.via.str;
			snprintf(err, errlen, "%s: key %.*s not in the schema", np_rec_type_name(type),
				 kv->key.type == MSGPACK_OBJECT_STR ? (int)(k->size < 40 ? k->size : 40) : 1,
				 kv->key.type == MSGPACK_OBJECT_STR ? k->ptr : "?");
			return -1;
		}
		const char *fault = field_fault(f, &kv->val, &len);
		if (!fault && !strcmp(f->key, "n") && kv->val.type == MSGPACK_OBJECT_POSITIVE_INTEGER)
			n = (int64_t)kv->val.via.u64;
		if (fault) {
			snprintf(err, errlen, "%s.%s: %s", np_rec_type_name(type), f->key, fault);
			return -1;
		}
		seen[f - s->f] = true;
	}
	for (size_t i = 0; i < s->n; i++) {
		if (complete && !seen[i] && !s->f[i].optional) {
			snprintf(err, errlen, "%s.%s: missing", np_rec_type_name(type), s->f[i].key);
			return -1;
		}
	}
	for (uint32_t i = 0; n >= 0 && i < body->via.map.size; i++) {
		const msgpack_object_kv *kv = &body->via.map.ptr[i];
		const struct np_recfield *f = schema_field(s, &kv->key.via.str);
		if (f->enc != NP_FE_SCALAR && kv->val.via.array.size != n) {
			snprintf(err, errlen, "%s.%s: %u values for n = %lld", np_rec_type_name(type),
				 f->key, kv->val.via.array.size, (long long)n);
			return -1;
		}
	}
	return 0;
}

int np_cols_open(struct np_cols *c, int type, const msgpack_object *body)
{
	memset(c, 0, sizeof(*c));
	c->s = np_recschema_of(type);
	if (!c->s)
		return -EINVAL;
	uint64_t n;
	size_t longest = 0;
	for (size_t k = 0; k < c->s->n; k++) {
		const struct np_recfield *f = &c->s->f[k];
		if (f->enc == NP_FE_SCALAR)
			continue;
		const msgpack_object_array *a = np_get_array(body, f->key);
		if (!a)
			continue;
		longest = a->size > longest ? a->size : longest;
		if (f->type != NP_FT_U64) {
			c->arr[k] = a;
			c->len[k] = a->size;
			continue;
		}
		c->u64[k] = f->enc == NP_FE_DELTA ? np_get_u64_delta(body, f->key, &c->len[k])
						  : np_get_u64_array(body, f->key, &c->len[k]);
		if (!c->u64[k] && a->size)
			c->len[k] = 0;    /* not all integers: absent, as before */
	}
	c->n = np_get_u64(body, "n", &n) == 0 ? (size_t)n : longest;
	return 0;
}

void np_cols_close(struct np_cols *c)
{
	for (size_t k = 0; k < 64; k++)
		free(c->u64[k]);
	memset(c, 0, sizeof(*c));
}

bool np_cols_u64(const struct np_cols *c, int key, size_t i, uint64_t *v)
{
	if (i >= c->n || !c->u64[key] || i >= c->len[key])
		return false;
	*v = c->u64[key][i];
	return true;
}

const msgpack_object *np_cols_obj(const struct np_cols *c, int key, size_t i)
{
	if (i >= c->n || !c->arr[key] || i >= c->len[key])
		return NULL;
	return &c->arr[key]->ptr[i];
}

void np_recschema_markdown(FILE *out)
{
	static const char *const tname[] = { "uint", "float", "bool", "string", "map", "bytes" };
	static const char *const ename[] = { "scalar", "column", "delta column" };
	static const struct np_recschema *const all[] = {
#define NP_SCH_PTR(T) &np_recschema_##T,
		NP_SCHEMA_TYPES(NP_SCH_PTR)
#undef NP_SCH_PTR
	};
	fputs("# Record schemas (generated)\n\n"
	      "Generated from `common/recschema.h` by `build/tools/recschema_md > docs/records/schema.md`;\n"
	      "do not edit (`tests/unit/test_recschema.c` fails when the page and the tables differ).\n"
	      "Columns hold one value per row (`n` rows); a delta column's first value is absolute,\n"
	      "the rest differences. Optional keys may be left out by the writer.\n", out);
	for (size_t t = 0; t < sizeof(all) / sizeof(all[0]); t++) {
		const struct np_recschema *s = all[t];
		fprintf(out, "\n## %s (type %d)\n\n| key | type | encoding | unit | optional |\n"
			"|---|---|---|---|---|\n", np_rec_type_name(s->type), s->type);
		for (size_t i = 0; i < s->n; i++)
			fprintf(out, "| `%s` | %s | %s | %s | %s |\n", s->f[i].key, tname[s->f[i].type],
				ename[s->f[i].enc], s->f[i].unit[0] ? s->f[i].unit : "", s->f[i].optional ? "yes" : "");
	}
}
