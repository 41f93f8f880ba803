/* The native half of the fake JAX (tests/fake/jax): its pool's device memory is taken here, as XLA's
 * is taken inside jaxlib or its CUDA plugin, so that the reader tells JAX's driver allocations by
 * module (a path with "xla" in it) the same way. */
#include <stddef.h>

int cudaMalloc(void **p, size_t n);

int xla_fake_malloc(void **p, size_t n)
{
    volatile int r = cudaMalloc(p, n); /* not a tail call: this frame stays on the stack */
    return r;
}
