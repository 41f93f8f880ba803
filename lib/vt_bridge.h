/* Caching-allocator bridges: what PyTorch's and CuPy's allocators hold, read from inside the
 * program's interpreter at dump time, and torch's block history switched on once its CUDA allocator
 * is up. */
#ifndef VT_BRIDGE_H
#define VT_BRIDGE_H

#include <stdatomic.h>

#include "vt_dump.h"
#include "vt_table.h"

/* Runs the bridges for a dump about to be written, holding no vramtrace lock (the caller's thread
 * may be waited on by the GIL's holder). Returns the dump records to add (malloc'd), or NULL for a
 * process that hosts no Python. When the bridges ran, *snap is the table taken right after them (set
 * *have_snap) for the dump to use and free. */
char *vt_bridge_collect(enum vt_reason reason, struct vt_snapshot *snap, int *have_snap);

/* The history switch, driven from allocations: 0 = ask at the next allocation, anything else = an
 * attempt is under way, waits for its retry time, or is over. */
extern atomic_int vt_bridge_history_state;
void vt_bridge_history_request(void);
static inline void vt_bridge_saw_alloc(void)
{
    if (atomic_load_explicit(&vt_bridge_history_state, memory_order_relaxed) == 0)
        vt_bridge_history_request();
}
/* On the dumper thread: acts on a request, and tells how long until a retry is due (-1: none). */
void vt_bridge_history_work(void);
int vt_bridge_history_wait_ms(void);
void vt_bridge_init(void);
/* In a fork child: no bridge thread survived the fork, whatever it held is free again. */
void vt_bridge_atfork_child(void);

#endif
