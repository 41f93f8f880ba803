// GPU suite program: one known allocation of every kind, dumped three times (all live, half freed,
// all freed), printing before each dump what it holds so that tests/gpu/check.py can compare the dump
// with the program's own count. Built four ways by tests/gpu/run.sh:
//   default (nvcc's static cudart)  runtime calls for the plain kinds, the driver directly for VMM
//   -cudart shared                  the same through libcudart.so
//   -DVT_ROUTE_DRIVER -lcuda        every kind through the driver API, called directly
//   -DVT_ROUTE_ENTRY                driver entry points from cudaGetDriverEntryPointByVersion
// and the default build once more under --default-stream per-thread (the _ptsz routes).
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB (1ull << 20)

#if defined(VT_ROUTE_DRIVER)
static const char *route = "driver";
#elif defined(VT_ROUTE_ENTRY)
static const char *route = "entry";
#else
static const char *route = "runtime";
#endif

// The driver calls this program makes, reached either directly or through the runtime's entry-point
// lookup. The macros of cuda.h pick the variant (_v2, _ptsz) the build asks for.
static struct {
    decltype(&cuMemAlloc) alloc;
    decltype(&cuMemAllocPitch) pitch;
    decltype(&cuMemAllocManaged) managed;
    decltype(&cuMemAllocHost) host;
    decltype(&cuMemHostAlloc) hostalloc;
    decltype(&cuMemFree) free;
    decltype(&cuMemFreeHost) freehost;
    decltype(&cuMemAllocAsync) async;
    decltype(&cuMemAllocFromPoolAsync) frompool;
    decltype(&cuMemFreeAsync) freeasync;
    decltype(&cuMemPoolCreate) poolcreate;
    decltype(&cuMemPoolDestroy) pooldestroy;
    decltype(&cuMemCreate) create;
    decltype(&cuMemRelease) release;
    decltype(&cuMemAddressReserve) reserve;
    decltype(&cuMemAddressFree) addrfree;
    decltype(&cuMemMap) map;
    decltype(&cuMemUnmap) unmap;
    decltype(&cuMemSetAccess) access;
    decltype(&cuMemGetAllocationGranularity) granularity;
} drv;

static void die(const char *what, int code)
{
    printf("FAIL %s returned %d\n", what, code);
    exit(1);
}
#define CK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (int)(call);                                                                     \
        if (rc_)                                                                                   \
            die(#call, rc_);                                                                       \
    } while (0)

