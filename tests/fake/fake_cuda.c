/* The fake CUDA driver (build/fake/libcuda.so.1): real cuda.h signatures, host memory behind them.
 * It reproduces what vramtrace depends on in the real driver: exact versioned exports, a
 * cuGetProcAddress that hands out exact variants by version and per-thread-stream flag, primary
 * contexts, pools that keep freed memory (reserved vs used, release threshold, trim), refcounted VMM
 * handles, and a memory limit per device (VRAMTRACE_FAKE_MEMORY, bytes or K/M/G; default 80G) over
 * VRAMTRACE_FAKE_DEVICES devices (default 1). */
#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <uthash.h>

#undef cuGetProcAddress
#undef cuMemAlloc
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult cuMemAlloc(unsigned int *dptr, unsigned int bytesize);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);

#define FAKE_MAX_DEVICES 8
#define FAKE_GRANULARITY (2u << 20)

/* cuda.h names the pool type struct CUmemPoolHandle_st; the fake defines it. */
#define fake_pool CUmemPoolHandle_st

enum fake_kind { FK_DEVICE, FK_MANAGED, FK_HOST, FK_ASYNC, FK_IMPORT }; /* FK_IMPORT: another owner's memory */

struct fake_block {
    UT_hash_handle hh;
    uint64_t addr;
    size_t size;
    int dev;
    int kind;
    struct fake_pool *pool;
};

struct fake_free_block {
    struct fake_free_block *next;
    void *mem;
    size_t size;
};

struct CUmemPoolHandle_st {
    int dev;
    int is_default;
    uint64_t reserved, used, reserved_high, used_high, threshold;
    struct fake_free_block *free_list;
};

struct fake_phys {
    struct fake_phys *next; /* every live handle: a handle is checked against this list, never trusted */
    size_t size;
    int dev; /* -1 for host locations */
    int refs, maps;
};

struct fake_map {
    struct fake_map *next;
    uint64_t addr;
    size_t size;
    struct fake_phys *phys;
};

struct fake_va {
    struct fake_va *next;
    uint64_t addr;
    size_t size;
};

struct CUctx_st {
    int dev;
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static int fake_inited;
static int fake_ndev = 1;
static uint64_t fake_limit = 80ull << 30;
static _Atomic uint64_t fake_used[FAKE_MAX_DEVICES]; /* charged without the lock: allocations scale */
static struct CUctx_st fake_primary[FAKE_MAX_DEVICES];
static int fake_primary_refs[FAKE_MAX_DEVICES];
static struct fake_pool fake_default_pool[FAKE_MAX_DEVICES];
/* Blocks by address, in shards with a lock each, so that threads allocating at once do not meet in the
 * fake driver (which would hide vramtrace's own scaling in bench_threads). */
#define FAKE_SHARDS 16
static struct {
    pthread_mutex_t lock;
    struct fake_block *blocks;
    char pad[64];
} fake_shards[FAKE_SHARDS];

static __typeof__(fake_shards[0]) *fake_shard(uint64_t addr)
{
    return &fake_shards[(addr * 0x9e3779b97f4a7c15ull) >> 60];
}
static struct fake_map *fake_maps;
static struct fake_va *fake_vas;
static struct fake_phys *fake_physs;
static __thread CUcontext fake_ctx_stack[16];
static __thread int fake_ctx_depth;

/* Fork: the child gets the lock free, whatever another thread was doing (a real driver is fork-safe
 * in the same way: the child may not use it, but never hangs in it). */
static void fake_atfork_prepare(void)
{
    pthread_mutex_lock(&fake_lock);
    for (int i = 0; i < FAKE_SHARDS; i++)
        pthread_mutex_lock(&fake_shards[i].lock);
}

static void fake_atfork_release(void)
{
    for (int i = FAKE_SHARDS; i-- > 0;)
        pthread_mutex_unlock(&fake_shards[i].lock);
    pthread_mutex_unlock(&fake_lock);
}

__attribute__((constructor)) static void fake_init(void)
{
    for (int i = 0; i < FAKE_SHARDS; i++)
        pthread_mutex_init(&fake_shards[i].lock, NULL);
    pthread_atfork(fake_atfork_prepare, fake_atfork_release, fake_atfork_release);
}

static uint64_t fake_parse_size(const char *s, uint64_t dflt)
{
    char *end;
    if (!s || !*s)
        return dflt;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'K': case 'k': v <<= 10; end++; break;
    case 'M': case 'm': v <<= 20; end++; break;
    case 'G': case 'g': v <<= 30; end++; break;
    default: break;
    }
    return *end ? dflt : v;
}

