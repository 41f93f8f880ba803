# GPU suite (safety): a PyTorch process started by `vramtrace run ... &` and dumped at once with
# `vramtrace dump $!`: it imports torch (seconds), puts a tensor on the GPU, then lives a few seconds.
import sys
import time

import torch

x = torch.ones(1 << 20, device="cuda")
torch.cuda.synchronize()
print("ready", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 4)
print("done", flush=True)
