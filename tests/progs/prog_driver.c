/* Test program linked to the (fake) driver with -lcuda. Each mode exercises one interception route or
 * behaviour; functions that allocate are exported and never inlined, so the tests can find them in
 * the recorded stacks. Prints what the tests compare (results, handler calls, dump paths). */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prog_common.h"

#undef cuGetProcAddress
typedef CUresult (*gpa4_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa5_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);

#define NOINLINE __attribute__((noinline, used))

static void ctx(void)
{
    CUcontext c;
    prog_check(cuInit(0) == CUDA_SUCCESS, "cuInit");
    prog_check(cuDevicePrimaryCtxRetain(&c, 0) == CUDA_SUCCESS, "retain");
    prog_check(cuCtxSetCurrent(c) == CUDA_SUCCESS, "set current");
}

static void *libcuda(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    prog_check(h != NULL, "dlopen libcuda");
    return h;
}

NOINLINE void route_direct_alloc(size_t n)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, n) == CUDA_SUCCESS, "direct alloc");
}

NOINLINE void route_dlsym_alloc(size_t n)
{
    alloc_fn f = (alloc_fn)dlsym(libcuda(), "cuMemAlloc_v2");
    CUdeviceptr p;
    prog_check(f && f(&p, n) == CUDA_SUCCESS, "dlsym alloc");
}

NOINLINE void route_gpa4_alloc(size_t n)
{
    gpa4_fn gpa = (gpa4_fn)dlsym(libcuda(), "cuGetProcAddress");
    alloc_fn f = NULL;
    CUdeviceptr p;
    prog_check(gpa && gpa("cuMemAlloc", (void **)&f, 11030, 0) == CUDA_SUCCESS && f, "gpa4 lookup");
    prog_check(f(&p, n) == CUDA_SUCCESS, "gpa4 alloc");
}

static alloc_async_fn gpa5_async(cuuint64_t flags)
{
    gpa5_fn gpa = (gpa5_fn)dlsym(libcuda(), "cuGetProcAddress_v2");
    alloc_async_fn f = NULL;
    CUdriverProcAddressQueryResult st;
    prog_check(gpa && gpa("cuMemAllocAsync", (void **)&f, 12000, flags, &st) == CUDA_SUCCESS && f, "gpa5 lookup");
    return f;
}

NOINLINE void route_gpa5_alloc(size_t n)
{
    CUdeviceptr p;
    prog_check(gpa5_async(CU_GET_PROC_ADDRESS_DEFAULT)(&p, n, NULL) == CUDA_SUCCESS, "gpa5 alloc");
}

NOINLINE void route_gpa5_ptsz_alloc(size_t n)
{
    CUdeviceptr p;
    prog_check(gpa5_async(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)(&p, n, NULL) == CUDA_SUCCESS, "ptsz alloc");
}

/* An array and an IPC import through cuGetProcAddress, as the runtime reaches the driver: each must land
 * in vramtrace's wrapper. Sizes: the array's bytes as the driver gives them, n for the import. */
NOINLINE void route_gpa_others(size_t n)
{
    gpa5_fn gpa = (gpa5_fn)dlsym(libcuda(), "cuGetProcAddress_v2");
    CUresult (*mk)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *) = NULL;
    CUresult (*open)(CUdeviceptr *, CUipcMemHandle, unsigned int) = NULL;
    CUdriverProcAddressQueryResult st;
    prog_check(gpa && gpa("cuArrayCreate", (void **)&mk, 12000, 0, &st) == CUDA_SUCCESS && mk &&
                   gpa("cuIpcOpenMemHandle", (void **)&open, 12000, 0, &st) == CUDA_SUCCESS && open,
               "gpa lookups");
    CUarray arr;
    CUDA_ARRAY_DESCRIPTOR d = {.Width = 512, .Height = 512, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    CUdeviceptr src, imported;
    CUipcMemHandle h;
    prog_check(mk(&arr, &d) == CUDA_SUCCESS, "gpa array");
    prog_check(cuMemAlloc(&src, n) == CUDA_SUCCESS && cuIpcGetMemHandle(&h, src) == CUDA_SUCCESS &&
                   open(&imported, h, 0) == CUDA_SUCCESS && cuMemFree(src) == CUDA_SUCCESS,
               "gpa import");
}

/* cudart's way: fetch cuGetProcAddress through itself, then everything through that. */
NOINLINE void route_gpa_self_alloc(size_t n)
{
    gpa5_fn boot = (gpa5_fn)dlsym(libcuda(), "cuGetProcAddress_v2");
    gpa4_fn gpa4 = NULL;
    alloc_fn f = NULL;
    CUdeviceptr p;
    CUdriverProcAddressQueryResult st;
    prog_check(boot("cuGetProcAddress", (void **)&gpa4, 11030, 0, &st) == CUDA_SUCCESS && gpa4, "self lookup");
    prog_check(gpa4("cuMemAlloc", (void **)&f, 12000, 0) == CUDA_SUCCESS && f, "lookup through self");
    prog_check(f(&p, n) == CUDA_SUCCESS, "self alloc");
}

/* The pre-3.2 cuMemAlloc is not wrapped: it must pass through untouched and be counted. Trimming graph
 * memory is not wrapped either, and needs no watching (the graph figures are read at each dump). */
NOINLINE void route_legacy_lookup(void)
{
    gpa4_fn gpa = (gpa4_fn)dlsym(libcuda(), "cuGetProcAddress");
    void *f = NULL;
    prog_check(gpa("cuMemAlloc", &f, 3000, 0) == CUDA_SUCCESS && f == dlsym(libcuda(), "cuMemAlloc"), "legacy");
    prog_check(gpa("cuDeviceGraphMemTrim", &f, 11040, 0) == CUDA_SUCCESS && f, "graph trim");
}

