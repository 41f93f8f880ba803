/* For tests/t_tracker.sh: a program of torch's C++ kind (no Python) whose tensors come from the fake
 * c10 (tests/fake/c10), every one through one factory, make_tensor(). Each request takes an 8 MiB
 * scratch tensor and gives it back, refreshes a bounded cache of four, and keeps a 3 MiB record (the
 * leak, keep_request). First it loads two weights whose blocks are larger than asked for: 1000 bytes
 * (a block of 1024) and 19.5 MiB (a fresh segment of 20 MiB, the 512 KiB left too little to split off).
 * Three dumps through the public API between rounds of requests, a fourth after
 * the cache is emptied; after each, the dump's path and the allocator's own totals ("truth N ALLOCATED
 * RESERVED"). Built -O0: every function keeps its frame. */
#include <stddef.h>
#include <stdio.h>

#include "vramtrace.h"
#pragma weak vramtrace_dump

void *fake_c10_malloc(size_t nbytes);
void fake_c10_free(void *p);
void fake_c10_empty_cache(void);
unsigned long long fake_c10_allocated(void);
unsigned long long fake_c10_reserved(void);

static void *cache[4], *kept[64];
static int nkept;

__attribute__((noinline)) static void *make_tensor(size_t n)
{
    return fake_c10_malloc(n);
}

__attribute__((noinline)) static void cache_fill(int i)
{
    if (cache[i % 4])
        fake_c10_free(cache[i % 4]);
    cache[i % 4] = make_tensor(512 << 10);
}

__attribute__((noinline)) static void keep_request(void)
{
    if (nkept < 64)
        kept[nkept++] = make_tensor(3 << 20);
}

__attribute__((noinline)) static void handle(int r)
{
    void *scratch = make_tensor(8 << 20);
    cache_fill(r);
    keep_request();
    fake_c10_free(scratch);
}

static void *weights[2];

__attribute__((noinline)) static void load_weights(void)
{
    weights[0] = make_tensor(1000);
    weights[1] = make_tensor((19 << 20) + (512 << 10));
}

static void dump(int i)
{
    char path[4096];
    if (vramtrace_dump && vramtrace_dump(path, sizeof path) == 0)
        printf("dump %d %s\n", i, path);
    printf("truth %d %llu %llu\n", i, fake_c10_allocated(), fake_c10_reserved());
    fflush(stdout);
}

int main(void)
{
    load_weights();
    for (int i = 1; i <= 3; i++) {
        for (int r = 0; r < 8; r++)
            handle(8 * i + r);
        dump(i);
    }
    fake_c10_empty_cache();
    dump(4);
    return 0;
}
