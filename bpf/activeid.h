/* Active packet IDs (--active-ids): a 32-bit ID in an experimental TCP
 * option (RFC 6994: kind 253, 2-byte ExID), written by a cgroup sock_ops
 * program on every data segment of established connections and read back
 * by the receiving host's program. docs/PACKET_IDS.md. */
#ifndef NP_ACTIVEID_H
#define NP_ACTIVEID_H

#define AID_KIND   253
#define AID_MAGIC0 0x4e        /* ExID "NP" */
#define AID_MAGIC1 0x50
#define AID_OPTLEN 8           /* kind, len, ExID(2), ID(4) */

enum aid_counter {
	AID_C_WRITTEN = 0,
	AID_C_NOSPC = 1,          /* bpf_reserve_hdr_opt: the 40 option bytes are full */
	AID_C_WRITE_ERR = 2,
	AID_C_PARSED = 3,
	AID_C_LOST = 4,           /* ring buffer full */
	AID_C_MAX = 5,
};

struct aid_event {
	__u64 ts;
	__u32 id;
	__u32 seq, end_seq, ack;
	__u32 saddr, daddr;       /* IPv4 only; 0 for IPv6 */
	__u16 sport, dport;
	__u8  rx;                 /* 0 written on send, 1 read on receive */
	__u8  pad[3];
};

#endif
