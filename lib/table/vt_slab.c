/* Chunked slot storage (vt_slab.h). Free slots form a list threaded through their entries' addr field. */
#include <stdlib.h>
#include <string.h>

#include "vt_slab.h"

struct vt_alloc *vt_slab_entry(const struct vt_slab *s, uint32_t index)
{
    return &s->chunks[index / VT_SLAB_CHUNK][index % VT_SLAB_CHUNK];
}

uint32_t vt_slab_take(struct vt_slab *s)
{
    if (s->free_head != VT_SLAB_NONE) {
        uint32_t i = s->free_head;
        s->free_head = (uint32_t)vt_slab_entry(s, i)->addr;
        return i;
    }
    if (s->high == s->nchunks * VT_SLAB_CHUNK) {
        if (s->nchunks == VT_SLAB_MAX_CHUNKS)
            return VT_SLAB_NONE;
        struct vt_alloc *e = malloc(VT_SLAB_CHUNK * sizeof *e);
        if (!e)
            return VT_SLAB_NONE;
        s->chunks[s->nchunks++] = e;
    }
    return (uint32_t)s->high++;
}

void vt_slab_put(struct vt_slab *s, uint32_t index)
{
    struct vt_alloc *e = vt_slab_entry(s, index);
    e->kind = VT_SLAB_FREE_KIND;
    e->addr = s->free_head;
    s->free_head = index;
}

size_t vt_slab_high_water(const struct vt_slab *s)
{
    return s->high;
}

void vt_slab_copy_range(const struct vt_slab *s, struct vt_alloc *dst, size_t first, size_t n)
{
    /* first is a multiple of VT_SLAB_CHUNK and n at most one chunk: one memcpy. */
    if (first + n > s->high)
        n = first < s->high ? s->high - first : 0;
    if (n)
        memcpy(dst, &s->chunks[first / VT_SLAB_CHUNK][first % VT_SLAB_CHUNK], n * sizeof *dst);
}

void vt_slab_reset(struct vt_slab *s)
{
    s->high = 0;
    s->free_head = VT_SLAB_NONE;
}
