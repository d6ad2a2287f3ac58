/* npanalyze's in-memory model: the hosts, the packet-hook events, flows,
 * clock-sync exchanges and the aggregates of the other recorder families,
 * loaded from N recordings (ana_load.c), then analysed phase by phase
 * (pipeline.c) into an np_analysis file (ana_out.c). Each declaration below
 * names the file that defines it. Every symbol of the analyzer modules
 * starts with ana_. */
#ifndef NP_ANA_H
#define NP_ANA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "container.h"
#include "anatable.h"
#include "sketch.h"

/* Hook points: enum pk_hook (common/npwire.h), stored as numbers in
 * PKT_EVENTS. ana_hook_from_name() also accepts the names. */
#include "npwire.h"
#define ANA_NHOOKS PK_HOOK_MAX

/* Latency segments a path is cut into; the time between two consecutive
 * hooks goes to the segment of the later hook. The FWD_ segments are the
 * recorded hosts a packet crosses between its sender and its receiver
 * (router, DNAT balancer): ingress + netfilter/NAT + routing, their qdisc,
 * their transmit. */
enum ana_seg {
	ANA_SEG_SND_STACK = 0, ANA_SEG_QDISC, ANA_SEG_DEVICE, ANA_SEG_WIRE,
	ANA_SEG_FWD_STACK, ANA_SEG_FWD_QDISC, ANA_SEG_FWD_DEVICE,
	ANA_SEG_RCV_STACK, ANA_SEG_RCV_APP, ANA_SEG_TOTAL, ANA_NSEGS
};

/* ana_util.c: names of hooks, segments and clock qualities */
const char *ana_hook_name(int hook);
int  ana_hook_from_name(const char *s, size_t n);
const char *ana_seg_name(int seg);
const char *ana_seg_phrase(int seg);    /* "receiver's application" ... */
int  ana_hook_segment(int hook, bool first_on_host);
int  ana_path_segment(int hook, bool first_on_host, bool forwarder);

#define ANA_HOST_NONE 0xffff

enum ana_clock_quality { ANA_CLK_REF = 0, ANA_CLK_ACCURATE, ANA_CLK_APPROX,
			 ANA_CLK_FAILED, ANA_CLK_UNALIGNED };
const char *ana_clock_quality_name(int q);

/* Runs the kernel skipped for one of the recorder's programs (PROGS). */
#define ANA_PROGMISS_MAX 8
struct ana_progmiss { char prog[48], family[24]; uint64_t n; };

struct ana_host {
	char name[128];             /* display name (alias, hostname, or file stem) */
	char hostname[128], machine_id[64], boot_id[64], label[128];
	char stem[256];             /* file name without rotation suffix */
	bool has_header;
	unsigned ncpus;
	size_t nfiles;
	uint64_t t_min, t_max;      /* local mono ns of everything seen */
	int64_t seek_d;             /* this host's clock minus the reference's, by the HEADERs' wall clocks (ana_seek.c) */
	uint64_t interval_ns;
	uint64_t lost_events;       /* sum of LOST records */
	uint64_t capped_events;     /* packet events dropped by the recorder's per-flow cap */
	char lost_fam[8][16];       /* LOST per family (names from the record) */
	uint64_t lost_fam_n[8];
	uint64_t pkt_lost;          /* packet-path events lost (PKT_EVENTS hook counters) */
	uint64_t pkt_seen;          /* packet-path events the hooks matched (same counters) */
	uint64_t pkt_missed;        /* netif_receive runs the kernel skipped (TC ingress count) */
	uint64_t pkt_prog_missed;   /* tracepoint program runs the kernel skipped (recursion) */
	struct ana_progmiss prog_missed[ANA_PROGMISS_MAX];   /* PROGS, programs with skipped runs */
	uint64_t records;           /* records read from its files */
	uint64_t chunks_bad, bytes_skipped, records_bad;
	bool truncated;
	/* clock: ref_ns = a * (t - t0) + b; for the reference host a=1, b=t0 */
	uint64_t t0;
	double clk_a, clk_b, clk_err_ns;
	int clk_quality;
	int clk_via;                /* host this one was aligned through, -1 direct */
	bool clk_same_boot;         /* aligned by a shared boot, not a fit (ana_clock_same_boot) */
	uint64_t pkt_events;
	uint64_t sync_id;           /* self_id of its clock-sync family */
	int64_t clock_shift_ns;     /* --test-clock-shift of its recorder (header config) */
	bool has_flows;             /* FLOWS records: its kernel drops were recorded */
};

