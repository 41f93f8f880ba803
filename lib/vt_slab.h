/* Storage for the allocation table's entries: fixed chunks that never move, so the hot path makes no
 * malloc per allocation and a snapshot is a few memcpy calls under the lock, not a hash walk. The index
 * from address to slot is vt_index.h.
 * Every function is called with the table lock held. */
#ifndef VT_SLAB_H
#define VT_SLAB_H

#include <stddef.h>
#include <stdint.h>

#include "vt_table.h"

#define VT_SLAB_NONE UINT32_MAX

/* A free slot's index, or VT_SLAB_NONE when no memory is left. */
uint32_t vt_slab_take(void);
/* Marks a slot free (its entry's kind becomes VT_SLAB_FREE_KIND). */
void vt_slab_put(uint32_t index);
struct vt_alloc *vt_slab_entry(uint32_t index);

/* Slots ever used: a snapshot copies this many entries, free ones included (kind VT_SLAB_FREE_KIND). */
size_t vt_slab_high_water(void);
/* Slots are kept in chunks of this many; copies go a chunk at a time. */
#define VT_SLAB_CHUNK 4096
/* Copies the n slots from first (a multiple of VT_SLAB_CHUNK, n at most one chunk) to dst. */
void vt_slab_copy_range(struct vt_alloc *dst, size_t first, size_t n);
/* Forgets every entry (after fork); the chunks stay for reuse. */
void vt_slab_reset(void);

#define VT_SLAB_FREE_KIND VT_KIND_COUNT

#endif
