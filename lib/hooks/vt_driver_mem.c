/* Driver hooks for plain allocations: device (cuMemAlloc, cuMemAllocPitch), managed, pinned host,
 * and their frees. One table for all of them: cuMemFree also frees stream-ordered pointers. */
#include "vt_call.h"
#include "vt_real.h"

static CUresult vt_alloc_end(struct vt_call *c, CUresult r, uint64_t addr, uint64_t size, enum vt_kind kind)
{
    struct vt_alloc a = {.addr = addr, .size = size, .kind = (uint16_t)kind,
                         .device = kind == VT_KIND_HOST ? -1 : VT_DEVICE_FROM_PTR};
    vt_call_alloc_end(c, r == CUDA_SUCCESS, r == CUDA_ERROR_OUT_OF_MEMORY, (int)r, &a);
    return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    VT_REAL_OR(cuMemAlloc_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemAlloc_v2);
    CUresult r = real(dptr, bytesize);
    return vt_alloc_end(&c, r, r == CUDA_SUCCESS ? *dptr : 0, bytesize, VT_KIND_DEVICE);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
    VT_REAL_OR(cuMemAllocPitch_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemAllocPitch_v2);
    CUresult r = real(dptr, pitch, width, height, elem);
    int ok = r == CUDA_SUCCESS;
    return vt_alloc_end(&c, r, ok ? *dptr : 0, ok ? (uint64_t)*pitch * height : (uint64_t)width * height,
                        VT_KIND_DEVICE);
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    VT_REAL_OR(cuMemAllocManaged, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemAllocManaged);
    CUresult r = real(dptr, bytesize, flags);
    return vt_alloc_end(&c, r, r == CUDA_SUCCESS ? *dptr : 0, bytesize, VT_KIND_MANAGED);
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    VT_REAL_OR(cuMemAllocHost_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemAllocHost_v2);
    CUresult r = real(pp, bytesize);
    return vt_alloc_end(&c, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*pp : 0, bytesize, VT_KIND_HOST);
}

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    VT_REAL_OR(cuMemHostAlloc, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemHostAlloc);
    CUresult r = real(pp, bytesize, flags);
    return vt_alloc_end(&c, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*pp : 0, bytesize, VT_KIND_HOST);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    VT_REAL_OR(cuMemFree_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_free_begin(&c, VT_FN_cuMemFree_v2, dptr, VT_KIND_DEVICE);
    CUresult r = real(dptr);
    vt_call_free_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuMemFreeHost(void *p)
{
    VT_REAL_OR(cuMemFreeHost, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_free_begin(&c, VT_FN_cuMemFreeHost, (uint64_t)(uintptr_t)p, VT_KIND_HOST);
    CUresult r = real(p);
    vt_call_free_end(&c, r == CUDA_SUCCESS);
    return r;
}
