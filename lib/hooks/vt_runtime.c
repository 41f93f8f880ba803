/* Runtime hooks (cudaMalloc family). They record nothing themselves when the driver call they cause
 * reaches our driver hooks (it is then recorded once, labelled with the runtime name and the user's
 * stack); only a runtime whose driver calls we cannot see is recorded here, from the result. The
 * stream-ordered ones are the exception: they record every call themselves (vt_rt_async). */
#include <cuda_runtime_api.h>

#include "vt_call.h"
#include "vt_driver_graph.h"
#include "vt_hot.h"
#include "vt_real.h"

VT_HOT cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t stream);
VT_HOT cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t size, cudaMemPool_t pool, cudaStream_t stream);
VT_HOT cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t stream);

VT_HOT static cudaError_t vt_rt_alloc_done(struct vt_call *c, cudaError_t r, void **p, uint64_t size, enum vt_kind kind,
                                    uint64_t pool, uint64_t stream)
{
    vt_call_after(c);
    if (!vt_call_nested_seen(c)) {
        struct vt_alloc a = {.addr = r == cudaSuccess ? (uint64_t)(uintptr_t)*p : 0, .size = size,
                             .kind = (uint8_t)kind, .x.async = {stream, pool},
                             .device = kind == VT_KIND_HOST || kind == VT_KIND_ASYNC ? -1 : VT_DEVICE_FROM_PTR};
        vt_call_record_alloc(c, r == cudaSuccess, r == cudaErrorMemoryAllocation, (int)r, &a);
    }
    vt_call_runtime_end(c);
    return r;
}

VT_HOT static cudaError_t vt_rt_free_done(struct vt_call *c, cudaError_t r, void *p)
{
    vt_call_after(c);
    if (!vt_call_nested_seen(c)) {
        struct vt_alloc copy;
        const struct vt_alloc *taken = NULL;
        uint64_t addr = (uint64_t)(uintptr_t)p;
        int ours = r == cudaSuccess && vt_call_free_take(addr, VT_KIND_DEVICE, &copy, &taken);
        vt_call_free_done(c, r == cudaSuccess, addr, ours, taken);
    }
    vt_call_runtime_end(c);
    return r;
}

#define VT_RT_REAL(n)                             \
    VT_REAL_OR(n, cudaErrorInitializationError); \
    struct vt_call c

VT_HOT cudaError_t cudaMalloc(void **p, size_t size)
{
    VT_RT_REAL(cudaMalloc);
    vt_call_runtime_begin(&c, VT_FN_cudaMalloc, 1);
    return vt_rt_alloc_done(&c, real(p, size), p, size, VT_KIND_DEVICE, 0, 0);
}

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    VT_RT_REAL(cudaMallocPitch);
    vt_call_runtime_begin(&c, VT_FN_cudaMallocPitch, 1);
    cudaError_t r = real(p, pitch, width, height);
    return vt_rt_alloc_done(&c, r, p, r == cudaSuccess ? (uint64_t)*pitch * height : 0, VT_KIND_DEVICE, 0, 0);
}

cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
    VT_RT_REAL(cudaMallocManaged);
    vt_call_runtime_begin(&c, VT_FN_cudaMallocManaged, 1);
    return vt_rt_alloc_done(&c, real(p, size, flags), p, size, VT_KIND_MANAGED, 0, 0);
}

cudaError_t cudaMallocHost(void **p, size_t size)
{
    VT_RT_REAL(cudaMallocHost);
    vt_call_runtime_begin(&c, VT_FN_cudaMallocHost, 1);
    return vt_rt_alloc_done(&c, real(p, size), p, size, VT_KIND_HOST, 0, 0);
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    VT_RT_REAL(cudaHostAlloc);
    vt_call_runtime_begin(&c, VT_FN_cudaHostAlloc, 1);
    return vt_rt_alloc_done(&c, real(p, size, flags), p, size, VT_KIND_HOST, 0, 0);
}

/* Stream-ordered calls are recorded here whether or not the driver call they cause reaches our driver
 * hooks, which pass it on untouched meanwhile (vt_rt_async_depth): what the driver hook would record
 * (the pointer, size, stream, pool, and under stream capture a graph node) the runtime call has too.
 * The stack is taken after the real call, whose time in the runtime and the driver covers the wait for
 * the lines it reads, asked for before it (vt_call_prefetch). */
