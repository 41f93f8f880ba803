/* Each thread's cache of what it interned lately (native stacks, Python stacks), by the key's hash:
 * an item met again is found with no lock, since interned items never change or go away. Tables of
 * sets, each set one cache line of VT_TCACHE_WAYS slots, so that one look-up reads one line: a serving
 * loop goes through tens to hundreds of call sites between two visits of the same one (a GPT-2 decode
 * step: ~180 allocations), and in a table of single slots a fifth to a third of them would share a slot
 * with another and push each other out at every step. Allocated at a thread's first use, freed when the
 * thread ends. */
#ifndef VT_TCACHE_H
#define VT_TCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "vt_pywalk.h"

#define VT_TCACHE_WAYS 4
#define VT_TCACHE_SETS 128 /* 512 slots a table */

enum vt_tcache_table { VT_TCACHE_STACKS, VT_TCACHE_PYSTACKS, VT_TCACHE_TABLES };

/* Whether two keys of n words are the same: how a caller checks an item found here. A short loop in
 * the hook's own code, not the C library's memcmp, whose code (a dispatch on the length, lines of its
 * own) is cold at every allocation: ~5.7 of its code lines a pair by cachegrind. */
static inline int vt_words_equal(const uintptr_t *a, const uintptr_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* The item last kept with hash h in table t (the caller compares its key), or NULL. */
const void *vt_tcache_find(enum vt_tcache_table t, uint64_t h);
/* Keeps item under h: in the slot that has h, else an empty one, else the set's oldest. */
void vt_tcache_put(enum vt_tcache_table t, uint64_t h, const void *item);

/* The native stack last unwound for a Python stack and the program's calling instruction (vt_stack.c):
 * the whole answer in the slot, so that a reuse reads one cache line. Two to a set. */
struct vt_tcache_pair {
    uintptr_t caller;
    uint32_t py, id;
    const void *item;
    uint32_t checks; /* unwinds that found the same frames again */
};
/* The slot holding (caller, py) for hash h, else the one to overwrite; NULL when the thread has no
 * cache (out of memory, or the thread is ending). */
struct vt_tcache_pair *vt_tcache_pair(uint64_t h, uintptr_t caller, uint32_t py);

/* The calling thread's memo of code objects and trails for its next frame walk (vt_pywalk.h) into m,
 * with *cleared the destruction count when the memo was last emptied; -1 when the thread has none.
 * The walk's trail is the next walk's old one. */
int vt_tcache_walk(struct vt_pycode_memos *m, uint64_t **cleared);
/* Where the calling thread keeps its tree of Python frames (vt_pypath.h; *slot NULL until made), freed
 * with the cache; NULL when the thread has no cache. */
struct vt_pypath **vt_tcache_path(void);
/* Asks memory, without waiting, for what the thread's next capture will most likely read: the frames its
 * last walk went through (each frame's first line and the one holding its owner byte, owner_off in: a
 * call made again lands where the last one was), and in each table the item that followed the last one
 * found the last time (vt_tcache_follow), with its set. A hook does it before its real call, whose
 * microseconds in the runtime and the driver then cover the wait, instead of the capture after it
 * waiting for each line in turn. */
void vt_tcache_prefetch(int owner_off);
/* item (bytes long) was found in table t under hash h: noted as what follows the item found before it. */
void vt_tcache_follow(enum vt_tcache_table t, uint64_t h, const void *item, size_t bytes);
#define VT_TCACHE_NEXT 64
#define VT_TCACHE_NEXT_BYTES 512 /* an item's lines asked for at most */

#endif
