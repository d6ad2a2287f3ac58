/* Clock messages in batches (ana_clock.c), for the per-packet pass that
 * finds them (ana_path.c): one call per batch instead of one per message. */
#ifndef ANA_CMSG_H
#define ANA_CMSG_H
#include <stddef.h>
#include <stdint.h>

struct ana_clockpts;

/* One message from host s (sent at local ts) to host r (received at tr). */
struct ana_cmsg { uint64_t ts, tr; uint16_t s, r; };

/* As ana_clock_add on msg[0], msg[1], ... msg[n - 1] in that order. */
void ana_clock_add_n(struct ana_clockpts *cp, const struct ana_cmsg *msg, size_t n);

#endif
