/* Record-buffer surgery for the output modes: the HEADER of each file with
 * an added key, and keeping only the records of one type. Works on the
 * msgpack bytes of an np_recbuf without knowing the bodies. */
#ifndef NP_REC_OUTRECS_H
#define NP_REC_OUTRECS_H

#include <stddef.h>
#include "container.h"

/* Appends to dst the records in src[0..len); the first NP_REC_HEADER body
 * gets key set to the packed msgpack value val[0..vlen) (replacing a key of
 * that name). Other records are copied byte for byte. */
void outrecs_header_with(struct np_recbuf *dst, const char *src, size_t len,
			 const char *key, const char *val, size_t vlen);
/* Keeps only the records of type `type` in rb. */
void outrecs_filter(struct np_recbuf *rb, int type);

#endif
