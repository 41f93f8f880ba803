/* Driver hooks for virtual memory management. Physical memory is a handle that lives while it has a
 * reference (cuMemCreate, each cuMemRetainAllocationHandle) or a mapping; address reservations are
 * address space only. State changes are made before the real call and undone if it fails, so a
 * handle or address reused by another thread at once is never confused with the old one. */
#include "vt_call.h"
#include "vt_real.h"

#define VT_UNMAP_BATCH 64

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    VT_REAL_OR(cuMemCreate, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemCreate);
    CUresult r = real(handle, size, prop, flags);
    vt_call_after(&c);
    int on_device = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
    int loc = prop ? prop->location.id : -1;
    if (r == CUDA_SUCCESS) {
        struct vt_phys p = {.handle = *handle, .size = size, .stack = c.stack, .device = loc, .refs = 1,
                            .kind = on_device ? VT_KIND_PHYS : VT_KIND_PHYS_HOST, .api = (uint16_t)c.api};
        vt_phys_add(&p);
    } else {
        struct vt_alloc a = {.size = size, .device = on_device ? loc : -1};
        vt_call_record_alloc(&c, 0, r == CUDA_ERROR_OUT_OF_MEMORY, (int)r, &a);
    }
    vt_call_end(&c);
    return r;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    VT_REAL_OR(cuMemRelease, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_plain_begin(&c, VT_FN_cuMemRelease);
    struct vt_phys dead;
    int st = vt_phys_adjust(handle, -1, 0, &dead);
    CUresult r = real(handle);
    vt_call_after(&c);
    if (st < 0)
        vt_count_unknown_free();
    else if (r != CUDA_SUCCESS)
        vt_phys_undo(handle, -1, 0, st == 1 ? &dead : NULL);
    vt_call_plain_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    VT_REAL_OR(cuMemRetainAllocationHandle, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_plain_begin(&c, VT_FN_cuMemRetainAllocationHandle);
    CUresult r = real(handle, addr);
    vt_call_after(&c);
    struct vt_phys unused;
    if (r == CUDA_SUCCESS && vt_phys_adjust(*handle, +1, 0, &unused) < 0)
        vt_count_unknown_free();
    vt_call_plain_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    VT_REAL_OR(cuMemMap, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemMap);
    CUresult r = real(ptr, size, offset, handle, flags);
    struct vt_alloc a = {.addr = ptr, .size = size, .kind = VT_KIND_VMM_MAP, .x.map = {handle, offset},
                         .device = -1};
    struct vt_phys unused;
    vt_call_after(&c);
    if (r == CUDA_SUCCESS)
        vt_phys_adjust(handle, 0, +1, &unused);
    vt_call_alloc_end(&c, r == CUDA_SUCCESS, 0, (int)r, &a);
    return r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    VT_REAL_OR(cuMemUnmap, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_plain_begin(&c, VT_FN_cuMemUnmap);
    struct vt_alloc maps[VT_UNMAP_BATCH];
    struct vt_phys dead[VT_UNMAP_BATCH];
    int died[VT_UNMAP_BATCH];
    size_t total;
    size_t n = vt_table_remove_maps(ptr, size, maps, VT_UNMAP_BATCH, &total);
    for (size_t i = 0; i < n; i++)
        died[i] = vt_phys_adjust(maps[i].x.map.handle, 0, -1, &dead[i]);
    CUresult r = real(ptr, size);
    vt_call_after(&c);
    if (total > n)
        vt_count_dropped(); /* more mappings in one call than we keep copies of */
    for (size_t i = 0; r != CUDA_SUCCESS && i < n; i++) {
        vt_table_restore(&maps[i]);
        if (died[i] >= 0)
            vt_phys_undo(maps[i].x.map.handle, 0, -1, died[i] == 1 ? &dead[i] : NULL);
    }
    vt_call_plain_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    VT_REAL_OR(cuMemAddressReserve, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemAddressReserve);
    CUresult r = real(ptr, size, alignment, addr, flags);
    struct vt_alloc a = {.addr = r == CUDA_SUCCESS ? *ptr : 0, .size = size, .kind = VT_KIND_VA, .device = -1};
    vt_call_alloc_end(&c, r == CUDA_SUCCESS, 0, (int)r, &a);
    return r;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    VT_REAL_OR(cuMemAddressFree, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_free_begin(&c, VT_FN_cuMemAddressFree, ptr, VT_KIND_VA);
    CUresult r = real(ptr, size);
    vt_call_free_end(&c, r == CUDA_SUCCESS);
    return r;
}
