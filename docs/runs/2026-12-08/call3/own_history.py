# GPU probe (session 9): a program that records torch's block history itself, under the library whose
# trace tracker is attached too. Torch's snapshot must keep the program's frames (history untouched), and
# the library's dump must still name every block and equal torch's totals.
import json, os, sys
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "progs"))
from take_dump import dump

torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=100000)
kept = []


def work(n):
    for i in range(n):
        kept.append(torch.randn(256, 1024, device="cuda"))  # kept
        y = torch.randn(1024, 1024, device="cuda") @ torch.randn(1024, 1024, device="cuda")
        del y


def snap_figures():
    s = torch.cuda.memory._snapshot()
    blocks = [b for seg in s["segments"] for b in seg["blocks"] if b["state"] == "active_allocated"]
    return {"blocks": len(blocks), "with_frames": sum(1 for b in blocks if b.get("frames")),
            "trace_entries": sum(len(t) for t in s.get("device_traces", []))}


work(50)
torch.cuda.synchronize()
before = snap_figures()
p1 = dump()
work(50)
torch.cuda.synchronize()
after = snap_figures()
p2 = dump()
print(json.dumps({"before": before, "after": after, "dumps": [p1, p2], "allocated": torch.cuda.memory_allocated(),
                  "reserved": torch.cuda.memory_reserved()}), flush=True)
