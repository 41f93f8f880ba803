// GPU smoke program: one allocation of each kind through the runtime, then an API dump.
// Built twice on the GPU machine: nvcc's default static cudart, and -cudart shared.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>

#define MiB (1ull << 20)

__attribute__((noinline)) void gpu_leak_alloc(void **p)
{
    if (cudaMalloc(p, 64 * MiB) != cudaSuccess)
        printf("cudaMalloc failed\n");
}

int main()
{
    void *leak, *freed, *async, *managed, *host;
    gpu_leak_alloc(&leak);
    cudaMalloc(&freed, 32 * MiB);
    cudaFree(freed);
    cudaMallocAsync(&async, 16 * MiB, 0);
    cudaStreamSynchronize(0);
    cudaMallocManaged(&managed, 8 * MiB);
    cudaMallocHost(&host, 4 * MiB);
    size_t fr, tot;
    cudaMemGetInfo(&fr, &tot);
    printf("cudaMemGetInfo free %zu total %zu\n", fr, tot);
    int (*dump)(char *, size_t) = (int (*)(char *, size_t))dlsym(RTLD_DEFAULT, "vramtrace_dump");
    char path[4096];
    if (dump && dump(path, sizeof path) == 0)
        printf("dump %s\n", path);
    else
        printf("no vramtrace_dump\n");
    return 0;
}
