/* Driver queries for dumps. cuMemGetInfo needs a current context: the dumper pushes a device's
 * primary context only when it is already active, so a dump never creates a context (which would
 * itself take hundreds of MiB). A query that fails leaves the figure unknown, never zero. */
#include <stdatomic.h>
#include <time.h>

#include "vt_devices.h"
#include "vt_doing.h"
#include "vt_hot.h"
#include "vt_nvml.h"
#include "vt_real.h"

static uint64_t vt_graph_attr(int dev, CUgraphMem_attribute attr)
{
    cuuint64_t v = 0;
    __typeof__(cuDeviceGetGraphMemAttribute) *get = VT_REAL(cuDeviceGetGraphMemAttribute);
    return get && get(dev, attr, &v) == CUDA_SUCCESS ? v : VT_UNKNOWN;
}

static uint64_t vt_limit(CUlimit limit)
{
    size_t v = 0;
    __typeof__(cuCtxGetLimit) *get = VT_REAL(cuCtxGetLimit);
    return get && get(&v, limit) == CUDA_SUCCESS ? v : VT_UNKNOWN;
}

static uint64_t vt_resident_threads(int dev)
{
    int sms = 0, per_sm = 0;
    __typeof__(cuDeviceGetAttribute) *get = VT_REAL(cuDeviceGetAttribute);
    if (!get || get(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS ||
        get(&per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev) != CUDA_SUCCESS || sms <= 0 || per_sm <= 0)
        return VT_UNKNOWN;
    return (uint64_t)sms * (uint64_t)per_sm;
}

/* Free memory of dev, its graph-memory figures and its context's limits, with its primary context
 * current; VT_UNKNOWN for each when the context is not active (a dump never creates one). */
static uint64_t vt_free_of(int dev, struct vt_devinfo *out)
{
    out->graph_reserved = out->graph_used = VT_UNKNOWN;
    out->malloc_heap = out->stack_per_thread = out->resident_threads = out->printf_fifo = VT_UNKNOWN;
    unsigned int flags;
    int active = 0;
    CUcontext ctx, popped;
    size_t fr, tot;
    __typeof__(cuDevicePrimaryCtxGetState) *state = VT_REAL(cuDevicePrimaryCtxGetState);
    __typeof__(cuDevicePrimaryCtxRetain) *retain = VT_REAL(cuDevicePrimaryCtxRetain);
    __typeof__(cuDevicePrimaryCtxRelease_v2) *release = VT_REAL(cuDevicePrimaryCtxRelease_v2);
    __typeof__(cuCtxPushCurrent_v2) *push = VT_REAL(cuCtxPushCurrent_v2);
    __typeof__(cuCtxPopCurrent_v2) *pop = VT_REAL(cuCtxPopCurrent_v2);
    __typeof__(cuMemGetInfo_v2) *info = VT_REAL(cuMemGetInfo_v2);
    if (!state || !retain || !release || !push || !pop || !info)
        return VT_UNKNOWN;
    if (state(dev, &flags, &active) != CUDA_SUCCESS || !active)
        return VT_UNKNOWN;
    if (retain(&ctx, dev) != CUDA_SUCCESS)
        return VT_UNKNOWN;
    uint64_t result = VT_UNKNOWN;
    if (push(ctx) == CUDA_SUCCESS) {
        if (info(&fr, &tot) == CUDA_SUCCESS)
            result = fr;
        out->graph_reserved = vt_graph_attr(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT);
        out->graph_used = vt_graph_attr(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT);
        out->malloc_heap = vt_limit(CU_LIMIT_MALLOC_HEAP_SIZE);
        out->stack_per_thread = vt_limit(CU_LIMIT_STACK_SIZE);
        out->printf_fifo = vt_limit(CU_LIMIT_PRINTF_FIFO_SIZE);
        out->resident_threads = vt_resident_threads(dev);
        pop(&popped);
    }
    release(dev);
    return result;
}

int vt_devices_settle_captures(void)
{
    int n;
    if (atomic_load(&vt_hotdata.graph_captures) > 0)
        vt_doing_set("waiting for a CUDA graph capture to end (at most a second; then the driver is not asked)");
    for (int waited = 0; (n = atomic_load(&vt_hotdata.graph_captures)) > 0 && waited < VT_CAPTURE_WAIT_MS; waited++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return n > 0 ? n : 0;
}

int vt_devices_query(struct vt_devinfo *out, int max, int max_seen, int live)
{
    if (!vt_real_driver_known())
        return 0;
    int count = 0;
    __typeof__(cuDeviceGetCount) *getcount = VT_REAL(cuDeviceGetCount);
    __typeof__(cuDeviceTotalMem_v2) *total = VT_REAL(cuDeviceTotalMem_v2);
    if (!getcount || getcount(&count) != CUDA_SUCCESS)
        count = max_seen + 1;
    if (count > max)
        count = max;
    for (int d = 0; d < count; d++) {
        size_t t;
        out[d].ordinal = d;
        out[d].total = total && total(&t, d) == CUDA_SUCCESS ? t : VT_UNKNOWN;
        if (live) {
            out[d].free = vt_free_of(d, &out[d]);
        } else {
            out[d].free = out[d].graph_reserved = out[d].graph_used = VT_UNKNOWN;
            out[d].malloc_heap = out[d].stack_per_thread = out[d].resident_threads = out[d].printf_fifo = VT_UNKNOWN;
        }
        /* Only where this process has a context: NVML would not list it elsewhere anyway. */
        out[d].process_used = out[d].free != VT_UNKNOWN ? vt_nvml_process_used(d) : VT_UNKNOWN;
    }
    return count;
}

static int vt_pool_attr(CUmemoryPool pool, CUmemPool_attribute attr, uint64_t *out)
{
    cuuint64_t v = 0;
    __typeof__(cuMemPoolGetAttribute) *get = VT_REAL(cuMemPoolGetAttribute);
    int ok = get && get(pool, attr, &v) == CUDA_SUCCESS;
    *out = ok ? v : VT_UNKNOWN;
    return ok;
}

static void vt_pool_fill(struct vt_poolinfo *p, uint64_t handle, int device, int is_default)
{
    CUmemoryPool pool = (CUmemoryPool)(uintptr_t)handle;
    p->handle = handle;
    p->device = device;
    p->is_default = is_default;
    vt_pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &p->reserved);
    vt_pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &p->used);
    vt_pool_attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &p->reserved_high);
    vt_pool_attr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &p->used_high);
    p->threshold_known = vt_pool_attr(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &p->threshold);
}

