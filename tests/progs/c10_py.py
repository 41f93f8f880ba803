# For tests/t_tracker.sh: Python allocating through the fake torch backed by the fake c10
# (VRAMTRACE_FAKE_TORCH=native), as a PyTorch server does: every tensor made by one helper, device_alloc();
# audit_request() keeps one a request (the leak), cache_fill() refreshes a cache of four, a request's
# scratch is given back. Three dumps, each printed with torch's own figures: "dump N PATH ALLOCATED
# RESERVED".
import torch

from take_dump import dump

kept = []
cache = [None] * 4


def device_alloc(n):
    return torch.empty(n)


def audit_request():
    kept.append(device_alloc(3 << 20))


def cache_fill(r):
    cache[r % 4] = device_alloc(512 << 10)


def handle(r):
    scratch = device_alloc(8 << 20)
    cache_fill(r)
    audit_request()
    del scratch


for i in (1, 2, 3):
    for r in range(8):
        handle(r)
    path = dump()
    print("dump", i, path, torch.cuda.memory_allocated(), torch.cuda.memory_reserved(), flush=True)