static void resolve()
{
#if defined(VT_ROUTE_ENTRY)
    struct { const char *name; void **fn; } want[] = {
        {"cuMemAlloc", (void **)&drv.alloc}, {"cuMemAllocPitch", (void **)&drv.pitch},
        {"cuMemAllocManaged", (void **)&drv.managed}, {"cuMemAllocHost", (void **)&drv.host},
        {"cuMemHostAlloc", (void **)&drv.hostalloc}, {"cuMemFree", (void **)&drv.free},
        {"cuMemFreeHost", (void **)&drv.freehost}, {"cuMemAllocAsync", (void **)&drv.async},
        {"cuMemAllocFromPoolAsync", (void **)&drv.frompool}, {"cuMemFreeAsync", (void **)&drv.freeasync},
        {"cuMemPoolCreate", (void **)&drv.poolcreate}, {"cuMemPoolDestroy", (void **)&drv.pooldestroy},
        {"cuMemCreate", (void **)&drv.create}, {"cuMemRelease", (void **)&drv.release},
        {"cuMemAddressReserve", (void **)&drv.reserve}, {"cuMemAddressFree", (void **)&drv.addrfree},
        {"cuMemMap", (void **)&drv.map}, {"cuMemUnmap", (void **)&drv.unmap},
        {"cuMemSetAccess", (void **)&drv.access},
        {"cuMemGetAllocationGranularity", (void **)&drv.granularity},
    };
    for (auto &w : want) {
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion(w.name, w.fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            die(w.name, (int)q);
    }
#else
    drv.alloc = cuMemAlloc; drv.pitch = cuMemAllocPitch; drv.managed = cuMemAllocManaged;
    drv.host = cuMemAllocHost; drv.hostalloc = cuMemHostAlloc; drv.free = cuMemFree;
    drv.freehost = cuMemFreeHost; drv.async = cuMemAllocAsync; drv.frompool = cuMemAllocFromPoolAsync;
    drv.freeasync = cuMemFreeAsync; drv.poolcreate = cuMemPoolCreate; drv.pooldestroy = cuMemPoolDestroy;
    drv.create = cuMemCreate; drv.release = cuMemRelease; drv.reserve = cuMemAddressReserve;
    drv.addrfree = cuMemAddressFree; drv.map = cuMemMap; drv.unmap = cuMemUnmap;
    drv.access = cuMemSetAccess; drv.granularity = cuMemGetAllocationGranularity;
#endif
}

// What the program holds: one row per allocation, printed as `truth` lines at each dump.
enum how { PLAIN, PITCH, MANAGED, HOST, HOSTALLOC, ASYNC, FROMPOOL, GRAPH, PHYS, MAP, VA };
struct held {
    const char *kind; // the dump's kind for it
    enum how how;
    unsigned long long addr; // address, or the handle for PHYS
    size_t size;
    int refs, maps;      // PHYS only
    struct held *phys;   // MAP only: the handle mapped there
    int live, in_phase2; // in_phase2: freed by the middle step already
};
static struct held held[32];
static int nheld;

static struct held *hold(const char *kind, enum how how, unsigned long long addr, size_t size, int in_phase2)
{
    struct held *h = &held[nheld++];
    *h = (struct held){kind, how, addr, size, 1, 0, NULL, 1, in_phase2};
    return h;
}

static CUmemoryPool pool;
static CUstream stream;

static void alloc_all()
{
    CUdeviceptr p;
    size_t pitch;
    void *v;
#if defined(VT_ROUTE_DRIVER) || defined(VT_ROUTE_ENTRY)
    CK(drv.alloc(&p, 64 * MiB)); hold("device", PLAIN, p, 64 * MiB, 0);
    CK(drv.alloc(&p, 32 * MiB)); hold("device", PLAIN, p, 32 * MiB, 1);
    CK(drv.pitch(&p, &pitch, 1000, 1000, 4)); hold("device", PITCH, p, pitch * 1000, 1);
    CK(drv.managed(&p, 8 * MiB, CU_MEM_ATTACH_GLOBAL)); hold("managed", MANAGED, p, 8 * MiB, 1);
    CK(drv.host(&v, 4 * MiB)); hold("host_pinned", HOST, (unsigned long long)v, 4 * MiB, 0);
    CK(drv.hostalloc(&v, 2 * MiB, 0)); hold("host_pinned", HOSTALLOC, (unsigned long long)v, 2 * MiB, 1);
    CK(drv.async(&p, 16 * MiB, stream)); hold("async", ASYNC, p, 16 * MiB, 0);
    CK(drv.async(&p, 16 * MiB, stream)); hold("async", ASYNC, p, 16 * MiB, 1);
    CK(drv.frompool(&p, 8 * MiB, pool, stream)); hold("async", FROMPOOL, p, 8 * MiB, 0);
    CK(drv.frompool(&p, 8 * MiB, pool, stream)); hold("async", FROMPOOL, p, 8 * MiB, 1);
#else
    CK(cudaMalloc(&v, 64 * MiB)); hold("device", PLAIN, (unsigned long long)v, 64 * MiB, 0);
    CK(cudaMalloc(&v, 32 * MiB)); hold("device", PLAIN, (unsigned long long)v, 32 * MiB, 1);
    CK(cudaMallocPitch(&v, &pitch, 1000, 1000)); hold("device", PITCH, (unsigned long long)v, pitch * 1000, 1);
    CK(cudaMallocManaged(&v, 8 * MiB)); hold("managed", MANAGED, (unsigned long long)v, 8 * MiB, 1);
    CK(cudaMallocHost(&v, 4 * MiB)); hold("host_pinned", HOST, (unsigned long long)v, 4 * MiB, 0);
    CK(cudaHostAlloc(&v, 2 * MiB, 0)); hold("host_pinned", HOSTALLOC, (unsigned long long)v, 2 * MiB, 1);
    CK(cudaMallocAsync(&v, 16 * MiB, (cudaStream_t)stream)); hold("async", ASYNC, (unsigned long long)v, 16 * MiB, 0);
    CK(cudaMallocAsync(&v, 16 * MiB, (cudaStream_t)stream)); hold("async", ASYNC, (unsigned long long)v, 16 * MiB, 1);
    CK(cudaMallocFromPoolAsync(&v, 8 * MiB, (cudaMemPool_t)pool, (cudaStream_t)stream));
    hold("async", FROMPOOL, (unsigned long long)v, 8 * MiB, 0);
    CK(cudaMallocFromPoolAsync(&v, 8 * MiB, (cudaMemPool_t)pool, (cudaStream_t)stream));
    hold("async", FROMPOOL, (unsigned long long)v, 8 * MiB, 1);
    // Graph memory: an allocation node captured into a graph and not freed in it, so it outlives the
    // launch; the dump's device line carries the driver's graph-memory figures.
    cudaStream_t cap;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
    CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal));
    CK(cudaMallocAsync(&v, 24 * MiB, cap));
    CK(cudaStreamEndCapture(cap, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, cap));
    CK(cudaStreamSynchronize(cap));
    hold("graph", GRAPH, (unsigned long long)v, 24 * MiB, 1);
    (void)p;
