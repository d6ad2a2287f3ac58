/* Host identity and clock reference pairs written into every file header. */
#ifndef NP_HOSTINFO_H
#define NP_HOSTINFO_H

#include <stdint.h>
#include <msgpack.h>

struct np_hostinfo {
	char hostname[256];
	char machine_id[64];
	char boot_id[64];
	char kernel[128];      /* uname -r */
	unsigned ncpus;
};

/* CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME read back to back; the
 * monotonic read is taken twice around the others and averaged. */
struct np_clockref {
	uint64_t mono_ns, rt_ns, bt_ns;
};

void np_hostinfo_read(struct np_hostinfo *h);
void np_clockref_read(struct np_clockref *c);
uint64_t np_mono_ns(void);
/* Packs {hostname, machine_id, boot_id, kernel, ncpus} as a map value. */
void np_hostinfo_pack(msgpack_packer *pk, const struct np_hostinfo *h);
/* Packs {mono_ns, rt_ns, bt_ns} as a map value. */
void np_clockref_pack(msgpack_packer *pk, const struct np_clockref *c);

#endif
