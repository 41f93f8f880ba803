# GPU suite: CuPy's default memory pool under libvramtrace.so, dumped through vramtrace_dump() after
# arrays of several sizes were made and some dropped; prints the pool's own figures as one JSON line.
import ctypes
import json

import cupy

lib = ctypes.CDLL(None)
buf = ctypes.create_string_buffer(4096)
pool = cupy.get_default_memory_pool()
arrays = [cupy.zeros((i % 5 + 1) << 18, dtype=cupy.float32) for i in range(30)]
del arrays[::3]
big = cupy.ones(50 << 20, dtype=cupy.uint8)
del big
cupy.cuda.Device(0).synchronize()
rc = lib.vramtrace_dump(buf, ctypes.c_size_t(4096))
print("cupy", json.dumps({"version": cupy.__version__, "dump": buf.value.decode() if rc == 0 else None,
                          "total_bytes": pool.total_bytes(), "used_bytes": pool.used_bytes(),
                          "free_bytes": pool.free_bytes()}), flush=True)
