/* Protocol buffers' wire format, the writing half only, for pprof's profile.proto (vt_pprof.c): a
 * growing buffer of fields. A message inside another is written into a buffer of its own and added
 * with its length. Running out of memory is remembered (oom) and reported once at the end. */
#ifndef VT_PROTO_H
#define VT_PROTO_H

#include <stddef.h>
#include <stdint.h>

struct vt_pb {
    unsigned char *b;
    size_t n, cap;
    int oom;
};

/* A varint field (wire type 0): int64, uint64 and bool alike. */
void vt_pb_uint(struct vt_pb *p, unsigned field, uint64_t v);
/* A length-delimited field (wire type 2): a string, bytes, or a message written apart (vt_pb_msg). */
void vt_pb_bytes(struct vt_pb *p, unsigned field, const void *data, size_t n);
void vt_pb_msg(struct vt_pb *p, unsigned field, const struct vt_pb *sub);
/* A packed repeated varint field. */
void vt_pb_packed(struct vt_pb *p, unsigned field, const uint64_t *v, size_t n);
/* Empties the buffer for the next message, keeping its memory (and its oom). */
void vt_pb_reset(struct vt_pb *p);
void vt_pb_free(struct vt_pb *p);

#endif
