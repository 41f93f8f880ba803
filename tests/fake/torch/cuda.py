# The fake torch.cuda: a caching allocator that takes its segments with cudaMalloc (or, with
# VRAMTRACE_FAKE_TORCH=async, every tensor with cudaMallocAsync, like backend:cudaMallocAsync) and
# hands out blocks from them, with torch 2.11's segment rules (2 MiB small segments for requests up
# to 1 MiB, 20 MiB for requests under 10 MiB, else the request rounded to 2 MiB; blocks rounded to
# 512 bytes and split, free neighbours merged), and memory_stats() / memory._snapshot() /
# memory._record_memory_history() in torch's shapes. VRAMTRACE_FAKE_TORCH=raise makes memory_stats()
# raise, as a broken allocator would.
import ctypes
import os
import sys
import types

_rt = ctypes.CDLL("libcudart.so.13")
_mode = os.environ.get("VRAMTRACE_FAKE_TORCH", "")
_c10 = None
if _mode == "native":
    _c10 = ctypes.CDLL(os.environ["VRAMTRACE_FAKE_C10_LIB"])
    _c10.fake_c10_malloc.restype = ctypes.c_void_p
    _c10.fake_c10_malloc.argtypes = (ctypes.c_size_t,)
    _c10.fake_c10_free.argtypes = (ctypes.c_void_p,)
    _c10.fake_c10_allocated.restype = _c10.fake_c10_reserved.restype = ctypes.c_ulonglong
_initialized = False
MiB = 1 << 20


class _Segment:
    def __init__(self, address, size, small):
        self.address, self.size, self.small = address, size, small
        # blocks: [address, size, requested, state, frames], in address order
        self.blocks = [[address, size, 0, "inactive", []]]


class _Allocator:
    def __init__(self):
        self.segments = []
        self.history = False
        self.async_live = {}

    def _frames(self):
        # Taken when the request comes in, before any cudaMalloc, as torch gathers its context.
        if not self.history:
            return []
        f = sys._getframe(2)  # Tensor.__init__, then torch.empty() and its caller
        out = []
        while f is not None:
            out.append({"name": f.f_code.co_name, "filename": f.f_code.co_filename, "line": f.f_lineno})
            f = f.f_back
        return out

    def malloc(self, nbytes):
        global _initialized
        _initialized = True
        size = max(512, (nbytes + 511) // 512 * 512)
        if _c10 is not None:
            p = _c10.fake_c10_malloc(size)
            if not p:
                raise RuntimeError("CUDA out of memory")
            return ("native", p)
        frames = self._frames()
        if _mode == "async":
            p = ctypes.c_void_p()
            if _rt.cudaMallocAsync(ctypes.byref(p), ctypes.c_size_t(size), None) != 0:
                raise RuntimeError("CUDA out of memory")
            self.async_live[p.value] = size
            return ("async", p.value)
        small = size <= MiB
        for seg in self.segments:
            if seg.small != small:
                continue
            for i, b in enumerate(seg.blocks):
                if b[3] == "inactive" and b[1] >= size:
                    return self._take(seg, i, size, nbytes, frames)
        seg_size = 2 * MiB if small else 20 * MiB if size < 10 * MiB else (size + 2 * MiB - 1) // (2 * MiB) * 2 * MiB
        p = ctypes.c_void_p()
        if _rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(seg_size)) != 0:
            raise RuntimeError("CUDA out of memory")
        seg = _Segment(p.value, seg_size, small)
        self.segments.append(seg)
        return self._take(seg, 0, size, nbytes, frames)

    def _take(self, seg, i, size, requested, frames):
        b = seg.blocks[i]
        if b[1] > size:
            seg.blocks.insert(i + 1, [b[0] + size, b[1] - size, 0, "inactive", []])
            b[1] = size
        b[2], b[3], b[4] = requested, "active_allocated", frames
        return (seg, b[0])

    def free(self, handle):
        where, addr = handle
        if where == "native":
            _c10.fake_c10_free(addr)
            return
        if where == "async":
            _rt.cudaFreeAsync(ctypes.c_void_p(addr), None)
            del self.async_live[addr]
            return
        blocks = where.blocks
        i = next(k for k, b in enumerate(blocks) if b[0] == addr)
        blocks[i][2:] = [0, "inactive", []]
        if i + 1 < len(blocks) and blocks[i + 1][3] == "inactive":
            blocks[i][1] += blocks.pop(i + 1)[1]
        if i > 0 and blocks[i - 1][3] == "inactive":
            blocks[i - 1][1] += blocks.pop(i)[1]

    def empty_cache(self):
        for seg in [s for s in self.segments if len(s.blocks) == 1 and s.blocks[0][3] == "inactive"]:
            _rt.cudaFree(ctypes.c_void_p(seg.address))
            self.segments.remove(seg)


_allocator = _Allocator()


def is_initialized():
    return _initialized


def get_allocator_backend():
    return "cudaMallocAsync" if _mode == "async" else "native"


def device_count():
    return 1


def current_device():
    return 0


def memory_allocated(device=None):
    if _c10 is not None:
        return _c10.fake_c10_allocated()
    if _mode == "async":
        return sum(_allocator.async_live.values())
    return sum(b[1] for s in _allocator.segments for b in s.blocks if b[3] != "inactive")


def memory_reserved(device=None):
    if _c10 is not None:
        return _c10.fake_c10_reserved()
    if _mode == "async":
        return sum(_allocator.async_live.values())
    return sum(s.size for s in _allocator.segments)


def memory_stats(device=None):
    if _mode == "raise":
        raise RuntimeError("fake allocator failure")
    return {"allocated_bytes.all.current": memory_allocated(), "reserved_bytes.all.current": memory_reserved(),
            "active_bytes.all.current": memory_allocated(), "num_alloc_retries": 0}


def empty_cache():
    if _c10 is not None:
        _c10.fake_c10_empty_cache()
    else:
        _allocator.empty_cache()


def _snapshot():
    segs = []
    for s in _allocator.segments:
        segs.append({"device": 0, "address": s.address, "total_size": s.size,
                     "allocated_size": sum(b[1] for b in s.blocks if b[3] == "active_allocated"),
                     "segment_type": "small" if s.small else "large", "segment_pool_id": (0, 0),
                     "is_expandable": False, "stream": 0, "frames": [],
                     "blocks": [{"address": b[0], "size": b[1], "requested_size": b[2], "state": b[3],
                                 "frames": list(b[4])} for b in s.blocks]})
    return {"segments": segs, "device_traces": [], "allocator_settings": {}}


history_calls = []


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0):
    history_calls.append((enabled, context, stacks))
    _allocator.history = enabled is not None


memory = types.SimpleNamespace(_snapshot=_snapshot, _record_memory_history=_record_memory_history)