/* ana_pev.flags: the recorder's evflags (low 3 bits) plus TCP control bits. */
#define ANA_EVF_RANGE 0x04      /* byte-range event (sock_send), no header */
#define ANA_EVF_CTL   0x08      /* TCP SYN, FIN or RST: not expected at the socket */

/* One packet-hook event (32 bytes; millions of them). */
struct ana_pev {
	uint64_t ts;                /* local mono ns */
	uint32_t seq, ack, xid, len;/* xid tells a retransmission from the original */
	uint32_t flow;              /* index into ana_model.flows */
	uint16_t host;
	uint8_t  hook, flags;
};

struct ana_flow {
	uint16_t host;
	uint64_t local_id;          /* id in the recording */
	uint8_t  proto;
	char src[48], dst[48];
	uint16_t sport, dport;
	uint32_t pid;
	uint64_t cgroup;
	char comm[20];
};

struct ana_sync {
	uint16_t client, server;    /* hosts of T1/T4 and T2/T3 */
	uint64_t t1, t2, t3, t4;
	uint64_t peer_id;           /* the other side's sync self_id, 0 unknown */
	bool auth;                  /* MAC-verified (NP_REC_SYNC v2 "authenticated") */
};

/* Grow-only arrays without per-item malloc (ana_vec_grow: ana_util.c). */
#define ANA_VEC(T) struct { T *v; size_t n, cap; }
int ana_vec_grow(void **v, size_t *cap, size_t need, size_t elem);
#define ANA_PUSH(vec) \
	(ana_vec_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof(*(vec).v)) ? NULL \
	 : &(vec).v[(vec).n++])

/* Family aggregates other than packet paths (recorder-core / netcpu). */
struct ana_flowstat {           /* FLOWS record, one flow in one interval */
	uint16_t host;
	uint64_t t;                 /* interval start, local */
	uint64_t dur_ns;
	char key[160];              /* "proto src:sport>dst:dport" */
	char src[48], dst[48];
	uint16_t sport, dport;
	uint8_t proto;
	uint64_t tx_bytes, rx_bytes, tx_pkts, rx_pkts, retrans, drops;
	uint64_t srtt_ns;
	uint32_t pid; uint64_t cgroup; char comm[20];
};

struct ana_drop {
	uint16_t host;
	uint64_t t;
	char flowkey[160];
	char reason[64];
	uint64_t count;
	int hook;                   /* where the kernel dropped it, if known */
};

struct ana_txn {                /* TXN_STATS: per connection per interval */
	uint16_t host;
	uint64_t t;
	char conn[160];             /* connection key */
	uint64_t conn_id;           /* the recorder's connection id (TXN_EVENTS.conn) */
	char endpoint[200];         /* server ip:port + HTTP path */
	char container[128];
	char peer_host_addr[48], local_addr[48];
	uint16_t local_port, peer_port;
	bool server;
	uint32_t pid; uint64_t cgroup; char comm[20];
	uint64_t count, bytes;
	struct np_sketch lat;
	uint64_t ev_lo, ev_hi;      /* a row built from TXN_EVENTS: first start, last end */
	uint64_t ev_sample;         /* events of 1 in N connections this interval, 0: not said (all) */
	bool ev_skipped;            /* this connection's events were not recorded (sampled out) */
	/* TXN_STATS start_lo_ns/start_hi_ns: the row's requests started from
	 * start_lo to start_hi, start_gaps intervals between those starts
	 * (start_hi 0: not recorded, an older recorder) */
	uint64_t start_lo, start_hi, start_gaps;
	uint64_t start_second, start_prev;  /* the connection's 2nd start, the one before start_hi */
	bool start_first_row;       /* start_lo is the connection's first start */
};

struct ana_txev {               /* TXN_EVENTS: one transaction */
	uint16_t host;
	uint8_t server;
	uint64_t start, dur;
	uint32_t pid, tid;
	uint64_t conn;              /* recorder's connection id */
	uint64_t end;               /* last response byte (local clock) */
	uint64_t bytes;             /* request + response payload */
	char method[8], path[64];   /* HTTP request line, "" if none */
};

