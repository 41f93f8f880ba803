# Benchmark: a serving-shaped CPU loop, for bench/run.sh to run bare and under libvramtrace.so. Each
# request descends about 40 Python frames through one of 16 call paths (so stacks vary; BENCH_LEVELS=4:
# 256 paths, more call sites than a thread's cache of recent stacks held before it grew), does a little
# Python work, and allocates and frees through ctypes.CDLL, which releases the GIL around the call as
# torch and CuPy do. With "contended", a second Python thread keeps asking for the GIL meanwhile (small
# pieces of work between sleep(0)), as a server's other threads do. BENCH_EVICT=N (with BENCH_EVICT_LIB,
# bench/evict.c built as a shared object) touches N random cache lines of a large buffer before each
# request, as a real program's work evicts the library's data. Prints the median microseconds per
# request of several batches (or takes turns, bench/turns.py). BENCH_DISTINCT=1: the 40 frames are 40
# functions of their own (as a model's forward pass is), not one recursing. BENCH_ASYNC=1: stream-ordered
# allocations (cudaMallocAsync/cudaFreeAsync, as torch's cudaMallocAsync backend makes for every tensor),
# each freed 16 requests after it was made, as a layer's activations live a few operators. The runtime's
# functions are looked up in the process's global scope, as a program linked to the runtime (torch's
# libc10_cuda) finds them, so an LD_PRELOADed library's come first and both its layers run: the runtime
# hook and the driver hook the runtime's own call reaches (ctypes' handle of the runtime would find the
# runtime's own functions and pass the runtime hooks by). BENCH_C10=LIB (the fake torch's libc10_cuda.so,
# tests/fake/c10): each request's tensor comes from its caching allocator instead, a block handed out and
# taken back as torch's are, which the library learns through torch's trace tracker. BENCH_DEPTH: the
# frames a request descends (40).
#   py_serving.py RUNTIME REQUESTS quiet|contended
import ctypes
import os
import statistics
import sys
import threading
import time

import turns

runtime, requests, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctypes.CDLL(runtime, mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL(None)
alloc, free = lib.cudaMalloc, lib.cudaFree
free.argtypes = [ctypes.c_void_p]
p = ctypes.c_void_p()
ref = ctypes.byref(p)
DEPTH = int(os.environ.get("BENCH_DEPTH", "40"))
EVICT = int(os.environ.get("BENCH_EVICT", "0"))
evict = ctypes.CDLL(os.environ["BENCH_EVICT_LIB"]).bench_evict if EVICT else None
LEVELS = int(os.environ.get("BENCH_LEVELS", "2"))  # levels of four ways: 4 ** LEVELS call paths


def serve(size):
    work = sum(range(size % 7 + 8))  # a little Python work, as a request's bookkeeping
    if evict:
        evict(EVICT)
    alloc(ref, 256 + work)
    free(p)


if os.environ.get("BENCH_C10"):
    c10 = ctypes.CDLL(os.environ["BENCH_C10"])
    c10_malloc, c10_free = c10.fake_c10_malloc, c10.fake_c10_free
    c10_malloc.restype = ctypes.c_void_p
    c10_malloc.argtypes = [ctypes.c_size_t]
    c10_free.argtypes = [ctypes.c_void_p]

    def serve(size):
        work = sum(range(size % 7 + 8))
        if evict:
            evict(EVICT)
        c10_free(c10_malloc(256 + work))


if os.environ.get("BENCH_ASYNC") == "1":
    alloc_async, free_async = lib.cudaMallocAsync, lib.cudaFreeAsync
    free_async.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    live = [ctypes.c_void_p() for _ in range(16)]
    refs = [ctypes.byref(q) for q in live]
    turn = [0]

    def serve(size):
        work = sum(range(size % 7 + 8))
        if evict:
            evict(EVICT)
        i = turn[0] = (turn[0] + 1) % 16
        if live[i].value:
            free_async(live[i], None)
        alloc_async(refs[i], 256 + work, None)


# Four ways down at each of the last LEVELS levels: 4 ** LEVELS call paths, as many different stacks.
def path_a(k, path):
    return serve(path) if k == 0 else down(k - 1, path >> 2)


def path_b(k, path):
    return serve(path) if k == 0 else down(k - 1, path >> 2)


def path_c(k, path):
    return serve(path) if k == 0 else down(k - 1, path >> 2)


def path_d(k, path):
    return serve(path) if k == 0 else down(k - 1, path >> 2)


WAYS = (path_a, path_b, path_c, path_d)


def down(k, path):
    if k > LEVELS:
        return down(k - 1, path)
    return WAYS[path & 3](k, path)


if os.environ.get("BENCH_DISTINCT") == "1":
    # level_K calls level_K-1 ... level_{LEVELS+1} calls down(): DEPTH - LEVELS functions of their own.
    chain = {"down": down}
    for k in range(LEVELS + 1, DEPTH + 1):
        exec("def level_%d(k, path):\n    return %s(k - 1, path)\n"
             % (k, "down" if k == LEVELS + 1 else "level_%d" % (k - 1)), chain)
    top = chain["level_%d" % DEPTH]
else:
    top = down


def batch(n):
    t = time.perf_counter()
    for i in range(n):
        top(DEPTH, i % 4 ** LEVELS)
    return (time.perf_counter() - t) / n * 1e6


stop = False


def other():
    while not stop:
        sum(range(50))
        time.sleep(0)


if mode == "contended":
    threading.Thread(target=other, daemon=True).start()
batch(2000)  # warm-up: every stack seen once
if turns.serve(lambda: batch(requests // 5)):  # under bench/pingpong.py
    sys.exit(0)
print("%.2f" % statistics.median(batch(requests // 5) for _ in range(5)), flush=True)
stop = True
