/* Benchmark: what each allocating thread costs in resident memory. T threads each make one cuMemAlloc and
 * cuMemFree on the fake driver and then wait, all alive, while the main thread reads VmRSS; run bare and
 * under the library, the difference over T is the library's memory per allocating thread (its stack
 * cache, its batch of table entries, its thread-local state).
 *   bench_thread_mem [THREADS]   prints: THREADS RSS_KIB */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rss.h"

static pthread_barrier_t done, leave;

static void *worker(void *arg)
{
    (void)arg;
    CUcontext c;
    CUdeviceptr p;
    if (cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c) || cuMemAlloc(&p, 4096) || cuMemFree(p))
        exit(1);
    pthread_barrier_wait(&done);
    pthread_barrier_wait(&leave);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    if (cuInit(0))
        return 1;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    pthread_barrier_init(&done, NULL, (unsigned)n + 1);
    pthread_barrier_init(&leave, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], &a, worker, NULL))
            return 1;
    pthread_barrier_wait(&done);
    printf("%d %ld\n", n, bench_rss_kib());
    pthread_barrier_wait(&leave);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
