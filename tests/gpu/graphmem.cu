// GPU suite: CUDA graphs' allocation nodes under libvramtrace.so, in the manner of NVIDIA's
// graphMemoryFootprint sample: a graph of eight 64 MiB allocation nodes without free nodes, launched,
// then each allocation freed with cudaFreeAsync, then the graph pool trimmed; then a graph made by
// stream capture of a 32 MiB cudaMallocAsync kept and a 16 MiB one freed inside it, launched, then
// freed. A dump after each step, and the driver's own graph-memory figures printed as JSON lines for
// check.py.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" int vramtrace_dump(char *path, size_t len) __attribute__((weak));

#define CHECK(x)                                                             \
    do {                                                                     \
        cudaError_t e_ = (x);                                                \
        if (e_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));         \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static void step(const char *tag, int dev)
{
    char path[4096] = "";
    unsigned long long used = 0, reserved = 0;
    if (!vramtrace_dump || vramtrace_dump(path, sizeof path) != 0)
        path[0] = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(dev, cudaGraphMemAttrUsedMemCurrent, &used));
    CHECK(cudaDeviceGetGraphMemAttribute(dev, cudaGraphMemAttrReservedMemCurrent, &reserved));
    printf("graphmem {\"tag\": \"%s\", \"dump\": \"%s\", \"used\": %llu, \"reserved\": %llu}\n", tag, path, used, reserved);
    fflush(stdout);
}

__attribute__((noinline)) static cudaGraph_t build_graph(void **ptrs, int n, size_t bytes, int dev)
{
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t prev = NULL;
    for (int i = 0; i < n; i++) {
        cudaMemAllocNodeParams p = {};
        p.poolProps.allocType = cudaMemAllocationTypePinned;
        p.poolProps.location.type = cudaMemLocationTypeDevice;
        p.poolProps.location.id = dev;
        p.bytesize = bytes;
        cudaGraphNode_t node;
        CHECK(cudaGraphAddMemAllocNode(&node, g, prev ? &prev : NULL, prev ? 1 : 0, &p));
        ptrs[i] = p.dptr;
        prev = node;
    }
    return g;
}

__attribute__((noinline)) static cudaGraph_t capture_graph(cudaStream_t s, void **kept)
{
    void *scratch;
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMallocAsync(kept, 32u << 20, s));
    CHECK(cudaMallocAsync(&scratch, 16u << 20, s));
    CHECK(cudaFreeAsync(scratch, s));
    CHECK(cudaStreamEndCapture(s, &g));
    return g;
}

int main(void)
{
    int dev = 0;
    void *ptrs[8];
    cudaStream_t s;
    cudaGraphExec_t e;
    CHECK(cudaSetDevice(dev));
    CHECK(cudaStreamCreate(&s));
    cudaGraph_t g = build_graph(ptrs, 8, 64u << 20, dev);
    CHECK(cudaGraphInstantiate(&e, g, 0));
    step("built", dev);
    CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    step("launched", dev);
    for (int i = 0; i < 8; i++)
        CHECK(cudaFreeAsync(ptrs[i], s));
    CHECK(cudaStreamSynchronize(s));
    step("freed", dev);
    CHECK(cudaDeviceGraphMemTrim(dev));
    step("trimmed", dev);
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));

    void *kept;
    cudaGraph_t cg = capture_graph(s, &kept);
    CHECK(cudaGraphInstantiate(&e, cg, 0));
    step("captured", dev);
    CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    step("capture-launched", dev);
    CHECK(cudaFreeAsync(kept, s));
    CHECK(cudaStreamSynchronize(s));
    step("capture-freed", dev);
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(cg));
    return 0;
}
