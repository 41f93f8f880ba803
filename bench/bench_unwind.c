/* Benchmark: what unwinding costs per native frame. cuMemAllocAsync + cuMemFreeAsync pairs made DEPTH
 * calls deep (functions built without frame pointers, as libtorch is: every frame unwound from its
 * DWARF tables), run bare and under the library at several VRAMTRACE_DEPTH; prints ns per pair.
 *   bench_unwind DEPTH PAIRS */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int sink;

__attribute__((noinline)) static int level(int d, long n)
{
    if (d == 0) {
        CUdeviceptr p;
        for (long i = 0; i < n; i++)
            if (cuMemAllocAsync(&p, 256, 0) || cuMemFreeAsync(p, 0))
                exit(1);
        return 0;
    }
    int r = level(d - 1, n);
    sink += r; /* no tail call: every level keeps its frame */
    return r + 1;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 40;
    long n = argc > 2 ? atol(argv[2]) : 300000;
    CUcontext c;
    if (depth < 0 || n < 1 || cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        return 1;
    level(depth, 1000); /* warm-up: the stack interned, the unwinder's caches filled */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    level(depth, n);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.1f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n);
    return 0;
}
