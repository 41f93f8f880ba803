/* Native helpers for tests/progs/py_sites.py: an allocation on a native thread (one with no Python
 * thread state), an allocation made late inside a call that released the GIL, timed, and one call of
 * cudaMalloc reached by two native paths. */
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

/* One call of cudaMalloc (one calling instruction) under two native paths, so that the library's reuse
 * of native frames for a Python stack and caller must tell them apart. Exported, so that dladdr names
 * them; the work after each call keeps it from being a tail call, which would drop the frame. */
static volatile int py_helpers_after;

__attribute__((noinline)) int py_helpers_one_call(void **p, size_t size)
{
    int rc = cudaMalloc(p, size);
    py_helpers_after++;
    return rc;
}

__attribute__((noinline)) int py_helpers_path_a(void **p, size_t size)
{
    int rc = py_helpers_one_call(p, size);
    py_helpers_after++;
    return rc;
}

__attribute__((noinline)) int py_helpers_path_b(void **p, size_t size)
{
    int rc = py_helpers_one_call(p, size);
    py_helpers_after++;
    return rc;
}

int two_paths_alloc(int b, size_t size, void **out)
{
    return b ? py_helpers_path_b(out, size) : py_helpers_path_a(out, size);
}
