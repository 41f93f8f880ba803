/* Test program for the runtime routes, linked once to the shared fake cudart and once to its static
 * archive (where the program's cudaMalloc is its own and only the driver hooks can see it). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "prog_common.h"

#define NOINLINE __attribute__((noinline, used))

NOINLINE void rt_alloc_fn(size_t n)
{
    void *p;
    prog_check(cudaMalloc(&p, n) == cudaSuccess, "cudaMalloc");
}

NOINLINE void rt_alloc_free_fn(size_t n)
{
    void *p;
    prog_check(cudaMalloc(&p, n) == cudaSuccess, "cudaMalloc");
    prog_check(cudaFree(p) == cudaSuccess, "cudaFree");
}

NOINLINE void rt_async_fn(size_t n)
{
    void *p;
    prog_check(cudaMallocAsync(&p, n, NULL) == cudaSuccess, "cudaMallocAsync");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "malloc")) {
        rt_alloc_fn(2000003);
        rt_alloc_free_fn(3000017);
    } else if (!strcmp(mode, "async")) {
        rt_async_fn(2000029);
    } else if (!strcmp(mode, "oom")) {
        void *p;
        printf("oom-result %d\n", (int)cudaMalloc(&p, 3u << 20));
        prog_wait_dumps(1);
    } else {
        fprintf(stderr, "unknown mode '%s'\n", mode);
        return 2;
    }
    printf("done\n");
    return 0;
}
