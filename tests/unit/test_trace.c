/* Request-table importers on small hand-written inputs, well formed and
 * malformed: values checked against hand-computed pure execution times,
 * errors must name the place. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tap.h"
#include "container.h"
#include "npmsg.h"
#include "records.h"
#include "trace.h"

static double val(const struct pat_table *t, const char *id, const char *rpc)
{
	int j = -1;
	for (size_t k = 0; k < t->nrpc; k++) if (!strcmp(t->rpc[k], rpc)) j = (int)k;
	for (size_t i = 0; i < t->nrows; i++)
		if (!strcmp(t->id[i], id)) return j < 0 ? NAN : t->col[j][i];
	return -1;
}

static double lat(const struct pat_table *t, const char *id)
{
	for (size_t i = 0; i < t->nrows; i++) if (!strcmp(t->id[i], id)) return t->lat[i];
	return -1;
}

static int csv(const char *s, struct pat_table *t, char *err)
{
	pat_table_init(t);
	return trace_csv_load_mem(s, strlen(s), t, err, 256);
}

static void test_csv(void)
{
	struct pat_table t;
	char err[256];
	int rc = csv("id,getCart_us,getProfile (s),latency[ms]\nr1,1500,0.002,10\nr2,,0.001,20\n", &t, err);
	CHECK(rc == 0, "%s", err);
	CHECK_EQ_U(t.nrows, 2);
	CHECK_EQ_U(t.nrpc, 2);
	CHECK_NEAR(val(&t, "r1", "getCart"), 1.5, 1e-12);
	CHECK(isnan(val(&t, "r2", "getCart")), "missing cell is NAN, not 0: %g", val(&t, "r2", "getCart"));
	CHECK_NEAR(val(&t, "r1", "getProfile"), 2, 1e-12);
	CHECK_NEAR(lat(&t, "r2"), 20, 0);
	pat_table_free(&t);

	rc = csv("id,a,latency\r\nr1,1,2\r\n\"r,2\",3,4\r\n", &t, err);
	CHECK(rc == 0 && t.nrows == 2 && lat(&t, "r,2") == 4, "CRLF + quoted id: %s", err);
	pat_table_free(&t);

	/* refused, with an error naming the place (what, when not NULL) */
	static const struct { const char *csv, *what, *what2, *label; } bad[] = {
		{ "id,a,latency\nr1,1,2\nr2,x,3\n", "line 3", "'x'", "bad number" },
		{ "id,a,latency\nr1,1\n", "line 2", "2 fields", "short row" },
		{ "id,a,latency\nr1,\"1,2\n", NULL, NULL, "unterminated quote" },
		{ "id,a\n1,2\n", "no latency column", NULL, "no latency" },
		{ "", "empty", NULL, "empty" },
		{ "id,a,latency\nr1,-1,2\n", "line 2", NULL, "negative" },
		{ "id,a,latency\nr1,1,\n", "latency", NULL, "empty latency" },
		{ "id,a,latency\nr1,nan,2\n", NULL, NULL, "nan" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = csv(bad[i].csv, &t, err);
		CHECK(rc != 0 && (!bad[i].what || strstr(err, bad[i].what)) &&
		      (!bad[i].what2 || strstr(err, bad[i].what2)), "%s: rc %d, %s", bad[i].label, rc,
		      rc ? err : "accepted");
		pat_table_free(&t);
	}
}

static const char zipkin[] =
"[\n"
" {\"traceId\":\"t1\",\"id\":\"a\",\"name\":\"gethome\",\"kind\":\"SERVER\",\"timestamp\":1000,\"duration\":100000,\n"
"  \"localEndpoint\":{\"serviceName\":\"web\"}},\n"
" {\"traceId\":\"t1\",\"id\":\"b\",\"parentId\":\"a\",\"name\":\"getcart\",\"timestamp\":11000,\"duration\":30000},\n"
" {\"traceId\":\"t1\",\"id\":\"c\",\"parentId\":\"a\",\"name\":\"getprofile\",\"timestamp\":31000,\"duration\":20000},\n"
" {\"traceId\":\"t1\",\"id\":\"d\",\"parentId\":\"a\",\"name\":\"finditems\",\"kind\":\"PRODUCER\",\"timestamp\":2000,\"duration\":50000},\n"
" {\"traceId\":\"t1\",\"id\":\"e\",\"parentId\":\"b\",\"name\":\"getprofile\",\"timestamp\":12000,\"duration\":10000},\n"
" {\"traceId\":\"t1\",\"id\":\"f\",\"parentId\":\"a\",\"name\":\"log\",\"timestamp\":95000,\"duration\":20000},\n"
" [{\"traceId\":\"t2\",\"id\":\"x\",\"name\":\"gethome\",\"kind\":\"SERVER\",\"timestamp\":0,\"duration\":50000},\n"
"  {\"traceId\":\"t2\",\"id\":\"y\",\"parentId\":\"x\",\"name\":\"getcart\",\"kind\":\"CLIENT\",\"timestamp\":1000,\"duration\":20000},\n"
"  {\"traceId\":\"t2\",\"id\":\"y\",\"name\":\"getcart\",\"kind\":\"SERVER\",\"shared\":true,\"timestamp\":3000,\"duration\":15000},\n"
"  {\"traceId\":\"t2\",\"id\":\"z\",\"parentId\":\"x\",\"name\":\"getcart\",\"timestamp\":30000}]\n"
"]\n";

