# The fake JAX's private half (tests/fake/jax): only what vramtrace's bridge looks at.
