/* Columnar encoding of packet-path events (NP_REC_PKT_EVENTS) and their flow
 * table (NP_REC_PKT_FLOWS); the writer is nprec's pktpath family, readers
 * are npanalyze and the test tools. docs/records/pktpath.md is the schema,
 * docs/PACKET_IDS.md the meaning of the ID. */
#ifndef NP_PKTCOLS_H
#define NP_PKTCOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>

#define PKTCOLS_VERSION 1

/* One packet at one hook, as stored (ts already shifted). */
struct pktcols_ev {
	uint64_t ts;
	uint32_t flow;        /* index into the flow table */
	uint32_t seq, end_seq, ack, tsval, uid;
	uint32_t ifindex, len;
	uint16_t ipid, cpu;
	uint8_t  hook, tcpflags, doff, flags;   /* flags: PK_F_* of common/npwire.h */
	uint16_t gso;         /* GSO segment size at transmit hooks, else 0 */
};

struct pktcols_flow {
	uint32_t idx;
	uint8_t  family;      /* 4 or 6 */
	uint8_t  proto;
	uint16_t sport, dport;
	uint8_t  saddr[16], daddr[16];   /* v4 in the first 4 bytes */
};

/* Number of keys pktcols_pack_events writes; the caller opens the body map
 * with this plus its own keys. */
#define PKTCOLS_EVENT_KEYS 16
/* Packs the columns of ev[0..n) (must be sorted by ts) as map entries. */
void pktcols_pack_events(msgpack_packer *pk, const struct pktcols_ev *ev, size_t n);
/* Decodes a PKT_EVENTS body into a new malloc'd array. 0 or -1 (malformed). */
int  pktcols_unpack_events(const msgpack_object *body, struct pktcols_ev **out, size_t *n);

#define PKTCOLS_FLOW_KEYS 7
void pktcols_pack_flows(msgpack_packer *pk, const struct pktcols_flow *f, size_t n);
int  pktcols_unpack_flows(const msgpack_object *body, struct pktcols_flow **out, size_t *n);

/* ---- decoding straight from the MessagePack bytes ----
 * A PKT_EVENTS record of 65536 events holds ~1 M column elements: building
 * a 24-byte msgpack_object for each and converting them again cost more
 * than the packet analysis itself. These read a body's bytes (np_record.raw
 * of a type passed to np_reader_set_raw) with a pull parser that checks
 * every length against the bytes it has and never allocates from a count
 * it read: a column of n values is allocated only after its n elements were
 * read (each takes at least one byte), so a decoder allocates at most 8
 * bytes per input byte. Semantics equal those of npmsg.h on the tree. */

/* One map body, its first PKTCOLS_RAW_KEYS pairs indexed by one walk;
 * later pairs (never in a PKT_EVENTS body) are walked at each lookup. */
#define PKTCOLS_RAW_KEYS 32
struct pktcols_raw {
	uint32_t n;                      /* pairs indexed */
	uint64_t more;                   /* pairs after them */
	const uint8_t *rest, *end;       /* where those start; end of the map */
	struct {
		const uint8_t *key, *val;    /* key NULL: not a string */
		uint32_t klen;
		size_t vlen;
	} kv[PKTCOLS_RAW_KEYS];
};
/* 0, or -1 when body is not a map or its indexed pairs are malformed. */
int pktcols_raw_open(struct pktcols_raw *m, const void *body, size_t len);
struct np_record;
/* The same for a record the reader returned raw: takes the pairs its walk
 * found (np_record.raw_pairs) instead of walking the body again. */
int pktcols_raw_from_record(struct pktcols_raw *m, const struct np_record *rec);
/* Bytes of the first value under string key (np_map_get), NULL if none. */
const uint8_t *pktcols_raw_get(const struct pktcols_raw *m, const char *key, size_t *vlen);
/* np_get_u64: a non-negative integer. 0 or -1. */
int pktcols_raw_u64(const struct pktcols_raw *m, const char *key, uint64_t *v);
/* np_get_u64_array and np_get_u64_delta: new malloc'd arrays, NULL and
 * *n = 0 when missing or malformed. */
uint64_t *pktcols_raw_u64_array(const struct pktcols_raw *m, const char *key, size_t *n);
uint64_t *pktcols_raw_u64_delta(const struct pktcols_raw *m, const char *key, size_t *n);
/* A column of exactly n integers of either sign, modulo 2^32 (the per-flow
 * delta columns); NULL when absent, of another length or malformed. */
