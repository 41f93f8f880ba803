// GPU suite: CUDA arrays (2D, 3D, mipmapped) and registered host memory under libvramtrace.so, through
// the runtime API as texture and interop code makes them. Prints the driver's own size of each array
// (cudaArrayGetMemoryRequirements / cudaMipmappedArrayGetMemoryRequirements, which answer only for a
// twin made with cudaArrayDeferredMapping, one that takes no memory), the device's free memory each
// creation took, and a dump while they live and one after they are gone, for check.py.
#include "gpu_check.h"

static void dump(const char *tag)
{
    char path[4096] = "";
    size_t free_b = 0, total = 0;
    if (!vramtrace_dump || vramtrace_dump(path, sizeof path) != 0)
        path[0] = 0;
    CHECK(cudaMemGetInfo(&free_b, &total));
    printf("arrays {\"tag\": \"%s\", \"dump\": \"%s\", \"free\": %zu}\n", tag, path, free_b);
    fflush(stdout);
}

static size_t took(size_t *before)
{
    size_t free_b, total;
    CHECK(cudaMemGetInfo(&free_b, &total));
    size_t t = *before - free_b;
    *before = free_b;
    return t;
}

__attribute__((noinline)) static void make_arrays(cudaArray_t *a2, cudaArray_t *a3, cudaMipmappedArray_t *am,
                                                  size_t took_bytes[3])
{
    cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
    size_t at = 0;
    took(&at);
    CHECK(cudaMallocArray(a2, &f4, 1024, 1024, 0));
    took_bytes[0] = took(&at);
    CHECK(cudaMalloc3DArray(a3, &f4, make_cudaExtent(128, 128, 64), 0));
    took_bytes[1] = took(&at);
    CHECK(cudaMallocMipmappedArray(am, &f4, make_cudaExtent(2048, 2048, 0), 8, 0));
    took_bytes[2] = took(&at);
}

// The driver's size for each description, asked of twins with deferred mapping.
static void requirements(int dev, size_t out[3])
{
    cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
    cudaArray_t a;
    cudaMipmappedArray_t m;
    cudaArrayMemoryRequirements r;
    CHECK(cudaMallocArray(&a, &f4, 1024, 1024, cudaArrayDeferredMapping));
    CHECK(cudaArrayGetMemoryRequirements(&r, a, dev));
    out[0] = r.size;
    CHECK(cudaFreeArray(a));
    CHECK(cudaMalloc3DArray(&a, &f4, make_cudaExtent(128, 128, 64), cudaArrayDeferredMapping));
    CHECK(cudaArrayGetMemoryRequirements(&r, a, dev));
    out[1] = r.size;
    CHECK(cudaFreeArray(a));
    CHECK(cudaMallocMipmappedArray(&m, &f4, make_cudaExtent(2048, 2048, 0), 8, cudaArrayDeferredMapping));
    CHECK(cudaMipmappedArrayGetMemoryRequirements(&r, m, dev));
    out[2] = r.size;
    CHECK(cudaFreeMipmappedArray(m));
}

int main(void)
{
    int dev = 0;
    CHECK(cudaSetDevice(dev));
    CHECK(cudaFree(0));
    dump("before");
    cudaArray_t a2, a3;
    cudaMipmappedArray_t am;
    size_t took_bytes[3], req[3];
    make_arrays(&a2, &a3, &am, took_bytes);
    requirements(dev, req);
    size_t host_bytes = 3u << 20;
    void *host = aligned_alloc(4096, host_bytes);
    CHECK(cudaHostRegister(host, host_bytes, cudaHostRegisterDefault));
    printf("truth {\"array2d\": %zu, \"array3d\": %zu, \"mipmapped\": %zu, \"host_registered\": %zu, "
           "\"took\": [%zu, %zu, %zu]}\n", req[0], req[1], req[2], host_bytes, took_bytes[0], took_bytes[1], took_bytes[2]);
    dump("live");
    CHECK(cudaFreeArray(a2));
    CHECK(cudaFreeArray(a3));
    CHECK(cudaFreeMipmappedArray(am));
    CHECK(cudaHostUnregister(host));
    free(host);
    dump("freed");
    return 0;
}
