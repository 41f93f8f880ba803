/* The library's life in a process: start (constructor), the first CUDA call (activation: the dump
 * signal's handler, the dumper thread, held messages), fork, and exit. */
#ifndef VT_LIFECYCLE_H
#define VT_LIFECYCLE_H

#include <stdatomic.h>

#include "vt_hot.h"

void vt_activate_slow(void) __attribute__((cold));

/* Called by every wrapper and public hook: cheap once active. */
static inline void vt_activate(void)
{
    if (__builtin_expect(atomic_load_explicit(&vt_hotdata.active, memory_order_relaxed) != 2, 0))
        vt_activate_slow();
}

#endif
