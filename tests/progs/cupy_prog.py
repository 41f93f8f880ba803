# CPU test program for the CuPy bridge (tests/t_bridge.c): allocates through the fake CuPy
# (tests/fake/cupy) and dumps three times, printing the pool's own figures at each dump as
# "figures TAG PATH USED TOTAL 0 0". leak: every request keeps its array; cache: requests of ever
# larger sizes, each array freed at once, so the pool grows while what is used does not.
#   cupy_prog.py leak|cache
import sys

import cupy
from take_dump import dump


def figures(tag, path):
    pool = cupy.get_default_memory_pool()
    print("figures", tag, path, pool.used_bytes(), pool.total_bytes(), 0, 0, flush=True)


def keep_request(kept, n):
    kept.append(cupy.empty(n))


def scratch_request(n):
    a = cupy.empty(n)
    del a


mode = sys.argv[1]
kept = []
for _ in range(4):
    keep_request(kept, 1 << 20)
figures("first", dump())
for tag, start in (("second", 5), ("third", 9)):
    for i in range(start, start + 4):
        if mode == "leak":
            keep_request(kept, 4 << 20)
        else:
            scratch_request(i << 20)
    figures(tag, dump())
print("done", flush=True)
