/* Benchmark: T threads each making N cuMemAlloc + cuMemFree pairs at once on the fake driver (each
 * thread keeps a few allocations live, as a serving process's threads do); with "async", stream-ordered
 * cuMemAllocAsync + cuMemFreeAsync pairs instead (torch's cudaMallocAsync backend: one per tensor). Run
 * bare and under the library; prints the wall-clock nanoseconds per pair per thread (1 thread: the
 * single-thread cost; T threads on enough cores: the same if nothing is shared).
 *   bench_threads [THREADS [PAIRS [async]]] */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long pairs = 200000;
static int async_pairs;
static pthread_barrier_t start;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
    (void)arg;
    CUcontext c;
    CUdeviceptr keep[8] = {0}, p;
    if (cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        exit(1);
    for (int i = 0; i < 8; i++)
        if (cuMemAlloc(&keep[i], 4096))
            exit(1);
    for (long i = 0; i < pairs + 1000; i++) {
        if (i == 1000) /* after the warm-up: stacks interned, caches filled */
            pthread_barrier_wait(&start);
        if (async_pairs ? cuMemAllocAsync(&p, 256, 0) || cuMemFreeAsync(p, 0) : cuMemAlloc(&p, 256) || cuMemFree(p))
            exit(1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2)
        pairs = atol(argv[2]);
    async_pairs = argc > 3 && argv[3][0] == 'a';
    if (threads < 1 || threads > 256 || pairs < 1 || cuInit(0))
        return 1;
    pthread_t t[256];
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_barrier_wait(&start);
    double t0 = now();
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("%.1f\n", (now() - t0) * 1e9 / (double)pairs);
    return 0;
}
