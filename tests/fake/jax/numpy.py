# jax.numpy of the fake JAX (tests/fake/jax): device arrays of n bytes, given back when dropped.
import jax


class Array:
    def __init__(self, n):
        self._dev = jax.local_devices()[0]
        self._n = self._dev.pool.alloc(int(n))

    def __del__(self):
        if getattr(self, "_n", 0):
            self._dev.pool.free(self._n)
            self._n = 0


def empty(n):
    return Array(n)
