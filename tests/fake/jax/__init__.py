# A stand-in for JAX, for the CPU tests of vramtrace's JAX bridge: a GPU device whose memory_stats()
# comes from a pool in the manner of XLA's BFC allocator, over device memory taken through a native
# library (build/tests/libxla_fake.so, named by FAKE_XLA_LIB) as jaxlib takes it. The backend is made
# at the first device request, as JAX's is; XLA_PYTHON_CLIENT_PREALLOCATE=false grows the pool on
# demand, otherwise it takes FAKE_XLA_PREALLOCATE bytes at once; jax.profiler's device memory profile
# lists the live arrays by Python stack. Found through PYTHONPATH=tests/fake.
import ctypes
import os

from ._src import xla_bridge
from . import numpy  # noqa: F401
from . import profiler  # noqa: F401

_lib = ctypes.CDLL(os.environ["FAKE_XLA_LIB"])


class _Pool:
    def __init__(self):
        self.chunks = []  # [free bytes, next address]
        self.live = {}  # id of a live array -> (bytes, its Python stack innermost first)
        self.in_use = self.pool = self.peak = 0
        if os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true") != "false":
            self._grow(int(os.environ.get("FAKE_XLA_PREALLOCATE", str(64 << 20))))

    def _grow(self, n):
        p = ctypes.c_void_p()
        if _lib.xla_fake_malloc(ctypes.byref(p), ctypes.c_size_t(n)) != 0:
            raise RuntimeError("RESOURCE_EXHAUSTED: out of memory allocating %d bytes" % n)
        self.chunks.append([n, p.value])
        self.pool += n

    def alloc(self, n):
        n = max(256, (n + 255) // 256 * 256)
        chunk = next((c for c in self.chunks if c[0] >= n), None)
        if chunk is None:
            self._grow(max(n, 2 << 20))
            chunk = self.chunks[-1]
        chunk[0] -= n
        chunk[1] += n
        self.in_use += n
        self.peak = max(self.peak, self.in_use)
        return n

    def free(self, n):
        self.in_use -= n  # the space stays the pool's (no reuse needed here)


class Device:
    platform = "gpu"
    id = 0
    local_hardware_id = 0

    def __str__(self):
        return "cuda:%d" % self.id

    def __init__(self):
        self.pool = _Pool()

    def memory_stats(self):
        return {"bytes_in_use": self.pool.in_use, "pool_bytes": self.pool.pool, "peak_bytes_in_use": self.pool.peak,
                "bytes_limit": 80 << 30}


def local_devices():
    if not xla_bridge._backends:
        xla_bridge._backends["cuda"] = [Device()]
    return xla_bridge._backends["cuda"]


devices = local_devices