static CUmemAllocationProp vmm_prop(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}

#define MiB (1u << 20)

/* Sleeps the whole time: a dump signal interrupts nanosleep (EINTR), as it would any program's. */
static void mode_sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

NOINLINE CUmemGenericAllocationHandle vmm_create(size_t n)
{
    CUmemAllocationProp prop = vmm_prop();
    CUmemGenericAllocationHandle h;
    prog_check(cuMemCreate(&h, n, &prop, 0) == CUDA_SUCCESS, "create");
    return h;
}

/* Prints a dump path after each step; the test checks the state each one shows. */
static void mode_vmm(void)
{
    CUdeviceptr va;
    prog_check(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0) == CUDA_SUCCESS, "reserve");
    /* Order 1: unmap before release. */
    CUmemGenericAllocationHandle a = vmm_create(2 * MiB);
    prog_check(cuMemMap(va, 2 * MiB, 0, a, 0) == CUDA_SUCCESS, "map a");
    prog_dump(); /* 1: a live (refs 1 maps 1), one mapping */
    prog_check(cuMemUnmap(va, 2 * MiB) == CUDA_SUCCESS, "unmap a");
    prog_dump(); /* 2: a live (refs 1 maps 0), no mapping */
    prog_check(cuMemRelease(a) == CUDA_SUCCESS, "release a");
    prog_dump(); /* 3: nothing physical */
    /* Order 2: release before unmap. */
    CUmemGenericAllocationHandle b = vmm_create(4 * MiB);
    prog_check(cuMemMap(va, 4 * MiB, 0, b, 0) == CUDA_SUCCESS, "map b");
    prog_check(cuMemRelease(b) == CUDA_SUCCESS, "release b");
    prog_dump(); /* 4: b live through its mapping (refs 0 maps 1) */
    /* Retained handle: one more reference to release. */
    CUmemGenericAllocationHandle r;
    prog_check(cuMemRetainAllocationHandle(&r, (void *)(uintptr_t)va) == CUDA_SUCCESS && r == b, "retain");
    prog_check(cuMemUnmap(va, 4 * MiB) == CUDA_SUCCESS, "unmap b");
    prog_dump(); /* 5: b live through the retained reference (refs 1 maps 0) */
    prog_check(cuMemRelease(r) == CUDA_SUCCESS, "release retained");
    /* Two mappings removed by one unmap. */
    CUmemGenericAllocationHandle c = vmm_create(2 * MiB), d = vmm_create(2 * MiB);
    prog_check(cuMemMap(va, 2 * MiB, 0, c, 0) == CUDA_SUCCESS && cuMemMap(va + 2 * MiB, 2 * MiB, 0, d, 0) == CUDA_SUCCESS,
               "map c d");
    prog_check(cuMemRelease(c) == CUDA_SUCCESS && cuMemRelease(d) == CUDA_SUCCESS, "release c d");
    prog_check(cuMemUnmap(va, 4 * MiB) == CUDA_SUCCESS, "unmap c d");
    /* A failed release changes nothing. */
    printf("release-again %d\n", (int)cuMemRelease(a));
    prog_check(cuMemAddressFree(va, 8 * MiB) == CUDA_SUCCESS, "address free");
    prog_dump(); /* 6: nothing at all */
}

NOINLINE void pool_alloc(CUmemoryPool pool, size_t n, CUdeviceptr *p)
{
    prog_check(cuMemAllocFromPoolAsync(p, n, pool, NULL) == CUDA_SUCCESS, "pool alloc");
}

/* An explicit pool of device memory on device. */
static CUmemoryPool pool_on(int device)
{
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device;
    CUmemoryPool pool;
    prog_check(cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS, "pool create");
    return pool;
}

NOINLINE void dev_alloc(size_t n, CUdeviceptr *p)
{
    prog_check(cuMemAlloc(p, n) == CUDA_SUCCESS, "device alloc");
}

/* Two devices (VRAMTRACE_FAKE_DEVICES=2): plain memory on each; then, with device 0's context current,
 * memory that lives on device 1 all the same: a VMM handle located there, mapped and made accessible
 * from both devices (a peer mapping), and blocks of device 1's pools (dump 1). Then a communicator of a
 * library named like NCCL on device 1 (dump 2). */
