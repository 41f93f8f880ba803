# GPU suite: JAX under libvramtrace.so (run with and without XLA_PYTHON_CLIENT_PREALLOCATE=false):
# arrays made and some kept between two dumps taken through vramtrace_dump(); prints JAX's own figures
# (the device's memory_stats()) at each dump as one JSON line, for check.py to compare with the dumps.
import ctypes
import json
import os

import jax
import jax.numpy as jnp

lib = ctypes.CDLL(None)
buf = ctypes.create_string_buffer(4096)
dev = jax.local_devices()[0]
kept = []


def dump(tag):
    for a in kept:
        a.block_until_ready()
    rc = lib.vramtrace_dump(buf, ctypes.c_size_t(4096))
    st = dev.memory_stats() or {}
    print("jax", json.dumps({"tag": tag, "version": jax.__version__, "dump": buf.value.decode() if rc == 0 else None,
                             "preallocate": os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true"),
                             "bytes_in_use": st.get("bytes_in_use"),
                             "pool_bytes": st.get("pool_bytes", st.get("bytes_reserved")),
                             "kept_bytes": sum(a.nbytes for a in kept),
                             "keep_line": next(i + 1 for i, l in enumerate(open(__file__)) if l.rstrip().endswith("# KEEP"))}),
          flush=True)


def keep_request(n):
    kept.append(jnp.ones((n,), dtype=jnp.float32))  # KEEP


for i in range(8):
    keep_request(1 << 18)  # 1 MiB each
scratch = [jnp.zeros((1 << 20,), dtype=jnp.float32) for _ in range(4)]
del scratch
dump("first")
for i in range(16):
    keep_request(1 << 20)  # 4 MiB each: +64 MiB kept
dump("second")
