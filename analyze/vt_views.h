/* Caching allocators' views of their memory, built from what the bridges wrote into a dump (torch's
 * segments and blocks, CuPy's pool totals) and from the blocks native allocators reported through
 * vramtrace's hooks; and which of the dump's driver allocations are such an allocator's segments, so
 * that the model counts their allocated part from the blocks and the rest as cache. */
#ifndef VT_VIEWS_H
#define VT_VIEWS_H

#include <stdint.h>

#include "vt_dumpfile.h"

enum vt_role {
    VT_ROLE_ALLOCATED, /* memory handed to the program (or to a library for itself) */
    VT_ROLE_CACHE,     /* a pool's free memory */
    VT_ROLE_SEGMENT,   /* reserved by a caching allocator: its allocated part is in its blocks */
    VT_ROLE_IMPORTED,  /* another owner's memory mapped here (IPC, pool imports, external memory) */
    VT_ROLE_COUNT
};

struct vt_view {
    char name[24];    /* torch, cupy, or the name a native allocator gave */
    char backend[32]; /* torch: native or cudaMallocAsync; cupy: pool; native hooks: blocks */
    int device;
    uint64_t reserved, allocated;                 /* as vramtrace accounts them */
    uint64_t releasable, fragmented, pending_free; /* VT_DF_UNKNOWN where the view cannot say */
    uint64_t own_allocated, own_reserved;         /* the allocator's own totals (VT_DF_UNKNOWN: none) */
    uint64_t segments, blocks, blocks_nostack;    /* live blocks; those recorded without a stack */
    uint64_t matched, unmatched;                  /* segments that are / are not a driver allocation we hold */
    uint64_t orphans, orphan_bytes;               /* torch: driver allocations by its allocator not in its snapshot */
    uint64_t matched_bytes;                       /* bytes of the matched driver allocations */
    uint64_t allocated_in_matched;                /* the blocks' bytes inside them */
    uint64_t block_bytes;                         /* a pool that gives its totals: its live blocks' bytes, when
                                                     it also reports blocks (CuPy's memory hook) */
    const char *source;                           /* where the figures come from */
};

struct vt_views {
    struct vt_view *v;
    size_t n;
    unsigned char *alloc_role, *phys_role; /* per dump entry: enum vt_role */
};

/* Returns 0, or -1 when out of memory. */
int vt_views_build(const struct vt_dumpfile *d, struct vt_views *out);
void vt_views_free(struct vt_views *vw);

#endif