CUresult cuInit(unsigned int flags)
{
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    if (!fake_inited) {
        fake_limit = fake_parse_size(getenv("VRAMTRACE_FAKE_MEMORY"), fake_limit);
        const char *d = getenv("VRAMTRACE_FAKE_DEVICES");
        if (d && atoi(d) > 0 && atoi(d) <= FAKE_MAX_DEVICES)
            fake_ndev = atoi(d);
        for (int i = 0; i < FAKE_MAX_DEVICES; i++) {
            fake_primary[i].dev = i;
            fake_default_pool[i].dev = i;
            fake_default_pool[i].is_default = 1;
        }
        fake_inited = 1;
    }
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

/* The mark by which the library tells the bundled fake driver (its self-cost line then says that the
 * driver's calls cost nothing here). */
__attribute__((visibility("default"))) int vramtrace_fake_driver = 1;

CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    if (!fake_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    *count = fake_ndev;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    if (!fake_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= fake_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    if (!fake_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= fake_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = fake_limit;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev)
{
    if (!fake_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= fake_ndev || !bus || len < 13)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x10 + dev);
    return CUDA_SUCCESS;
}

/* Streams: work on the fake is done at once, so a stream is only a distinct handle. */
CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    (void)flags;
    if (!stream)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_ctx_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    return (*stream = malloc(1)) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuStreamDestroy_v2(CUstream stream)
{
    free(stream);
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream)
{
    (void)stream;
    return fake_ctx_depth ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static int fake_current_dev(void);

/* Graph memory: the fake runs no graphs; VRAMTRACE_FAKE_GRAPH_MEM=RESERVED,USED makes it say it holds some. */
CUresult cuDeviceGraphMemTrim(CUdevice dev)
{
    return dev >= 0 && dev < fake_ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void *value)
{
    unsigned long long res = 0, used = 0;
    const char *e = getenv("VRAMTRACE_FAKE_GRAPH_MEM");
    if (!fake_inited || fake_current_dev() != dev)
        return fake_inited ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_NOT_INITIALIZED;
    if (e && sscanf(e, "%llu,%llu", &res, &used) != 2)
        res = used = 0;
    if (attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)
        *(cuuint64_t *)value = res;
    else if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT)
        *(cuuint64_t *)value = used;
    else
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* For the fake NVML: what this device holds for the process, as the driver sees it. */
uint64_t vramtrace_fake_device_used(int dev)
{
    uint64_t u;
    pthread_mutex_lock(&fake_lock);
    u = dev >= 0 && dev < fake_ndev ? fake_used[dev] : 0;
    pthread_mutex_unlock(&fake_lock);
    return u;
}

/* For tests: a free that the library does not see (as by a route it does not watch). */
static CUresult fake_free(uint64_t addr, int host);
CUresult vramtrace_fake_free_unseen(CUdeviceptr p)
{
    return fake_free(p, 0);
}

/* A device is "in use" by the process once its primary context is retained. */
int vramtrace_fake_device_active(int dev)
{
    return dev >= 0 && dev < fake_ndev && fake_primary_refs[dev] > 0;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    if (!fake_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= fake_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fake_lock);
    fake_primary_refs[dev]++;
    pthread_mutex_unlock(&fake_lock);
    *ctx = &fake_primary[dev];
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    if (dev < 0 || dev >= fake_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fake_lock);
    if (fake_primary_refs[dev] > 0)
        fake_primary_refs[dev]--;
    else
        r = CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&fake_lock);
    return r;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    if (!fake_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= fake_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = fake_primary_refs[dev] > 0;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = fake_ctx_depth ? fake_ctx_stack[fake_ctx_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (!ctx) {
        if (fake_ctx_depth)
            fake_ctx_depth--;
        return CUDA_SUCCESS;
    }
    if (!fake_ctx_depth)
        fake_ctx_depth = 1;
    fake_ctx_stack[fake_ctx_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    if (!ctx || fake_ctx_depth == 16)
        return CUDA_ERROR_INVALID_VALUE;
    fake_ctx_stack[fake_ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
    if (!fake_ctx_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = fake_ctx_stack[--fake_ctx_depth];
    if (ctx)
        *ctx = c;
    return CUDA_SUCCESS;
}

static int fake_current_dev(void)
{
    return fake_ctx_depth ? fake_ctx_stack[fake_ctx_depth - 1]->dev : -1;
}

CUresult cuCtxGetDevice(CUdevice *dev)
{
    int d = fake_current_dev();
    if (d < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = d;
    return CUDA_SUCCESS;
}

static int fake_capture_unsafe(void);

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    if (fake_capture_unsafe())
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    int d = fake_current_dev();
    if (d < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&fake_lock);
    *free_bytes = fake_limit - fake_used[d];
    *total = fake_limit;
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

/* Charges size to a device, within its limit. */
static int fake_charge(int dev, uint64_t size)
{
    uint64_t used = atomic_load(&fake_used[dev]);
    do {
        if (used + size > fake_limit)
            return 0;
    } while (!atomic_compare_exchange_weak(&fake_used[dev], &used, used + size));
    return 1;
}

static CUresult fake_alloc(CUdeviceptr *out, size_t size, int kind, int dev, struct fake_pool *pool)
{
    if (!out || !size)
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_block *b = calloc(1, sizeof *b);
    if (!b)
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *mem = NULL;
    if (pool) {
        pthread_mutex_lock(&fake_lock);
        /* A pool hands back memory it keeps before it asks the device for more. */
        for (struct fake_free_block **pp = &pool->free_list; *pp; pp = &(*pp)->next) {
            if ((*pp)->size >= size) {
                struct fake_free_block *fb = *pp;
                *pp = fb->next;
                mem = fb->mem;
                size = fb->size;
                free(fb);
                break;
            }
        }
        if (!mem && fake_charge(dev, size)) {
            if (!(mem = malloc(size)))
                fake_used[dev] -= size;
            else if ((pool->reserved += size) > pool->reserved_high)
                pool->reserved_high = pool->reserved;
        }
        if (mem && (pool->used += size) > pool->used_high)
            pool->used_high = pool->used;
        pthread_mutex_unlock(&fake_lock);
    } else if (kind == FK_HOST || kind == FK_IMPORT || fake_charge(dev, size)) {
        if (!(mem = malloc(size)) && kind != FK_HOST && kind != FK_IMPORT)
            fake_used[dev] -= size;
    }
    if (!mem) {
        free(b);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    b->addr = (uint64_t)(uintptr_t)mem;
    b->size = size;
    b->dev = dev;
    b->kind = kind;
    b->pool = pool;
    __typeof__(fake_shards[0]) *sh = fake_shard(b->addr);
    pthread_mutex_lock(&sh->lock);
    HASH_ADD(hh, sh->blocks, addr, sizeof b->addr, b);
    pthread_mutex_unlock(&sh->lock);
    *out = b->addr;
    return CUDA_SUCCESS;
}

/* Pools release what they keep above their threshold, as the real ones do at synchronization. */
static void fake_pool_release_to(struct fake_pool *p, uint64_t keep)
{
    while (p->reserved > keep && p->free_list) {
        struct fake_free_block *fb = p->free_list;
        p->free_list = fb->next;
        p->reserved -= fb->size;
        fake_used[p->dev] -= fb->size;
        free(fb->mem);
        free(fb);
    }
}

static CUresult fake_free(uint64_t addr, int host)
{
    if (!addr)
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_block *b;
    __typeof__(fake_shards[0]) *sh = fake_shard(addr);
    pthread_mutex_lock(&sh->lock);
    HASH_FIND(hh, sh->blocks, &addr, sizeof addr, b);
    if (!b || (host != (b->kind == FK_HOST))) {
        pthread_mutex_unlock(&sh->lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    HASH_DEL(sh->blocks, b);
    pthread_mutex_unlock(&sh->lock);
    if (b->pool) {
        pthread_mutex_lock(&fake_lock);
        struct fake_free_block *fb = malloc(sizeof *fb);
        b->pool->used -= b->size;
        if (fb) {
            fb->mem = (void *)(uintptr_t)b->addr;
            fb->size = b->size;
            fb->next = b->pool->free_list;
            b->pool->free_list = fb;
        }
        fake_pool_release_to(b->pool, b->pool->threshold);
        pthread_mutex_unlock(&fake_lock);
    } else {
        if (b->kind != FK_HOST && b->kind != FK_IMPORT)
            fake_used[b->dev] -= b->size;
        free((void *)(uintptr_t)b->addr);
    }
    free(b);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    int d = fake_current_dev();
    return d < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(dptr, size, FK_DEVICE, d, NULL);
}

/* The pre-3.2 entry point, with 32-bit sizes; vramtrace does not wrap it. */
CUresult cuMemAlloc(unsigned int *dptr, unsigned int size)
{
    CUdeviceptr p;
    int d = fake_current_dev();
    CUresult r = d < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(&p, size, FK_DEVICE, d, NULL);
    if (r == CUDA_SUCCESS)
        *dptr = (unsigned int)p;
    return r;
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int elem)
{
    if (!pitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t p = (width + 511) & ~(size_t)511;
    int d = fake_current_dev();
    CUresult r = d < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(dptr, p * height, FK_DEVICE, d, NULL);
    if (r == CUDA_SUCCESS)
        *pitch = p;
    return r;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
    (void)flags;
    int d = fake_current_dev();
    return d < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(dptr, size, FK_MANAGED, d, NULL);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    return fake_free(dptr, 0);
}

CUresult cuMemAllocHost_v2(void **pp, size_t size)
{
    CUdeviceptr p;
    if (!pp)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fake_current_dev() < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(&p, size, FK_HOST, 0, NULL);
    if (r == CUDA_SUCCESS)
        *pp = (void *)(uintptr_t)p;
    return r;
}

CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
    (void)flags;
    return cuMemAllocHost_v2(pp, size);
}

CUresult cuMemFreeHost(void *p)
{
    return fake_free((uint64_t)(uintptr_t)p, 1);
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
    if (attr != CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL || !data)
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_block *b;
    int dev = -1;
    __typeof__(fake_shards[0]) *sh = fake_shard(ptr);
    pthread_mutex_lock(&sh->lock);
    HASH_FIND(hh, sh->blocks, &ptr, sizeof ptr, b);
    if (b && b->kind != FK_HOST)
        dev = b->dev;
    pthread_mutex_unlock(&sh->lock);
    pthread_mutex_lock(&fake_lock);
    for (struct fake_map *m = fake_maps; dev < 0 && m; m = m->next)
        if (ptr >= m->addr && ptr < m->addr + m->size && m->phys->dev >= 0)
            dev = m->phys->dev;
    pthread_mutex_unlock(&fake_lock);
    if (dev < 0)
        return CUDA_ERROR_INVALID_VALUE;
    *(int *)data = dev;
    return CUDA_SUCCESS;
}

/* Stream-ordered allocation. Streams are not modelled: work is "done" at once, on the current device. */
static struct fake_pool *fake_stream_pool(void)
{
    int d = fake_current_dev();
    return d < 0 ? NULL : &fake_default_pool[d];
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream stream)
{
    (void)stream;
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return fake_alloc(dptr, size, FK_ASYNC, pool->dev, pool);
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    struct fake_pool *p = fake_stream_pool();
    return p ? cuMemAllocFromPoolAsync(dptr, size, p, stream) : CUDA_ERROR_INVALID_CONTEXT;
}

int vramtrace_fake_capturing(CUstream stream);

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    /* Captured: the graph's free, done at its launch, which the fake leaves undone. */
    return vramtrace_fake_capturing(stream) ? CUDA_SUCCESS : fake_free(dptr, 0);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    return cuMemAllocAsync(dptr, size, stream);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream stream)
{
    return cuMemAllocFromPoolAsync(dptr, size, pool, stream);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
    return cuMemFreeAsync(dptr, stream);
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
    if (!fake_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= fake_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *pool = &fake_default_pool[dev];
    return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    if (!pool || !props || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id < 0 ||
        props->location.id >= fake_ndev)
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_pool *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->dev = props->location.id;
    *pool = p;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    if (!pool || pool->is_default)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    fake_pool_release_to(pool, 0);
    int busy = pool->used > 0;
    pthread_mutex_unlock(&fake_lock);
    if (!busy)
        free(pool);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    fake_pool_release_to(pool, keep);
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    if (fake_capture_unsafe())
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (!pool || !value)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t v;
    pthread_mutex_lock(&fake_lock);
    switch (attr) {
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: v = pool->reserved; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: v = pool->used; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: v = pool->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: v = pool->used_high; break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: v = pool->threshold; break;
    default: pthread_mutex_unlock(&fake_lock); return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&fake_lock);
    *(cuuint64_t *)value = v;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    if (!pool || !value || attr != CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    pool->threshold = *(cuuint64_t *)value;
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

/* Virtual memory management. */
CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags o)
{
    (void)prop;
    (void)o;
    *g = FAKE_GRANULARITY;
    return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    if (!handle || !prop || flags || !size || size % FAKE_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    int on_dev = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
    if (on_dev && (prop->location.id < 0 || prop->location.id >= fake_ndev))
        return CUDA_ERROR_INVALID_DEVICE;
    struct fake_phys *p = calloc(1, sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->size = size;
    p->dev = on_dev ? prop->location.id : -1;
    p->refs = 1;
    pthread_mutex_lock(&fake_lock);
    int ok = !on_dev || fake_charge(p->dev, size);
    if (ok) {
        p->next = fake_physs;
        fake_physs = p;
    }
    pthread_mutex_unlock(&fake_lock);
    if (!ok) {
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* The live handle, or NULL: as the real driver, an unknown handle is an error, never a crash. Called
 * with fake_lock held. */
static struct fake_phys *fake_phys_find(CUmemGenericAllocationHandle handle)
{
    for (struct fake_phys *p = fake_physs; p; p = p->next)
        if ((CUmemGenericAllocationHandle)(uintptr_t)p == handle)
            return p;
    return NULL;
}

/* Called with fake_lock held. */
static void fake_phys_maybe_free(struct fake_phys *p)
{
    if (p->refs > 0 || p->maps > 0)
        return;
    if (p->dev >= 0)
        fake_used[p->dev] -= p->size;
    for (struct fake_phys **pp = &fake_physs; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    free(p);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    pthread_mutex_lock(&fake_lock);
    struct fake_phys *p = fake_phys_find(handle);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (p && p->refs > 0) {
        p->refs--;
        fake_phys_maybe_free(p);
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&fake_lock);
    return r;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags)
{
    (void)align;
    (void)addr;
    if (!ptr || !size || flags || size % FAKE_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_va *va = calloc(1, sizeof *va);
    void *m = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!va || m == MAP_FAILED) {
        free(va);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    va->addr = (uint64_t)(uintptr_t)m;
    va->size = size;
    pthread_mutex_lock(&fake_lock);
    va->next = fake_vas;
    fake_vas = va;
    pthread_mutex_unlock(&fake_lock);
    *ptr = va->addr;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    pthread_mutex_lock(&fake_lock);
    for (struct fake_va **pp = &fake_vas; *pp; pp = &(*pp)->next) {
        struct fake_va *va = *pp;
        if (va->addr == ptr && va->size == size) {
            *pp = va->next;
            pthread_mutex_unlock(&fake_lock);
            munmap((void *)(uintptr_t)va->addr, va->size);
            free(va);
            return CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&fake_lock);
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    if (flags || !size)
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_map *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fake_lock);
    struct fake_phys *p = fake_phys_find(handle);
    int inside = 0;
    for (struct fake_va *va = fake_vas; va; va = va->next)
        inside |= ptr >= va->addr && ptr + size <= va->addr + va->size;
    if (!p || offset + size > p->size || !inside || p->refs <= 0) {
        pthread_mutex_unlock(&fake_lock);
        free(m);
        return CUDA_ERROR_INVALID_VALUE;
    }
    m->addr = ptr;
    m->size = size;
    m->phys = p;
    p->maps++;
    m->next = fake_maps;
    fake_maps = m;
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    int found = 0;
    pthread_mutex_lock(&fake_lock);
    for (struct fake_map **pp = &fake_maps; *pp;) {
        struct fake_map *m = *pp;
        if (m->addr >= ptr && m->addr + m->size <= ptr + size) {
            *pp = m->next;
            m->phys->maps--;
            fake_phys_maybe_free(m->phys);
            free(m);
            found++;
        } else {
            pp = &m->next;
        }
    }
    pthread_mutex_unlock(&fake_lock);
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    uint64_t a = (uint64_t)(uintptr_t)addr;
    pthread_mutex_lock(&fake_lock);
    for (struct fake_map *m = fake_maps; m; m = m->next) {
        if (a >= m->addr && a < m->addr + m->size) {
            m->phys->refs++;
            *handle = (CUmemGenericAllocationHandle)(uintptr_t)m->phys;
            pthread_mutex_unlock(&fake_lock);
            return CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&fake_lock);
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    (void)ptr;
    (void)size;
    return desc && count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Limits and attributes as an H200's driver gives them by default. */
CUresult cuCtxGetLimit(size_t *value, CUlimit limit)
{
    if (!value || fake_current_dev() < 0)
        return value ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_INVALID_VALUE;
    switch (limit) {
    case CU_LIMIT_STACK_SIZE: *value = 1024; return CUDA_SUCCESS;
    case CU_LIMIT_MALLOC_HEAP_SIZE: *value = 8u << 20; return CUDA_SUCCESS;
    case CU_LIMIT_PRINTF_FIFO_SIZE: *value = 1u << 20; return CUDA_SUCCESS;
    default: return CUDA_ERROR_UNSUPPORTED_LIMIT;
    }
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attr, CUdevice dev)
{
    if (!value || dev < 0 || dev >= fake_ndev)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

/* CUDA arrays: the handle is the fake's own record; the memory they take is the size the driver's
 * requirement query gives (elements rounded up to 64 KiB, as the real driver rounds to its alignment).
 * As on the H200's driver, only an array made with CUDA_ARRAY3D_DEFERRED_MAPPING answers that query,
 * and such an array takes no memory until mapped. */
struct fake_array {
    uint64_t size;
    int dev, deferred;
};

static size_t fake_elem_bytes(CUarray_format f, unsigned channels)
{
    size_t b = f == CU_AD_FORMAT_UNSIGNED_INT8 || f == CU_AD_FORMAT_SIGNED_INT8     ? 1
               : f == CU_AD_FORMAT_UNSIGNED_INT16 || f == CU_AD_FORMAT_SIGNED_INT16 || f == CU_AD_FORMAT_HALF ? 2
                                                                                    : 4;
    return b * (channels ? channels : 1);
}

static CUresult fake_array_make(void **handle, size_t w, size_t h, size_t d, CUarray_format f, unsigned ch,
                                unsigned levels, unsigned flags)
{
    int dev = fake_current_dev();
    if (!handle || !w)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    uint64_t bytes = 0;
    for (unsigned l = 0; l < (levels ? levels : 1); l++) {
        size_t lw = w >> l ? w >> l : 1, lh = h >> l ? h >> l : 1, ld = d >> l ? d >> l : 1;
        bytes += (uint64_t)lw * (h ? lh : 1) * (d ? ld : 1) * fake_elem_bytes(f, ch);
    }
    struct fake_array *a = malloc(sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->size = (bytes + 65535) & ~(uint64_t)65535;
    a->dev = dev;
    a->deferred = (flags & CUDA_ARRAY3D_DEFERRED_MAPPING) != 0;
    pthread_mutex_lock(&fake_lock);
    fake_used[dev] += a->deferred ? 0 : a->size;
    pthread_mutex_unlock(&fake_lock);
    *handle = a;
    return CUDA_SUCCESS;
}

static CUresult fake_array_destroy(void *handle)
{
    struct fake_array *a = handle;
    if (!a)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&fake_lock);
    fake_used[a->dev] -= a->deferred ? 0 : a->size;
    pthread_mutex_unlock(&fake_lock);
    free(a);
    return CUDA_SUCCESS;
}

CUresult cuArrayCreate_v2(CUarray *arr, const CUDA_ARRAY_DESCRIPTOR *desc)
{
    return desc ? fake_array_make((void **)arr, desc->Width, desc->Height, 0, desc->Format, desc->NumChannels, 1, 0)
                : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuArray3DCreate_v2(CUarray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    return desc ? fake_array_make((void **)arr, desc->Width, desc->Height, desc->Depth, desc->Format,
                                  desc->NumChannels, 1, desc->Flags)
                : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned int levels)
{
    return desc && levels ? fake_array_make((void **)arr, desc->Width, desc->Height, desc->Depth, desc->Format,
                                            desc->NumChannels, levels, desc->Flags)
                          : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuArrayDestroy(CUarray arr)
{
    return fake_array_destroy(arr);
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray arr)
{
    return fake_array_destroy(arr);
}

static CUresult fake_array_requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, void *handle)
{
    struct fake_array *a = handle;
    if (!req || !a || !a->deferred)
        return CUDA_ERROR_INVALID_VALUE;
    memset(req, 0, sizeof *req);
    req->size = a->size;
    req->alignment = 65536;
    return CUDA_SUCCESS;
}

CUresult cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUarray arr, CUdevice dev)
{
    (void)dev;
    return fake_array_requirements(req, arr);
}

CUresult cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUmipmappedArray arr, CUdevice dev)
{
    (void)dev;
    return fake_array_requirements(req, arr);
}

/* The size of the allocation that starts at ptr (only starts: what the tests ask). */
static size_t fake_size_at(uint64_t ptr)
{
    struct fake_block *b;
    __typeof__(fake_shards[0]) *sh = fake_shard(ptr);
    pthread_mutex_lock(&sh->lock);
    HASH_FIND(hh, sh->blocks, &ptr, sizeof ptr, b);
    size_t size = b ? b->size : 0;
    pthread_mutex_unlock(&sh->lock);
    return size;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr ptr)
{
    size_t n = fake_size_at(ptr);
    if (!n)
        return CUDA_ERROR_NOT_FOUND;
    if (base)
        *base = ptr;
    if (size)
        *size = n;
    return CUDA_SUCCESS;
}

/* IPC and pool exports within one process stand in for two: a handle carries the exported size, and
 * opening it maps a new range of that size, another owner's memory (not charged to this process). */
CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr ptr)
{
    uint64_t n = fake_size_at(ptr);
    if (!h || !n)
        return CUDA_ERROR_INVALID_VALUE;
    memset(h, 0, sizeof *h);
    memcpy(h->reserved, &n, sizeof n);
    return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *ptr, CUipcMemHandle h, unsigned int flags)
{
    uint64_t n;
    (void)flags;
    memcpy(&n, h.reserved, sizeof n);
    int d = fake_current_dev();
    return d < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(ptr, n, FK_IMPORT, d, NULL);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr ptr)
{
    return fake_free(ptr, 0);
}

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *data, CUdeviceptr ptr)
{
    uint64_t n = fake_size_at(ptr);
    if (!data || !n)
        return CUDA_ERROR_INVALID_VALUE;
    memset(data, 0, sizeof *data);
    memcpy(data->reserved, &n, sizeof n);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolImportPointer(CUdeviceptr *ptr, CUmemoryPool pool, CUmemPoolPtrExportData *data)
{
    uint64_t n;
    if (!pool || !data)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(&n, data->reserved, sizeof n);
    int d = fake_current_dev();
    return d < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(ptr, n, FK_IMPORT, d, NULL);
}

/* External memory (another API's allocation): the object records its size; a mapped buffer is a range
 * of it that the program frees with cuMemFree. */
struct fake_ext {
    uint64_t size;
};

CUresult cuImportExternalMemory(CUexternalMemory *ext, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *desc)
{
    struct fake_ext *e = ext && desc && desc->size ? malloc(sizeof *e) : NULL;
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    e->size = desc->size;
    *ext = (CUexternalMemory)e;
    return CUDA_SUCCESS;
}

CUresult cuExternalMemoryGetMappedBuffer(CUdeviceptr *ptr, CUexternalMemory ext, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *desc)
{
    struct fake_ext *e = (struct fake_ext *)ext;
    if (!e || !desc || !desc->size || desc->offset + desc->size > e->size)
        return CUDA_ERROR_INVALID_VALUE;
    int d = fake_current_dev();
    return d < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(ptr, desc->size, FK_IMPORT, d, NULL);
}

CUresult cuDestroyExternalMemory(CUexternalMemory ext)
{
    if (!ext)
        return CUDA_ERROR_INVALID_HANDLE;
    free(ext);
    return CUDA_SUCCESS;
}

/* Graphs, just enough for memory nodes: an allocation node takes its address (and the memory, which
 * the fake does not defer to the launch) when it is added; a free node, a launch and the destroys only
 * check their handles. The memory is freed by cuMemFreeAsync/cuMemFree as stream-ordered memory is. */
struct fake_graph {
    int magic;
};
#define FAKE_GRAPH_MAGIC 0x67726168

CUresult cuGraphCreate(CUgraph *graph, unsigned int flags)
{
    struct fake_graph *g = graph && !flags ? malloc(sizeof *g) : NULL;
    if (!g)
        return CUDA_ERROR_INVALID_VALUE;
    g->magic = FAKE_GRAPH_MAGIC;
    *graph = (CUgraph)g;
    return CUDA_SUCCESS;
}

static int fake_graph_ok(const void *g)
{
    return g && ((const struct fake_graph *)g)->magic == FAKE_GRAPH_MAGIC;
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                CUDA_MEM_ALLOC_NODE_PARAMS *params)
{
    static int nodes;
    (void)deps;
    (void)ndeps;
    if (!node || !fake_graph_ok(graph) || !params || !params->bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    int d = fake_current_dev();
    CUresult r = d < 0 ? CUDA_ERROR_INVALID_CONTEXT : fake_alloc(&params->dptr, params->bytesize, FK_IMPORT, d, NULL);
    if (r == CUDA_SUCCESS)
        *node = (CUgraphNode)(uintptr_t)(0x1000 + ++nodes);
    return r;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps, CUdeviceptr dptr)
{
    (void)deps;
    (void)ndeps;
    if (!node || !fake_graph_ok(graph) || !dptr)
        return CUDA_ERROR_INVALID_VALUE;
    *node = (CUgraphNode)(uintptr_t)(0x2000 + (dptr & 0xfff));
    return CUDA_SUCCESS;
}

/* The generic node call, for memory nodes and child graphs moved into their parent (the child's handle
 * is then the parent's: freed with it, so nothing is done here). */
static CUresult fake_add_node(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                              CUgraphNodeParams *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        CUDA_MEM_ALLOC_NODE_PARAMS a = {.poolProps = p->alloc.poolProps, .bytesize = p->alloc.bytesize};
        CUresult r = cuGraphAddMemAllocNode(node, graph, deps, ndeps, &a);
        p->alloc.dptr = a.dptr;
        return r;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        return cuGraphAddMemFreeNode(node, graph, deps, ndeps, p->free.dptr);
    case CU_GRAPH_NODE_TYPE_GRAPH:
        if (!node || !fake_graph_ok(graph) || !fake_graph_ok(p->graph.graph) ||
            p->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
            return CUDA_ERROR_INVALID_VALUE;
        *node = (CUgraphNode)(uintptr_t)0x3000;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

#undef cuGraphAddNode
CUresult cuGraphAddNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps, CUgraphNodeParams *p);
CUresult cuGraphAddNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps, CUgraphNodeParams *p)
{
    return fake_add_node(node, graph, deps, ndeps, p);
}

CUresult cuGraphAddNode_v2(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, const CUgraphEdgeData *edges,
                           size_t ndeps, CUgraphNodeParams *p)
{
    (void)edges;
    return fake_add_node(node, graph, deps, ndeps, p);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
    (void)flags;
    if (!exec || !fake_graph_ok(graph))
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_graph *e = malloc(sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = FAKE_GRAPH_MAGIC;
    *exec = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
    (void)stream;
    return fake_graph_ok(exec) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    if (!fake_graph_ok(exec))
        return CUDA_ERROR_INVALID_VALUE;
    free(exec);
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph graph)
{
    if (!fake_graph_ok(graph))
        return CUDA_ERROR_INVALID_VALUE;
    free(graph);
    return CUDA_SUCCESS;
}

/* Stream capture, one at a time: the stream being captured and the graph it makes. A free captured on
 * it is the graph's, done at a launch: the fake does nothing for it then (nor at the launch). As the real
 * driver does in the global capture mode, a call that is not capture-safe made by another thread while
 * the capture runs (fake_capture_unsafe) fails and invalidates the capture: its end then fails. */
static CUstream fake_capture_stream;
static CUgraph fake_capture_graph;
static int fake_capturing;
static _Atomic int fake_capture_global, fake_capture_broken;
static pthread_t fake_capture_thread;

CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode)
{
    if (fake_capturing)
        return CUDA_ERROR_ILLEGAL_STATE;
    CUresult r = cuGraphCreate(&fake_capture_graph, 0);
    if (r == CUDA_SUCCESS) {
        fake_capture_stream = stream;
        fake_capture_thread = pthread_self();
        fake_capture_broken = 0;
        fake_capture_global = mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
        fake_capturing = 1;
    }
    return r;
}

CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph)
{
    if (!fake_capturing || stream != fake_capture_stream || !graph)
        return CUDA_ERROR_ILLEGAL_STATE;
    fake_capturing = 0;
    fake_capture_global = 0;
    if (fake_capture_broken)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    *graph = fake_capture_graph;
    return CUDA_SUCCESS;
}

static int fake_capture_unsafe(void)
{
    if (!fake_capture_global || pthread_equal(pthread_self(), fake_capture_thread))
        return 0;
    fake_capture_broken = 1;
    return 1;
}

CUresult cuStreamGetCaptureInfo_v3(CUstream stream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                   const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    int on = fake_capturing && stream == fake_capture_stream;
    if (status)
        *status = on ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    if (id)
        *id = on ? 1 : 0;
    if (graph)
        *graph = on ? fake_capture_graph : NULL;
    if (deps)
        *deps = NULL;
    if (edges)
        *edges = NULL;
    if (ndeps)
        *ndeps = 0;
    return CUDA_SUCCESS;
}

int vramtrace_fake_capturing(CUstream stream)
{
    return fake_capturing && stream == fake_capture_stream;
}

/* Host memory registration: ranges the program pinned itself; unregistering an unknown one fails. */
struct fake_reg {
    void *p;
    struct fake_reg *next;
};
static struct fake_reg *fake_regs;

CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
    (void)flags;
    struct fake_reg *r = p && size ? malloc(sizeof *r) : NULL;
    if (!r)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    r->p = p;
    r->next = fake_regs;
    fake_regs = r;
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

CUresult cuMemHostUnregister(void *p)
{
    pthread_mutex_lock(&fake_lock);
    struct fake_reg **at = &fake_regs;
    while (*at && (*at)->p != p)
        at = &(*at)->next;
    struct fake_reg *r = *at;
    if (r)
        *at = r->next;
    pthread_mutex_unlock(&fake_lock);
    free(r);
    return r ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

/* cuGetProcAddress: every (name, variant) the fake exports, with the first CUDA version that has it. */
struct fake_proc {
    const char *name;
    int version;
    int ptsz;
    void *fn;
};

#define P(n, v, fn) {n, v, 0, (void *)&fn}
#define PT(n, v, fn) {n, v, 1, (void *)&fn}
static const struct fake_proc fake_procs[] = {
    P("cuInit", 2000, cuInit), P("cuDriverGetVersion", 2020, cuDriverGetVersion),
    P("cuDeviceGet", 2000, cuDeviceGet), P("cuDeviceGetCount", 2000, cuDeviceGetCount),
    P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    P("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    P("cuCtxGetCurrent", 4000, cuCtxGetCurrent), P("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2), P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    P("cuCtxGetDevice", 2000, cuCtxGetDevice),
    P("cuStreamCreate", 2000, cuStreamCreate), P("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    P("cuStreamSynchronize", 2000, cuStreamSynchronize),
    P("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    P("cuMemAlloc", 2000, cuMemAlloc), P("cuMemAlloc", 3020, cuMemAlloc_v2),
    P("cuMemAllocPitch", 3020, cuMemAllocPitch_v2), P("cuMemFree", 3020, cuMemFree_v2),
    P("cuMemAllocManaged", 6000, cuMemAllocManaged),
    P("cuMemAllocHost", 3020, cuMemAllocHost_v2), P("cuMemHostAlloc", 2020, cuMemHostAlloc),
    P("cuMemFreeHost", 2000, cuMemFreeHost),
    P("cuMemAllocAsync", 11020, cuMemAllocAsync), PT("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
    P("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
    PT("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync_ptsz),
    P("cuMemFreeAsync", 11020, cuMemFreeAsync), PT("cuMemFreeAsync", 11020, cuMemFreeAsync_ptsz),
    P("cuMemPoolCreate", 11020, cuMemPoolCreate), P("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
    P("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo), P("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute),
    P("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute),
    P("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
    P("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity),
    P("cuMemCreate", 10020, cuMemCreate), P("cuMemRelease", 10020, cuMemRelease),
    P("cuMemMap", 10020, cuMemMap), P("cuMemUnmap", 10020, cuMemUnmap),
    P("cuMemAddressReserve", 10020, cuMemAddressReserve), P("cuMemAddressFree", 10020, cuMemAddressFree),
    P("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
    P("cuMemSetAccess", 10020, cuMemSetAccess),
    P("cuPointerGetAttribute", 4000, cuPointerGetAttribute), P("cuDeviceGetPCIBusId", 4000, cuDeviceGetPCIBusId),
    P("cuDeviceGetGraphMemAttribute", 11040, cuDeviceGetGraphMemAttribute),
    P("cuArrayCreate", 3020, cuArrayCreate_v2), P("cuArray3DCreate", 3020, cuArray3DCreate_v2),
    P("cuArrayDestroy", 2000, cuArrayDestroy), P("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate),
    P("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy),
    P("cuArrayGetMemoryRequirements", 11060, cuArrayGetMemoryRequirements),
    P("cuMipmappedArrayGetMemoryRequirements", 11060, cuMipmappedArrayGetMemoryRequirements),
    P("cuMemHostRegister", 6050, cuMemHostRegister_v2), P("cuMemHostUnregister", 4000, cuMemHostUnregister),
    P("cuGraphCreate", 10000, cuGraphCreate), P("cuGraphAddMemAllocNode", 11040, cuGraphAddMemAllocNode),
    P("cuGraphAddMemFreeNode", 11040, cuGraphAddMemFreeNode), P("cuDeviceGraphMemTrim", 11040, cuDeviceGraphMemTrim), P("cuGraphAddNode", 12020, cuGraphAddNode),
    P("cuGraphAddNode", 12030, cuGraphAddNode_v2),
    P("cuGraphInstantiate", 11040, cuGraphInstantiateWithFlags),
    P("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags), P("cuGraphLaunch", 10000, cuGraphLaunch),
    P("cuGraphExecDestroy", 10000, cuGraphExecDestroy), P("cuGraphDestroy", 10000, cuGraphDestroy),
    P("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2), P("cuStreamEndCapture", 10000, cuStreamEndCapture),
    P("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3),
    P("cuCtxGetLimit", 3010, cuCtxGetLimit), P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    P("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2), P("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle),
    P("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2), P("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
    P("cuMemPoolExportPointer", 11020, cuMemPoolExportPointer),
    P("cuMemPoolImportPointer", 11020, cuMemPoolImportPointer),
    P("cuImportExternalMemory", 10000, cuImportExternalMemory),
    P("cuExternalMemoryGetMappedBuffer", 10000, cuExternalMemoryGetMappedBuffer),
    P("cuDestroyExternalMemory", 10000, cuDestroyExternalMemory),
    P("cuGetProcAddress", 11030, cuGetProcAddress), P("cuGetProcAddress", 12000, cuGetProcAddress_v2),
};
#undef P
#undef PT

static CUresult fake_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status)
{
    const struct fake_proc *best = NULL;
    int known = 0;
    int want_ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof fake_procs / sizeof fake_procs[0]; i++) {
        const struct fake_proc *p = &fake_procs[i];
        if (strcmp(p->name, symbol))
            continue;
        known = 1;
        if (p->version > version || (p->ptsz && !want_ptsz))
            continue;
        /* Newest variant the caller's version allows; a per-thread one wins when asked for. */
        if (!best || p->version > best->version || (p->ptsz && !best->ptsz))
            best = p;
    }
    *pfn = best ? best->fn : NULL;
    if (status)
        *status = best ? CU_GET_PROC_ADDRESS_SUCCESS
                       : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    return fake_lookup(symbol, pfn, version, flags, status);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    return fake_lookup(symbol, pfn, version, flags, NULL);
}
