/* Python call sites for allocations: which thread reads the allocating thread's Python frames, and
 * how long the allocation may wait for them. */
#ifndef VT_PYCAPTURE_H
#define VT_PYCAPTURE_H

#include <stdint.h>
#include "vt_out.h"

/* The calling thread's Python stack id (vt_pystack.h), 0 when it has none or it could not be read in
 * time. Called from allocation wrappers, with no lock of ours held. */
uint32_t vt_pycapture(void);
/* What vt_pycapture will read asked for from memory, without waiting: for a hook that reads the stack
 * after its real call, which then covers the wait. */
void vt_pycapture_prefetch(void);

/* The dump's interpreter record and the capture counters (docs/FORMAT.md); nothing when the process
 * hosts no CPython. */
void vt_pycapture_write(struct vt_out *f);

#endif