/* A slow-RPC window: picked by ana_bneck_windows (a, b, ev, ports, what);
 * the segment sums of the packets of that connection (else of all packets)
 * inside it are added by ana_decomp_run. */
struct ana_bwres {
	int64_t a, b;               /* reference timeline */
	size_t ev;                  /* the server transaction (index in txevs) */
	uint16_t lport, rport;      /* the connection's ports (0 = unknown) */
	char what[200];
	double sum[ANA_NSEGS], asum[ANA_NSEGS];   /* this connection / all packets */
	uint64_t cnt[ANA_NSEGS], acnt[ANA_NSEGS];
};

/* Per-interval overall segment means from the packet paths, for the
 * bottleneck analysis (filled by ana_decomp_run). */
struct ana_ivseg {
	size_t n;
	int64_t t0, len;
	double *sum;                /* n * ANA_NSEGS */
	uint64_t *cnt;
	double mean[ANA_NSEGS];     /* over the whole recording */
	double pmean[ANA_NSEGS];    /* per packet: segment sum / packets with a total,
				     * so the segments add up to the total */
};

struct ana_netcpu {             /* NETCPU: per host per interval (summed over CPUs) */
	uint16_t host;
	uint64_t t, dur_ns;
	uint64_t net_rx_ns, net_tx_ns, sock_send_ns, sock_recv_ns;
	/* socket time: exact clock, or sampled (sock_*_ns = samples x period) */
	uint8_t sock_how;           /* enum ana_sock_how */
	uint64_t send_smp, recv_smp, smp_period_ns;   /* 0 without a sampler */
	/* NET_RX / NET_TX time: exact pair, or sampled (net_*_ns = samples x
	 * period); the samples are there in exact mode too (cross-check) */
	uint8_t sirq_how;           /* enum ana_sock_how */
	uint64_t rx_smp, tx_smp, rx_probe_smp;
	/* the samples weighed by their own timer periods (the dithered rate,
	 * since j26d); 0 in older recordings: samples x smp_period_ns */
	uint64_t send_smp_ns, recv_smp_ns, rx_smp_ns, tx_smp_ns;
	/* exact mode's cross-check (0 otherwise): samples in tracers' programs
	 * while the exact clock ran (probe: exact holds them, sampled does not)
	 * and samples counted while it did not run (outside; NET_RX: stray) */
	uint64_t send_probe_smp, recv_probe_smp, send_out_smp, recv_out_smp, rx_stray_smp;
	uint8_t probe_mask;         /* ANA_NC_PROBE_*: the record had those columns */
	/* exact mode: socket calls that reached the end of the socket layer
	 * without a syscall stamp (sendfile, splice, io_uring, a lost stamp),
	 * so in no sock_*_ns; has_unclocked: the record carried the columns
	 * (absent before 2026-11-27: unknown, not 0) */
	uint64_t send_unclocked, recv_unclocked;
	bool has_unclocked;
	uint8_t sock_sampler;       /* enum ana_sock_sampler: who split socket calls from softirqs */
};

enum { ANA_NC_PROBE_SOCK = 1, ANA_NC_PROBE_RX = 2 };

/* the record's sock_sampler (absent before j32c: unnamed, the own timer) */
enum ana_sock_sampler { ANA_SAMPLER_UNNAMED = 0, ANA_SAMPLER_LOCAL, ANA_SAMPLER_REMOTE_RECV, ANA_SAMPLER_REMOTE };

enum ana_sock_how { ANA_SOCK_EXACT = 0, ANA_SOCK_SAMPLED, ANA_SOCK_NONE };

struct ana_netrx {              /* NETRX_STACKS: per host per interval per component */
	uint16_t host;
	uint64_t t;
	char comp[48];
	uint64_t samples, est_ns;
};

struct ana_thread {             /* THREADS: per thread per interval */
	uint16_t host;
	uint64_t t, dur_ns;
	uint32_t pid, tid;
	uint64_t cgroup;
	char comm[20];
	uint64_t cpu_ns;
};

struct ana_cgroup { uint16_t host; uint64_t id; char path[200]; };

struct ana_ewma {               /* STACK_EWMA: one pod flow in one interval */
	uint16_t host;
	uint64_t t;
	char flowkey[120];
	char bucket[8];             /* intra / inter (node) */
	uint64_t f[4], n[4], alerts[4];   /* rtt, rnst1, cnst, rnst2 */
};

