/* A native caching allocator that tells vramtrace about its blocks. It takes 8 MiB segments from
 * cudaMalloc, hands out blocks from them first-fit, and keeps freed blocks for reuse: without the
 * hooks, a profiler sees only the segments. With vramtrace_block_alloc/vramtrace_block_free, reports
 * split the pool's reserved memory into allocated blocks (with their call sites) and free space; a
 * segment stays the pool's (cache, not the program's memory) when all its blocks are back, since its
 * first block started at its address, or when the pool declares it (vramtrace_pool_segment, which a
 * pool whose blocks do not start at a segment's address needs; "declare" calls it here too).
 * The hooks are weak: the same binary runs with or without libvramtrace.so preloaded.
 * With "nvtx" the pool uses no vramtrace call at all: it describes itself through NVTX's memory API, as
 * pools do for compute-sanitizer (each segment a heap, each block a region), which vramtrace reads when it
 * is NVTX's tool (NVTX_INJECTION64_PATH=libvramtrace.so; `vramtrace run` sets it).
 *   native_pool [REQUESTS [leak|idle [declare|nvtx]]]   (prints its own live-block figures at the end)
 * leak and idle take a dump after REQUESTS requests and another after a second phase: leak keeps one
 * result in four as before; idle gives every kept result back and uses two whole segments' worth of
 * scratch, so the pool grows while what the program holds shrinks.
 * Built by cc against the fake driver in the tests, by nvcc on a GPU. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"

#pragma weak vramtrace_block_alloc
#pragma weak vramtrace_block_free
#pragma weak vramtrace_pool_segment
#pragma weak vramtrace_dump

#define SEGMENT (8u << 20)
#define MAX_SEGMENTS 64
#define MAX_BLOCKS 4096

struct block {
    char *addr;
    size_t size;
    int used;
};

static int declare; /* declare each segment up front (vramtrace_pool_segment) */
static int nvtx;    /* describe the pool through NVTX instead of vramtrace's calls */

static struct {
    char *base[MAX_SEGMENTS];
    nvtxMemHeapHandle_t heap[MAX_SEGMENTS]; /* with nvtx: each segment's heap */
    int nseg;
    struct block b[MAX_BLOCKS]; /* every block of every segment, used or free */
    int nb;
} pool;

/* NVTX: a segment is a heap the pool sub-allocates from, named by its message. */
static nvtxMemHeapHandle_t nvtx_heap(void *seg)
{
    nvtxMemVirtualRangeDesc_t range = {.size = SEGMENT, .ptr = seg};
    nvtxMemHeapDesc_t desc = {.extCompatID = NVTX_EXT_COMPATID_MEM,
                              .structSize = sizeof desc,
                              .usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR,
                              .type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS,
                              .typeSpecificDescSize = sizeof range,
                              .typeSpecificDesc = &range,
                              .messageType = NVTX_MESSAGE_TYPE_ASCII,
                              .message = {.ascii = "example_pool"}};
    return nvtxMemHeapRegister(NULL, &desc);
}

/* NVTX: a block handed out is a region of its segment's heap. */
static void nvtx_region(const struct block *b)
{
    int s = 0;
    while (s + 1 < pool.nseg && !(b->addr >= pool.base[s] && b->addr < pool.base[s] + SEGMENT))
        s++;
    nvtxMemVirtualRangeDesc_t range = {.size = b->size, .ptr = b->addr};
    nvtxMemRegionsRegisterBatch_t batch = {.extCompatID = NVTX_EXT_COMPATID_MEM,
                                           .structSize = sizeof batch,
                                           .regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS,
                                           .heap = pool.heap[s],
                                           .regionCount = 1,
                                           .regionDescElementSize = sizeof range,
                                           .regionDescElements = &range};
    nvtxMemRegionsRegister(NULL, &batch);
}

