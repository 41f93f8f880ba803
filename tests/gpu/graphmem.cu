// GPU suite: CUDA graphs' allocation nodes under libvramtrace.so, in the manner of NVIDIA's
// graphMemoryFootprint sample: a graph of eight 64 MiB allocation nodes without free nodes, launched,
// then each allocation freed with cudaFreeAsync, then the graph pool trimmed; then a graph made by
// stream capture of a 32 MiB cudaMallocAsync kept and a 16 MiB one freed inside it, launched, then
// freed; then the same through the generic node call, with a child graph moved into its parent. A dump
// after each step, and the driver's own graph-memory figures printed as JSON lines for check.py.
#include "gpu_check.h"

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

// Through the generic node call (cudaGraphAddNode): a 16 MiB allocation node in the parent, an 8 MiB one
// in a child graph moved into it (the only way a child graph may hold memory nodes).
__attribute__((noinline)) static cudaGraph_t build_generic(void **own, void **child_kept, int dev)
{
    cudaGraph_t parent, child;
    cudaGraphNode_t n;
    CHECK(cudaGraphCreate(&parent, 0));
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNodeParams a = {};
    a.type = cudaGraphNodeTypeMemAlloc;
    a.alloc.poolProps.allocType = cudaMemAllocationTypePinned;
    a.alloc.poolProps.location.type = cudaMemLocationTypeDevice;
    a.alloc.poolProps.location.id = dev;
    a.alloc.bytesize = 16u << 20;
    CHECK(cudaGraphAddNode(&n, parent, NULL, NULL, 0, &a));
    *own = a.alloc.dptr;
    a.alloc.bytesize = 8u << 20;
    CHECK(cudaGraphAddNode(&n, child, NULL, NULL, 0, &a));
    *child_kept = a.alloc.dptr;
    cudaGraphNodeParams c = {};
    c.type = cudaGraphNodeTypeGraph;
    c.graph.graph = child;
    c.graph.ownership = cudaGraphChildGraphOwnershipMove;
    CHECK(cudaGraphAddNode(&n, parent, NULL, NULL, 0, &c));
    return parent;
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

    void *own, *child_kept;
    cudaGraph_t gg = build_generic(&own, &child_kept, dev);
    CHECK(cudaGraphInstantiate(&e, gg, 0));
    CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    step("generic-launched", dev);
    CHECK(cudaFreeAsync(own, s));
    CHECK(cudaFreeAsync(child_kept, s));
    CHECK(cudaStreamSynchronize(s));
    step("generic-freed", dev);
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(gg));
    return 0;
}
