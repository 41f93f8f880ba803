/* The library's one C++ unit: the std::function torch's attachAllocatorTraceTracker takes, forwarding
 * each trace entry to vt_torch_event (vt_torch.c). Only the header's inline code is used, with no
 * exceptions and no RTTI, so the library needs no C++ runtime of its own: the function's manager and
 * invoker are compiled here, and torch, which copies and calls them, brings its own. The entry's type
 * is opaque here: vt_torch.c reads it at the offsets of the torch version it checked. */
#include <functional>
#include <utility>

extern "C" {
#include "vt_torch.h"
}

struct vt_torch_entry; /* torch's c10::cuda::CUDACachingAllocator::TraceEntry, never defined here */

/* What attachAllocatorTraceTracker takes: std::function<void(const TraceEntry&)>, by value. A member
 * function called through its address takes the object first, and a std::function by value is passed
 * as the address of the caller's copy, which the caller destroys after the call (Itanium C++ ABI). */
typedef std::function<void(const vt_torch_entry &)> vt_tracker;
typedef void (*vt_attach_fn)(void *self, vt_tracker tracker);

extern "C" void vt_torch_call_attach(void *attach, void *self)
{
    vt_tracker tracker = [](const vt_torch_entry &entry) { vt_torch_event(&entry); };
    reinterpret_cast<vt_attach_fn>(attach)(self, std::move(tracker));
}
