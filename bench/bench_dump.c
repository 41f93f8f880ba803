/* Benchmark: time to write a dump of LIVE live allocations (default 100,000) over STACKS distinct
 * stacks (default 10,000) of SIZE bytes each, and how long a program thread's alloc+free pair was held
 * up meanwhile (its worst pair during the dump against its worst pair before). Run under the library;
 * prints the figures and the dump's path. With MORE (a fourth argument), MORE dumps follow, each after
 * LIVE / 100 more allocations at one site (a leak, for `vramtrace trend` over a series): their paths on
 * one line, "series PATH...". The churning thread's context switches during the dump tell a wait from a
 * preemption: a wait on a lock of the library's is a voluntary switch, a thread the scheduler put aside for
 * another is an involuntary one (on a small machine the dump is one more busy thread, and the kernel's
 * writeback of the file more). */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static long live = 100000, stacks = 10000, size = 4096, more;
static int levels;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static CUdeviceptr *ptrs;
static void walk(int id, int level, int slot);

/* Two functions chosen by the bits of id give each id its own call path. */
__attribute__((noinline)) void path_a(int id, int level, int slot) { walk(id, level + 1, slot); __asm__ volatile(""); }
__attribute__((noinline)) void path_b(int id, int level, int slot) { walk(id, level + 1, slot); __asm__ volatile(""); }

static void walk(int id, int level, int slot)
{
    if (level == levels) {
        if (cuMemAlloc(&ptrs[slot], (size_t)size))
            exit(1);
        return;
    }
    ((id >> level) & 1 ? path_b : path_a)(id, level, slot);
}

static volatile int phase; /* 0 before, 1 during the dump, 2 done */
static double worst[2];
static long waited, preempted, slow; /* during the dump: voluntary and involuntary switches; pairs over 2 ms */

static void *churn(void *arg)
{
    (void)arg;
    CUcontext c;
    cuDevicePrimaryCtxRetain(&c, 0);
    cuCtxSetCurrent(c);
    struct rusage at_start = {0}, at_end;
    int seen = 0;
    while (phase < 2) {
        CUdeviceptr p;
        int ph = phase;
        if (ph == 1 && !seen) {
            getrusage(RUSAGE_THREAD, &at_start);
            seen = 1;
        }
        double t = now();
        if (cuMemAlloc(&p, 256) || cuMemFree(p))
            exit(1);
        t = now() - t;
        if (ph < 2 && t > worst[ph])
            worst[ph] = t;
        if (ph == 1 && t > 2e-3)
            slow++;
    }
    getrusage(RUSAGE_THREAD, &at_end);
    if (seen) {
        waited = at_end.ru_nvcsw - at_start.ru_nvcsw;
        preempted = at_end.ru_nivcsw - at_start.ru_nivcsw;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        live = atol(argv[1]);
    if (argc > 2)
        stacks = atol(argv[2]);
    if (argc > 3)
        size = atol(argv[3]);
    if (argc > 4)
        more = atol(argv[4]);
    while ((1L << levels) < stacks)
        levels++;
    CUcontext c;
    if (live <= 0 || stacks <= 0 || size <= 0 || !(ptrs = calloc((size_t)live, sizeof *ptrs)) || cuInit(0) ||
        cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        return 1;
    for (long i = 0; i < live; i++)
        walk((int)(i % stacks), 0, (int)i);
    int (*dump)(char *, size_t) = (int (*)(char *, size_t))dlsym(RTLD_DEFAULT, "vramtrace_dump");
    if (!dump) {
        fprintf(stderr, "run under libvramtrace.so\n");
        return 1;
    }
    pthread_t t;
    pthread_create(&t, NULL, churn, NULL);
    struct timespec nap = {0, 200 * 1000 * 1000};
    nanosleep(&nap, NULL);
    char path[4096];
    phase = 1;
    double t0 = now();
    int r = dump(path, sizeof path);
    double dt = now() - t0;
    phase = 2;
    pthread_join(t, NULL);
    struct stat st;
    if (r || stat(path, &st))
        return 1;
    /* The library's own figure: the longest hold of its table lock during the copy. */
    unsigned long long hold = 0;
    FILE *f = fopen(path, "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "counter snapshot_hold_ns %llu", &hold) == 1)
            break;
    if (f)
        fclose(f);
    printf("dump_ms %.1f size_mib %.1f longest_lock_hold_us %.1f worst_pair_before_us %.1f worst_pair_during_us %.1f "
           "pairs_over_2ms %ld waits %ld preemptions %ld path %s\n",
           dt * 1e3, st.st_size / 1048576.0, hold / 1e3, worst[0] * 1e6, worst[1] * 1e6, slow, waited, preempted, path);
    if (more > 0) {
        printf("series %s", path);
        CUdeviceptr p;
        for (long k = 0; k < more; k++) {
            for (long i = 0; i < live / 100; i++)
                if (cuMemAlloc(&p, (size_t)size))
                    return 1;
            if (dump(path, sizeof path))
                return 1;
            printf(" %s", path);
        }
        putchar('\n');
    }
    return 0;
}
