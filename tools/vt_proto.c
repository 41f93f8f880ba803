/* Protocol buffers' wire format, written (vt_proto.h). */
#include <stdlib.h>
#include <string.h>

#include "vt_proto.h"

static int vt_pb_room(struct vt_pb *p, size_t more)
{
    if (p->oom)
        return 0;
    if (p->n + more <= p->cap)
        return 1;
    size_t cap = p->cap ? p->cap : 256;
    while (cap < p->n + more)
        cap *= 2;
    unsigned char *b = realloc(p->b, cap);
    if (!b) {
        p->oom = 1;
        return 0;
    }
    p->b = b;
    p->cap = cap;
    return 1;
}

static void vt_pb_varint(struct vt_pb *p, uint64_t v)
{
    if (!vt_pb_room(p, 10))
        return;
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        p->b[p->n++] = v ? (unsigned char)(c | 0x80) : c;
    } while (v);
}

void vt_pb_uint(struct vt_pb *p, unsigned field, uint64_t v)
{
    vt_pb_varint(p, (uint64_t)field << 3);
    vt_pb_varint(p, v);
}

void vt_pb_bytes(struct vt_pb *p, unsigned field, const void *data, size_t n)
{
    vt_pb_varint(p, (uint64_t)field << 3 | 2);
    vt_pb_varint(p, n);
    if (n && vt_pb_room(p, n)) {
        memcpy(p->b + p->n, data, n);
        p->n += n;
    }
}

void vt_pb_msg(struct vt_pb *p, unsigned field, const struct vt_pb *sub)
{
    if (sub->oom)
        p->oom = 1;
    vt_pb_bytes(p, field, sub->b, sub->n);
}

void vt_pb_packed(struct vt_pb *p, unsigned field, const uint64_t *v, size_t n)
{
    struct vt_pb in = {0};
    for (size_t i = 0; i < n; i++)
        vt_pb_varint(&in, v[i]);
    vt_pb_msg(p, field, &in);
    vt_pb_free(&in);
}

void vt_pb_reset(struct vt_pb *p)
{
    p->n = 0;
}

void vt_pb_free(struct vt_pb *p)
{
    free(p->b);
    *p = (struct vt_pb){0};
}
