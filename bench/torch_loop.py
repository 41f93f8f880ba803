# Benchmark (GPU machine): a PyTorch inference loop, iterations per second, for bench/gpu.sh to run
# bare and under libvramtrace.so with torch's block history on and off. Under the library it then
# takes 5 dumps and prints the bridge's cost per dump (GIL wait, time in the interpreter, dump size)
# from the dumps' own python records.
#   torch_loop.py ITERATIONS
import ctypes
import os
import sys
import time

import torch

torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True).cuda().eval()
n = int(sys.argv[1])
batches = [torch.randn(b, 128, 1024, device="cuda") for b in (8, 16, 32)]
with torch.no_grad():
    for i in range(20):
        layer(batches[i % 3])
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(n):
        layer(batches[i % 3])
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t
print("iterations_per_s %.1f" % (n / elapsed), flush=True)

lib = ctypes.CDLL(None)
if hasattr(lib, "vramtrace_dump"):
    buf = ctypes.create_string_buffer(4096)
    for _ in range(5):
        t = time.perf_counter()
        lib.vramtrace_dump(buf, ctypes.c_size_t(4096))
        whole = time.perf_counter() - t
        path = buf.value.decode()
        rec = next(l.split() for l in open(path) if l.startswith("python "))
        blocks = sum(1 for l in open(path) if l.startswith("block "))
        print("dump %s wait_us %.0f bridge_ms %.2f dump_ms %.1f bytes %d blocks %d path %s" % (
            rec[1], int(rec[2]) / 1e3, int(rec[3]) / 1e6, whole * 1e3, os.path.getsize(path), blocks, path), flush=True)
