# CPU test program for the torch bridge (tests/t_bridge.c): allocates through the fake torch
# (tests/fake/torch) and takes dumps in the way each mode asks, printing torch's own figures at each
# dump as "figures ..." lines for the test to compare with what the dump says.
#   torch_prog.py MODE   leak | cache | sampled | inflight | timeout | finalizing | notorch
import ctypes
import os
import signal
import sys
import time

from take_dump import dump as take_dump


def dump(tag):
    return take_dump()


def figures(torch, tag, path):
    segs = torch.cuda.memory._snapshot()["segments"]
    releasable = sum(s["total_size"] for s in segs if all(b["state"] == "inactive" for b in s["blocks"]))
    fragmented = sum(b["size"] for s in segs if any(b["state"] != "inactive" for b in s["blocks"])
                     for b in s["blocks"] if b["state"] == "inactive")
    print("figures", tag, path, torch.cuda.memory_allocated(), torch.cuda.memory_reserved(), releasable, fragmented,
          flush=True)


def settle():
    # Bytecode to run, so that the pending call that switches history on gets its turn.
    for _ in range(20):
        sum(range(10000))
        time.sleep(0.01)


def keep_request(kept, n):
    kept.append(torch.empty(n))


def handle(tag, n):
    t = torch.empty(n)  # a request's temporary, alive until the request returns
    path = dump(tag)  # a dump taken while the request runs
    del t
    return path


mode = sys.argv[1]
if mode == "notorch":
    rt = ctypes.CDLL("libcudart.so.13")
    p = ctypes.c_void_p()
    rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20))
    settle()
    print("dump", dump("notorch"))
    sys.exit(0)

import torch  # noqa: E402  (the fake one)

early = torch.empty(3 << 20)  # before history is on: no stack
settle()
kept = []
scratch = [torch.empty(1000 * (i + 1)) for i in range(8)]
del scratch[::2]  # holes in the small segment: fragmented
big = torch.empty(30 << 20)
del big  # a segment of its own, wholly free again: releasable
for i in range(4):
    keep_request(kept, 1 << 20)
figures(torch, "first", dump("first"))
settle()  # with VRAMTRACE_TORCH_HISTORY=dump, the first dump switches history on: let that happen
if mode in ("leak", "cache"):
    for tag, start in (("second", 0), ("third", 6)):
        for i in range(start, start + 6):
            if mode == "leak":
                keep_request(kept, 1 << 20)
            else:
                t = torch.empty((i + 2) * (25 << 20))  # ever larger, freed at once: cache grows
                del t
        figures(torch, tag, dump(tag))
    before = torch.cuda.memory_reserved()
    torch.cuda.empty_cache()
    print("empty_cache returned", before - torch.cuda.memory_reserved(), flush=True)
    print("history calls", torch.cuda.history_calls, flush=True)
elif mode == "sampled":
    # A request every 10 ms for 3 s, each keeping a block, while torch's history is on in windows
    # (VRAMTRACE_TORCH_SAMPLE): the sleeps return to the interpreter, where the switches run.
    end = time.monotonic() + 3
    while time.monotonic() < end:
        keep_request(kept, 1 << 16)
        time.sleep(0.01)
    figures(torch, "second", dump("second"))
    print("history calls", torch.cuda.history_calls, flush=True)
elif mode == "inflight":
    # A dump that catches a request in flight, then one that catches another while a request's memory
    # was kept meanwhile.
    figures(torch, "second", handle("second", 16 << 20))
    keep_request(kept, 1 << 20)
    figures(torch, "third", handle("third", 16 << 20))
elif mode == "timeout":
    # Hold the GIL in C for 2 s right after asking for a dump by signal: the bridge must give up after
    # VRAMTRACE_BRIDGE_TIMEOUT and the dump still be written. Then a dump with the GIL free again.
    sys.setswitchinterval(100)
    os.kill(os.getpid(), signal.SIGUSR1)
    ctypes.PyDLL(None).usleep(2000000)
    sys.setswitchinterval(0.005)
    time.sleep(0.3)
    print("dump", dump("after"), flush=True)
elif mode == "finalizing":
    class DumpAtShutdown:
        def __del__(self):
            print("finalizing", sys.is_finalizing(), dump("shutdown"), flush=True)
    keeper = DumpAtShutdown()
print("done", flush=True)
