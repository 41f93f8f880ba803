# A PyTorch "inference server" with no leak whose nvidia-smi figure still sits high: batch sizes vary
# per request, the caching allocator keeps the freed blocks of every size it has seen, so reserved
# memory climbs while ever larger batches arrive (the first 10 s after "warm") and then stays on a
# plateau, while allocated memory stays flat. Run it under vramtrace, dump at "warm" and 10 s later,
# and diff: reserved grew, allocated did not. No vramtrace code in it.
#   python3 examples/torch_cache.py [SECONDS]     (default 30)
import sys
import time

import torch

model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()
BATCHES = [1, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096]


def handle(batch):
    with torch.no_grad():
        return model(batch).sum().item()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30
    for _ in range(20):
        handle(torch.randn(BATCHES[0], 1024, device="cuda"))
    print("warm", flush=True)
    start = time.monotonic()
    served = 0
    while time.monotonic() < start + seconds:
        sizes = 1 + min(len(BATCHES) - 1, int(time.monotonic() - start))  # one more every second
        handle(torch.randn(BATCHES[served % sizes], 1024, device="cuda"))
        served += 1
        time.sleep(0.005)
    print("served", served, "requests; allocated", torch.cuda.memory_allocated(),
          "reserved", torch.cuda.memory_reserved(), flush=True)


if __name__ == "__main__":
    main()
