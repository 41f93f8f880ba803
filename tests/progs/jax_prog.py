# CPU test program for the JAX bridge (tests/t_bridge.c): allocates through the fake JAX
# (tests/fake/jax) and dumps twice, printing the device's own memory_stats() at each dump as
# "figures TAG PATH BYTES_IN_USE POOL_BYTES 0 0". leak: every request keeps its array; cache: requests
# of ever larger sizes, each array dropped at once. A dump before JAX made its backend comes first.
#   jax_prog.py leak|cache
import sys

import jax
import jax.numpy as jnp
from take_dump import dump


def figures(tag, path):
    st = jax.local_devices()[0].memory_stats()
    print("figures", tag, path, st["bytes_in_use"], st["pool_bytes"], 0, 0, flush=True)


def keep_request(kept, n):
    kept.append(jnp.empty(n))


def scratch_request(n):
    a = jnp.empty(n)
    del a


print("before", dump(), flush=True)  # JAX imported, no backend yet: the bridge must not make one
mode = sys.argv[1]
kept = []
for _ in range(4):
    keep_request(kept, 1 << 20)
figures("first", dump())
for i in range(4):
    if mode == "leak":
        keep_request(kept, 4 << 20)
    else:
        scratch_request((i + 5) << 20)
figures("second", dump())
print("done", flush=True)
