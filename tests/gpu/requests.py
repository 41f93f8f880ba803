# GPU suite: a request loop in CuPy or numba under libvramtrace.so, dumped through vramtrace_dump()
# after warm-up requests and again after more; prints the framework's own figures at each dump as JSON
# lines for check.py. "leak" keeps a 4 MiB array per request (the line marked KEEP and the framework); "cache" makes
# temporaries of growing sizes and keeps nothing (CuPy only).
#   requests.py cupy leak|cache, requests.py numba leak
import ctypes
import json
import sys

lib = ctypes.CDLL(None)
buf = ctypes.create_string_buffer(4096)
framework, mode = sys.argv[1], sys.argv[2]
kept = []

if framework == "cupy":
    import cupy

    pool = cupy.get_default_memory_pool()

    def request(i):
        x = cupy.arange(1 << 18, dtype=cupy.float32)
        if mode == "leak":
            kept.append(cupy.ones(1 << 20, dtype=cupy.float32) + x[0])  # KEEP cupy
        else:
            t = cupy.ones((1 << 18) * (1 + i // 4), dtype=cupy.float32)
            float((t * 2).sum())

    def figures():
        cupy.cuda.Device(0).synchronize()
        return {"used_bytes": pool.used_bytes(), "total_bytes": pool.total_bytes(), "version": cupy.__version__}
else:
    import numpy as np
    from numba import cuda

    # No temporaries: numba defers their frees (up to 10 pending, H200 run of 2026-12-03), so they are
    # still the driver's allocations at a dump, which is true but not what this checks.
    def request(i):
        kept.append(cuda.to_device(np.ones(1 << 20, dtype=np.float32)))  # KEEP numba

    def figures():
        cuda.synchronize()
        import numba
        return {"kept_bytes": sum(a.nbytes for a in kept), "version": numba.__version__}


def dump(tag):
    row = figures()
    rc = lib.vramtrace_dump(buf, ctypes.c_size_t(4096))
    row.update({"tag": tag, "dump": buf.value.decode() if rc == 0 else None,
                "keep_line": next(i + 1 for i, l in enumerate(open(__file__)) if l.rstrip().endswith("# KEEP " + framework))})
    print("requests", json.dumps(row), flush=True)


for i in range(8):
    request(i)
dump("first")
for i in range(8, 32):
    request(i)
dump("second")