static void mode_twodev(void)
{
    CUcontext c0 = NULL, c1 = NULL;
    prog_check(cuInit(0) == CUDA_SUCCESS, "cuInit");
    prog_check(cuDevicePrimaryCtxRetain(&c0, 0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&c1, 1) == CUDA_SUCCESS,
               "retain both");
    CUdeviceptr a, b, c, d, va;
    prog_check(cuCtxSetCurrent(c1) == CUDA_SUCCESS, "device 1 current");
    dev_alloc(5 * MiB, &b);
    prog_check(cuMemAllocAsync(&c, 2 * MiB, NULL) == CUDA_SUCCESS, "async on device 1's default pool");
    prog_check(cuCtxSetCurrent(c0) == CUDA_SUCCESS, "device 0 current");
    dev_alloc(3 * MiB, &a);
    CUmemAllocationProp prop = vmm_prop();
    prop.location.id = 1;
    CUmemGenericAllocationHandle h;
    prog_check(cuMemCreate(&h, 4 * MiB, &prop, 0) == CUDA_SUCCESS, "create on device 1");
    prog_check(cuMemAddressReserve(&va, 4 * MiB, 0, 0, 0) == CUDA_SUCCESS, "reserve");
    prog_check(cuMemMap(va, 4 * MiB, 0, h, 0) == CUDA_SUCCESS, "map");
    CUmemAccessDesc access[2];
    memset(access, 0, sizeof access);
    for (int i = 0; i < 2; i++) {
        access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access[i].location.id = i;
        access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    prog_check(cuMemSetAccess(va, 4 * MiB, access, 2) == CUDA_SUCCESS, "access from both devices");
    pool_alloc(pool_on(1), 1 * MiB, &d);
    prog_dump(); /* 1 */
    /* A communicator on device 1, made by a library named like NCCL, from device 1's context. */
    void *nccl = dlopen("libnccl.so.2", RTLD_NOW);
    int (*init)(int, size_t, size_t) = nccl ? (int (*)(int, size_t, size_t))dlsym(nccl, "fake_nccl_comm_init") : NULL;
    prog_check(cuCtxSetCurrent(c1) == CUDA_SUCCESS, "device 1 current");
    prog_check(init && init(1, 6 * MiB, 2 * MiB) == 0, "nccl init");
    prog_dump(); /* 2 */
}

static void mode_pool(void)
{
    CUmemoryPool pool = pool_on(0);
    cuuint64_t keep = UINT64_MAX;
    prog_check(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == CUDA_SUCCESS, "threshold");
    CUdeviceptr a, b;
    pool_alloc(pool, 4 * MiB, &a);
    pool_alloc(pool, 1 * MiB, &b);
    printf("pool %p\n", (void *)pool);
    prog_dump(); /* 1: reserved 5 MiB, used 5 MiB, two async entries */
    prog_check(cuMemFreeAsync(a, NULL) == CUDA_SUCCESS, "free async");
    prog_dump(); /* 2: reserved 5 MiB, used 1 MiB, one entry */
    prog_check(cuMemPoolTrimTo(pool, 0) == CUDA_SUCCESS, "trim");
    prog_dump(); /* 3: reserved 1 MiB, used 1 MiB */
    prog_check(cuMemFree(b) == CUDA_SUCCESS, "cuMemFree of an async pointer");
    prog_dump(); /* 4: no entry */
}

NOINLINE void kinds_alloc(CUdeviceptr *m, void **h1, void **h2)
{
    prog_check(cuMemAllocManaged(m, 3 * MiB, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS, "managed");
    prog_check(cuMemAllocHost(h1, 5 * MiB) == CUDA_SUCCESS, "host");
    prog_check(cuMemHostAlloc(h2, 7 * MiB, 0) == CUDA_SUCCESS, "hostalloc");
}

static void mode_kinds(void)
{
    CUdeviceptr m, p;
    void *h1, *h2;
    size_t pitch;
    kinds_alloc(&m, &h1, &h2);
    prog_check(cuMemAllocPitch(&p, &pitch, 1000, 10, 4) == CUDA_SUCCESS, "pitch");
    printf("pitch %zu\n", pitch);
    prog_dump(); /* 1: managed 3 MiB, host 12 MiB, device pitch*10 */
    prog_check(cuMemFree(m) == CUDA_SUCCESS && cuMemFreeHost(h1) == CUDA_SUCCESS && cuMemFreeHost(h2) == CUDA_SUCCESS &&
                   cuMemFree(p) == CUDA_SUCCESS,
               "frees");
    prog_dump(); /* 2: nothing */
}

/* The device memory a creation took, by the driver's free memory. */
static size_t took(size_t *before)
{
    size_t free_b, total;
    prog_check(cuMemGetInfo(&free_b, &total) == CUDA_SUCCESS, "free memory");
    size_t t = *before - free_b;
    *before = free_b;
    return t;
}

NOINLINE void arrays_alloc(CUarray *a2, CUarray *a3, CUmipmappedArray *mm, void **reg, size_t sizes[3])
{
    size_t at = 0;
    took(&at);
    CUDA_ARRAY_DESCRIPTOR d2 = {.Width = 1000, .Height = 500, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4};
    CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = 64, .Height = 64, .Depth = 64, .Format = CU_AD_FORMAT_UNSIGNED_INT8,
                                  .NumChannels = 1};
    CUDA_ARRAY3D_DESCRIPTOR dm = {.Width = 256, .Height = 256, .Format = CU_AD_FORMAT_HALF, .NumChannels = 2};
    prog_check(cuArrayCreate(a2, &d2) == CUDA_SUCCESS, "2D array");
    sizes[0] = took(&at);
    prog_check(cuArray3DCreate(a3, &d3) == CUDA_SUCCESS, "3D array");
    sizes[1] = took(&at);
    prog_check(cuMipmappedArrayCreate(mm, &dm, 5) == CUDA_SUCCESS, "mipmapped array");
    sizes[2] = took(&at);
    prog_check((*reg = malloc(3 * MiB)) != NULL && cuMemHostRegister(*reg, 3 * MiB, 0) == CUDA_SUCCESS, "registered");
}

/* Arrays (the device memory each took, which the program prints too: the driver's requirement query
 * answers only for arrays with deferred mapping) and host memory the program registers; then all given
 * back. */
static void mode_arrays(void)
{
    CUarray a2, a3;
    CUmipmappedArray mm;
    void *reg;
    CUDA_ARRAY_MEMORY_REQUIREMENTS r;
    size_t sizes[3];
    ctx();
    arrays_alloc(&a2, &a3, &mm, &reg, sizes);
    prog_check(cuArrayGetMemoryRequirements(&r, a2, 0) != CUDA_SUCCESS, "no requirements without deferred mapping");
    printf("arrays %zu %zu %zu\n", sizes[0], sizes[1], sizes[2]);
    prog_dump();
    prog_check(cuArrayDestroy(a2) == CUDA_SUCCESS && cuArrayDestroy(a3) == CUDA_SUCCESS &&
                   cuMipmappedArrayDestroy(mm) == CUDA_SUCCESS && cuMemHostUnregister(reg) == CUDA_SUCCESS,
               "destroys");
    free(reg);
    prog_dump();
}

NOINLINE void imports_open(CUdeviceptr *ipc, CUdeviceptr *pooled, CUexternalMemory *ext, CUdeviceptr *buf)
{
    CUdeviceptr exported;
    CUipcMemHandle h;
    CUmemoryPool pool;
    CUmemPoolPtrExportData data;
    prog_check(cuMemAlloc(&exported, 6 * MiB) == CUDA_SUCCESS && cuIpcGetMemHandle(&h, exported) == CUDA_SUCCESS,
               "export");
    prog_check(cuIpcOpenMemHandle(ipc, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS, "IPC open");
    prog_check(cuMemFree(exported) == CUDA_SUCCESS, "the exporter's free");
    prog_check(cuDeviceGetDefaultMemPool(&pool, 0) == CUDA_SUCCESS && cuMemAlloc(&exported, 5 * MiB) == CUDA_SUCCESS &&
                   cuMemPoolExportPointer(&data, exported) == CUDA_SUCCESS,
               "pool export");
    prog_check(cuMemPoolImportPointer(pooled, pool, &data) == CUDA_SUCCESS, "pool import");
    prog_check(cuMemFree(exported) == CUDA_SUCCESS, "the exporter's free");
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC ed = {.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, .size = 8 * MiB};
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC bd = {.offset = MiB, .size = 2 * MiB};
    prog_check(cuImportExternalMemory(ext, &ed) == CUDA_SUCCESS && cuExternalMemoryGetMappedBuffer(buf, *ext, &bd) == CUDA_SUCCESS,
               "external memory");
}

/* Memory of other owners mapped here: an IPC import, a pool import, an external memory object and a
 * buffer mapped from it; then each given back the way the API says. */
static void mode_imports(void)
{
    CUdeviceptr ipc, pooled, buf;
    CUexternalMemory ext;
    ctx();
    imports_open(&ipc, &pooled, &ext, &buf);
    prog_dump();
    prog_check(cuIpcCloseMemHandle(ipc) == CUDA_SUCCESS && cuMemFree(pooled) == CUDA_SUCCESS &&
                   cuMemFree(buf) == CUDA_SUCCESS && cuDestroyExternalMemory(ext) == CUDA_SUCCESS,
               "given back");
    prog_dump();
}

/* A graph with an allocation node and no free node: n bytes, the graph's to hand out at each launch. */
NOINLINE CUgraph graph_build(size_t n, CUdeviceptr *dptr, int free_in_graph)
{
    CUgraph g;
    CUgraphNode a, f;
    CUDA_MEM_ALLOC_NODE_PARAMS p = {.poolProps = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                                                  .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}},
                                    .bytesize = n};
    prog_check(cuGraphCreate(&g, 0) == CUDA_SUCCESS && cuGraphAddMemAllocNode(&a, g, NULL, 0, &p) == CUDA_SUCCESS,
               "graph with an allocation node");
    if (free_in_graph)
        prog_check(cuGraphAddMemFreeNode(&f, g, &a, 1, p.dptr) == CUDA_SUCCESS, "free node");
    *dptr = p.dptr;
    return g;
}

