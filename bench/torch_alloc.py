# Benchmark (GPU machine): what one tensor allocation costs. ALLOCATOR async (backend:cudaMallocAsync,
# the default here): every tensor is a cudaMallocAsync + cudaFreeAsync the library records (stack,
# Python frames, table). ALLOCATOR native: torch's caching allocator, which calls the driver only to
# grow, so the cost left is torch's own block history when HISTORY is 1 (switched on here, as the
# library arms it: enabled="state", context="alloc", stacks="python"). A loop of torch.empty + del,
# DEPTH Python frames deep (12 by default), no kernel launched: the CPU's time alone. Prints the median
# ns per allocation (and its free) of 5 batches.
#   torch_alloc.py ALLOCATIONS [async|native [HISTORY [DEPTH]]]
import os
import statistics
import sys
import time

allocator = sys.argv[2] if len(sys.argv) > 2 else "async"
if allocator == "async":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
else:
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
import torch  # noqa: E402

n = int(sys.argv[1])
sizes = [256, 4096, 65536, 1 << 20]


def leaf(k):
    for i in range(k):
        t = torch.empty(sizes[i & 3], dtype=torch.uint8, device="cuda")
        del t


def nest(depth, k):
    return leaf(k) if depth == 0 else nest(depth - 1, k)


history = len(sys.argv) > 3 and sys.argv[3] == "1"
depth = int(sys.argv[4]) if len(sys.argv) > 4 else 12
if history:
    torch.cuda.memory._record_memory_history(enabled="state", context="alloc", stacks="python")
nest(depth - 2, 1000)
torch.cuda.synchronize()
rates = []
for _ in range(5):
    t0 = time.perf_counter()
    nest(depth - 2, n)
    rates.append((time.perf_counter() - t0) * 1e9 / n)
torch.cuda.synchronize()
print("ns_per_alloc %.1f" % statistics.median(rates), flush=True)
