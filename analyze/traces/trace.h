/* Importers of request tables for npanalyze patterns: CSV (libcsv), Zipkin
 * v2 and Jaeger JSON exports (jansson), and the transaction events of nprec
 * recordings. All read untrusted input: errors come back as a message with
 * the line/column or byte offset, never as a crash. Symbols start with
 * trace_. Times end up in ms; an RPC a request did not call stays NAN. */
#ifndef NP_TRACE_H
#define NP_TRACE_H

#include <stddef.h>
#include "patterns.h"

/* Header: id,<rpc...>,latency; an optional unit per column as a suffix
 * ("getCart_us", "getCart (s)", "latency[ms]"); default ms. Empty cell = RPC
 * not called. Returns 0 or -errno with err filled. */
int trace_csv_load(const char *path, struct pat_table *t, char *err, size_t errlen);
int trace_csv_load_mem(const char *data, size_t len, struct pat_table *t, char *err, size_t errlen);

/* One request per entry span (span name, or service:name, equal to entry;
 * NULL = every root span). Columns: pure execution time per span name
 * (duration minus the union of its synchronous children); latency: the
 * entry span's duration. */
int trace_zipkin_load(const char *path, const char *entry, struct pat_table *t,
		      char *err, size_t errlen);
int trace_zipkin_load_mem(const char *data, size_t len, const char *entry, struct pat_table *t,
			  char *err, size_t errlen);
int trace_jaeger_load(const char *path, const char *entry, struct pat_table *t,
		      char *err, size_t errlen);
int trace_jaeger_load_mem(const char *data, size_t len, const char *entry, struct pat_table *t,
			  char *err, size_t errlen);

/* nprec recordings: server-side transactions at entry ("HOST:PORT[/PATH]")
 * are requests; client transactions of the same thread while serving one
 * are its RPCs, grouped by callee endpoint. */
int trace_npr_load(char *const *paths, size_t npaths, const char *entry, struct pat_table *t,
		   char *err, size_t errlen);

/* Reads a whole file (at most max bytes) into a NUL-terminated buffer. */
int trace_read_file(const char *path, size_t max, char **data, size_t *len, char *err, size_t errlen);
/* Reads path and hands it to a *_load_mem parser; errors are prefixed with
 * the path. */
typedef int (*trace_mem_loader)(const char *data, size_t len, const char *entry,
				struct pat_table *t, char *err, size_t errlen);
int trace_load_file(const char *path, trace_mem_loader fn, const char *entry,
		    struct pat_table *t, char *err, size_t errlen);

#endif
