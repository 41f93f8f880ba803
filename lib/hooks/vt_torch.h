/* Torch's caching allocator, told by the allocator itself: a trace tracker attached through c10's
 * CUDAAllocator::attachAllocatorTraceTracker gets each block it hands out and takes back, and each
 * segment it maps and unmaps, on the allocating thread, whether or not torch records its history. Each
 * block becomes a table entry of kind "block" with our own stack, taken then (no GIL: our walk reads the
 * interpreter's memory); the segments are kept here and written into each dump. Torch's trace entry is
 * read at offsets known per torch version, checked on the first entry against the segment our hook
 * saw torch make just before; where any of that fails, torch's block history does the job as before
 * (lib/bridges/vt_history.c), and the dump says why. */
#ifndef VT_TORCH_H
#define VT_TORCH_H

/* The two functions of the C++ side (vt_torch_attach.cpp), which sees only these. */
/* Called by the C++ side with each of torch's trace entries. */
void vt_torch_event(const void *entry);
/* The C++ side: hands attach, the allocator's attachAllocatorTraceTracker, a tracker forwarding to
 * vt_torch_event, on the allocator object self. */
void vt_torch_call_attach(void *attach, void *self);

#ifndef __cplusplus
#include <stdatomic.h>
#include <stdint.h>

#include "vt_fns.h"
#include "vt_hot.h"
#include "vt_out.h"

/* An allocating hook, before its real call: the first segment torch's allocator asks for attaches the
 * tracker (its device allocators exist by then; attached before, it would reach none). */
void vt_torch_look(enum vt_fn api);
static inline void vt_torch_watch(enum vt_fn api)
{
    if (VT_UNLIKELY(atomic_load_explicit(&vt_hotdata.torch_watch, memory_order_relaxed)))
        vt_torch_look(api);
}

/* An allocating hook, after its real call succeeded: what it made, against which the tracker's first
 * entry is checked (a fixed segment's cudaMalloc, or an expandable segment's mapping). */
void vt_torch_saw(uint64_t addr, uint64_t size, int device);
static inline void vt_torch_made(uint64_t addr, uint64_t size, int device)
{
    if (VT_UNLIKELY(atomic_load_explicit(&vt_hotdata.torch_watch, memory_order_relaxed)))
        vt_torch_saw(addr, size, device);
}

/* Whether the tracker gives torch's blocks (the bridge then reads torch's totals only, and its block
 * history is left alone). -1 while it is attached and not yet checked. */
int vt_torch_tracking(void);

/* The dump's records: "tracker torch STATE DETAIL", then, while tracking, torch's segments. */
void vt_torch_write(struct vt_out *f);

#endif /* __cplusplus */
#endif
