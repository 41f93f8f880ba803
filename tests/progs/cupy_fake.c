/* The native half of the fake CuPy (tests/fake/cupy): the pool's device memory is taken here, as real
 * CuPy's is taken inside its own extension modules, so that the reader tells CuPy's driver allocations
 * by module (a path with "cupy" in it) the same way. */
#include <stddef.h>

int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);

int cupy_fake_malloc(void **p, size_t n)
{
    volatile int r = cudaMalloc(p, n); /* not a tail call: this frame stays on the stack */
    return r;
}

int cupy_fake_free(void *p)
{
    volatile int r = cudaFree(p);
    return r;
}
