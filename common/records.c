/* Names of the record types, as used by `npreport dump` and in messages. */
#include "records.h"

#include <stddef.h>

const char *np_rec_type_name(int type)
{
	switch (type) {
	case NP_REC_HEADER:       return "header";
	case NP_REC_PROBES:       return "probes";
	case NP_REC_INTERVAL:     return "interval";
	case NP_REC_END:          return "end";
	case NP_REC_LOST:         return "lost";
	case NP_REC_TRIGGER:      return "trigger";
	case NP_REC_INDEX:        return "index";
	case NP_REC_PROGS:        return "progs";
	case NP_REC_NETCPU:       return "netcpu";
	case NP_REC_NETRX_STACKS: return "netrx_stacks";
	case NP_REC_THREADS:      return "threads";
	case NP_REC_CGROUPS:      return "cgroups";
	case NP_REC_FLOWS:        return "flows";
	case NP_REC_DROPS:        return "drops";
	case NP_REC_TXN_STATS:    return "txn_stats";
	case NP_REC_TXN_EVENTS:   return "txn_events";
	case NP_REC_POWER:        return "power";
	case NP_REC_PKT_EVENTS:   return "pkt_events";
	case NP_REC_PKT_FLOWS:    return "pkt_flows";
	case NP_REC_STACK_EWMA:   return "stack_ewma";
	case NP_REC_ALERTS:       return "alerts";
	case NP_REC_SYNC:         return "sync";
	case NP_REC_BASELINE:     return "baseline";
	case NP_REC_ANA_META:     return "ana_meta";
	case NP_REC_ANA_TABLE:    return "ana_table";
	case NP_REC_ANA_SERIES:   return "ana_series";
	case NP_REC_ANA_SKETCH:   return "ana_sketch";
	case NP_REC_ANA_FINDING:  return "ana_finding";
	default:                  return NULL;
	}
}
