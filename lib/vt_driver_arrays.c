/* Driver hooks for CUDA arrays and mipmapped arrays (device memory behind a handle, sized by the
 * driver's own requirement query) and for host memory the program pins itself by registration. */
#include "vt_call.h"
#include "vt_real.h"

/* The bytes an array takes on the current context's device, as the driver says; 0 when it cannot say
 * (a driver before 11.6 has no requirement query). */
static uint64_t vt_array_bytes(uint64_t handle, int mipmapped, int *device)
{
    CUdevice dev;
    CUDA_ARRAY_MEMORY_REQUIREMENTS req;
    __typeof__(cuCtxGetDevice) *get_dev = VT_REAL(cuCtxGetDevice);
    *device = -1;
    if (!get_dev || get_dev(&dev) != CUDA_SUCCESS)
        return 0;
    *device = (int)dev;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (mipmapped) {
        __typeof__(cuMipmappedArrayGetMemoryRequirements) *q = VT_REAL(cuMipmappedArrayGetMemoryRequirements);
        if (q)
            r = q(&req, (CUmipmappedArray)(uintptr_t)handle, dev);
    } else {
        __typeof__(cuArrayGetMemoryRequirements) *q = VT_REAL(cuArrayGetMemoryRequirements);
        if (q)
            r = q(&req, (CUarray)(uintptr_t)handle, dev);
    }
    return r == CUDA_SUCCESS ? (uint64_t)req.size : 0;
}

static CUresult vt_array_end(struct vt_call *c, CUresult r, uint64_t handle, int mipmapped)
{
    vt_call_after(c);
    int dev = -1;
    uint64_t size = r == CUDA_SUCCESS ? vt_array_bytes(handle, mipmapped, &dev) : 0;
    struct vt_alloc a = {.addr = handle, .size = size, .kind = VT_KIND_ARRAY, .device = (int16_t)dev};
    vt_call_alloc_end(c, r == CUDA_SUCCESS, r == CUDA_ERROR_OUT_OF_MEMORY, (int)r, &a);
    return r;
}

CUresult cuArrayCreate_v2(CUarray *arr, const CUDA_ARRAY_DESCRIPTOR *desc)
{
    VT_REAL_OR(cuArrayCreate_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuArrayCreate_v2);
    CUresult r = real(arr, desc);
    return vt_array_end(&c, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*arr : 0, 0);
}

CUresult cuArray3DCreate_v2(CUarray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    VT_REAL_OR(cuArray3DCreate_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuArray3DCreate_v2);
    CUresult r = real(arr, desc);
    return vt_array_end(&c, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*arr : 0, 0);
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels)
{
    VT_REAL_OR(cuMipmappedArrayCreate, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMipmappedArrayCreate);
    CUresult r = real(arr, desc, levels);
    return vt_array_end(&c, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*arr : 0, 1);
}

static CUresult vt_array_free(enum vt_fn fn, CUresult (*real)(void *), void *handle)
{
    struct vt_call c;
    vt_call_free_begin(&c, fn, (uint64_t)(uintptr_t)handle, VT_KIND_ARRAY);
    CUresult r = real(handle);
    vt_call_free_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuArrayDestroy(CUarray arr)
{
    VT_REAL_OR(cuArrayDestroy, CUDA_ERROR_NOT_INITIALIZED);
    return vt_array_free(VT_FN_cuArrayDestroy, (CUresult(*)(void *))real, arr);
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray arr)
{
    VT_REAL_OR(cuMipmappedArrayDestroy, CUDA_ERROR_NOT_INITIALIZED);
    return vt_array_free(VT_FN_cuMipmappedArrayDestroy, (CUresult(*)(void *))real, arr);
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags)
{
    VT_REAL_OR(cuMemHostRegister_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemHostRegister_v2);
    CUresult r = real(p, bytesize, flags);
    struct vt_alloc a = {.addr = r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)p : 0, .size = bytesize,
                         .kind = VT_KIND_HOST_REG, .device = -1};
    vt_call_alloc_end(&c, r == CUDA_SUCCESS, r == CUDA_ERROR_OUT_OF_MEMORY, (int)r, &a);
    return r;
}

CUresult cuMemHostUnregister(void *p)
{
    VT_REAL_OR(cuMemHostUnregister, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_free_begin(&c, VT_FN_cuMemHostUnregister, (uint64_t)(uintptr_t)p, VT_KIND_HOST_REG);
    CUresult r = real(p);
    vt_call_free_end(&c, r == CUDA_SUCCESS);
    return r;
}
