/* vt_index.h. Buckets hold slot + 1 (0: empty). Removal shifts the following entries of the run back
 * (no tombstones), so a look-up never walks past an empty bucket. The table doubles when half full;
 * when it cannot, it goes on up to seven eighths full before an insert fails. */
#include <stdlib.h>

#include "vt_index.h"

static uint64_t vt_home(const struct vt_index *x, uint64_t addr, uint8_t space)
{
    /* Fibonacci hashing of the address with its space folded in; device addresses are aligned, so the
     * high bits of the product carry the information. */
    uint64_t h = (addr ^ ((uint64_t)space << 61)) * 0x9e3779b97f4a7c15ull;
    return (h >> 32 ^ h) & x->mask;
}

static int vt_key_is(const struct vt_index *x, uint32_t slot, uint64_t addr, uint8_t space)
{
    const struct vt_alloc *e = vt_slab_entry(x->slab, slot);
    return e->addr == addr && e->space == space;
}

uint32_t vt_index_find(const struct vt_index *x, uint64_t addr, uint8_t space)
{
    if (!x->buckets)
        return VT_SLAB_NONE;
    for (uint64_t i = vt_home(x, addr, space);; i = (i + 1) & x->mask) {
        uint32_t b = x->buckets[i];
        if (!b)
            return VT_SLAB_NONE;
        if (vt_key_is(x, b - 1, addr, space))
            return b - 1;
    }
}

static void vt_place(struct vt_index *x, uint32_t slot)
{
    const struct vt_alloc *e = vt_slab_entry(x->slab, slot);
    uint64_t i = vt_home(x, e->addr, e->space);
    while (x->buckets[i])
        i = (i + 1) & x->mask;
    x->buckets[i] = slot + 1;
}

static int vt_grow(struct vt_index *x)
{
    uint64_t old_n = x->buckets ? x->mask + 1 : 0, n = old_n ? 2 * old_n : 1024;
    uint32_t *old = x->buckets, *fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return -1;
    x->buckets = fresh;
    x->mask = n - 1;
    for (uint64_t i = 0; i < old_n; i++)
        if (old[i])
            vt_place(x, old[i] - 1);
    free(old);
    return 0;
}

int vt_index_add(struct vt_index *x, uint32_t slot)
{
    uint64_t n = x->buckets ? x->mask + 1 : 0;
    if (2 * (x->count + 1) > n && vt_grow(x) < 0 && (!n || 8 * (x->count + 1) > 7 * n))
        return -1;
    vt_place(x, slot);
    x->count++;
    return 0;
}

void vt_index_remove(struct vt_index *x, uint32_t slot)
{
    const struct vt_alloc *e = vt_slab_entry(x->slab, slot);
    uint64_t i = vt_home(x, e->addr, e->space);
    while (x->buckets[i] != slot + 1)
        i = (i + 1) & x->mask;
    /* Back-shift: each later entry of the run moves into the hole unless its home lies after the hole
     * and up to its place (it would then not be found from its home). */
    for (uint64_t j = (i + 1) & x->mask;; j = (j + 1) & x->mask) {
        uint32_t b = x->buckets[j];
        if (!b)
            break;
        const struct vt_alloc *f = vt_slab_entry(x->slab, b - 1);
        uint64_t home = vt_home(x, f->addr, f->space);
        /* Cyclic: is home in (i, j]? Then it stays. */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        x->buckets[i] = b;
        i = j;
    }
    x->buckets[i] = 0;
    x->count--;
}

void vt_index_reset(struct vt_index *x)
{
    if (x->buckets)
        for (uint64_t i = 0; i <= x->mask; i++)
            x->buckets[i] = 0;
    x->count = 0;
}
