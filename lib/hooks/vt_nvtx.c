/* NVTX's memory extension (nvToolsExtMem.h), the calls pools already make to describe themselves to
 * compute-sanitizer: heaps (a pool's segments) and regions (its blocks), understood with no change to
 * the pool. NVTX finds its tool through NVTX_INJECTION64_PATH (`vramtrace run` points it here when it is
 * not set already) and hands the memory module to InitializeInjectionNvtxExtension, which fills its
 * function slots with the calls below. A heap of sub-allocations is a pool's segment, named by the heap's
 * message; its regions are blocks, as through vramtrace_block_alloc(), each heap keeping the list of
 * its regions so that a reset or an unregistered heap gives them all back. Regions are handed back to
 * the program as handles equal to their pointers. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExtMem.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"
#include "vt_blocks.h"
#include "vt_real.h"
#include "vt_table.h"
#include "vt_thread.h"
#include "vt_module.h"

struct vt_heap {
    struct vt_heap *next;
    uintptr_t *regions; /* the live regions' pointers */
    size_t n, cap;
    int device;
    char name[32];
};

static pthread_mutex_t vt_heaps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vt_heap *vt_heaps;
static struct vt_heap vt_process_wide = {.device = -1, .name = "nvtx"}; /* regions registered with no heap */

/* Under vt_heaps_lock: the heap a handle names (the process-wide one for 0), or NULL for one we never
 * gave out. */
static struct vt_heap *vt_heap_of(nvtxMemHeapHandle_t h)
{
    if (h == NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE)
        return &vt_process_wide;
    for (struct vt_heap *x = vt_heaps; x; x = x->next)
        if ((void *)x == (void *)h)
            return x;
    return NULL;
}

static void vt_heap_keep(struct vt_heap *h, uintptr_t p)
{
    if (h->n == h->cap) {
        size_t nc = h->cap ? 2 * h->cap : 16;
        uintptr_t *r = realloc(h->regions, nc * sizeof *r);
        if (!r)
            return; /* the block stays recorded; only a reset would not find it */
        h->regions = r;
        h->cap = nc;
    }
    h->regions[h->n++] = p;
}

/* In a fork child: the heaps' lock is free again (the thread that held it is not there). */
static void vt_nvtx_atfork_child(void)
{
    vt_mutex_reset(&vt_heaps_lock);
}

static int vt_heap_drop(struct vt_heap *h, uintptr_t p)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->regions[i] == p) {
            h->regions[i] = h->regions[--h->n];
            return 1;
        }
    return 0;
}

/* Under vt_heaps_lock: takes p out of whichever heap holds it. */
static void vt_heaps_forget(uintptr_t p)
{
    for (struct vt_heap *x = vt_heaps; x; x = x->next)
        if (vt_heap_drop(x, p))
            return;
    vt_heap_drop(&vt_process_wide, p);
}

/* Gives back regions taken out of a heap; called with no lock of ours held, since a block's bookkeeping
 * takes the table's locks (and a block's, a stack). */
static void vt_regions_free(uintptr_t *regions, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vramtrace_block_free((const void *)regions[i]);
    free(regions);
}

static int vt_device_of(const void *ptr)
{
    int dev = -1;
    __typeof__(cuPointerGetAttribute) *get = VT_REAL(cuPointerGetAttribute);
    if (!get || get(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
        dev = -1;
    return dev;
}

static nvtxMemHeapHandle_t vt_heap_register(nvtxDomainHandle_t domain, const nvtxMemHeapDesc_t *desc)
{
    (void)domain;
    struct vt_heap *h = calloc(1, sizeof *h);
    if (!h)
        return NVTX_MEM_HEAP_HANDLE_NO_TOOL;
    snprintf(h->name, sizeof h->name, "nvtx");
    if (desc && desc->messageType == NVTX_MESSAGE_TYPE_ASCII && desc->message.ascii && desc->message.ascii[0])
        snprintf(h->name, sizeof h->name, "%s", desc->message.ascii);
    const nvtxMemVirtualRangeDesc_t *range = desc && desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS &&
                                                     desc->typeSpecificDescSize >= sizeof *range
                                                 ? desc->typeSpecificDesc
                                                 : NULL;
    h->device = range ? vt_device_of(range->ptr) : -1;
    /* A heap a pool sub-allocates from is its segment: cache while it holds no region. */
    if (range && desc->usage & NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR)
        vramtrace_pool_segment(range->ptr, h->name);
    pthread_mutex_lock(&vt_heaps_lock);
    h->next = vt_heaps;
    vt_heaps = h;
    pthread_mutex_unlock(&vt_heaps_lock);
    return (nvtxMemHeapHandle_t)(void *)h;
}

static void vt_heap_reset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    (void)domain;
    uintptr_t *regions = NULL;
    size_t n = 0;
    pthread_mutex_lock(&vt_heaps_lock);
    struct vt_heap *h = vt_heap_of(heap);
    if (h) {
        regions = h->regions;
        n = h->n;
        h->regions = NULL;
        h->n = h->cap = 0;
    }
    pthread_mutex_unlock(&vt_heaps_lock);
    vt_regions_free(regions, n);
}

static void vt_heap_unregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    (void)domain;
    pthread_mutex_lock(&vt_heaps_lock);
    struct vt_heap *h = heap == NVTX_MEM_HEAP_HANDLE_PROCESS_WIDE ? NULL : vt_heap_of(heap);
    if (h) {
        struct vt_heap **p = &vt_heaps;
        while (*p != h)
            p = &(*p)->next;
        *p = h->next;
    }
    pthread_mutex_unlock(&vt_heaps_lock);
    if (h) {
        vt_regions_free(h->regions, h->n);
        free(h);
    }
}

