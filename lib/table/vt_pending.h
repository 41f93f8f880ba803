/* Each thread's newest stream-ordered allocations and allocator blocks, held in a batch of its own before
 * they enter the table (lib/table/vt_pending.c). Under torch's cudaMallocAsync backend every tensor is
 * one of these, and most die within a few hundred allocations of their birth: one freed while still in
 * its thread's batch never touches the table's shared index, slab, counters or hints, and the rest
 * enter it a batch at a time, under one hold of the shard's lock. Everything that reads the table (a
 * snapshot, a free that found nothing) folds the batches in first, so what it sees is exact. */
#ifndef VT_PENDING_H
#define VT_PENDING_H

#include <stddef.h>
#include <stdint.h>

#include "vt_table.h"

/* Whether allocations of this kind wait in their thread's batch: kinds whose bytes count in no peak
 * (a batch's short-lived entries would be missed by a peak taken as they enter the table) and whose
 * free names one address. */
static inline int vt_pending_kind(int kind)
{
    return kind == VT_KIND_ASYNC || kind == VT_KIND_BLOCK;
}

/* a: stamped (time, tid), with its space. 1: kept in the calling thread's batch; 0: the thread has no
 * batch (our own memory ran out, or no thread-exit hook could be set for it): the caller puts it in the
 * table itself. */
int vt_pending_add(const struct vt_alloc *a);
/* The lines the calling thread's next vt_pending_add writes, asked for without waiting. */
void vt_pending_prefetch(void);
/* The lines a vt_pending_take of (addr, space) reads first, asked for together without waiting. */
void vt_pending_prefetch_take(uint64_t addr, uint8_t space);
/* A free: takes (addr, space) out of the calling thread's own batch. Its entry where it lies there, or NULL
 * when it was not there; its allocation and free are counted when the batch is folded. The entry stays as
 * it is until the thread's next vt_pending_add (only the owner writes a batch's entries; a fold by another
 * thread reads them), so a free reads it only if the real free fails, not copied at every free. */
const struct vt_alloc *vt_pending_take(uint64_t addr, uint8_t space);
/* Folds every thread's batch into the table; the number of entries folded. longest (may be NULL) gets
 * the longest a batch's lock was held for it: what its thread may have waited. */
size_t vt_pending_fold_all(uint64_t *longest) __attribute__((cold));

#endif
