# A stand-in for PyTorch, for the CPU tests of vramtrace's torch bridge: just enough of torch.cuda
# (tests/fake/torch/cuda.py) to allocate tensors through the fake CUDA runtime the way torch's
# caching allocator does. Found through PYTHONPATH=tests/fake.
from . import cuda

uint8 = "uint8"


class Tensor:
    def __init__(self, nbytes):
        self._block = cuda._allocator.malloc(nbytes)

    def __del__(self):
        if getattr(self, "_block", None) is not None:
            cuda._allocator.free(self._block)
            self._block = None


def empty(n, dtype=uint8, device="cuda"):
    """n bytes of device memory (every fake tensor is uint8)."""
    if device != "cuda":
        raise ValueError("the fake torch has CUDA tensors only")
    return Tensor(int(n))
