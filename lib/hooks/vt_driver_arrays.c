/* Driver hooks for CUDA arrays and mipmapped arrays (device memory behind a handle, sized by the
 * driver's own requirement query) and for host memory the program pins itself by registration. */
#include "vt_call.h"
#include "vt_real.h"

/* The bytes of an array's elements over its mip levels (0 for a format of blocks or planes). */
static uint64_t vt_array_elements(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
    uint64_t b;
    switch (d->Format) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: b = 1; break;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: b = 2; break;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: b = 4; break;
    default: return 0;
    }
    uint64_t total = 0;
    for (unsigned l = 0; l < (levels ? levels : 1); l++) {
        uint64_t w = d->Width >> l, h = d->Height >> l, z = d->Depth >> l;
        total += (w ? w : 1) * (d->Height ? (h ? h : 1) : 1) * (d->Depth ? (z ? z : 1) : 1);
    }
    return total * b * (d->NumChannels ? d->NumChannels : 1);
}

/* The bytes an array of this description takes on the current context's device, as the driver says.
 * Its requirement query answers only for arrays made with deferred mapping (H200, driver 580: "invalid
 * argument" for any other), so the driver is asked about a twin made so, which takes no memory, and the
 * twin destroyed at once. Where it cannot say (a driver before 11.6, a description it will not defer),
 * the elements' own bytes, which the array takes at least (vt_array_elements). */
static uint64_t vt_array_bytes(const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels, int *device)
{
    CUdevice dev;
    CUDA_ARRAY_MEMORY_REQUIREMENTS req;
    __typeof__(cuCtxGetDevice) *get_dev = VT_REAL(cuCtxGetDevice);
    *device = -1;
    if (!get_dev || get_dev(&dev) != CUDA_SUCCESS)
        return 0;
    *device = (int)dev;
    CUDA_ARRAY3D_DESCRIPTOR twin = *desc;
    twin.Flags |= CUDA_ARRAY3D_DEFERRED_MAPPING;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (levels) {
        __typeof__(cuMipmappedArrayCreate) *make = VT_REAL(cuMipmappedArrayCreate);
        __typeof__(cuMipmappedArrayGetMemoryRequirements) *q = VT_REAL(cuMipmappedArrayGetMemoryRequirements);
        __typeof__(cuMipmappedArrayDestroy) *destroy = VT_REAL(cuMipmappedArrayDestroy);
        CUmipmappedArray m;
        if (make && q && destroy && make(&m, &twin, levels) == CUDA_SUCCESS) {
            r = q(&req, m, dev);
            destroy(m);
        }
    } else {
        __typeof__(cuArray3DCreate_v2) *make = VT_REAL(cuArray3DCreate_v2);
        __typeof__(cuArrayGetMemoryRequirements) *q = VT_REAL(cuArrayGetMemoryRequirements);
        __typeof__(cuArrayDestroy) *destroy = VT_REAL(cuArrayDestroy);
        CUarray a;
        if (make && q && destroy && make(&a, &twin) == CUDA_SUCCESS) {
            r = q(&req, a, dev);
            destroy(a);
        }
    }
    return r == CUDA_SUCCESS ? (uint64_t)req.size : vt_array_elements(desc, levels);
}

static CUresult vt_array_end(struct vt_call *c, CUresult r, uint64_t handle, const CUDA_ARRAY3D_DESCRIPTOR *desc,
                             unsigned levels)
{
    vt_call_after(c);
    int dev = -1;
    uint64_t size = r == CUDA_SUCCESS ? vt_array_bytes(desc, levels, &dev) : 0;
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
    CUDA_ARRAY3D_DESCRIPTOR d3 = {0};
    if (r == CUDA_SUCCESS) {
        d3.Width = desc->Width;
        d3.Height = desc->Height;
        d3.Format = desc->Format;
        d3.NumChannels = desc->NumChannels;
    }
    return vt_array_end(&c, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*arr : 0, &d3, 0);
}

CUresult cuArray3DCreate_v2(CUarray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    VT_REAL_OR(cuArray3DCreate_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuArray3DCreate_v2);
    CUresult r = real(arr, desc);
    return vt_array_end(&c, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*arr : 0, desc, 0);
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels)
{
    VT_REAL_OR(cuMipmappedArrayCreate, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMipmappedArrayCreate);
    CUresult r = real(arr, desc, levels);
    return vt_array_end(&c, r, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*arr : 0, desc, levels ? levels : 1);
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