size_t vt_pools_query(const struct vt_devinfo *devs, int ndev, const struct vt_pool *pools, size_t npools,
                      struct vt_poolinfo *out, size_t max)
{
    size_t n = 0;
    __typeof__(cuDeviceGetDefaultMemPool) *getdef = VT_REAL(cuDeviceGetDefaultMemPool);
    for (int d = 0; d < ndev && getdef && n < max; d++) {
        CUmemoryPool pool;
        if (getdef(&pool, devs[d].ordinal) == CUDA_SUCCESS && pool)
            vt_pool_fill(&out[n++], (uint64_t)(uintptr_t)pool, devs[d].ordinal, 1);
    }
    for (size_t i = 0; i < npools && n < max; i++)
        vt_pool_fill(&out[n++], pools[i].handle, pools[i].device, 0);
    return n;
}

void vt_devices_resolve(struct vt_alloc *allocs, size_t n)
{
    __typeof__(cuPointerGetAttribute) *get = VT_REAL(cuPointerGetAttribute);
    if (!get)
        return;
    for (size_t i = 0; i < n; i++) {
        int dev;
        if (allocs[i].device >= 0 || allocs[i].kind != VT_KIND_ASYNC)
            continue;
        if (get(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)allocs[i].addr) == CUDA_SUCCESS)
            allocs[i].device = dev;
    }
}

uint64_t vt_devices_free_now(int *device)
{
    __typeof__(cuCtxGetDevice) *getdev = VT_REAL(cuCtxGetDevice);
    __typeof__(cuMemGetInfo_v2) *info = VT_REAL(cuMemGetInfo_v2);
    CUdevice dev;
    size_t fr, tot;
    if (!getdev || !info || getdev(&dev) != CUDA_SUCCESS || info(&fr, &tot) != CUDA_SUCCESS)
        return VT_UNKNOWN;
    if (*device < 0)
        *device = (int)dev;
    return fr;
}