uint32_t *pktcols_raw_u32_mod(const struct pktcols_raw *m, const char *key, size_t n);

/* A column decoded piece by piece into the caller's buffers (no
 * allocation; npanalyze decodes a record in blocks that stay in cache):
 * open gives the element count, each call decodes the next k values with
 * the semantics of the array functions above (u64: non-negative; delta:
 * running sum, first value non-negative; u32: modulo 2^32). -1: missing,
 * malformed or fewer than k values left; the column is then unusable. */
struct pktcols_col {
	const uint8_t *p, *end;
	uint64_t left, i, acc;
};
int pktcols_col_open(struct pktcols_col *c, const struct pktcols_raw *m, const char *key, uint64_t *n);
int pktcols_col_u64(struct pktcols_col *c, uint64_t *out, size_t k);
int pktcols_col_delta(struct pktcols_col *c, uint64_t *out, size_t k);
int pktcols_col_u32(struct pktcols_col *c, uint32_t *out, size_t k);
/* pktcols_col_u32 of three columns at once, the same values: their
 * integers are decoded in one loop, so the chains of each column (a
 * value's first byte says where the next begins) overlap. -1 and the
 * first failing column (0..2, in order) in *bad. */
int pktcols_col_u32_3(struct pktcols_col c[3], uint32_t *const out[3], size_t k, int *bad);
/* pktcols_col_delta of cd and pktcols_col_u64 of cu at once, alike
 * (*bad: 0 cd, 1 cu). */
int pktcols_col_delta_u64(struct pktcols_col *cd, struct pktcols_col *cu, uint64_t *od, uint64_t *ou,
			  size_t k, int *bad);

/* The fast forms: columns decoded in runs that stop at the first value
 * of a form these do not take, for a caller that then decodes it with
 * the functions above (with their checks and semantics) and comes back.
 * No branch on the form of a value: the per-flow delta columns mix forms
 * at random. Each returns how many of the next (at most k) values it
 * decoded and moves c on by as many.
 * fast_delta: pktcols_col_delta of values in the forms of non-negative
 * integers up to 32 bits (positive fixint, uint 8/16/32: msgpack-c's for
 * them); fast_u32: pktcols_col_u64 of the same, as 32 bits; fast_i32:
 * pktcols_col_u32 of those and of negative fixints and int 8/16/32. */
size_t pktcols_col_fast_delta(struct pktcols_col *c, uint64_t *out, size_t k);
size_t pktcols_col_fast_u32(struct pktcols_col *c, uint32_t *out, size_t k);
size_t pktcols_col_fast_i32(struct pktcols_col *c, uint32_t *out, size_t k);
/* fast_delta of cd with fast_u32 of cu, and fast_i32 of three columns, in
 * one loop each (the columns' decode chains overlap): both (all three)
 * stop at the first row where one of them would. */
size_t pktcols_col_fast_delta_u32(struct pktcols_col *cd, struct pktcols_col *cu, uint64_t *od, uint32_t *ou,
				  size_t k);
size_t pktcols_col_fast_i32_3(struct pktcols_col c[3], uint32_t *const out[3], size_t k);
/* How many of the next (at most k) values are positive fixints: the
 * caller reads them as the bytes c->p[0..) and moves on with
 * pktcols_col_skip. */
size_t pktcols_col_fixints(const struct pktcols_col *c, size_t k);
void pktcols_col_skip(struct pktcols_col *c, size_t k);

/* Pairs of a map in order: begin 0 / -1 (not a map); next 1 = a pair,
 * 0 = end, -1 = malformed. */
struct pktcols_mapit {
	const uint8_t *p, *end;
	uint64_t left;
};
int pktcols_map_begin(struct pktcols_mapit *it, const void *map, size_t len);
int pktcols_map_next(struct pktcols_mapit *it, const uint8_t **key, size_t *klen,
		     const uint8_t **val, size_t *vlen);

/* The passive packet ID of a stored event (0 for byte-range events). */
uint32_t pktcols_id(const struct pktcols_ev *e);
/* The GSO/GRO rule of docs/PACKET_IDS.md: true when received (or later)
 * event r carries bytes of sent event s: same ack, TSval and data offset,
 * r's range inside s's, and (IPv4) the IP ID advanced by one per segment of
 * s's GSO size. No address or port is compared (NAT). */
bool pktcols_covers(const struct pktcols_ev *s, const struct pktcols_ev *r);
/* Hook name ("dev_queue", ...) or NULL. */
const char *pktcols_hook_name(unsigned hook);

#endif