#endif
    // VMM: two physical handles, each mapped into its own reservation; the second is released at
    // once, so only its mapping keeps it alive (freed when released and unmapped).
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g;
    CK(drv.granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemAccessDesc acc;
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (int i = 0; i < 2; i++) {
        size_t size = (size_t)(2 - i) * g;
        CUmemGenericAllocationHandle h;
        CUdeviceptr va;
        CK(drv.create(&h, size, &prop, 0));
        struct held *ph = hold("vmm_physical", PHYS, h, size, i);
        CK(drv.reserve(&va, 4 * size, 0, 0, 0));
        hold("va_reserved", VA, va, 4 * size, i);
        CK(drv.map(va, size, 0, h, 0));
        ph->maps = 1;
        hold("vmm_map", MAP, va, size, i)->phys = ph;
        CK(drv.access(va, size, &acc, 1));
        if (i == 1) {
            CK(drv.release(h));
            ph->refs = 0;
        }
    }
    CK(cuStreamSynchronize(stream));
}

static void release(struct held *h)
{
    switch (h->how) {
    case PLAIN: case PITCH: case MANAGED:
#if defined(VT_ROUTE_DRIVER) || defined(VT_ROUTE_ENTRY)
        CK(drv.free(h->addr));
#else
        CK(cudaFree((void *)h->addr));
#endif
        break;
    case HOST: case HOSTALLOC:
#if defined(VT_ROUTE_DRIVER) || defined(VT_ROUTE_ENTRY)
        CK(drv.freehost((void *)h->addr));
#else
        CK(cudaFreeHost((void *)h->addr));
#endif
        break;
    case ASYNC: case FROMPOOL: case GRAPH:
#if defined(VT_ROUTE_DRIVER) || defined(VT_ROUTE_ENTRY)
        CK(drv.freeasync(h->addr, stream));
#else
        CK(cudaFreeAsync((void *)h->addr, (cudaStream_t)stream));
#endif
        break;
    case MAP:
        CK(drv.unmap(h->addr, h->size));
        h->phys->maps = 0;
        break;
    case VA:
        CK(drv.addrfree(h->addr, h->size));
        break;
    case PHYS:
        if (h->refs)
            CK(drv.release(h->addr));
        h->refs = 0;
        break;
    }
    h->live = 0;
}

// The middle step frees the rows marked in_phase2, the last one all. In reverse order, so that a
// mapping goes before its reservation and its handle; a handle with neither reference nor mapping is
// gone without a call.
static void free_some(int all)
{
    for (int i = nheld - 1; i >= 0; i--) {
        struct held *h = &held[i];
        if (h->live && (all || h->in_phase2)) {
            if (h->how == PHYS && h->maps)
                die("a mapped handle in the free list", -1);
            release(h);
        }
    }
    CK(cuStreamSynchronize(stream));
}

static void pool_truth(int phase, const char *which, CUmemoryPool p)
{
    cuuint64_t res = 0, used = 0;
    CK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res));
    CK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    printf("pool %d %s 0x%llx %llu %llu\n", phase, which, (unsigned long long)(uintptr_t)p,
           (unsigned long long)res, (unsigned long long)used);
}

// nvidia-smi's figure for this process, in MiB, at the moment of the dump.
static void smi_truth(int phase)
{
    FILE *f = popen("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits", "r");
    char line[256];
    long pid, mib;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%ld, %ld", &pid, &mib) == 2 && pid == (long)getpid())
            printf("smi %d %ld\n", phase, mib);
    if (f)
        pclose(f);
}

static void dump(int phase)
{
    for (int i = 0; i < nheld; i++) {
        struct held *h = &held[i];
        if (!h->live)
            continue;
        if (h->how == PHYS)
            printf("truth %d %s 0x%llx %zu %d %d\n", phase, h->kind, h->addr, h->size, h->refs, h->maps);
        else
            printf("truth %d %s 0x%llx %zu\n", phase, h->kind, h->addr, h->size);
    }
    CUmemoryPool def;
    CK(cuDeviceGetDefaultMemPool(&def, 0));
    pool_truth(phase, "default", def);
    pool_truth(phase, "explicit", pool);
#if !defined(VT_ROUTE_DRIVER) && !defined(VT_ROUTE_ENTRY)
    unsigned long long gres = 0, gused = 0;
    CK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &gres));
    CK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &gused));
    printf("graph %d %llu %llu\n", phase, gres, gused);
#endif
    int (*vd)(char *, size_t) = (int (*)(char *, size_t))dlsym(RTLD_DEFAULT, "vramtrace_dump");
    char path[4096];
    if (!vd || vd(path, sizeof path) != 0)
        die("vramtrace_dump", -1);
    printf("dump %d %s\n", phase, path);
    smi_truth(phase);
    fflush(stdout);
}

int main()
{
    printf("route %s\n", route);
    resolve();
#if defined(VT_ROUTE_DRIVER)
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
#else
    CK(cudaFree(0));
#endif
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUmemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    pp.location.id = 0;
    CK(drv.poolcreate(&pool, &pp));
    alloc_all();
    dump(1);
    free_some(0);
    dump(2);
    free_some(1);
    dump(3);
    CK(drv.pooldestroy(pool));
    return 0;
}