VT_HOT static cudaError_t vt_rt_async(enum vt_fn fn, void **p, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
    struct vt_call c;
    cudaError_t r;
    void *real = vt_real(fn);
    if (!real)
        return cudaErrorInitializationError;
    vt_call_plain_begin(&c, fn);
    vt_call_prefetch();
    vt_rt_async_depth++;
    if (pool)
        r = ((__typeof__(cudaMallocFromPoolAsync) *)real)(p, size, pool, stream);
    else
        r = ((__typeof__(cudaMallocAsync) *)real)(p, size, stream);
    vt_rt_async_depth--;
    vt_call_after(&c);
    uint64_t addr = r == cudaSuccess ? (uint64_t)(uintptr_t)*p : 0;
    vt_table_prefetch(addr, VT_KIND_ASYNC);
    vt_call_capture_after(&c);
    int device = pool ? vt_pool_device((uint64_t)(uintptr_t)pool) : -1;
    if (r == cudaSuccess && VT_UNLIKELY(atomic_load_explicit(&vt_hotdata.graph_captures, memory_order_relaxed)) &&
        vt_graph_captured((CUstream)stream, addr, size, c.stack, device, 0)) {
        /* A node of the graph being captured: live from its launches. */
        vt_count_call(c.api);
    } else {
        struct vt_alloc a = {.addr = addr, .size = size, .kind = VT_KIND_ASYNC,
                             .x.async = {(uint64_t)(uintptr_t)stream, (uint64_t)(uintptr_t)pool},
                             .device = (int16_t)device};
        vt_call_record_alloc(&c, r == cudaSuccess, r == cudaErrorMemoryAllocation, (int)r, &a);
    }
    vt_call_end(&c);
    return r;
}

VT_HOT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream)
{
    return vt_rt_async(VT_FN_cudaMallocAsync, p, size, NULL, stream);
}

cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t stream)
{
    return vt_rt_async(VT_FN_cudaMallocAsync_ptsz, p, size, NULL, stream);
}

VT_HOT cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
    return vt_rt_async(VT_FN_cudaMallocFromPoolAsync, p, size, pool, stream);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
    return vt_rt_async(VT_FN_cudaMallocFromPoolAsync_ptsz, p, size, pool, stream);
}

VT_HOT cudaError_t cudaFree(void *p)
{
    VT_RT_REAL(cudaFree);
    vt_call_runtime_begin(&c, VT_FN_cudaFree, 0);
    return vt_rt_free_done(&c, real(p), p);
}

cudaError_t cudaFreeHost(void *p)
{
    VT_RT_REAL(cudaFreeHost);
    vt_call_runtime_begin(&c, VT_FN_cudaFreeHost, 0);
    return vt_rt_free_done(&c, real(p), p);
}

/* As vt_rt_async: the entry is taken out before the real call (its address may be handed out again the
 * moment the free is queued), unless the free is a node of a graph being captured. */
VT_HOT static cudaError_t vt_rt_free_async(enum vt_fn fn, void *p, cudaStream_t stream)
{
    struct vt_call c;
    __typeof__(cudaFreeAsync) *real = (__typeof__(cudaFreeAsync) *)vt_real(fn);
    if (!real)
        return cudaErrorInitializationError;
    uint64_t addr = (uint64_t)(uintptr_t)p;
    vt_table_prefetch(addr, VT_KIND_ASYNC);
    vt_call_plain_begin(&c, fn);
    int captured = VT_UNLIKELY(atomic_load_explicit(&vt_hotdata.graph_captures, memory_order_relaxed)) &&
                   vt_graph_captured((CUstream)stream, addr, 0, 0, -1, 1);
    if (!captured)
        vt_call_free_entry(&c, addr, VT_KIND_ASYNC);
    vt_rt_async_depth++;
    cudaError_t r = real(p, stream);
    vt_rt_async_depth--;
    vt_call_after(&c);
    if (!captured)
        vt_call_free_done(&c, r == cudaSuccess, addr, c.free_ours, c.taken_at);
    else if (r == cudaSuccess)
        vt_count_call(c.api);
    else
        vt_count_failure(c.api);
    vt_call_end(&c);
    return r;
}

VT_HOT cudaError_t cudaFreeAsync(void *p, cudaStream_t stream)
{
    return vt_rt_free_async(VT_FN_cudaFreeAsync, p, stream);
}

cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t stream)
{
    return vt_rt_free_async(VT_FN_cudaFreeAsync_ptsz, p, stream);
}
