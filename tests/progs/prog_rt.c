/* Test program for the runtime routes, linked once to the shared fake cudart and once to its static
 * archive (where the program's cudaMalloc is its own and only the driver hooks can see it). The driver
 * is linked too, for what the fake runtime lacks (stream capture and graphs). */
#include <cuda.h>
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

/* Stream capture through the runtime: stream-ordered allocations made while a stream is captured are
 * graph nodes (a runtime hook that records the call itself, or the driver hook under the static
 * runtime), one kept past the graph and one freed inside it. */
NOINLINE CUgraph rt_capture_build(CUstream s, void **kept)
{
    void *scratch;
    CUgraph g;
    prog_check(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS, "begin capture");
    prog_check(cudaMallocAsync(kept, 2u << 20, (cudaStream_t)s) == cudaSuccess &&
                   cudaMallocAsync(&scratch, 1u << 20, (cudaStream_t)s) == cudaSuccess &&
                   cudaFreeAsync(scratch, (cudaStream_t)s) == cudaSuccess,
               "captured allocations");
    prog_check(cuStreamEndCapture(s, &g) == CUDA_SUCCESS, "end capture");
    return g;
}

static void rt_capture(void)
{
    void *first, *kept;
    CUstream s;
    CUgraphExec e;
    /* The runtime's first call makes the thread's context, which the stream needs. */
    prog_check(cudaMalloc(&first, 1) == cudaSuccess && cudaFree(first) == cudaSuccess, "context");
    prog_check(cuStreamCreate(&s, 0) == CUDA_SUCCESS, "stream");
    CUgraph g = rt_capture_build(s, &kept);
    prog_dump(); /* 1: captured, not launched: nothing live */
    prog_check(cuGraphInstantiate(&e, g, 0) == CUDA_SUCCESS && cuGraphLaunch(e, s) == CUDA_SUCCESS, "launch");
    prog_dump(); /* 2: the kept 2 MiB */
    prog_check(cudaFreeAsync(kept, (cudaStream_t)s) == cudaSuccess, "freed after");
    prog_dump(); /* 3: nothing */
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
    } else if (!strcmp(mode, "capture")) {
        rt_capture();
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
