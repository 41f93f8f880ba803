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
    // Graph memory: an allocation captured into a graph, not freed in it, so it outlives the launch.
    cudaStream_t st;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    void *gmem;
    cudaStreamCreate(&st);
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal);
    cudaMallocAsync(&gmem, 24 * MiB, st);
    cudaStreamEndCapture(st, &g);
    if (cudaGraphInstantiate(&ge, g, 0) != cudaSuccess || cudaGraphLaunch(ge, st) != cudaSuccess)
        printf("graph failed\n");
    cudaStreamSynchronize(st);
    unsigned long long gres = 0, gused = 0;
    cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &gres);
    cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &gused);
    printf("graph memory reserved %llu used %llu\n", gres, gused);
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
