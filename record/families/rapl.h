/* RAPL energy counters from powercap sysfs (intel-rapl:N package domains
 * and their intel-rapl:N:M subdomains such as core and dram). Absent on
 * most VMs: rapl_open then says why and the callers record that. */
#ifndef NP_REC_RAPL_H
#define NP_REC_RAPL_H

#include <stddef.h>
#include <stdint.h>

#define NC_RAPL_MAX 32

struct rapl_dom {
	char name[32];        /* "package-0", "core", "dram" ... */
	char path[320];       /* .../energy_uj */
	int socket;           /* N of intel-rapl:N */
	int top;              /* 1 for a package domain */
	uint64_t max_uj, last_uj;
};

struct rapl {
	unsigned n;
	struct rapl_dom dom[NC_RAPL_MAX];
};

/* root: normally "/sys/class/powercap". Returns 0 with at least one
 * readable domain, else -ENOENT/-EACCES with why filled. */
int rapl_open(struct rapl *r, const char *root, char *why, size_t whylen);
/* Energy since the previous call (or open) per domain, in delta_uj[n]. */
int rapl_read(struct rapl *r, uint64_t *delta_uj);

#endif