static void *pool_alloc(size_t size)
{
    size = (size + 511) & ~(size_t)511;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < pool.nb; i++) {
            struct block *b = &pool.b[i];
            if (b->used || b->size < size)
                continue;
            if (b->size > size && pool.nb < MAX_BLOCKS) { /* split: the rest stays free */
                pool.b[pool.nb++] = (struct block){b->addr + size, b->size - size, 0};
                b->size = size;
            }
            b->used = 1;
            if (nvtx)
                nvtx_region(b);
            else if (vramtrace_block_alloc)
                vramtrace_block_alloc(b->addr, b->size, 0, "example_pool");
            return b->addr;
        }
        void *seg;
        if (pass || size > SEGMENT || pool.nseg == MAX_SEGMENTS || pool.nb == MAX_BLOCKS ||
            cudaMalloc(&seg, SEGMENT) != cudaSuccess)
            return NULL;
        if (declare && vramtrace_pool_segment)
            vramtrace_pool_segment(seg, "example_pool");
        if (nvtx)
            pool.heap[pool.nseg] = nvtx_heap(seg);
        pool.base[pool.nseg++] = seg;
        pool.b[pool.nb++] = (struct block){seg, SEGMENT, 0};
    }
    return NULL;
}

static void pool_free(void *p)
{
    for (int i = 0; i < pool.nb; i++)
        if (pool.b[i].addr == p && pool.b[i].used) {
            pool.b[i].used = 0;
            if (nvtx) {
                nvtxMemRegionRef_t ref = {.pointer = p};
                nvtxMemRegionsUnregisterBatch_t batch = {.extCompatID = NVTX_EXT_COMPATID_MEM,
                                                         .structSize = sizeof batch,
                                                         .refType = NVTX_MEM_REGION_REF_TYPE_POINTER,
                                                         .refCount = 1,
                                                         .refElementSize = sizeof ref,
                                                         .refElements = &ref};
                nvtxMemRegionsUnregister(NULL, &batch);
            } else if (vramtrace_block_free) {
                vramtrace_block_free(p);
            }
            return;
        }
}

static void *kept[1024];
static int nkept;

__attribute__((noinline)) static void keep_result(size_t size)
{
    void *p = pool_alloc(size);
    if (p && nkept < 1024)
        kept[nkept++] = p;
}

__attribute__((noinline)) static void scratch(size_t size)
{
    void *p = pool_alloc(size);
    if (p)
        pool_free(p);
}

static void requests(int from, int to, int keep)
{
    for (int r = from; r < to; r++) {
        scratch((size_t)(r % 7 + 1) << 16);
        if (keep && r % 4 == 0)
            keep_result((size_t)(r % 3 + 1) << 15); /* the leak: one result in four is never given back */
    }
}

static void dump(const char *tag)
{
    char path[4096] = "";
    if (vramtrace_dump && vramtrace_dump(path, sizeof path) == 0)
        printf("dump %s %s\n", tag, path);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    const char *mode = argc > 2 ? argv[2] : "";
    declare = argc > 3 && !strcmp(argv[3], "declare");
    nvtx = argc > 3 && !strcmp(argv[3], "nvtx");
    requests(0, n, 1);
    if (!strcmp(mode, "leak") || !strcmp(mode, "idle")) {
        dump("first");
        if (!strcmp(mode, "leak")) {
            requests(n, 2 * n, 1);
        } else {
            for (int i = 0; i < nkept; i++)
                pool_free(kept[i]);
            nkept = 0;
            scratch(SEGMENT); /* each a whole fresh segment, given back at once */
            scratch(SEGMENT);
        }
        dump("second");
    }
    size_t live = 0;
    int nlive = 0;
    for (int i = 0; i < pool.nb; i++)
        if (pool.b[i].used) {
            live += pool.b[i].size;
            nlive++;
        }
    printf("segments %d bytes %zu live_blocks %d live_bytes %zu\n", pool.nseg, (size_t)pool.nseg * SEGMENT, nlive, live);
    return 0;
}
