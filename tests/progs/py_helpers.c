/* Native helpers for tests/progs/py_sites.py: an allocation on a native thread (one with no Python
 * thread state), and an allocation made late inside a call that released the GIL, timed. */
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

int cudaMalloc(void **p, size_t size);

struct job {
    size_t size;
    void *ptr;
    int rc;
};

__attribute__((noinline)) static void *native_thread_main(void *arg)
{
    struct job *j = arg;
    j->rc = cudaMalloc(&j->ptr, j->size);
    return NULL;
}

int native_thread_alloc(size_t size, void **out)
{
    struct job j = {size, NULL, -1};
    pthread_t t;
    if (pthread_create(&t, NULL, native_thread_main, &j) != 0)
        return -1;
    pthread_join(t, NULL);
    *out = j.ptr;
    return j.rc;
}

/* Sleeps delay_us first, so that another thread can take the GIL meanwhile; returns the
 * microseconds cudaMalloc took, -1 when it failed. */
long delayed_alloc(size_t size, void **out, unsigned delay_us)
{
    usleep(delay_us);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = cudaMalloc(out, size);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return rc ? -1 : (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
}
