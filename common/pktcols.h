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
	uint8_t  hook, tcpflags, doff, flags;   /* flags: PK_F_* of bpf/pktpath.h */
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
