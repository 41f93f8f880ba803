# A stand-in for CuPy, for the CPU tests of vramtrace's CuPy bridge and of verdicts where the allocator
# reports its totals, and its blocks only to memory hooks (tests/fake/cupy/cuda.py): a default memory
# pool that keeps freed chunks for reuse, as CuPy's does, over device memory taken through a native
# library (build/tests/libcupy_fake.so, named by FAKE_CUPY_LIB) as CuPy's extension modules take it.
# Found through PYTHONPATH=tests/fake.
import ctypes
import os

from . import cuda  # noqa: F401  (cupy.cuda.runtime)

uint8 = "uint8"
_lib = None


def _native():
    # Loaded at the first array, as CuPy initialises CUDA at its first use, not at import: a dump made
    # before then is made before any CUDA call.
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(os.environ["FAKE_CUPY_LIB"])
    return _lib


class MemoryPool:
    """CuPy's pool in small: segments from the device, split into chunks; an array takes the smallest free
    chunk that fits (the rest stays free in the same segment), or a new segment; a chunk given back
    merges with free neighbours; free_all_blocks() gives back the segments wholly free."""

    def __init__(self):
        self._segs = {}  # segment address -> size
        self._free = {}  # free chunk address -> (size, segment)
        self._used = 0
        self._total = 0

    def malloc(self, n):
        size = max(512, (n + 511) // 512 * 512)
        fits = [(c, a) for a, (c, _) in self._free.items() if c >= size]
        if fits:
            csize, addr = min(fits)
            seg = self._free.pop(addr)[1]
            if csize > size:
                self._free[addr + size] = (csize - size, seg)
        else:
            p = ctypes.c_void_p()
            if _native().cupy_fake_malloc(ctypes.byref(p), ctypes.c_size_t(size)) != 0:
                raise MemoryError("out of memory allocating %d bytes" % size)
            addr = seg = p.value
            self._segs[seg] = size
            self._total += size
        self._used += size
        for hook in list(cuda._tls.hooks.values()):
            hook.malloc_postprocess(device_id=0, size=n, mem_size=size, mem_ptr=addr, pmem_id=addr)
        return addr, size

    def release(self, addr, size):
        for hook in list(cuda._tls.hooks.values()):
            hook.free_postprocess(device_id=0, mem_size=size, mem_ptr=addr, pmem_id=addr)
        self._used -= size
        seg = max(a for a in self._segs if a <= addr)
        after = self._free.pop(addr + size, None)
        if after and after[1] == seg:
            size += after[0]
        elif after:
            self._free[addr + size] = after
        before = next((a for a, (c, sg) in self._free.items() if sg == seg and a + c == addr), None)
        if before is not None:
            addr, size = before, size + self._free.pop(before)[0]
        self._free[addr] = (size, seg)

    def used_bytes(self):
        return self._used

    def total_bytes(self):
        return self._total

    def free_all_blocks(self):
        for seg, size in list(self._segs.items()):
            if self._free.get(seg) == (size, seg):
                _native().cupy_fake_free(ctypes.c_void_p(seg))
                del self._free[seg], self._segs[seg]
                self._total -= size


class PinnedMemoryPool:
    def n_free_blocks(self):
        return 0


_pool = MemoryPool()
_pinned = PinnedMemoryPool()


class ndarray:
    def __init__(self, n):
        self._addr, self._size = _pool.malloc(n)

    def __del__(self):
        if getattr(self, "_addr", None) is not None:
            _pool.release(self._addr, self._size)
            self._addr = None


def empty(n, dtype=uint8):
    """n bytes of device memory (every fake array is uint8)."""
    return ndarray(int(n))


def get_default_memory_pool():
    return _pool


def get_default_pinned_memory_pool():
    return _pinned