static const nvtxMemVirtualRangeDesc_t *vt_range_at(const void *elements, size_t size, size_t i)
{
    return size >= sizeof(nvtxMemVirtualRangeDesc_t) ? (const void *)((const char *)elements + i * size) : NULL;
}

static void vt_regions_register(nvtxDomainHandle_t domain, const nvtxMemRegionsRegisterBatch_t *b)
{
    (void)domain;
    if (!b || b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !b->regionDescElements)
        return;
    pthread_mutex_lock(&vt_heaps_lock);
    struct vt_heap *h = vt_heap_of(b->heap);
    int device = h ? h->device : -1;
    char name[sizeof h->name];
    snprintf(name, sizeof name, "%s", h ? h->name : "");
    pthread_mutex_unlock(&vt_heaps_lock);
    if (!h)
        return;
    for (size_t i = 0; i < b->regionCount; i++) {
        const nvtxMemVirtualRangeDesc_t *r = vt_range_at(b->regionDescElements, b->regionDescElementSize, i);
        if (!r || !r->ptr)
            continue;
        vramtrace_block_alloc(r->ptr, r->size, device >= 0 ? device : vt_device_of(r->ptr), name);
        if (b->regionHandleElementsOut)
            b->regionHandleElementsOut[i] = (nvtxMemRegionHandle_t)(uintptr_t)r->ptr;
    }
    /* The heap again: another thread may have unregistered it meanwhile. */
    pthread_mutex_lock(&vt_heaps_lock);
    h = vt_heap_of(b->heap);
    for (size_t i = 0; h && i < b->regionCount; i++) {
        const nvtxMemVirtualRangeDesc_t *r = vt_range_at(b->regionDescElements, b->regionDescElementSize, i);
        if (r && r->ptr)
            vt_heap_keep(h, (uintptr_t)r->ptr);
    }
    pthread_mutex_unlock(&vt_heaps_lock);
}

static void vt_regions_resize(nvtxDomainHandle_t domain, const nvtxMemRegionsResizeBatch_t *b)
{
    (void)domain;
    if (!b || b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || !b->regionDescElements)
        return;
    for (size_t i = 0; i < b->regionDescCount; i++) {
        const nvtxMemVirtualRangeDesc_t *r = vt_range_at(b->regionDescElements, b->regionDescElementSize, i);
        struct vt_alloc a;
        /* The same block, its size changed: it keeps the stack that registered it. */
        if (r && r->ptr && vt_table_remove((uintptr_t)r->ptr, VT_KIND_BLOCK, &a)) {
            a.size = r->size;
            vt_table_add(&a);
        }
    }
}

/* The pointer the i-th reference of an unregister batch names (0: none). */
static uintptr_t vt_ref_ptr(const nvtxMemRegionsUnregisterBatch_t *b, size_t i)
{
    const nvtxMemRegionRef_t *ref = (const void *)((const char *)b->refElements + i * b->refElementSize);
    return b->refType == NVTX_MEM_REGION_REF_TYPE_POINTER  ? (uintptr_t)ref->pointer
           : b->refType == NVTX_MEM_REGION_REF_TYPE_HANDLE ? (uintptr_t)ref->handle
                                                           : 0;
}

static void vt_regions_unregister(nvtxDomainHandle_t domain, const nvtxMemRegionsUnregisterBatch_t *b)
{
    (void)domain;
    if (!b || !b->refElements || b->refElementSize < sizeof(nvtxMemRegionRef_t))
        return;
    /* The blocks with no lock of ours held, then the heaps' lists under it. */
    for (size_t i = 0; i < b->refCount; i++)
        if (vt_ref_ptr(b, i))
            vramtrace_block_free((const void *)vt_ref_ptr(b, i));
    pthread_mutex_lock(&vt_heaps_lock);
    for (size_t i = 0; i < b->refCount; i++)
        if (vt_ref_ptr(b, i))
            vt_heaps_forget(vt_ref_ptr(b, i));
    pthread_mutex_unlock(&vt_heaps_lock);
}

/* Called by NVTX once per extension module it initialises: ours is the memory module; any other is
 * left without a tool (its calls stay no-ops, as with no tool at all). */
int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info);
int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info)
{
    if (!info || info->moduleId != NVTX_EXT_MODULEID_MEM || info->compatId < NVTX_EXT_COMPATID_MEM)
        return 1;
    static const struct {
        size_t id;
        intptr_t fn;
    } fns[] = {
        {NVTX3EXT_CBID_nvtxMemHeapRegister, (intptr_t)vt_heap_register},
        {NVTX3EXT_CBID_nvtxMemHeapUnregister, (intptr_t)vt_heap_unregister},
        {NVTX3EXT_CBID_nvtxMemHeapReset, (intptr_t)vt_heap_reset},
        {NVTX3EXT_CBID_nvtxMemRegionsRegister, (intptr_t)vt_regions_register},
        {NVTX3EXT_CBID_nvtxMemRegionsResize, (intptr_t)vt_regions_resize},
        {NVTX3EXT_CBID_nvtxMemRegionsUnregister, (intptr_t)vt_regions_unregister},
    };
    for (size_t s = 0; s < info->segmentsCount; s++) {
        nvtxExtModuleSegment_t *seg = &info->segments[s];
        if (seg->segmentId != 1)
            continue;
        for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
            if (fns[i].id < seg->slotCount)
                seg->functionSlots[fns[i].id] = fns[i].fn;
    }
    return 1;
}

VT_MODULE(nvtx, .child = vt_nvtx_atfork_child);
