/* The recorder families nprec opens, in this order. One line per family:
 * add the extern declaration and the list entry for yours. */
#include <stddef.h>
#include "family.h"

extern const struct rec_family rec_family_flows;      /* REC-CORE */
extern const struct rec_family rec_family_txn;        /* REC-CORE */
/* NETCPU engineer: rec_family_netcpu, rec_family_threads */
extern const struct rec_family rec_family_pktpath;    /* PKTPATH */
/* PKTPATH engineer: rec_family_stackmon, rec_family_clocksync */

const struct rec_family *const rec_families[] = {
	&rec_family_flows,
	/* &rec_family_txn, (lands with record/txn.c) */
	/* NETCPU: &rec_family_netcpu, &rec_family_threads, */
	&rec_family_pktpath,
	/* PKTPATH: &rec_family_stackmon, &rec_family_clocksync, */
	NULL,
};
