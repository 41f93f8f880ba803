/* A small CUDA C "serving loop", the README's demo and its CUDA C example: each request takes a
 * scratch buffer and frees it, a bounded cache keeps the last few results, and one function keeps a
 * buffer every few requests and never gives it back: the leak the demo finds. Runs on a GPU (built by
 * nvcc) or on the fake driver (built by cc as C). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MiB (1ull << 20)
#define CACHE 4

static void *cache[CACHE];
static void *kept[1024];
static int nkept;

__attribute__((noinline)) void remember_request_for_debugging(int req)
{
    if (req % 5 == 0 && nkept < 1024 && cudaMalloc(&kept[nkept], 2 * MiB) == cudaSuccess)
        nkept++;
}

__attribute__((noinline)) void cache_result(int req)
{
    int slot = req % CACHE;
    if (cache[slot])
        cudaFree(cache[slot]);
    if (cudaMalloc(&cache[slot], 1 * MiB) != cudaSuccess)
        cache[slot] = NULL;
}

__attribute__((noinline)) void handle_request(int req)
{
    void *scratch;
    if (cudaMalloc(&scratch, 8 * MiB) == cudaSuccess)
        cudaFree(scratch);
    cache_result(req);
    remember_request_for_debugging(req);
}

int main(int argc, char **argv)
{
    int requests = argc > 1 ? atoi(argv[1]) : 200;
    struct timespec nap = {0, 5 * 1000 * 1000};
    void *probe;
    if (cudaMalloc(&probe, 1) != cudaSuccess) {
        fprintf(stderr, "cuda_leak: no CUDA device or driver\n");
        return 1;
    }
    cudaFree(probe);
    printf("warm\n");
    fflush(stdout);
    for (int req = 1; req <= requests; req++) {
        handle_request(req);
        nanosleep(&nap, NULL);
    }
    printf("served %d requests\n", requests);
    return 0;
}