static void test_zipkin(void)
{
	struct pat_table t;
	char err[256];
	pat_table_init(&t);
	int rc = trace_zipkin_load_mem(zipkin, strlen(zipkin), "gethome", &t, err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	CHECK_EQ_U(t.nrows, 2);
	/* gethome waits for the union of b [11,41] and c [31,51] ms = 40 ms;
	 * d is a PRODUCER and f ends after its parent: neither is waited for */
	CHECK_NEAR(val(&t, "t1", "gethome"), 60, 1e-9);
	CHECK_NEAR(val(&t, "t1", "getcart"), 20, 1e-9);
	CHECK_NEAR(val(&t, "t1", "getprofile"), 30, 1e-9);
	CHECK_NEAR(val(&t, "t1", "finditems"), 50, 1e-9);
	CHECK_NEAR(val(&t, "t1", "log"), 20, 1e-9);
	CHECK_NEAR(lat(&t, "t1"), 100, 1e-9);
	/* shared span y: client 20 ms = 5 ms own + 15 ms server */
	CHECK_NEAR(val(&t, "t2", "getcart"), 20, 1e-9);
	CHECK_NEAR(val(&t, "t2", "gethome"), 30, 1e-9);
	CHECK(isnan(val(&t, "t2", "getprofile")), "t2 never called getprofile");
	pat_table_free(&t);

	pat_table_init(&t);
	rc = trace_zipkin_load_mem(zipkin, strlen(zipkin), "web:gethome", &t, err, sizeof(err));
	CHECK(rc == 0 && t.nrows == 1, "service:name entry: rc %d rows %zu %s", rc, t.nrows, err);
	pat_table_free(&t);
	pat_table_init(&t);
	rc = trace_zipkin_load_mem(zipkin, strlen(zipkin), "getcart", &t, err, sizeof(err));
	CHECK(rc == 0 && t.nrows == 2, "nested entries: rc %d rows %zu", rc, t.nrows);
	pat_table_free(&t);
	pat_table_init(&t);
	rc = trace_zipkin_load_mem(zipkin, strlen(zipkin), "nosuch", &t, err, sizeof(err));
	CHECK(rc != 0 && strstr(err, "nosuch"), "unknown entry: %s", err);
	pat_table_free(&t);

	const char *bad[] = {
		"[{\"traceId\": \"t\", \"id\": \"a\",\n  \"name\": ",
		"{\"traceId\":\"t\"}",
		"[{\"id\":\"a\",\"timestamp\":1,\"duration\":2}]",
		"[1, 2]",
		"[{\"traceId\":\"t\",\"id\":\"a\",\"timestamp\":1,\"duration\":-2}]",
	};
	const char *want[] = { "line 2", "array", "traceId", "span 0", "negative" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pat_table_init(&t);
		rc = trace_zipkin_load_mem(bad[i], strlen(bad[i]), NULL, &t, err, sizeof(err));
		CHECK(rc != 0 && strstr(err, want[i]), "bad zipkin %zu: '%s'", i, err);
		pat_table_free(&t);
	}
}

static const char jaeger[] =
"{\"data\":[{\"traceID\":\"T\",\"spans\":[\n"
" {\"traceID\":\"T\",\"spanID\":\"1\",\"operationName\":\"home\",\"references\":[],\"startTime\":0,\"duration\":80000,\"processID\":\"p1\"},\n"
" {\"traceID\":\"T\",\"spanID\":\"2\",\"operationName\":\"db\",\"references\":[{\"refType\":\"CHILD_OF\",\"traceID\":\"T\",\"spanID\":\"1\"}],\"startTime\":10000,\"duration\":30000,\"processID\":\"p2\"},\n"
" {\"traceID\":\"T\",\"spanID\":\"3\",\"operationName\":\"mq\",\"references\":[{\"refType\":\"FOLLOWS_FROM\",\"traceID\":\"T\",\"spanID\":\"1\"}],\"startTime\":20000,\"duration\":10000,\"processID\":\"p2\"}],\n"
" \"processes\":{\"p1\":{\"serviceName\":\"web\"},\"p2\":{\"serviceName\":\"store\"}}}]}\n";

static void test_jaeger(void)
{
	struct pat_table t;
	char err[256];
	pat_table_init(&t);
	int rc = trace_jaeger_load_mem(jaeger, strlen(jaeger), "web:home", &t, err, sizeof(err));
	CHECK(rc == 0 && t.nrows == 1, "rc %d rows %zu: %s", rc, t.nrows, err);
	CHECK_NEAR(val(&t, "T", "home"), 50, 1e-9);     /* FOLLOWS_FROM is not waited for */
	CHECK_NEAR(val(&t, "T", "db"), 30, 1e-9);
	CHECK_NEAR(val(&t, "T", "mq"), 10, 1e-9);
	CHECK_NEAR(lat(&t, "T"), 80, 1e-9);
	pat_table_free(&t);
	const char *bad[] = { "{\"data\": [{\"spans\": 3}]}", "{\"data\": [ {\"traceID\": ", "[]x", "{\"data\":[{\"spans\":[{\"spanID\":\"1\"}]}]}" };
	const char *want[] = { "spans", "line 1", "line 1", "traceID" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pat_table_init(&t);
		rc = trace_jaeger_load_mem(bad[i], strlen(bad[i]), NULL, &t, err, sizeof(err));
		CHECK(rc != 0 && strstr(err, want[i]), "bad jaeger %zu: '%s'", i, err);
		pat_table_free(&t);
	}
}

static void pack_strs(msgpack_packer *pk, const char *key, const char *const *v, size_t n)
{
	np_pack_str(pk, key);
	msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++) np_pack_str(pk, v[i]);
}

