/* Each thread's cache of what it interned lately (native stacks, Python stacks), by the key's hash:
 * an item met again is found with no lock, since interned items never change or go away. Direct-mapped,
 * VT_TCACHE_SLOTS slots per table: a serving loop goes through tens to hundreds of call sites between
 * two visits of the same one (a GPT-2 decode step: ~180 allocations), more than the 32 slots it had
 * kept in thread-local storage. Allocated at a thread's first use, freed when the thread ends. */
#ifndef VT_TCACHE_H
#define VT_TCACHE_H

#include <stdint.h>

#include "vt_pywalk.h"

#define VT_TCACHE_SLOTS 512

enum vt_tcache_table { VT_TCACHE_STACKS, VT_TCACHE_PYSTACKS, VT_TCACHE_TABLES };

struct vt_tcache_slot {
    uint64_t h;
    const void *item;
};

/* The calling thread's slot for hash h in table t; NULL when it has no cache (out of memory, or the
 * thread is ending). */
struct vt_tcache_slot *vt_tcache_slot(enum vt_tcache_table t, uint64_t h);

/* The native stack last unwound for a Python stack and the program's calling instruction (vt_stack.c):
 * the whole answer in the slot, so that a reuse reads one cache line. */
struct vt_tcache_pair {
    uintptr_t caller;
    uint32_t py, id;
    const void *item;
    uint32_t checks; /* unwinds that found the same frames again */
};
struct vt_tcache_pair *vt_tcache_pair(uint64_t h);

/* The calling thread's memo of code objects for its frame walks (vt_pywalk.h): VT_TCACHE_SLOTS slots,
 * or NULL. */
struct vt_pycode_memo *vt_tcache_memo(void);

#endif
