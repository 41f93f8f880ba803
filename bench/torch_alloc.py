# Benchmark (GPU machine): what one tensor allocation costs under the library, in a real PyTorch with
# backend:cudaMallocAsync, where every tensor is a cudaMallocAsync + cudaFreeAsync the library records
# (stack, Python frames, table). A loop of torch.empty + del, 12 Python frames deep, no kernel launched:
# the CPU's time alone. Prints the median ns per allocation (and its free) of 5 batches.
#   torch_alloc.py ALLOCATIONS
import os
import statistics
import sys
import time

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")
import torch  # noqa: E402

n = int(sys.argv[1])
sizes = [256, 4096, 65536, 1 << 20]


def leaf(k):
    for i in range(k):
        t = torch.empty(sizes[i & 3], dtype=torch.uint8, device="cuda")
        del t


def nest(depth, k):
    return leaf(k) if depth == 0 else nest(depth - 1, k)


nest(10, 1000)
torch.cuda.synchronize()
rates = []
for _ in range(5):
    t0 = time.perf_counter()
    nest(10, n)
    rates.append((time.perf_counter() - t0) * 1e9 / n)
torch.cuda.synchronize()
print("ns_per_alloc %.1f" % statistics.median(rates), flush=True)
