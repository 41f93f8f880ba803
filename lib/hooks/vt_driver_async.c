/* Driver hooks for stream-ordered allocation: cuMemAllocAsync / FromPoolAsync / FreeAsync in their
 * legacy and per-thread-stream variants, and the pool lifecycle. No extra driver call is made here while
 * no stream capture is under way (the device of a default-pool allocation is asked at dump time); during
 * one, the capture's state is asked, as a captured call makes a graph node (vt_driver_graph.c). Called by
 * a stream-ordered runtime hook (vt_runtime.c), which records the call, they only pass it on. */
#include "vt_call.h"
#include "vt_driver_graph.h"
#include "vt_hot.h"
#include "vt_real.h"

typedef CUresult (*vt_alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*vt_alloc_pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*vt_free_async_fn)(CUdeviceptr, CUstream);

VT_HOT static CUresult vt_async_end(struct vt_call *c, CUresult r, CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
                             CUstream stream)
{
    /* Under stream capture the allocation is a node of the graph being captured: live from its launches. */
    if (r == CUDA_SUCCESS && VT_UNLIKELY(atomic_load_explicit(&vt_hotdata.graph_captures, memory_order_relaxed))) {
        vt_call_after(c);
        if (vt_graph_captured(stream, *dptr, size, c->stack,
                              pool ? vt_pool_device((uint64_t)(uintptr_t)pool) : -1, 0)) {
            vt_call_plain_end(c, 1);
            return r;
        }
    }
    struct vt_alloc a = {.addr = r == CUDA_SUCCESS ? *dptr : 0, .size = size, .kind = VT_KIND_ASYNC,
                         .x.async = {(uint64_t)(uintptr_t)stream, (uint64_t)(uintptr_t)pool},
                         .device = (int16_t)(pool ? vt_pool_device((uint64_t)(uintptr_t)pool) : -1)};
    vt_call_alloc_end(c, r == CUDA_SUCCESS, r == CUDA_ERROR_OUT_OF_MEMORY, (int)r, &a);
    return r;
}

VT_HOT static CUresult vt_alloc_async(enum vt_fn fn, CUdeviceptr *dptr, size_t size, CUstream stream)
{
    vt_alloc_async_fn real = (vt_alloc_async_fn)vt_real(fn);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (VT_LIKELY(vt_rt_async_depth))
        return real(dptr, size, stream);
    struct vt_call c;
    vt_call_alloc_begin(&c, fn);
    CUresult r = real(dptr, size, stream);
    return vt_async_end(&c, r, dptr, size, NULL, stream);
}

VT_HOT static CUresult vt_alloc_pool(enum vt_fn fn, CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream stream)
{
    vt_alloc_pool_fn real = (vt_alloc_pool_fn)vt_real(fn);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (VT_LIKELY(vt_rt_async_depth))
        return real(dptr, size, pool, stream);
    struct vt_call c;
    vt_call_alloc_begin(&c, fn);
    CUresult r = real(dptr, size, pool, stream);
    return vt_async_end(&c, r, dptr, size, pool, stream);
}

VT_HOT static CUresult vt_free_async(enum vt_fn fn, CUdeviceptr dptr, CUstream stream)
{
    vt_free_async_fn real = (vt_free_async_fn)vt_real(fn);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (VT_LIKELY(vt_rt_async_depth))
        return real(dptr, stream);
    struct vt_call c;
    vt_call_plain_begin(&c, fn);
    /* Under stream capture the free is a node of the graph: the memory stays live until a launch. */
    if (VT_UNLIKELY(atomic_load_explicit(&vt_hotdata.graph_captures, memory_order_relaxed)) &&
        vt_graph_captured(stream, dptr, 0, 0, -1, 1)) {
        CUresult r = real(dptr, stream);
        vt_call_plain_end(&c, r == CUDA_SUCCESS);
        return r;
    }
    vt_call_free_entry(&c, dptr, VT_KIND_ASYNC);
    CUresult r = real(dptr, stream);
    vt_call_free_end(&c, r == CUDA_SUCCESS);
    return r;
}

VT_HOT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    return vt_alloc_async(VT_FN_cuMemAllocAsync, dptr, size, stream);
}

VT_HOT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    return vt_alloc_async(VT_FN_cuMemAllocAsync_ptsz, dptr, size, stream);
}

VT_HOT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream stream)
{
    return vt_alloc_pool(VT_FN_cuMemAllocFromPoolAsync, dptr, size, pool, stream);
}

VT_HOT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream stream)
{
    return vt_alloc_pool(VT_FN_cuMemAllocFromPoolAsync_ptsz, dptr, size, pool, stream);
}

VT_HOT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    return vt_free_async(VT_FN_cuMemFreeAsync, dptr, stream);
}

VT_HOT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
    return vt_free_async(VT_FN_cuMemFreeAsync_ptsz, dptr, stream);
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    VT_REAL_OR(cuMemPoolCreate, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_plain_begin(&c, VT_FN_cuMemPoolCreate);
    CUresult r = real(pool, props);
    int dev = props && props->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? props->location.id : -1;
    vt_call_after(&c);
    if (r == CUDA_SUCCESS)
        vt_pool_add((uint64_t)(uintptr_t)*pool, dev);
    vt_call_plain_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    VT_REAL_OR(cuMemPoolDestroy, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_plain_begin(&c, VT_FN_cuMemPoolDestroy);
    CUresult r = real(pool);
    vt_call_after(&c);
    if (r == CUDA_SUCCESS)
        vt_pool_remove((uint64_t)(uintptr_t)pool);
    vt_call_plain_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    VT_REAL_OR(cuMemPoolTrimTo, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_plain_begin(&c, VT_FN_cuMemPoolTrimTo);
    CUresult r = real(pool, keep);
    vt_call_plain_end(&c, r == CUDA_SUCCESS);
    return r;
}
