# Where the fake JAX keeps its backends, as JAX's jax._src.xla_bridge does: empty until a device is asked for.
_backends = {}
