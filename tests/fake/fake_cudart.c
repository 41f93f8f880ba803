/* The fake CUDA runtime, built both as build/fake/libcudart.so.13 and as libcudart_static.a. Like
 * the real cudart it reaches the driver only through dlopen("libcuda.so.1") + dlsym of
 * cuGetProcAddress_v2, then cuGetProcAddress for every entry point (cuGetProcAddress itself included),
 * asking for both the legacy and the per-thread-stream variants. Linked statically, its cudaMalloc is
 * the program's own, out of reach of symbol interposition, exactly as with nvcc's default. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t size, cudaMemPool_t pool, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t stream);

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static struct {
    gpa_fn gpa;
    CUresult (*init)(unsigned int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_alloc_pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
    CUresult (*mem_alloc_managed)(CUdeviceptr *, size_t, unsigned int);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*host_alloc)(void **, size_t, unsigned int);
    CUresult (*free_host)(void *);
    CUresult (*get_info)(size_t *, size_t *);
    CUresult (*alloc_async[2])(CUdeviceptr *, size_t, CUstream);
    CUresult (*alloc_pool[2])(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    CUresult (*free_async[2])(CUdeviceptr, CUstream);
    int ok;
} drv;

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static __thread int rt_device;
static __thread int rt_bound = -1;

static int rt_get(const char *name, void *slot, cuuint64_t flags)
{
    CUdriverProcAddressQueryResult st;
    return drv.gpa(name, (void **)slot, 13000, flags, &st) == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS;
}

static void rt_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    gpa_fn boot = (gpa_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!boot)
        return;
    /* The real cudart re-fetches cuGetProcAddress through itself and uses that from then on. */
    CUdriverProcAddressQueryResult st;
    if (boot("cuGetProcAddress", (void **)&drv.gpa, 12000, 0, &st) != CUDA_SUCCESS || !drv.gpa)
        return;
    int ok = rt_get("cuInit", &drv.init, 0) && rt_get("cuDevicePrimaryCtxRetain", &drv.retain, 0) &&
             rt_get("cuCtxSetCurrent", &drv.set_current, 0) && rt_get("cuMemAlloc", &drv.mem_alloc, 0) &&
             rt_get("cuMemAllocPitch", &drv.mem_alloc_pitch, 0) &&
             rt_get("cuMemAllocManaged", &drv.mem_alloc_managed, 0) && rt_get("cuMemFree", &drv.mem_free, 0) &&
             rt_get("cuMemHostAlloc", &drv.host_alloc, 0) && rt_get("cuMemFreeHost", &drv.free_host, 0) &&
             rt_get("cuMemGetInfo", &drv.get_info, 0);
    for (int v = 0; v < 2; v++) {
        cuuint64_t fl = v ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
        ok = ok && rt_get("cuMemAllocAsync", &drv.alloc_async[v], fl) &&
             rt_get("cuMemAllocFromPoolAsync", &drv.alloc_pool[v], fl) &&
             rt_get("cuMemFreeAsync", &drv.free_async[v], fl);
    }
    drv.ok = ok && drv.init(0) == CUDA_SUCCESS;
}

static cudaError_t rt_error(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    default: return cudaErrorInvalidValue;
    }
}

/* Every call runs on the primary context of the thread's device, made current lazily. */
static cudaError_t rt_ready(void)
{
    pthread_once(&rt_once, rt_load);
    if (!drv.ok)
        return cudaErrorInitializationError;
    if (rt_bound != rt_device) {
        CUcontext ctx;
        CUresult r = drv.retain(&ctx, rt_device);
        if (r == CUDA_SUCCESS)
            r = drv.set_current(ctx);
        if (r != CUDA_SUCCESS)
            return rt_error(r);
        rt_bound = rt_device;
    }
    return cudaSuccess;
}

#define RT_READY()                      \
    do {                                \
        cudaError_t e_ = rt_ready();    \
        if (e_ != cudaSuccess)          \
            return e_;                  \
    } while (0)

cudaError_t cudaSetDevice(int device)
{
    rt_device = device;
    return rt_ready();
}

cudaError_t cudaGetDevice(int *device)
{
    *device = rt_device;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t size)
{
    RT_READY();
    return rt_error(drv.mem_alloc((CUdeviceptr *)p, size));
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    RT_READY();
    return rt_error(drv.mem_alloc_pitch((CUdeviceptr *)p, pitch, width, height, 4));
}

cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
    RT_READY();
    return rt_error(drv.mem_alloc_managed((CUdeviceptr *)p, size, flags ? flags : CU_MEM_ATTACH_GLOBAL));
}

cudaError_t cudaFree(void *p)
{
    RT_READY();
    return p ? rt_error(drv.mem_free((CUdeviceptr)p)) : cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    RT_READY();
    return rt_error(drv.host_alloc(p, size, flags));
}

cudaError_t cudaMallocHost(void **p, size_t size)
{
    return cudaHostAlloc(p, size, 0);
}

cudaError_t cudaFreeHost(void *p)
{
    RT_READY();
    return rt_error(drv.free_host(p));
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    RT_READY();
    return rt_error(drv.get_info(free_bytes, total));
}

static cudaError_t rt_alloc_async(int v, void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
    RT_READY();
    if (pool)
        return rt_error(drv.alloc_pool[v]((CUdeviceptr *)p, size, (CUmemoryPool)pool, (CUstream)s));
    return rt_error(drv.alloc_async[v]((CUdeviceptr *)p, size, (CUstream)s));
}

static cudaError_t rt_free_async(int v, void *p, cudaStream_t s)
{
    RT_READY();
    return rt_error(drv.free_async[v]((CUdeviceptr)p, (CUstream)s));
}

cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
    return rt_alloc_async(0, p, size, NULL, s);
}

cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t s)
{
    return rt_alloc_async(1, p, size, NULL, s);
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
    return rt_alloc_async(0, p, size, pool, s);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
    return rt_alloc_async(1, p, size, pool, s);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    return rt_free_async(0, p, s);
}

cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
    return rt_free_async(1, p, s);
}
