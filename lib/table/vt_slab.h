/* Storage for the allocation table's entries: fixed chunks that never move, so the hot path makes no
 * malloc per allocation and a snapshot is a few memcpy calls under the lock, not a hash walk. Each of
 * the table's shards has a slab of its own; the index from address to slot is vt_index.h.
 * Every function is called with the lock of the slab's shard held. */
#ifndef VT_SLAB_H
#define VT_SLAB_H

#include <stddef.h>
#include <stdint.h>

#include "vt_table.h"

#define VT_SLAB_NONE UINT32_MAX
/* Slots are kept in chunks of this many; copies go a chunk at a time. */
#define VT_SLAB_CHUNK 4096
#define VT_SLAB_MAX_CHUNKS 4096 /* 16 million live entries a slab */

struct vt_slab {
    struct vt_alloc *chunks[VT_SLAB_MAX_CHUNKS];
    size_t nchunks, high;
    uint32_t free_head; /* VT_SLAB_NONE, or the first free slot; a zeroed slab is not ready: vt_slab_reset */
};

/* A free slot's index, or VT_SLAB_NONE when no memory is left. */
uint32_t vt_slab_take(struct vt_slab *s);
/* Marks a slot free (its entry's kind becomes VT_SLAB_FREE_KIND). */
void vt_slab_put(struct vt_slab *s, uint32_t index);
struct vt_alloc *vt_slab_entry(const struct vt_slab *s, uint32_t index);

/* Slots ever used: a snapshot copies this many entries, free ones included (kind VT_SLAB_FREE_KIND). */
size_t vt_slab_high_water(const struct vt_slab *s);
/* Copies the n slots from first (a multiple of VT_SLAB_CHUNK, n at most one chunk) to dst. */
void vt_slab_copy_range(const struct vt_slab *s, struct vt_alloc *dst, size_t first, size_t n);
/* Makes the slab empty (at start, and after fork); chunks it has stay for reuse. */
void vt_slab_reset(struct vt_slab *s);

#define VT_SLAB_FREE_KIND VT_KIND_COUNT

#endif
