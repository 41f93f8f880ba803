# GPU suite, the torch bridge: drives the README's examples (examples/torch_leak.py, torch_cache.py)
# request by request and a fragmentation case, dumping through vramtrace_dump() and printing torch's
# own figures at each dump as JSON lines for tests/gpu/check.py.
#   torch_bridge.py leak | cache | frag
import ctypes
import importlib.util
import json
import os
import sys
import time

import torch

lib = ctypes.CDLL(None)
buf = ctypes.create_string_buffer(4096)
here = os.path.dirname(os.path.abspath(__file__))


def example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(here, "..", "..", "examples", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def dump(tag, **extra):
    torch.cuda.synchronize()
    allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    rc = lib.vramtrace_dump(buf, ctypes.c_size_t(4096))
    row = {"tag": tag, "dump": buf.value.decode() if rc == 0 else None, "allocated": allocated, "reserved": reserved}
    row.update(extra)
    print("bridge", json.dumps(row), flush=True)


def settle():
    # A little bytecode, so that the pending call switching block history on gets its turn.
    for _ in range(10):
        sum(range(1000))
        time.sleep(0.01)


mode = sys.argv[1]
if mode in ("leak", "sampled"):
    # sampled: the default, torch's history on 5 % of each second after the first dump; requests for
    # 4 s, and the leak must still be named by its line, by the blocks the windows caught.
    ex = example("torch_leak")
    settle()
    for _ in range(20):
        ex.handle(torch.randn(64, 1024, device="cuda"))
    dump("first")
    settle()  # the first dump switches block history on (VRAMTRACE_TORCH_HISTORY=dump): let it
    end = time.monotonic() + (4 if mode == "sampled" else 0)
    n = 0
    while n < 50 or time.monotonic() < end:
        ex.handle(torch.randn(64, 1024, device="cuda"))
        n += 1
        if mode == "sampled":
            time.sleep(0.002)
    line = next(i + 1 for i, l in enumerate(open(ex.__file__)) if "out = model(batch)" in l)
    dump("second", leak_line=line)
elif mode == "cache":
    ex = example("torch_cache")
    settle()
    for _ in range(20):
        ex.handle(torch.randn(ex.BATCHES[0], 1024, device="cuda"))
    dump("first")
    settle()
    for n in ex.BATCHES:
        ex.handle(torch.randn(n, 1024, device="cuda"))
    before = torch.cuda.memory_reserved()
    dump("second")
    torch.cuda.empty_cache()
    print("bridge", json.dumps({"tag": "empty_cache", "returned": before - torch.cuda.memory_reserved()}), flush=True)
else:
    settle()
    small = [torch.empty(2500, device="cuda") for _ in range(100)]  # 10 KB each, in one small segment
    del small[::2]
    segs = torch.cuda.memory._snapshot()["segments"]
    frag = sum(b["size"] for s in segs if any(b["state"] != "inactive" for b in s["blocks"])
               for b in s["blocks"] if b["state"] == "inactive")
    dump("frag", fragmented=frag)