/* Graph memory nodes: live from a launch until freed; a graph that frees its own allocation leaves
 * nothing; a graph never launched holds nothing. */
static void mode_graphmem(void)
{
    CUdeviceptr kept, inside, never;
    CUgraphExec e1, e2;
    ctx();
    CUgraph g1 = graph_build(4 * MiB, &inside, 1), g2 = graph_build(6 * MiB, &kept, 0),
            g3 = graph_build(3 * MiB, &never, 0);
    prog_dump(); /* 1: built, none launched: nothing */
    prog_check(cuGraphInstantiate(&e1, g1, 0) == CUDA_SUCCESS && cuGraphInstantiate(&e2, g2, 0) == CUDA_SUCCESS &&
                   cuGraphLaunch(e1, 0) == CUDA_SUCCESS && cuGraphLaunch(e2, 0) == CUDA_SUCCESS,
               "launches");
    prog_check(cuGraphExecDestroy(e2) == CUDA_SUCCESS && cuGraphDestroy(g2) == CUDA_SUCCESS, "destroyed");
    prog_dump(); /* 2: g2's 6 MiB, past its graph's destruction */
    prog_check(cuMemFreeAsync(kept, 0) == CUDA_SUCCESS, "freed by the stream");
    prog_dump(); /* 3: nothing */
    (void)g3;
    (void)never;
}

/* The generic node call (cuGraphAddNode, cuda.h's _v2): an allocation node in the parent, another in a
 * child graph moved into it; a free node in a second graph. */
static CUgraphNode generic_node(CUgraph g, CUgraphNodeParams *p)
{
    CUgraphNode n;
    prog_check(cuGraphAddNode(&n, g, NULL, NULL, 0, p) == CUDA_SUCCESS, "generic node");
    return n;
}

