/* Power attribution arithmetic, pure functions (no BPF, no sysfs) so it is
 * unit-tested on synthetic counters and energies:
 *  - deep-mon eq. 1: HT-aware weighted cycles of a thread;
 *  - deep-mon eq. 2: a socket's RAPL energy split over threads in
 *    proportion to their weighted cycles;
 *  - netto §4.4: the networking share of energy, proportional to the
 *    networking on-CPU time over the available CPU time;
 *  - RAPL energy counter differences across wraparound. */
#ifndef NP_POWERATTR_H
#define NP_POWERATTR_H

#include <stddef.h>
#include <stdint.h>

/* HT_r for Sandy/Ivy Bridge (deep-mon §3.1.1). */
#define NP_POWERATTR_HT_R_DEFAULT 1.1

/* Eq. 1: cycles run while the sibling hyper-thread was idle count fully,
 * cycles run while it was busy count HT_r/2 (shared with the sibling). */
double np_powerattr_weighted_cycles(uint64_t cycles_alone, uint64_t cycles_overlap, double ht_r);

/* Eq. 2: wcycles is row-major [thread][socket] (nthreads x nsockets),
 * energy[s] the RAPL core energy of socket s in the interval. out[i] gets
 * thread i's energy summed over sockets. A socket whose threads ran no
 * weighted cycles keeps its energy; it goes to *unattributed (optional).
 * Returns 0, or -EINVAL on NULL arrays or negative inputs. */
int np_powerattr_attribute(const double *wcycles, size_t nthreads, size_t nsockets,
			   const double *energy, double *out, double *unattributed);

/* Netto §4.4: energy * net_ns / (interval_ns * ncpu), clamped to energy. */
double np_powerattr_net_share(double energy, uint64_t net_ns, uint64_t interval_ns, unsigned ncpu);

/* cur - prev of a counter that wraps at max_range (energy_uj counters wrap
 * at max_energy_range_uj). max_range 0 = never wraps. */
uint64_t np_powerattr_counter_delta(uint64_t prev, uint64_t cur, uint64_t max_range);

#endif
