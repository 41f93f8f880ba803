/* Chunked slot storage. Free slots form a list threaded through their entries' addr field. */
#include <stdlib.h>
#include <string.h>

#include "vt_slab.h"

#define VT_CHUNK VT_SLAB_CHUNK
#define VT_MAX_CHUNKS 16384 /* 67 million live entries */

static struct vt_alloc *vt_entries[VT_MAX_CHUNKS];
static size_t vt_chunks, vt_high;
static uint32_t vt_free_head = VT_SLAB_NONE;

struct vt_alloc *vt_slab_entry(uint32_t index)
{
    return &vt_entries[index / VT_CHUNK][index % VT_CHUNK];
}

uint32_t vt_slab_take(void)
{
    if (vt_free_head != VT_SLAB_NONE) {
        uint32_t i = vt_free_head;
        vt_free_head = (uint32_t)vt_slab_entry(i)->addr;
        return i;
    }
    if (vt_high == vt_chunks * VT_CHUNK) {
        if (vt_chunks == VT_MAX_CHUNKS)
            return VT_SLAB_NONE;
        struct vt_alloc *e = malloc(VT_CHUNK * sizeof *e);
        if (!e)
            return VT_SLAB_NONE;
        vt_entries[vt_chunks++] = e;
    }
    return (uint32_t)vt_high++;
}

void vt_slab_put(uint32_t index)
{
    struct vt_alloc *e = vt_slab_entry(index);
    e->kind = VT_SLAB_FREE_KIND;
    e->addr = vt_free_head;
    vt_free_head = index;
}

size_t vt_slab_high_water(void)
{
    return vt_high;
}

void vt_slab_copy_range(struct vt_alloc *dst, size_t first, size_t n)
{
    /* first is a multiple of VT_SLAB_CHUNK and n at most one chunk: one memcpy. */
    if (first + n > vt_high)
        n = first < vt_high ? vt_high - first : 0;
    if (n)
        memcpy(dst, &vt_entries[first / VT_CHUNK][first % VT_CHUNK], n * sizeof *dst);
}

void vt_slab_reset(void)
{
    vt_high = 0;
    vt_free_head = VT_SLAB_NONE;
}