NOINLINE CUgraph graphnode_build(CUdeviceptr *own, CUdeviceptr *child_kept)
{
    CUgraph parent, child;
    CUgraphNodeParams a = {.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC};
    a.alloc.poolProps = (CUmemPoolProps){.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                                         .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    prog_check(cuGraphCreate(&parent, 0) == CUDA_SUCCESS && cuGraphCreate(&child, 0) == CUDA_SUCCESS, "graphs");
    a.alloc.bytesize = 5 * MiB;
    generic_node(parent, &a);
    *own = a.alloc.dptr;
    a.alloc.bytesize = 3 * MiB;
    generic_node(child, &a);
    *child_kept = a.alloc.dptr;
    CUgraphNodeParams c = {.type = CU_GRAPH_NODE_TYPE_GRAPH};
    c.graph.graph = child;
    c.graph.ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE;
    generic_node(parent, &c);
    return parent;
}

static void mode_graphnode(void)
{
    CUdeviceptr own, child_kept;
    CUgraphExec e1, e2;
    CUgraph g2;
    ctx();
    CUgraph g1 = graphnode_build(&own, &child_kept);
    prog_dump(); /* 1: built: nothing */
    prog_check(cuGraphInstantiate(&e1, g1, 0) == CUDA_SUCCESS && cuGraphLaunch(e1, 0) == CUDA_SUCCESS, "launch");
    prog_dump(); /* 2: 5 MiB and the child's 3 MiB */
    CUgraphNodeParams f = {.type = CU_GRAPH_NODE_TYPE_MEM_FREE};
    f.free.dptr = own;
    prog_check(cuGraphCreate(&g2, 0) == CUDA_SUCCESS, "graph 2");
    generic_node(g2, &f);
    prog_check(cuGraphInstantiate(&e2, g2, 0) == CUDA_SUCCESS && cuGraphLaunch(e2, 0) == CUDA_SUCCESS, "launch 2");
    prog_dump(); /* 3: the child's 3 MiB */
    prog_check(cuMemFreeAsync(child_kept, 0) == CUDA_SUCCESS, "freed");
}

/* Stream capture: a stream-ordered allocation kept past the graph and one freed inside it. */
NOINLINE CUgraph capture_build(CUstream s, CUdeviceptr *kept)
{
    CUdeviceptr scratch;
    CUgraph g;
    prog_check(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS, "begin capture");
    prog_check(cuMemAllocAsync(kept, 2 * MiB, s) == CUDA_SUCCESS && cuMemAllocAsync(&scratch, MiB, s) == CUDA_SUCCESS &&
                   cuMemFreeAsync(scratch, s) == CUDA_SUCCESS,
               "captured allocations");
    prog_check(cuStreamEndCapture(s, &g) == CUDA_SUCCESS, "end capture");
    return g;
}

static void mode_capture(void)
{
    CUstream s;
    CUdeviceptr kept;
    CUgraphExec e;
    ctx();
    prog_check(cuStreamCreate(&s, 0) == CUDA_SUCCESS, "stream");
    CUgraph g = capture_build(s, &kept);
    prog_dump(); /* 1: captured, not launched: nothing live */
    prog_check(cuGraphInstantiate(&e, g, 0) == CUDA_SUCCESS && cuGraphLaunch(e, s) == CUDA_SUCCESS, "launch");
    prog_dump(); /* 2: the kept 2 MiB */
    prog_check(cuMemFreeAsync(kept, s) == CUDA_SUCCESS, "freed after");
    prog_dump(); /* 3: nothing */
}

/* A dump asked for while a CUDA graph is being captured in the global mode (the capturing thread itself
 * asks, so the capture is still open while the dump is written): the capture must survive. */
static void mode_capdump(void)
{
    CUstream s;
    CUgraph g;
    CUdeviceptr p;
    ctx();
    prog_check(cuMemAlloc(&p, 3 * MiB) == CUDA_SUCCESS, "alloc");
    prog_check(cuStreamCreate(&s, 0) == CUDA_SUCCESS, "stream");
    prog_check(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS, "begin");
    prog_dump();
    printf("end-capture %d\n", (int)cuStreamEndCapture(s, &g));
    prog_dump(); /* after it: the driver asked as usual */
}

NOINLINE void oom_alloc(size_t n)
{
    CUdeviceptr p;
    printf("oom-result %d\n", (int)cuMemAlloc(&p, n));
}

static void mode_oom(void)
{
    oom_alloc(2 * MiB);
    prog_wait_dumps(1);
}

static void mode_frees(void)
{
    printf("free-null %d\n", (int)cuMemFree(0));
    printf("free-unknown %d\n", (int)cuMemFree((CUdeviceptr)0x12345678));
    printf("freehost-unknown %d\n", (int)cuMemFreeHost((void *)0x12345678));
    printf("release-unknown %d\n", (int)cuMemRelease((CUmemGenericAllocationHandle)0));
    prog_dump();
}

NOINLINE void grow_leak_site(void)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, 1 * MiB) == CUDA_SUCCESS, "grow leak");
}

NOINLINE void grow_steady_site(void)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, 3 * MiB) == CUDA_SUCCESS && cuMemFree(p) == CUDA_SUCCESS, "steady");
}

/* Three API dumps, one more leaked MiB before each; a steady site allocates and frees around them. */
static void mode_grow(void)
{
    CUdeviceptr keep;
    prog_check(cuMemAlloc(&keep, 2 * MiB) == CUDA_SUCCESS, "kept");
    for (int i = 0; i < 3; i++) {
        grow_leak_site();
        grow_steady_site();
        prog_dump();
        mode_sleep_ms(20);
    }
}

/* A device's peak and what held it (tests/t_peak.c): 3 MiB kept at peak_kept_site, 5 x 1 MiB at
 * peak_gone_site freed once the peak is passed, 2 MiB at peak_after_site: the peak is 8 MiB, held by
 * kept (3) and gone (5, freed since). Dump 1. Then 6 MiB more at peak_after_site: a new peak of 11 MiB,
 * kept 3 and after 8, and gone's memory no longer part of it. Dump 2. */
NOINLINE CUdeviceptr peak_kept_site(size_t n)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, n) == CUDA_SUCCESS, "peak kept");
    return p;
}

NOINLINE CUdeviceptr peak_gone_site(size_t n)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, n) == CUDA_SUCCESS, "peak gone");
    return p;
}

NOINLINE CUdeviceptr peak_after_site(size_t n)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, n) == CUDA_SUCCESS, "peak after");
    return p;
}

