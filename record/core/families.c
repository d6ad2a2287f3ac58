/* The recorder families nprec opens, in this order. One line per family:
 * add the extern declaration and the list entry for yours. */
#include <stddef.h>
#include "family.h"

extern const struct rec_family rec_family_flows;      /* REC-CORE */
extern const struct rec_family rec_family_txn;        /* REC-CORE */
extern const struct rec_family rec_family_netcpu, rec_family_threads; /* NETCPU */
extern const struct rec_family rec_family_pktpath;    /* PKTPATH */
extern const struct rec_family rec_family_clocksync;  /* PKTPATH */
extern const struct rec_family rec_family_stackmon;   /* PKTPATH */

const struct rec_family *const rec_families[] = {
	&rec_family_flows,
	&rec_family_txn,
	&rec_family_netcpu, &rec_family_threads, /* NETCPU */
	&rec_family_pktpath,
	&rec_family_clocksync,
	&rec_family_stackmon,
	NULL,
};
