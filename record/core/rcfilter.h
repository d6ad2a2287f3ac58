/* User side of bpf/filter.bpf.h: copies the --netns/--cgroup/--port/--host/
 * --pid filters of the config into a skeleton's rodata before load.
 *   RC_FILTER_SET(skel->rodata, cfg);
 * (bpftool drops the const volatile from the skeleton's rodata fields.) */
#ifndef NP_REC_RCFILTER_H
#define NP_REC_RCFILTER_H

#include <string.h>
#include "config.h"

#define RC_FILTER_SET(ro, c) do {                                              \
	const struct rec_config *rc_fc_ = (c);                                     \
	(ro)->rc_filter_netns_ino = rc_fc_->netns_ino;               \
	(ro)->rc_filter_cgroup_id = rc_fc_->cgroup_id;               \
	(ro)->rc_filter_nports = rc_fc_->nports;                     \
	for (unsigned rc_i_ = 0; rc_i_ < rc_fc_->nports; rc_i_++)                  \
		(ro)->rc_filter_ports_v[rc_i_] = rc_fc_->ports[rc_i_];   \
	(ro)->rc_filter_npids = rc_fc_->npids;                       \
	for (unsigned rc_i_ = 0; rc_i_ < rc_fc_->npids; rc_i_++)                   \
		(ro)->rc_filter_pids_v[rc_i_] = rc_fc_->pids[rc_i_];     \
	(ro)->rc_filter_nhosts = rc_fc_->nhosts;                     \
	for (unsigned rc_i_ = 0; rc_i_ < rc_fc_->nhosts; rc_i_++)                  \
		memcpy((ro)->rc_filter_hosts_v[rc_i_], &rc_fc_->hosts[rc_i_].addr, 16); \
} while (0)

#endif