struct ana_alert {              /* ALERTS (perfmon) */
	uint16_t host;
	uint64_t t;
	char flowkey[160];
	char comp[16];              /* rtt, rnst1, cnst, rnst2 */
	uint64_t value_ns, thresh_ns;
};

struct ana_options {
	const char *ref;            /* --ref HOST */
	uint64_t from_ns, to_ns;    /* --from/--to on the reference timeline (0 = open) */
	bool from_set, to_set;
	bool from_rel, to_rel;      /* relative to the reference host's first event */
	const char *flow_filter;    /* --flow substring on the flow key */
	const char *aliases[64]; size_t naliases;   /* FILE=NAME */
	bool quiet;
	unsigned threads;           /* --threads: decoding threads, <= 1 none */
	struct ana_progress *prog;  /* live progress line, NULL none (ana_progress.h) */
	uint64_t mem_limit;         /* --mem bytes, 0 none */
	uint64_t mem_base;          /* resident bytes before reading (predictions add to it) */
	uint64_t window_ns;         /* --window: streamed analysis in windows this long (ana_stream.c) */
	int64_t seek_margin_ns;     /* chunks read around --from/--to; 0: ANA_SEEK_MARGIN_NS */
	bool seek_first_clock;      /* --from/--to on the first input's clock, whatever --ref (streamed) */
	uint64_t horizon_ns;        /* --horizon: read around each streamed window; 0: default */
};

/* One probe of a recording as its last HEADER or PROBES record left it
 * (docs/FORMAT.md 6.1): which hooks attached, were skipped, or failed. */
struct ana_probe {
	uint16_t host;
	uint64_t t;                 /* local mono ns of the record that set it */
	char family[24], probe[64], state[12], reason[160];
};

/* Who fills what: the loader fills the record vectors (hosts .. ewma,
 * warnings, inputs); the phases of pipeline.c then fill hosts[].clk_* and
 * t0 (clock), win_lo/win_hi (window), bwins (slow-RPC windows, then their
 * segment sums in the path phase) and ivseg (path phase). */
struct ana_model {
	ANA_VEC(struct ana_host) hosts;
	ANA_VEC(struct ana_pev) pev;
	ANA_VEC(struct ana_flow) flows;
	ANA_VEC(struct ana_sync) syncs;
	ANA_VEC(struct ana_flowstat) fstats;
	ANA_VEC(struct ana_drop) drops;
	ANA_VEC(struct ana_txn) txns;
	ANA_VEC(struct ana_txev) txevs;
	ANA_VEC(struct ana_netcpu) netcpu;
	ANA_VEC(struct ana_netrx) netrx;
	ANA_VEC(struct ana_thread) threads;
	ANA_VEC(struct ana_cgroup) cgroups;
	ANA_VEC(struct ana_alert) alerts;
	ANA_VEC(struct ana_ewma) ewma;
	ANA_VEC(struct ana_probe) probes;
	ANA_VEC(char *) warnings;
	size_t nminor;              /* of them minor (ana_note): no exit status 1 */
	ANA_VEC(uint8_t) warn_minor;  /* per warning: 1 = minor (printed as a note) */
	ANA_VEC(char *) inputs;
	struct ana_ivseg ivseg;     /* path phase -> bottlenecks, graph */
	ANA_VEC(struct ana_bwres) bwins;   /* slow-RPC windows -> path phase -> bottlenecks */
	int64_t win_lo, win_hi;     /* --from/--to resolved on the reference timeline (window phase) */
	int ref;                    /* reference host index (loader) */
	const struct ana_options *opt;
	struct ana_seek { bool off, rel, based, d_based, d_has; unsigned nfiles; int64_t lo, hi, lo_m, hi_m, d_off0; }
		seek;                   /* --from/--to: chunks read (ana_seek.c) */
	bool pev_drop;              /* streamed skeleton: packet events counted, not kept (ana_stream.c) */
	struct ana_stream_acc *sacc;  /* streamed: the decomposition adds its window here */
	bool own_set;               /* streamed: clock points only of packets whose first event */
	int64_t own_lo, own_hi;     /* (- seek_d) lies in [own_lo, own_hi) */
	/* flow lookup (host, local id) -> index */
	uint64_t *fl_keys; uint32_t *fl_vals; size_t fl_cap;
};

