/* Driver hooks for memory this process maps but does not own: another process's allocations opened
 * by IPC handle or imported from its pool, and external memory (another API's allocation) with the
 * buffers mapped from it. Shown in reports, never counted as this process's reserved memory; the
 * imported pointers' frees (cuIpcCloseMemHandle, cuMemFree, cuMemFreeAsync) find them as any other. */
#include "vt_call.h"
#include "vt_real.h"

/* The bytes of the range that starts at ptr, as the driver says; 0 when it cannot say. */
static uint64_t vt_range_bytes(CUdeviceptr ptr)
{
    CUdeviceptr base;
    size_t size;
    __typeof__(cuMemGetAddressRange_v2) *q = VT_REAL(cuMemGetAddressRange_v2);
    return q && q(&base, &size, ptr) == CUDA_SUCCESS ? (uint64_t)size : 0;
}

static CUresult vt_import_end(struct vt_call *c, CUresult r, uint64_t addr, uint64_t size, enum vt_kind kind,
                              int device)
{
    struct vt_alloc a = {.addr = addr, .size = size, .kind = (uint8_t)kind, .device = (int16_t)device};
    vt_call_alloc_end(c, r == CUDA_SUCCESS, r == CUDA_ERROR_OUT_OF_MEMORY, (int)r, &a);
    return r;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *ptr, CUipcMemHandle handle, unsigned int flags)
{
    VT_REAL_OR(cuIpcOpenMemHandle_v2, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuIpcOpenMemHandle_v2);
    CUresult r = real(ptr, handle, flags);
    vt_call_after(&c);
    int ok = r == CUDA_SUCCESS;
    return vt_import_end(&c, r, ok ? *ptr : 0, ok ? vt_range_bytes(*ptr) : 0, VT_KIND_IMPORTED, VT_DEVICE_FROM_PTR);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr ptr)
{
    VT_REAL_OR(cuIpcCloseMemHandle, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_free_begin(&c, VT_FN_cuIpcCloseMemHandle, ptr, VT_KIND_IMPORTED);
    CUresult r = real(ptr);
    vt_call_free_end(&c, r == CUDA_SUCCESS);
    return r;
}

CUresult cuMemPoolImportPointer(CUdeviceptr *ptr, CUmemoryPool pool, CUmemPoolPtrExportData *data)
{
    VT_REAL_OR(cuMemPoolImportPointer, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuMemPoolImportPointer);
    CUresult r = real(ptr, pool, data);
    vt_call_after(&c);
    int ok = r == CUDA_SUCCESS;
    return vt_import_end(&c, r, ok ? *ptr : 0, ok ? vt_range_bytes(*ptr) : 0, VT_KIND_IMPORTED, VT_DEVICE_FROM_PTR);
}

CUresult cuImportExternalMemory(CUexternalMemory *ext, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *desc)
{
    VT_REAL_OR(cuImportExternalMemory, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuImportExternalMemory);
    CUresult r = real(ext, desc);
    int ok = r == CUDA_SUCCESS;
    return vt_import_end(&c, r, ok ? (uint64_t)(uintptr_t)*ext : 0, ok && desc ? desc->size : 0, VT_KIND_EXTERNAL, -1);
}

CUresult cuExternalMemoryGetMappedBuffer(CUdeviceptr *ptr, CUexternalMemory ext, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *desc)
{
    VT_REAL_OR(cuExternalMemoryGetMappedBuffer, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_alloc_begin(&c, VT_FN_cuExternalMemoryGetMappedBuffer);
    CUresult r = real(ptr, ext, desc);
    int ok = r == CUDA_SUCCESS;
    return vt_import_end(&c, r, ok ? *ptr : 0, ok && desc ? desc->size : 0, VT_KIND_IMPORTED, VT_DEVICE_FROM_PTR);
}

CUresult cuDestroyExternalMemory(CUexternalMemory ext)
{
    VT_REAL_OR(cuDestroyExternalMemory, CUDA_ERROR_NOT_INITIALIZED);
    struct vt_call c;
    vt_call_free_begin(&c, VT_FN_cuDestroyExternalMemory, (uint64_t)(uintptr_t)ext, VT_KIND_EXTERNAL);
    CUresult r = real(ext);
    vt_call_free_end(&c, r == CUDA_SUCCESS);
    return r;
}
