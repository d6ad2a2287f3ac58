/* Host identity and clock reference pairs for file headers. */
#include "hostinfo.h"
#include "npmsg.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

/* First line of a small text file without its newline; "" when unreadable
 * (containers often lack /etc/machine-id: the analyzer then falls back on
 * hostname + boot id). */
static void read_line(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\r\n")] = '\0';
	else
		buf[0] = '\0';
	fclose(f);
}

void np_hostinfo_read(struct np_hostinfo *h)
{
	memset(h, 0, sizeof(*h));
	if (gethostname(h->hostname, sizeof(h->hostname) - 1) < 0)
		h->hostname[0] = '\0';
	read_line("/etc/machine-id", h->machine_id, sizeof(h->machine_id));
	if (!h->machine_id[0])
		read_line("/var/lib/dbus/machine-id", h->machine_id, sizeof(h->machine_id));
	read_line("/proc/sys/kernel/random/boot_id", h->boot_id, sizeof(h->boot_id));
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	h->ncpus = n > 0 ? (unsigned)n : 1;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t np_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

void np_clockref_read(struct np_clockref *c)
{
	/* Bracketing the other reads by two monotonic reads and taking their
	 * midpoint halves the error of the pairing. */
	uint64_t m1 = clock_ns(CLOCK_MONOTONIC);
	c->rt_ns = clock_ns(CLOCK_REALTIME);
	c->bt_ns = clock_ns(CLOCK_BOOTTIME);
	uint64_t m2 = clock_ns(CLOCK_MONOTONIC);
	c->mono_ns = m1 + (m2 - m1) / 2;
}

void np_hostinfo_pack(msgpack_packer *pk, const struct np_hostinfo *h)
{
	msgpack_pack_map(pk, 5);
	np_pack_kv_str(pk, "hostname", h->hostname);
	np_pack_kv_str(pk, "machine_id", h->machine_id);
	np_pack_kv_str(pk, "boot_id", h->boot_id);
	np_pack_kv_str(pk, "kernel", h->kernel);
	np_pack_kv_u64(pk, "ncpus", h->ncpus);
}

void np_clockref_pack(msgpack_packer *pk, const struct np_clockref *c)
{
	msgpack_pack_map(pk, 3);
	np_pack_kv_u64(pk, "mono_ns", c->mono_ns);
	np_pack_kv_u64(pk, "rt_ns", c->rt_ns);
	np_pack_kv_u64(pk, "bt_ns", c->bt_ns);
}