static void mode_peak(void)
{
    CUdeviceptr gone[5];
    peak_kept_site(3 * MiB);
    for (int i = 0; i < 5; i++)
        gone[i] = peak_gone_site(MiB);
    for (int i = 0; i < 5; i++)
        prog_check(cuMemFree(gone[i]) == CUDA_SUCCESS, "peak free");
    peak_after_site(2 * MiB);
    prog_dump();
    peak_after_site(6 * MiB);
    prog_dump();
}

/* Inlined into its caller: the symbolizer must still show it, with its caller below it. */
static inline __attribute__((always_inline)) void inline_helper_alloc(size_t n)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, n) == CUDA_SUCCESS, "inline alloc");
}

NOINLINE void route_inline_alloc(size_t n)
{
    inline_helper_alloc(n);
}

/* Not exported: dladdr cannot name it, the symbol table can. */
static __attribute__((noinline)) void hidden_static_alloc(size_t n)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, n) == CUDA_SUCCESS, "static alloc");
    __asm__ volatile("");
}

/* depth levels of recursion before allocating: every depth is a stack of its own. */
NOINLINE void many_sites_alloc(int depth)
{
    if (depth > 0) {
        many_sites_alloc(depth - 1);
        __asm__ volatile("");
        return;
    }
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, 4096) == CUDA_SUCCESS, "many sites");
}

/* errno must be what the driver left (the fake leaves it alone) after every kind of wrapper. */
static void mode_errno(void)
{
    CUdeviceptr p, va;
    CUmemGenericAllocationHandle h;
    int kept = 0, calls = 0;
#define KEEPS(call) (errno = EDOM, (void)(call), calls++, kept += errno == EDOM)
    KEEPS(cuMemAlloc(&p, 1000));
    KEEPS(cuMemFree(p));
    KEEPS(cuMemFree((CUdeviceptr)0x999));
    KEEPS(cuMemAllocAsync(&p, 1000, NULL));
    KEEPS(cuMemFreeAsync(p, NULL));
    KEEPS(cuMemAddressReserve(&va, 2 * MiB, 0, 0, 0));
    KEEPS(h = vmm_create(2 * MiB));
    KEEPS(cuMemMap(va, 2 * MiB, 0, h, 0));
    KEEPS(cuMemUnmap(va, 2 * MiB));
    KEEPS(cuMemRelease(h));
    KEEPS(cuMemAddressFree(va, 2 * MiB));
#undef KEEPS
    printf("errno-kept %d of %d\n", kept, calls);
}

static volatile int stop_threads;
static long thread_iters[8];
/* A stream-ordered pointer one thread leaves for another to free (possibly still in its maker's batch). */
static CUdeviceptr thread_handoff;

/* Even threads allocate with cuMemAlloc, odd ones stream-ordered (each allocation waits in its thread's
 * batch before it enters the table, lib/table/vt_pending.h), and now and then hand one to another thread
 * to free. */
NOINLINE void *thread_loop(void *arg)
{
    long id = (long)arg;
    CUdeviceptr keep[16] = {0};
    unsigned seed = (unsigned)id * 7919u;
    int async = id % 2;
    ctx();
    while (!stop_threads) {
        int slot = (int)(rand_r(&seed) % 16);
        if (keep[slot] && async && rand_r(&seed) % 8 == 0) {
            CUdeviceptr theirs = __atomic_exchange_n(&thread_handoff, keep[slot], __ATOMIC_ACQ_REL);
            if (theirs)
                prog_check(cuMemFreeAsync(theirs, 0) == CUDA_SUCCESS, "free of another thread's");
            keep[slot] = 0;
        } else if (keep[slot]) {
            prog_check((async ? cuMemFreeAsync(keep[slot], 0) : cuMemFree(keep[slot])) == CUDA_SUCCESS, "thread free");
            keep[slot] = 0;
        } else {
            size_t n = 256 + rand_r(&seed) % 4096;
            prog_check((async ? cuMemAllocAsync(&keep[slot], n, 0) : cuMemAlloc(&keep[slot], n)) == CUDA_SUCCESS,
                       "thread alloc");
        }
        thread_iters[id]++;
    }
    return NULL;
}

static void mode_threads(int signals)
{
    pthread_t t[8];
    for (long i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, thread_loop, (void *)i);
    struct timespec nap = {0, 200 * 1000};
    for (int i = 0; i < signals; i++) {
        kill(getpid(), SIGUSR1);
        nanosleep(&nap, NULL);
    }
    prog_wait_dumps(1);
    stop_threads = 1;
    long total = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        total += thread_iters[i];
    }
    printf("iterations %ld\n", total);
}

/* Entries made by one thread and freed by another: 64 pointers of 4 KiB made by a thread, freed by the
 * main thread. Then one stream-ordered allocation of 5 KiB made by a thread and freed behind the
 * library's back; the pool hands its address to the main thread's next such allocation, which replaces
 * it. Prints both addresses. */
CUresult vramtrace_fake_free_unseen(CUdeviceptr p);
static CUdeviceptr xthread_ptrs[64], xthread_async;

NOINLINE void *xthread_make(void *arg)
{
    (void)arg;
    ctx();
    for (int i = 0; i < 64; i++)
        prog_check(cuMemAlloc(&xthread_ptrs[i], 4096) == CUDA_SUCCESS, "thread alloc");
    prog_check(cuMemAllocAsync(&xthread_async, 5120, 0) == CUDA_SUCCESS, "thread async alloc");
    prog_check(vramtrace_fake_free_unseen(xthread_async) == CUDA_SUCCESS, "unseen free");
    return NULL;
}

