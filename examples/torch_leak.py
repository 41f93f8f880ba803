# A PyTorch "inference server" with the classic leak: every request's output is kept in a list (here
# a debugging history nobody reads), so live tensors grow request after request. Run it under vramtrace
# and diff two dumps: the growth is allocated memory, a leak suspect. No vramtrace code in it.
#   python3 examples/torch_leak.py [SECONDS]      (default 30; prints "warm" once warmed up)
import sys
import time

import torch

model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
history = []


def handle(batch):
    with torch.no_grad():
        out = model(batch)
    history.append(out)  # the leak: 64 x 1024 floats (256 KiB) kept per request
    return out.sum().item()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30
    for _ in range(20):
        handle(torch.randn(64, 1024, device="cuda"))
    print("warm", flush=True)
    end = time.monotonic() + seconds
    served = 0
    while time.monotonic() < end:
        handle(torch.randn(64, 1024, device="cuda"))
        served += 1
        time.sleep(0.005)
    print("served", served, "requests; allocated", torch.cuda.memory_allocated(),
          "reserved", torch.cuda.memory_reserved(), flush=True)


if __name__ == "__main__":
    main()
