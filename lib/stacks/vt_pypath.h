/* A thread's Python stacks as paths in a tree of its frames, outermost first, so that a walk pays for
 * the frames that changed since the thread's last one and not for the ones that did not (vt_pypath.c).
 * Where the interpreter's code watcher keeps the memo of code objects true (3.12, 3.13). */
#ifndef VT_PYPATH_H
#define VT_PYPATH_H

#include <stdint.h>

#include "vt_pywalk.h"

struct vt_pypath;

/* A Python stack's id for a key of n frames (code and instruction words, innermost first, hash h) not
 * met on this path before: vt_pystack.c's look-up, which adds the stack when it is new; 0 when it could
 * not be kept. Called on the walking thread while its frames are alive. */
typedef uint32_t vt_pypath_resolve_fn(const uintptr_t *key, int n, uint64_t h);

/* The Python stack of tstate's thread (the calling one), at most max frames: its id in *id (0: no
 * frames, or none could be kept), the frames in *frames. Returns 0; -1 when the memory read is not as
 * the layout says (the walk is not to be trusted again); -2 when the thread has no tree (out of memory,
 * or the thread is ending: the caller walks the other way). */
int vt_pypath_walk(const struct vt_pylayout *l, const struct vt_pytypes *t, const void *tstate, int max,
                   struct vt_pycode_memos *m, vt_pypath_resolve_fn *resolve, uint32_t *id, int *frames);

/* Asks memory, without waiting, for the frames the thread's last path went through (each frame's first
 * line and the one holding its owner byte, at owner_off). */
void vt_pypath_prefetch(const struct vt_pypath *p, int owner_off);

/* Tests only (VRAMTRACE_FAKE_PYWALK=smalltree): trees emptied past this many nodes instead. */
void vt_pypath_bound(uint32_t nodes);

/* The thread's tree freed, when the thread ends (vt_tcache.c). */
void vt_pypath_free(struct vt_pypath *p);

#endif
