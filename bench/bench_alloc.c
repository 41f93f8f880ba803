/* Benchmark: cost of one cuMemAlloc + cuMemFree pair on the fake driver. Run bare and under the
 * library (bench/run.sh does both side by side); prints nanoseconds per pair. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    CUcontext c;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        return 1;
    CUdeviceptr p;
    for (long i = 0; i < 1000; i++) /* warm-up: stacks interned, caches filled */
        if (cuMemAlloc(&p, 256) || cuMemFree(p))
            return 1;
    double t0 = now();
    for (long i = 0; i < n; i++)
        if (cuMemAlloc(&p, 256) || cuMemFree(p))
            return 1;
    printf("%.1f\n", (now() - t0) * 1e9 / n);
    return 0;
}