/* Stream-ordered allocations waiting in their thread's batch before they enter the table
 * (lib/table/vt_pending.h, 256 a batch). The main thread makes 600 of 1024 + i bytes and frees every odd
 * one at once (in its batch); of the last batch's, one is freed by cuMemFree and one's cuMemFreeHost fails
 * (kept). A thread makes 8 of 7777 bytes and waits while the main thread frees 4 of them (still in that
 * thread's batch) and dumps; then it makes 2 of 8888, leaves them in its batch and ends; the main thread
 * dumps again. */
static CUdeviceptr batch_theirs[8];
static pthread_barrier_t batch_sync;

NOINLINE void *batch_thread(void *arg)
{
    (void)arg;
    CUdeviceptr p;
    ctx();
    for (int i = 0; i < 8; i++)
        prog_check(cuMemAllocAsync(&batch_theirs[i], 7777, 0) == CUDA_SUCCESS, "thread async");
    pthread_barrier_wait(&batch_sync);
    pthread_barrier_wait(&batch_sync);
    for (int i = 0; i < 2; i++)
        prog_check(cuMemAllocAsync(&p, 8888, 0) == CUDA_SUCCESS, "thread async, left at its end");
    return NULL;
}

static void mode_batch(void)
{
    static CUdeviceptr p[600];
    pthread_t t;
    ctx();
    for (int i = 0; i < 600; i++) {
        prog_check(cuMemAllocAsync(&p[i], 1024 + (size_t)i, 0) == CUDA_SUCCESS, "async");
        if (i % 2)
            prog_check(cuMemFreeAsync(p[i], 0) == CUDA_SUCCESS, "free async");
    }
    prog_check(cuMemFree(p[598]) == CUDA_SUCCESS, "cuMemFree of an async pointer in the batch");
    printf("freehost-async %d\n", (int)cuMemFreeHost((void *)(uintptr_t)p[596]));
    prog_check(pthread_barrier_init(&batch_sync, NULL, 2) == 0 && pthread_create(&t, NULL, batch_thread, NULL) == 0,
               "thread");
    pthread_barrier_wait(&batch_sync);
    for (int i = 0; i < 4; i++)
        prog_check(cuMemFreeAsync(batch_theirs[i], 0) == CUDA_SUCCESS, "free of the thread's");
    prog_dump();
    pthread_barrier_wait(&batch_sync);
    pthread_join(t, NULL);
    prog_dump();
}

/* A pool declares a driver allocation as its segment (vramtrace_pool_segment, found with dlsym as a
 * program that also runs without the library would): not at an address inside it, yes at its start. */
static void mode_poolseg(void)
{
    int (*declare)(const void *, const char *) =
        (int (*)(const void *, const char *))dlsym(RTLD_DEFAULT, "vramtrace_pool_segment");
    CUdeviceptr seg;
    ctx();
    prog_check(declare != NULL, "vramtrace_pool_segment");
    prog_check(cuMemAlloc(&seg, 4 << 20) == CUDA_SUCCESS, "segment");
    printf("inside %d start %d seg 0x%llx\n", declare((const void *)(uintptr_t)(seg + 512), "mypool"),
           declare((const void *)(uintptr_t)seg, "mypool"), (unsigned long long)seg);
    prog_dump();
}

static void mode_xthread(void)
{
    pthread_t t;
    CUdeviceptr again = 0;
    CUmemoryPool pool;
    cuuint64_t keep = UINT64_MAX; /* the pool keeps freed memory, as torch sets it */
    ctx();
    prog_check(cuDeviceGetDefaultMemPool(&pool, 0) == CUDA_SUCCESS, "default pool");
    prog_check(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) == CUDA_SUCCESS, "threshold");
    prog_check(pthread_create(&t, NULL, xthread_make, NULL) == 0, "thread");
    pthread_join(t, NULL);
    prog_dump();
    for (int i = 0; i < 64; i++)
        prog_check(cuMemFree(xthread_ptrs[i]) == CUDA_SUCCESS, "main free");
    prog_check(cuMemAllocAsync(&again, 5120, 0) == CUDA_SUCCESS, "main async alloc");
    printf("unseen 0x%llx again 0x%llx\n", (unsigned long long)xthread_async, (unsigned long long)again);
    prog_dump();
}

NOINLINE void exit_leak_alloc(size_t n)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, n) == CUDA_SUCCESS, "leak alloc");
}

static void mode_exit(void)
{
    CUdeviceptr p, q;
    exit_leak_alloc(1111111);
    prog_check(cuMemAlloc(&p, 2222) == CUDA_SUCCESS && cuMemAlloc(&q, 3333) == CUDA_SUCCESS, "allocs");
    prog_check(cuMemFree(p) == CUDA_SUCCESS && cuMemFree(q) == CUDA_SUCCESS, "frees");
    exit_leak_alloc(4444444);
}

NOINLINE void fork_child_alloc(size_t n)
{
    CUdeviceptr p;
    prog_check(cuMemAlloc(&p, n) == CUDA_SUCCESS, "child alloc");
}

