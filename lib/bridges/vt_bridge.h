/* Caching-allocator bridges: what PyTorch's, CuPy's and JAX's allocators hold, read from inside the
 * program's interpreter at dump time. */
#ifndef VT_BRIDGE_H
#define VT_BRIDGE_H

#include "vt_dump.h"
#include "vt_table.h"

/* Runs the bridges for a dump about to be written, holding no vramtrace lock (the caller's thread
 * may be waited on by the GIL's holder). Returns the dump records to add (malloc'd), or NULL for a
 * process that hosts no Python. When the bridges ran, *snap is the table taken right after them (set
 * *have_snap) for the dump to use and free. */
char *vt_bridge_collect(enum vt_reason reason, struct vt_snapshot *snap, int *have_snap);
/* On the dumper thread, at each pass until it has been tried once while the interpreter runs: the
 * bridge's code compiled ahead of the first dump (vt_bridge.c says why). */
void vt_bridge_warm(void);


#endif
