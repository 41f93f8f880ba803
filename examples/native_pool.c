/* A native caching allocator that tells vramtrace about its blocks. It takes 8 MiB segments from
 * cudaMalloc, hands out blocks from them first-fit, and keeps freed blocks for reuse: without the
 * hooks, a profiler sees only the segments. With vramtrace_block_alloc/vramtrace_block_free, reports
 * split the pool's reserved memory into allocated blocks (with their call sites) and free space.
 * The hooks are weak: the same binary runs with or without libvramtrace.so preloaded.
 *   native_pool [REQUESTS]   (prints its own live-block figures at the end)
 * Built by cc against the fake driver in the tests, by nvcc on a GPU. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "vramtrace.h"

#pragma weak vramtrace_block_alloc
#pragma weak vramtrace_block_free

#define SEGMENT (8u << 20)
#define MAX_SEGMENTS 64
#define MAX_BLOCKS 4096

struct block {
    char *addr;
    size_t size;
    int used;
};

static struct {
    char *base[MAX_SEGMENTS];
    int nseg;
    struct block b[MAX_BLOCKS]; /* every block of every segment, used or free */
    int nb;
} pool;

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
            if (vramtrace_block_alloc)
                vramtrace_block_alloc(b->addr, b->size, 0, "example_pool");
            return b->addr;
        }
        void *seg;
        if (pass || size > SEGMENT || pool.nseg == MAX_SEGMENTS || pool.nb == MAX_BLOCKS ||
            cudaMalloc(&seg, SEGMENT) != cudaSuccess)
            return NULL;
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
            if (vramtrace_block_free)
                vramtrace_block_free(p);
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

int main(int argc, char **argv)
{
    int requests = argc > 1 ? atoi(argv[1]) : 100;
    for (int r = 0; r < requests; r++) {
        scratch((size_t)(r % 7 + 1) << 16);
        if (r % 4 == 0)
            keep_result((size_t)(r % 3 + 1) << 15); /* the leak: one result in four is never given back */
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