static void mode_fork(void)
{
    CUdeviceptr waiting;
    exit_leak_alloc(5555);
    /* In the parent's batch at the fork (lib/table/vt_pending.h): the parent's, never the child's. */
    prog_check(cuMemAllocAsync(&waiting, 5556, 0) == CUDA_SUCCESS, "async before the fork");
    fflush(stdout);
    pid_t pid = fork();
    prog_check(pid >= 0, "fork");
    if (pid == 0) {
        ctx();
        fork_child_alloc(6666);
        printf("child %ld\n", (long)getpid());
        prog_dump();
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("parent %ld child-status %d\n", (long)getpid(), WEXITSTATUS(st));
}

static volatile sig_atomic_t handler_calls;
static void own_handler(int sig)
{
    (void)sig;
    handler_calls++;
}

static void mode_sigowner(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_handler;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    raise(SIGUSR1);
    printf("handler-calls %d\n", (int)handler_calls);
}

/* Run with libsig_early.so preloaded after libvramtrace.so: its handler was installed first. */
static void mode_sigchain(void)
{
    volatile sig_atomic_t *calls = (volatile sig_atomic_t *)dlsym(RTLD_DEFAULT, "sig_early_calls");
    prog_check(calls != NULL, "libsig_early.so preloaded");
    raise(SIGUSR1);
    prog_wait_dumps(1);
    raise(SIGUSR1);
    prog_wait_dumps(2);
    printf("early-handler-calls %d\n", (int)*calls);
}


static void mode_rtldnext(void)
{
    void *h = dlopen("libnext_a.so", RTLD_NOW | RTLD_GLOBAL);
    prog_check(h != NULL, "dlopen libnext_a");
    int (*call)(void) = (int (*)(void))dlsym(h, "vt_next_call");
    prog_check(call != NULL, "vt_next_call");
    printf("next %d\n", call());
    printf("missing %s\n", dlsym(h, "no_such_symbol") == NULL && dlerror() != NULL ? "null+error" : "wrong");
    printf("missing-cu %s\n", dlsym(libcuda(), "cuNoSuchThing") == NULL && dlerror() != NULL ? "null+error" : "wrong");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "rtldnext"))
        ctx(); /* a context: vramtrace is on from here */
    if (!strcmp(mode, "direct"))
        route_direct_alloc(1000003);
    else if (!strcmp(mode, "dlsym"))
        route_dlsym_alloc(1000033);
    else if (!strcmp(mode, "gpa4"))
        route_gpa4_alloc(1000037);
    else if (!strcmp(mode, "gpa5"))
        route_gpa5_alloc(1000039);
    else if (!strcmp(mode, "gpa5_ptsz"))
        route_gpa5_ptsz_alloc(1000081);
    else if (!strcmp(mode, "gpa_others"))
        route_gpa_others(1000117);
    else if (!strcmp(mode, "gpa_self"))
        route_gpa_self_alloc(1000099);
    else if (!strcmp(mode, "legacy"))
        route_legacy_lookup();
    else if (!strcmp(mode, "vmm"))
        mode_vmm();
    else if (!strcmp(mode, "twodev"))
        mode_twodev();
    else if (!strcmp(mode, "pool"))
        mode_pool();
    else if (!strcmp(mode, "kinds"))
        mode_kinds();
    else if (!strcmp(mode, "oom"))
        mode_oom();
    else if (!strcmp(mode, "frees"))
        mode_frees();
    else if (!strcmp(mode, "capture"))
        mode_capture();
    else if (!strcmp(mode, "capdump"))
        mode_capdump();
    else if (!strcmp(mode, "graphmem"))
        mode_graphmem();
    else if (!strcmp(mode, "graphnode"))
        mode_graphnode();
    else if (!strcmp(mode, "imports"))
        mode_imports();
    else if (!strcmp(mode, "arrays"))
        mode_arrays();
    else if (!strcmp(mode, "poolseg"))
        mode_poolseg();
    else if (!strcmp(mode, "xthread"))
        mode_xthread();
    else if (!strcmp(mode, "batch"))
        mode_batch();
    else if (!strcmp(mode, "threads"))
        mode_threads(argc > 2 ? atoi(argv[2]) : 200);
    else if (!strcmp(mode, "exit"))
        mode_exit();
    else if (!strcmp(mode, "fork"))
        mode_fork();
    else if (!strcmp(mode, "sigowner"))
        mode_sigowner();
    else if (!strcmp(mode, "errno"))
        mode_errno();
    else if (!strcmp(mode, "sigchain"))
        mode_sigchain();
    else if (!strcmp(mode, "sleep"))
        mode_sleep_ms(argc > 2 ? atoi(argv[2]) : 500);
    else if (!strcmp(mode, "symbols")) {
        route_inline_alloc(1234567);
        hidden_static_alloc(2345678);
    } else if (!strcmp(mode, "library")) {
        void *h = dlopen("libcublas.so.13", RTLD_NOW);
        int (*create)(size_t) = h ? (int (*)(size_t))dlsym(h, "fake_cublas_create") : NULL;
        prog_check(create && create(4567890) == 0, "library alloc");
        prog_dump();
    } else if (!strcmp(mode, "unload")) {
        /* A library allocates and is unloaded; another is loaded, likely where it was: the live allocation's
         * frames in the first must not be named after the second. */
        void *h = dlopen("libcublas.so.13", RTLD_NOW);
        int (*create)(size_t) = h ? (int (*)(size_t))dlsym(h, "fake_cublas_create") : NULL;
        prog_check(create && create(4567890) == 0, "library alloc");
        Dl_info was, now;
        prog_check(dladdr((void *)create, &was) != 0, "dladdr");
        void *old_base = was.dli_fbase;
        prog_check(dlclose(h) == 0, "dlclose");
        void *h2 = dlopen("libnccl.so.2", RTLD_NOW);
        void *sym = h2 ? dlsym(h2, "fake_nccl_comm_init") : NULL;
        prog_check(sym && dladdr(sym, &now) != 0, "second library");
        printf("reused %d\n", now.dli_fbase == old_base);
        prog_dump();
    } else if (!strcmp(mode, "manysites")) {
        for (int i = 0; i < 300; i++)
            many_sites_alloc(i % 100);
        prog_dump();
    } else if (!strcmp(mode, "grow"))
        mode_grow();
    else if (!strcmp(mode, "peak"))
        mode_peak();
    else if (!strcmp(mode, "rtldnext"))
        mode_rtldnext();
    else if (!strcmp(mode, "apidump"))
        prog_dump();
    else {
        fprintf(stderr, "unknown mode '%s'\n", mode);
        return 2;
    }
    printf("done\n");
    return 0;
}
