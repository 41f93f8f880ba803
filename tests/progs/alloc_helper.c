/* For tests/t_labels.sh: a server whose every allocation goes through one wrapper, my_cuda_malloc(), as
 * many C programs do. A bounded cache (cache_fill) and a leak (audit_request) both call it. Takes three dumps
 * through the public API between rounds of requests and prints their paths. Built -O0, as a debug build:
 * every function keeps its frame.
 *   alloc_helper [chain]   chain: both call new_buffer(), which alone calls the wrapper, as torch's operators
 *                          reach empty_generic() through empty_cuda(): the first two frames agree, and the
 *                          stacks part only at the third */
#include <cuda.h>
#include <stdio.h>

#include "vramtrace.h"
#pragma weak vramtrace_dump

static CUdeviceptr cache[4], audit[64];
static int naudit, chain;

__attribute__((noinline)) static CUdeviceptr my_cuda_malloc(size_t n)
{
    CUdeviceptr p = 0;
    if (cuMemAlloc(&p, n) != CUDA_SUCCESS)
        return 0;
    return p;
}

/* The one caller of the wrapper in chain mode. */
__attribute__((noinline)) static CUdeviceptr new_buffer(size_t n)
{
    CUdeviceptr p = my_cuda_malloc(n);
    return p;
}

/* At most four entries, each replaced: bounded. */
__attribute__((noinline)) static void cache_fill(int i)
{
    if (cache[i % 4])
        cuMemFree(cache[i % 4]);
    cache[i % 4] = chain ? new_buffer(2 << 20) : my_cuda_malloc(2 << 20);
}

/* Every request's record kept: the leak. */
__attribute__((noinline)) static void audit_request(void)
{
    if (naudit < 64)
        audit[naudit++] = chain ? new_buffer(1 << 20) : my_cuda_malloc(1 << 20);
}

/* A round of requests: one call site for all of them, so that each dump sees the same sites. */
__attribute__((noinline)) static void serve(int from, int n)
{
    for (int r = from; r < from + n; r++) {
        cache_fill(r);
        audit_request();
    }
}

static void dump(int i)
{
    char path[4096];
    if (vramtrace_dump && vramtrace_dump(path, sizeof path) == 0)
        printf("dump %d %s\n", i, path);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    chain = argc > 1 && argv[1][0] == 'c';
    CUcontext c;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        return 1;
    for (int i = 0; i < 3; i++) {
        serve(8 * i, 8);
        dump(i + 1);
    }
    return 0;
}
