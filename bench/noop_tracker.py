# For bench/gpt2_decode.py (BENCH_NOOP_TRACKER=1): what torch itself pays once any trace tracker is
# attached to its caching allocator, without vramtrace. Builds, with torch's own extension builder (a C++
# compiler and torch's headers, as on the GPU machine), a tracker that only counts the entries, and
# attaches it through torch's public inline call, as PyTorch's NCCL hook does. Against bare, it tells
# torch's part of the tracker's cost (an entry built for every block event) from the library's.
#   import noop_tracker; noop_tracker.attach(); ...; noop_tracker.count()
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <atomic>
#include <c10/cuda/CUDACachingAllocator.h>

static std::atomic<long> entries{0};

void attach() {
    c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker(
        [](const auto &) { entries.fetch_add(1, std::memory_order_relaxed); });
}

long count() { return entries.load(); }
"""

_mod = None


def attach():
    """Attaches the counting tracker; torch's CUDA allocator must be initialised (a tensor made)."""
    global _mod
    _mod = load_inline("vt_noop_tracker", cpp_sources=_SRC, functions=["attach", "count"], with_cuda=True)
    _mod.attach()


def count():
    return _mod.count() if _mod else 0