/* Everything the analysis produces, before it is written. */
struct ana_out {
	ANA_VEC(struct np_table *) tables;
	struct np_recbuf rb;        /* series, sketches, findings */
	ANA_VEC(char *) findings;   /* also printed in the summary */
	struct { double score; int sev; char text[400]; char table[32]; char key[200];
		 char metric[32]; double value; } cand[64];
	size_t ncand;
};

/* ana_util.c */
void ana_warn(struct ana_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A minor warning: listed with the others, but npanalyze still exits 0. */
void ana_note(struct ana_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ana_progs.c: PROGS records summed into h; the note naming the programs. */
void ana_progs_load(struct ana_host *h, const msgpack_object *body);
void ana_progs_note(struct ana_model *m, const struct ana_host *h);
void ana_model_init(struct ana_model *m, const struct ana_options *opt);
void ana_model_free(struct ana_model *m);
int64_t ana_to_ref(const struct ana_model *m, int host, uint64_t t);
/* ana_txname.c: client transactions without a request line (recorded
 * without send calls) named from their servers' recordings; after the
 * clock fit. */
void ana_txn_name_clients(struct ana_model *m);
bool ana_host_aligned(const struct ana_model *m, int host);
/* t (reference timeline) inside --from/--to */
bool ana_in_window(const struct ana_model *m, int64_t t);
/* an interval record of host starting at local t overlaps --from/--to */
bool ana_interval_in_window(const struct ana_model *m, int host, uint64_t t, uint64_t dur);
uint32_t ana_flow_lookup(struct ana_model *m, uint16_t host, uint64_t local_id, bool create);
void ana_flow_key(const struct ana_flow *f, char *buf, size_t n);
/* The sketch columns, at offsets from the first (ana_sketch_cols adds them in this order). */
enum ana_sk_col { ANA_SK_COUNT, ANA_SK_MEAN, ANA_SK_P50, ANA_SK_P90, ANA_SK_P99, ANA_SK_P999,
		  ANA_SK_MAX, ANA_SK_NCOLS };
void ana_sketch_cols(struct np_table *t, size_t id);   /* count mean p50 p90 p99 p999 max */
void ana_sketch_cells(struct np_table *t, size_t row, size_t col0, const struct np_sketch *s);

/* ana_seek.c: --from/--to reads only the chunks near the window; begin
 * after the file's HEADER record (hdr, NULL if none), end after its last. */
void ana_seek_begin(struct ana_model *m, int host, struct np_reader *r, const msgpack_object *hdr);
void ana_seek_end(struct ana_model *m, int host, struct np_reader *r);

/* ana_load.c: reads one recording file into m (host chosen by identity). */
/* ana_load_file: 0, -errno, or ANA_LOAD_NOT_NP (no np file header and no
 * readable chunk anywhere: not a recording at all, nothing was added). */
#define ANA_LOAD_NOT_NP (-4096)
/* ... or ANA_LOAD_OVER_MEM: the predicted peak passed --mem (reading stopped). */
#define ANA_LOAD_OVER_MEM (-4097)
/* Peak memory per packet event of the whole analysis (the per-packet
 * decomposition sets it: docs/ANALYSIS.md "Scale"), measured on genfix 2-
 * and 10-host recordings at 58 B, 64 B with the decomposition of main after
 * issue 19 was merged; --mem predicts with it. */
#define ANA_MEM_PER_EVENT 64
uint64_t ana_mem_predict(const struct ana_model *m);
/* A warning share below which lost events are minor (ana_note). */
#define ANA_MINOR_SHARE 0.001
/* Below it, hook runs the kernel skipped (counted, or inferred as
 * loss.unrecorded) are minor: the packets are accounted for, only some of
 * their events are missing (0.07-0.15 % per host on a loaded machine). */
#define ANA_MINOR_MISSED_SHARE 0.01
int  ana_load_file(struct ana_model *m, const char *path, const char *alias);
int  ana_load_mem(struct ana_model *m, const void *data, size_t len, const char *name);
void ana_load_finish(struct ana_model *m);

/* ana_clock.c */
struct ana_hull_pt { double x, y; };
/* Fits y = a*x + b with up[] on or above the line and lo[] on or below it
 * (points sorted by x). Returns ACCURATE (both sides, bounds consistent),
 * APPROX (one side only) or FAILED (the sides cross); fills a, b, the half
 * width of the feasible offset band (err, NAN when unbounded) and the
 * feasible slope interval [a_lo, a_hi]. */
int  ana_clock_fit(const struct ana_hull_pt *up, size_t nup, const struct ana_hull_pt *lo,
		   size_t nlo, double *a, double *b, double *err, double *a_lo, double *a_hi);
struct ana_clockpts;
struct ana_clockpts *ana_clock_pts_new(const struct ana_model *m);
/* One message from host s (sent at local ts) to host r (received at local tr). */
void ana_clock_add(struct ana_clockpts *cp, int s, uint64_t ts, int r, uint64_t tr);
void ana_clock_pts_free(struct ana_clockpts *cp);
/* Threads: an empty set for cp's hosts, and one merged into another
 * (after it, as if added later; src freed). */
struct ana_clockpts *ana_clock_pts_like(const struct ana_clockpts *cp);
void ana_clock_pts_merge(struct ana_clockpts *dst, struct ana_clockpts *src);
/* Adds the sync exchanges, fits every host pair, aligns every host it can
 * onto the reference, writes tables "clock" and "clock_pairs". */
void ana_clock_run(struct ana_model *m, struct ana_clockpts *cp, struct ana_out *o);

/* ana_path.c: joining the hook events into packets across hooks and hosts. */
struct ana_paths;
struct ana_paths *ana_path_match(struct ana_model *m);
/* The one-way delays of the joined packets, as clock points. */
void ana_path_clock_points(const struct ana_model *m, const struct ana_paths *p,
			   struct ana_clockpts *cp);
void ana_path_free(struct ana_paths *p);

/* ana_decomp.c: decomposition, jitter and loss over the joined packets;
 * also fills m->ivseg and the segment sums of m->bwins. */
void ana_decomp_run(struct ana_model *m, struct ana_paths *p, struct ana_out *o);
/* Tests: the decomposition's packet templates (ana_decomp.c) used or not
 * (default on), and how many packets took one since the last reset. */
extern bool ana_decomp_tpl_on;
extern size_t ana_decomp_tpl_hits;

/* Streamed analysis (ana_stream.c): what the windows' decompositions add up
 * to. Sketches get each window's values merged in window order (bucket
 * counts exact, the double sums in another order); counts are plain sums. */
struct ana_stream_acc {
	struct np_sketch all[ANA_NSEGS];   /* flow "all", as the decomp table's */
	double whole[ANA_NSEGS];           /* segment sums of packets with a whole path */
	uint64_t pkts, bytes, retx, lost, copies, unrec, sent, received;
	uint64_t negative;                 /* cross-host segments clamped to 0 */
	uint64_t active;                   /* flows with packets, summed over windows */
	uint64_t flows;                    /* distinct flows with packets in the run */
	struct ana_model *run;             /* the skeleton: flow identities of the run */
	uint8_t *flow_seen;                /* per flow of run */
	struct ana_stream_flows *fl;       /* ana_decomp.c: per flow of run, merged positions,
					    * sketches, jitter (the per-flow tables) */
	struct np_table *lost_tab;         /* lost_packets, the windows' rows in window order */
	size_t lost_rows;
};
/* One window: its bounds on the reference timeline, events read, counts
 * (its acc's sketches stay empty). */
struct ana_stream_win { int64_t lo, hi; uint64_t events; struct ana_stream_acc acc; };
/* Adds the stream's decomp rows (flow "all") and its stream table to o. */
void ana_decomp_stream_tables(struct ana_model *m, struct ana_stream_acc *a,
			      const struct ana_stream_win *win, size_t nwin, struct ana_out *o);
/* Frees what the decomposition added to a (its sketches stay). */
void ana_stream_acc_free(struct ana_stream_acc *a);
/* Runs the streamed analysis of files (aliases[i] or NULL) in windows of
 * o->window_ns; writes out_path (NULL: dry run). Exit status as npanalyze's. */
int ana_stream_main(struct ana_options *o, char **files, const char **aliases, int nfiles,
		    const char *out_path, FILE *summary);

/* ana_families.c: flows and drops, transactions, network CPU, perfmon EWMA. */
void ana_flows_run(const struct ana_model *m, struct ana_out *o);
void ana_txn_run(struct ana_model *m, struct ana_out *o);
void ana_netcpu_run(const struct ana_model *m, struct ana_out *o);
void ana_stack_run(const struct ana_model *m, struct ana_out *o);   /* perfmon EWMA per flow */

/* ana_graph.c: host-stack bottlenecks and the service graph. */
/* Picks the slow-RPC windows into m->bwins (after the clock model, before
 * the path phase). */
void ana_bneck_windows(struct ana_model *m);
void ana_bneck_run(const struct ana_model *m, struct ana_out *o);
void ana_graph_run(const struct ana_model *m, struct ana_out *o);
/* The TXN_EVENTS of each connection (local clock): first request start,
 * last response end and its request starts in order, for request rates
 * over the time requests were made (ana_graph.c). */
struct ana_cspan { uint16_t host; uint64_t conn, lo, hi; const uint64_t *starts; size_t n;
		   bool partial; /* some interval's events were not kept (--txn-events) */
		   /* from its TXN_STATS rows (whatever the events kept): starts
		    * from slo to shi, sgaps intervals between them; nostarts: a
		    * row with requests did not carry them (older recorder) */
		   uint64_t slo, shi, sgaps; bool nostarts;
		   /* its 2nd start (when slo is its 1st) and the one before shi */
		   uint64_t s2, sp; bool sfirst, server; };
struct ana_cspans { struct ana_cspan *v; size_t n; uint64_t *starts; };
void ana_conn_spans(const struct ana_model *m, struct ana_cspans *s);
void ana_conn_spans_free(struct ana_cspans *s);
const struct ana_cspan *ana_conn_span(const struct ana_cspans *s, uint16_t host, uint64_t conn);
/* Request starts per second of a set of connections: from the starts in
 * TXN_STATS, else from the events (the first and last 0.1 % of the starts
 * left out); NAN below 2 starts. count_all: the exact request count of the
 * row, larger when only some connections kept events. */
struct ana_reqrate { ANA_VEC(const struct ana_cspan *) c; };
void ana_reqrate_add(struct ana_reqrate *r, const struct ana_cspan *c);
double ana_reqrate(const struct ana_reqrate *r, uint64_t count_all);
void ana_reqrate_free(struct ana_reqrate *r);
/* Columns of the table "bottlenecks" (made in ana_graph.c, rows also from
 * ana_calltree.c), in the order of its np_table_col_at calls. */
enum ana_bn_col { ANA_BN_SOURCE, ANA_BN_FROM, ANA_BN_TO, ANA_BN_COMPONENT, ANA_BN_D_I,
		  ANA_BN_D_RTT, ANA_BN_X_I, ANA_BN_BOTTLENECK, ANA_BN_WHAT, ANA_BN_NCOLS };
/* ana_calltree.c: where the time of a slow server transaction went, over the
 * calls it made (rows of source slow_rpc_tree); false when it made none. */
bool ana_calltree_emit(const struct ana_model *m, struct np_table *t, struct ana_out *o,
		       const struct ana_bwres *w);

/* ana_out.c: the collector and writer; it runs no analysis. */
void ana_out_init(struct ana_out *o);
void ana_out_free(struct ana_out *o);
void ana_out_table(struct ana_out *o, struct np_table *t);
const struct np_table *ana_out_find(const struct ana_out *o, const char *name);
/* A candidate finding; the worst three by score become ANA_FINDING records. */
void ana_out_candidate(struct ana_out *o, double score, int sev, const char *table,
		       const char *key, const char *metric, double value, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
/* Keeps the three strongest candidates as findings (after the last phase). */
void ana_out_findings(struct ana_out *o);
/* Writes ANA_META, the tables and the findings to path (replaced if present). */
int  ana_out_write(const struct ana_model *m, struct ana_out *o, const char *path);
/* The short summary (hosts, clock, findings, warnings); f NULL = none. */
void ana_out_summary(const struct ana_model *m, const struct ana_out *o, FILE *f);

/* pipeline.c: the phases in order. */
double ana_cpu_s(void);         /* process CPU seconds (phase timing) */
double ana_thread_cpu_s(void);  /* the calling thread's CPU seconds */
/* Runs every analysis of m and writes the .npa (path NULL = no file). */
int  ana_run(struct ana_model *m, const char *out_path, FILE *summary);
/* The phases after the packet paths (families, bottlenecks, graph, findings). */
void ana_run_families(struct ana_model *m, struct ana_out *o);
/* ana_stream.c: resident bytes now (/proc/self/statm), 0 unknown. */
uint64_t ana_rss_now(void);

#endif
