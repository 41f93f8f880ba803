# Test program for the CuPy bridge (tests/t_bridge.c on the fake CuPy, tests/gpu on the real one):
# allocates through CuPy and dumps three times, printing the pool's own figures at each dump as
# "figures TAG PATH USED TOTAL 0 0". leak: every request keeps its array; cache: requests of ever larger
# sizes, each array freed at once, so the pool grows while what is used does not. The first dump installs
# vramtrace's memory hook on this (the main) thread, so arrays from then on are reported blocks; blocks:
# a dump before any array, then requests that keep some arrays and free others, and one more dump; then
# "releasable N", what free_all_blocks() gave back.
#   cupy_prog.py leak|cache|blocks
import sys
import time

import cupy
from take_dump import dump


def figures(tag, path):
    pool = cupy.get_default_memory_pool()
    print("figures", tag, path, pool.used_bytes(), pool.total_bytes(), 0, 0, flush=True)


def keep_request(kept, n):
    kept.append(cupy.empty(n, dtype=cupy.uint8))


def scratch_request(n):
    a = cupy.empty(n, dtype=cupy.uint8)
    del a


def hooked(path):
    # The hook is installed at the main thread's next safe point after the dump: wait for it (5 s at most).
    for _ in range(500):
        if "vramtrace" in cupy.cuda.memory_hook.get_memory_hooks():
            return path
        time.sleep(0.01)
    print("no memory hook 5 s after the dump", flush=True)
    return path


mode = sys.argv[1]
kept = []
if mode == "blocks":
    figures("zero", hooked(dump()))
    for i in range(4):
        keep_request(kept, (i + 1) << 20)
        scratch_request(8 << 20)
        scratch_request((i + 9) << 20)
    figures("first", dump())
    pool = cupy.get_default_memory_pool()
    before = pool.total_bytes()
    pool.free_all_blocks()
    print("releasable", before - pool.total_bytes(), flush=True)
    print("done", flush=True)
    sys.exit(0)
for _ in range(4):
    keep_request(kept, 1 << 20)
figures("first", hooked(dump()))
for tag, start in (("second", 5), ("third", 9)):
    for i in range(start, start + 4):
        if mode == "leak":
            keep_request(kept, 4 << 20)
        else:
            scratch_request(i << 20)
    figures(tag, dump())
print("done", flush=True)
