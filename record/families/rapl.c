#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "powerattr.h"
#include "rapl.h"

static int rapl_read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	unsigned long long x;
	int ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	if (!ok)
		return -EIO;
	*v = x;
	return 0;
}

static void rapl_read_name(const char *dir, char *out, size_t len)
{
	char p[320];
	snprintf(p, sizeof(p), "%s/name", dir);
	FILE *f = fopen(p, "r");
	out[0] = 0;
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, "\n")] = 0;
		fclose(f);
	}
}

static void rapl_add(struct rapl *r, const char *root, const char *ent, int *last_err)
{
	int sock = -1, sub = -1;
	if (sscanf(ent, "intel-rapl:%d:%d", &sock, &sub) < 1 || r->n >= NC_RAPL_MAX)
		return;
	struct rapl_dom *d = &r->dom[r->n];
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/%s", root, ent);
	snprintf(d->path, sizeof(d->path), "%s/energy_uj", dir);
	int rc = rapl_read_u64(d->path, &d->last_uj);
	if (rc < 0) {
		*last_err = rc;
		return;
	}
	char mp[320];
	snprintf(mp, sizeof(mp), "%s/max_energy_range_uj", dir);
	if (rapl_read_u64(mp, &d->max_uj) < 0)
		d->max_uj = 0;
	rapl_read_name(dir, d->name, sizeof(d->name));
	d->socket = sock;
	d->top = sub < 0;
	r->n++;
}

int rapl_open(struct rapl *r, const char *root, char *why, size_t whylen)
{
	memset(r, 0, sizeof(*r));
	DIR *dir = opendir(root);
	if (!dir) {
		int e = errno;
		/* the perf "power" PMU exposes the same counters; say whether it
		 * is there, since it is not read here */
		bool pmu = access("/sys/bus/event_source/devices/power/type", R_OK) == 0;
		snprintf(why, whylen, "no RAPL: %s: %s; perf power PMU %s", root, strerror(e),
			 pmu ? "present (not read)" : "absent");
		return -ENOENT;
	}
	int last_err = 0;
	struct dirent *de;
	while ((de = readdir(dir)))
		if (strncmp(de->d_name, "intel-rapl:", 11) == 0)
			rapl_add(r, root, de->d_name, &last_err);
	closedir(dir);
	if (r->n == 0) {
		if (last_err)
			snprintf(why, whylen, "no RAPL: energy_uj unreadable: %s", strerror(-last_err));
		else
			snprintf(why, whylen, "no RAPL: no intel-rapl domain under %s", root);
		return last_err == -EACCES ? -EACCES : -ENOENT;
	}
	return 0;
}

int rapl_read(struct rapl *r, uint64_t *delta_uj)
{
	for (unsigned i = 0; i < r->n; i++) {
		uint64_t v;
		delta_uj[i] = 0;
		if (rapl_read_u64(r->dom[i].path, &v) < 0)
			continue;
		delta_uj[i] = np_powerattr_counter_delta(r->dom[i].last_uj, v, r->dom[i].max_uj);
		r->dom[i].last_uj = v;
	}
	return 0;
}
