/* Benchmark only: a CUDA driver that does nothing shared, for bench/threads.sh to tell what vramtrace
 * itself costs threads that allocate at once. The test rig's fake driver (tests/fake) keeps a registry
 * and a memory counter that every thread meets, so its own cost grows 15-fold from 1 to 16 threads and
 * hides ours. Here memory is malloc's (per-thread caches), nothing is registered, and every pointer is on
 * device 0. Only what bench_threads and the library's hooks on its path call. */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

static struct CUctx_st {
    int unused;
} stub_ctx;

CUresult cuInit(unsigned flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    *d = ordinal;
    return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    *c = &stub_ctx;
    return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuCtxSetCurrent(CUcontext c)
{
    (void)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *d)
{
    *d = 0;
    return CUDA_SUCCESS;
}

static CUresult stub_alloc(CUdeviceptr *p, size_t n)
{
    void *m = malloc(n);
    *p = (CUdeviceptr)(uintptr_t)m;
    return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    return stub_alloc(p, n);
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
    (void)s;
    return stub_alloc(p, n);
}

CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    (void)s;
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *out, CUpointer_attribute a, CUdeviceptr p)
{
    (void)p;
    if (a != CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
        return CUDA_ERROR_NOT_SUPPORTED;
    *(int *)out = 0;
    return CUDA_SUCCESS;
}