/* A recording with one server endpoint and two callees, as record/families/txn.c
 * writes TXN_STATS / TXN_EVENTS. */
static void test_npr(void)
{
	char path[] = "/tmp/np-test-trace-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	if (fd < 0) return;
	close(fd);
	struct np_writer *w;
	int rc = np_writer_open(&w, path, NP_KIND_RECORDING, &(struct np_writer_opts){ 0 });
	if (rc) { unlink(path); rc = np_writer_open(&w, path, NP_KIND_RECORDING, NULL); }
	CHECK(rc == 0, "writer %d", rc);
	if (rc) return;
	struct np_recbuf rb;
	np_recbuf_init(&rb);
	msgpack_packer *pk = np_recbuf_begin(&rb, NP_REC_TXN_STATS, 1);
	uint64_t conn[] = { 1, 2, 3 }, role[] = { 2, 1, 1 }, lport[] = { 8080, 40000, 40001 }, rport[] = { 50000, 9000, 9001 };
	const char *la[] = { "10.0.0.1", "10.0.0.1", "10.0.0.1" }, *ra[] = { "10.0.0.9", "10.0.0.2", "10.0.0.3" };
	msgpack_pack_map(pk, 7);
	np_pack_kv_u64(pk, "n", 3);
	np_pack_kv_u64_array(pk, "conn", conn, 3);
	np_pack_kv_u64_array(pk, "role", role, 3);
	np_pack_kv_u64_array(pk, "lport", lport, 3);
	np_pack_kv_u64_array(pk, "rport", rport, 3);
	pack_strs(pk, "laddr", la, 3);
	pack_strs(pk, "raddr", ra, 3);
	/* server txn A (tid 100): 50 ms, calls conn 2 for 10 ms and conn 3 for
	 * 20 ms; a call of another thread inside it does not count. Server txn
	 * B: 30 ms with one 10 ms call on conn 3. */
	const uint64_t ms = 1000000, t0 = 1000 * ms;
	uint64_t ec[] = { 1, 2, 3, 2, 1, 3 }, er[] = { 2, 1, 1, 1, 2, 1 }, et[] = { 100, 100, 100, 101, 100, 100 };
	uint64_t es[] = { t0, t0 + 5 * ms, t0 + 20 * ms, t0 + 6 * ms, t0 + 100 * ms, t0 + 110 * ms };
	uint64_t ed[] = { 50 * ms, 10 * ms, 20 * ms, 10 * ms, 30 * ms, 10 * ms }, ep[] = { 7, 7, 7, 7, 7, 7 };
	const char *paths[] = { "/home", "", "", "", "/home", "" };
	pk = np_recbuf_begin(&rb, NP_REC_TXN_EVENTS, 1);
	msgpack_pack_map(pk, 8);
	np_pack_kv_u64(pk, "n", 6);
	np_pack_kv_u64_array(pk, "conn", ec, 6);
	np_pack_kv_u64_array(pk, "role", er, 6);
	np_pack_kv_u64_array(pk, "pid", ep, 6);
	np_pack_kv_u64_array(pk, "tid", et, 6);
	np_pack_kv_u64_delta(pk, "start_ns_d", es, 6);
	np_pack_kv_u64_array(pk, "dur_ns", ed, 6);
	pack_strs(pk, "path", paths, 6);
	rc = np_writer_commit(w, &rb);
	CHECK(rc == 0, "commit %d", rc);
	np_writer_close(w);
	np_recbuf_free(&rb);

	struct pat_table t;
	char err[256];
	char *files[] = { path };
	pat_table_init(&t);
	rc = trace_npr_load(files, 1, "10.0.0.1:8080/home", &t, err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	CHECK_EQ_U(t.nrows, 2);
	if (t.nrows == 2) {
		const char *a = t.id[0], *b = t.id[1];
		CHECK_NEAR(lat(&t, a), 50, 1e-9);
		CHECK_NEAR(val(&t, a, "10.0.0.2:9000"), 10, 1e-9);
		CHECK_NEAR(val(&t, a, "10.0.0.3:9001"), 20, 1e-9);
		CHECK_NEAR(val(&t, a, "10.0.0.1:8080/home (self)"), 20, 1e-9);
		CHECK_NEAR(lat(&t, b), 30, 1e-9);
		CHECK(isnan(val(&t, b, "10.0.0.2:9000")), "B never called 10.0.0.2:9000");
		CHECK_NEAR(val(&t, b, "10.0.0.3:9001"), 10, 1e-9);
	}
	pat_table_free(&t);
	pat_table_init(&t);
	rc = trace_npr_load(files, 1, "10.0.0.1:9999", &t, err, sizeof(err));
	CHECK(rc != 0 && strstr(err, "no server transaction"), "wrong port: %s", err);
	pat_table_free(&t);
	pat_table_init(&t);
	rc = trace_npr_load(files, 1, "nonsense", &t, err, sizeof(err));
	CHECK(rc != 0 && strstr(err, "HOST:PORT"), "bad entry: %s", err);
	pat_table_free(&t);
	unlink(path);
}

/* The importer's fast path for plain decimals gives exactly what strtod
 * gives (bit for bit), and hands everything else to strtod: 2000 random
 * values of 1-15 digits with 0-6 decimals, a leading-zero and a trailing-dot
 * form, 16 digits, an exponent, leading '+'. */
static void test_csv_numbers(void)
{
	enum { N = 2000 };
	static char text[N * 48 + 256];
	static char vals[N + 6][32];
	uint64_t x = 12345;
	size_t n = 0;
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int digits = 1 + (int)((x >> 33) % 15), dec = (int)((x >> 20) % 7);
		if (dec >= digits) dec = digits - 1;
		char d[20];
		for (int k = 0; k < digits; k++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			d[k] = (char)('0' + (x >> 40) % 10);
		}
		d[digits] = 0;
		if (dec) snprintf(vals[n++], 32, "%.*s.%s", digits - dec, d, d + digits - dec);
		else snprintf(vals[n++], 32, "%s", d);
	}
	const char *odd[] = { "007.50", "12.", "1234567890123456", "1.5e2", "+3.25", "0.1" };
	for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) snprintf(vals[n++], 32, "%s", odd[k]);
	size_t len = (size_t)snprintf(text, sizeof(text), "id,a,latency\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "r%zu,%s,1\n", i, vals[i]);
	struct pat_table t;
	char err[256];
	int rc = csv(text, &t, err);
	CHECK(rc == 0, "%s", err);
	size_t bad = 0;
	for (size_t i = 0; !rc && i < n && i < t.nrows; i++) {
		double want = strtod(vals[i], NULL), got = pat_table_get(&t, i, 0);
		if (memcmp(&want, &got, sizeof(double))) {
			if (!bad++) CHECK(0, "'%s': %.17g, strtod %.17g", vals[i], got, want);
		}
	}
	CHECK(!rc && t.nrows == n && bad == 0, "%zu of %zu values differ from strtod", bad, n);
	pat_table_free(&t);
}

int main(void)
{
	test_csv();
	test_csv_numbers();
	test_zipkin();
	test_jaeger();
	test_npr();
	return tap_done();
}
