/* vt_index.h. Buckets hold slot + 1 (0: empty). Removal shifts the following entries of the run back
 * (no tombstones), so a look-up never walks past an empty bucket. The table doubles when half full;
 * when it cannot, it goes on up to seven eighths full before an insert fails. */
#include <stdlib.h>

#include "vt_index.h"

static uint32_t *vt_buckets;
static uint64_t vt_mask; /* buckets - 1 */
static uint64_t vt_count;

static uint64_t vt_home(uint64_t addr, uint8_t space)
{
    /* Fibonacci hashing of the address with its space folded in; device addresses are aligned, so the
     * high bits of the product carry the information. */
    uint64_t h = (addr ^ ((uint64_t)space << 61)) * 0x9e3779b97f4a7c15ull;
    return (h >> 32 ^ h) & vt_mask;
}

static int vt_key_is(uint32_t slot, uint64_t addr, uint8_t space)
{
    const struct vt_alloc *e = vt_slab_entry(slot);
    return e->addr == addr && e->space == space;
}

uint32_t vt_index_find(uint64_t addr, uint8_t space)
{
    if (!vt_buckets)
        return VT_SLAB_NONE;
    for (uint64_t i = vt_home(addr, space);; i = (i + 1) & vt_mask) {
        uint32_t b = vt_buckets[i];
        if (!b)
            return VT_SLAB_NONE;
        if (vt_key_is(b - 1, addr, space))
            return b - 1;
    }
}

static void vt_place(uint32_t slot)
{
    const struct vt_alloc *e = vt_slab_entry(slot);
    uint64_t i = vt_home(e->addr, e->space);
    while (vt_buckets[i])
        i = (i + 1) & vt_mask;
    vt_buckets[i] = slot + 1;
}

static int vt_grow(void)
{
    uint64_t old_n = vt_buckets ? vt_mask + 1 : 0, n = old_n ? 2 * old_n : 4096;
    uint32_t *old = vt_buckets, *fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return -1;
    vt_buckets = fresh;
    vt_mask = n - 1;
    for (uint64_t i = 0; i < old_n; i++)
        if (old[i])
            vt_place(old[i] - 1);
    free(old);
    return 0;
}

int vt_index_add(uint32_t slot)
{
    uint64_t n = vt_buckets ? vt_mask + 1 : 0;
    if (2 * (vt_count + 1) > n && vt_grow() < 0 && (!n || 8 * (vt_count + 1) > 7 * n))
        return -1;
    vt_place(slot);
    vt_count++;
    return 0;
}

void vt_index_remove(uint32_t slot)
{
    const struct vt_alloc *e = vt_slab_entry(slot);
    uint64_t i = vt_home(e->addr, e->space);
    while (vt_buckets[i] != slot + 1)
        i = (i + 1) & vt_mask;
    /* Back-shift: each later entry of the run moves into the hole unless its home lies after the hole
     * and up to its place (it would then not be found from its home). */
    for (uint64_t j = (i + 1) & vt_mask;; j = (j + 1) & vt_mask) {
        uint32_t b = vt_buckets[j];
        if (!b)
            break;
        const struct vt_alloc *f = vt_slab_entry(b - 1);
        uint64_t home = vt_home(f->addr, f->space);
        /* Cyclic: is home in (i, j]? Then it stays. */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        vt_buckets[i] = b;
        i = j;
    }
    vt_buckets[i] = 0;
    vt_count--;
}

void vt_index_reset(void)
{
    if (vt_buckets)
        for (uint64_t i = 0; i <= vt_mask; i++)
            vt_buckets[i] = 0;
    vt_count = 0;
}
