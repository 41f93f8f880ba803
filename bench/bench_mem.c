/* Benchmark: resident memory per live allocation. Makes N live cuMemAlloc(64) allocations on the fake
 * driver (from 64 call sites) and prints the growth of the process's resident set divided by N; run bare
 * and under the library, the difference is what the library keeps per tracked allocation. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    if (f)
        fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static CUdeviceptr *ptrs;

#define SITE(k) __attribute__((noinline)) static void site##k(long i) { cuMemAlloc(&ptrs[i], 64); __asm__ volatile(""); }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
static void (*const sites[8])(long) = {site0, site1, site2, site3, site4, site5, site6, site7};

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    CUcontext c;
    if (n < 1 || !(ptrs = calloc((size_t)n, sizeof *ptrs)) || cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) ||
        cuCtxSetCurrent(c))
        return 1;
    for (long i = 0; i < (long)(4096 / sizeof *ptrs) * 2 && i < n; i++) /* the array itself, resident first */
        ptrs[i] = 0;
    for (long i = 0; i < n; i += 512)
        ptrs[i] = 0;
    cuMemAlloc(&ptrs[0], 64); /* warm: the library's first use, stacks interned */
    cuMemFree(ptrs[0]);
    long before = rss_bytes();
    for (long i = 0; i < n; i++)
        sites[i % 8](i);
    printf("%.1f\n", (double)(rss_bytes() - before) / (double)n);
    return 0;
}
