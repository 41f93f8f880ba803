/* cuGetProcAddress in both forms. The real lookup runs with the caller's exact symbol, version and
 * flags; the pointer it returns is then swapped for our wrapper of that exact variant. A pointer we
 * do not wrap passes through untouched and is counted, by name when it concerns memory. */
#include <errno.h>
#include <string.h>

#include "vt_real.h"
#include "vt_table.h"

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

/* Entry points that take or give back memory (not those that only copy, set or query): the ones a
 * report must name when they are not watched. Not named: trimming graph memory and mapping memory into
 * sparse arrays, which change nothing the table holds (graph figures are read at each dump; the memory
 * behind an array mapping is a physical handle, counted where it was made). */
static int vt_memory_related(const char *name)
{
    if (!strcmp(name, "cuDeviceGraphMemTrim") || !strncmp(name, "cuMemMapArrayAsync", 18))
        return 0;
    static const char *const prefixes[] = {
        "cuMemAlloc", "cuMemFree", "cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap", "cuMemAddress",
        "cuMemHostAlloc", "cuMemHostRegister", "cuMemRetain", "cuMemImport", "cuMemPoolCreate",
        "cuMemPoolDestroy", "cuMemPoolTrim", "cuMemPoolImportPointer", "cuArrayCreate", "cuArray3DCreate",
        "cuArrayDestroy", "cuMipmappedArrayCreate", "cuMipmappedArrayDestroy", "cuGraphAddMemAllocNode",
        "cuGraphAddMemFreeNode", "cuMulticastCreate",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

static void vt_route_result(const char *symbol, void **pfn)
{
    int saved = errno;
    void *w = vt_route_pointer(*pfn);
    if (w)
        *pfn = w;
    else
        vt_count_unwatched(vt_memory_related(symbol) ? symbol : "");
    errno = saved;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    __typeof__(cuGetProcAddress) *real = (__typeof__(cuGetProcAddress) *)vt_real(VT_FN_cuGetProcAddress);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS && symbol && pfn && *pfn)
        vt_route_result(symbol, pfn);
    return r;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    __typeof__(cuGetProcAddress_v2) *real = VT_REAL(cuGetProcAddress_v2);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, cudaVersion, flags, status);
    if (r == CUDA_SUCCESS && symbol && pfn && *pfn)
        vt_route_result(symbol, pfn);
    return r;
}
