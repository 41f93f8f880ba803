/* The allocation table's index: (address, address space) -> slot. Open addressing with linear probing
 * over slot numbers (4 bytes a bucket, at most half full), the key read from the slot's entry: about 11
 * bytes per live allocation, where a uthash handle and its buckets cost 60 and more. Every function is
 * called with the lock of the index's shard held. */
#ifndef VT_INDEX_H
#define VT_INDEX_H

#include <stdint.h>

#include "vt_slab.h"

/* One shard's index, over the slots of its slab. A zeroed one (with slab set) is empty. */
struct vt_index {
    const struct vt_slab *slab;
    uint32_t *buckets;
    uint64_t mask; /* buckets - 1 */
    uint64_t count;
};

/* The slot of (addr, space), or VT_SLAB_NONE. */
uint32_t vt_index_find(const struct vt_index *x, uint64_t addr, uint8_t space);
/* Adds slot (its entry's addr and space are the key, not in the index yet). 0, or -1 when no memory. */
int vt_index_add(struct vt_index *x, uint32_t slot);
/* Removes slot, which is in the index. */
void vt_index_remove(struct vt_index *x, uint32_t slot);
/* Forgets everything (after fork); the table's memory stays. */
void vt_index_reset(struct vt_index *x);

#endif
