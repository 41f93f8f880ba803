# Probe on the GPU machine: does a block allocated while torch's block history was on keep its frames
# in _snapshot() after the history is switched off (and on again)? And what does a switch cost? The
# answers decide whether the library may switch the history on for short windows (sampled block stacks).
#   python3 bench/history_toggle.py      (prints one JSON line)
import json
import time

import torch

H = dict(enabled="state", context="alloc", stacks="python")
torch.cuda.init()


def alloc(n):
    return [torch.empty(3 << 20, dtype=torch.uint8, device="cuda") for _ in range(n)]


def frames(snap, tensors):
    want = {t.data_ptr() for t in tensors}
    got = {}
    for s in snap["segments"]:
        for b in s["blocks"]:
            if b["address"] in want:
                got[b["address"]] = len(b.get("frames") or [])
    return [got.get(a, -1) for a in sorted(want)]


torch.cuda.memory._record_memory_history(**H)
on1 = alloc(4)
torch.cuda.memory._record_memory_history(enabled=None)
off = alloc(4)
s1 = torch.cuda.memory._snapshot()
torch.cuda.memory._record_memory_history(**H)
on2 = alloc(4)
s2 = torch.cuda.memory._snapshot()
torch.cuda.memory._record_memory_history(enabled=None)
n = 200
t = time.perf_counter()
for _ in range(n):
    torch.cuda.memory._record_memory_history(**H)
    torch.cuda.memory._record_memory_history(enabled=None)
pair_us = (time.perf_counter() - t) / n * 1e6
print(json.dumps({"torch": torch.__version__,
                  "after_off": {"on1": frames(s1, on1), "off": frames(s1, off)},
                  "after_on_again": {"on1": frames(s2, on1), "off": frames(s2, off), "on2": frames(s2, on2)},
                  "switch_pair_us": round(pair_us, 1)}))
