# Benchmark: the cost of one allocation + free pair made from Python through ctypes, at a given
# Python stack depth, for bench/run.sh (fake runtime) and bench/gpu.sh (real runtime) to run bare and
# under libvramtrace.so with Python call sites off and on. Prints nanoseconds per pair.
#   py_alloc.py RUNTIME DEPTH PAIRS held|released
# held: the call keeps the GIL (ctypes.PyDLL), so the allocating thread reads its own frames;
# released: the call releases it (ctypes.CDLL, as torch and CuPy do), so vramtrace's helper reads them.
import ctypes
import sys
import time

runtime, depth, pairs, how = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
lib = (ctypes.PyDLL if how == "held" else ctypes.CDLL)(runtime)
alloc, free = lib.cudaMalloc, lib.cudaFree
free.argtypes = [ctypes.c_void_p]


def loop(n):
    p = ctypes.c_void_p()
    ref = ctypes.byref(p)
    t = time.perf_counter()
    for _ in range(n):
        alloc(ref, 256)
        free(p)
    return time.perf_counter() - t


def at_depth(d):
    # The frames below <module>: depth in all, counting <module> and loop.
    if d > 2:
        return at_depth(d - 1)
    loop(min(1000, pairs))  # warm-up: stacks interned, frames made
    return loop(pairs)


print("%.1f" % (at_depth(depth) * 1e9 / pairs), flush=True)
