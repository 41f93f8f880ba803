# Which modules torch's first _snapshot() with Python frames imports, and how long it takes.
import collections, sys, time
import torch
x = torch.empty(1, device="cuda")
torch.cuda.memory._record_memory_history(enabled="state", context="alloc", stacks="python")
y = torch.empty(1000, device="cuda")
before = set(sys.modules)
t = time.perf_counter()
s = torch.cuda.memory._snapshot()
dt = time.perf_counter() - t
new = sorted(set(sys.modules) - before)
print("first _snapshot: %.3f s, %d modules imported" % (dt, len(new)))
tops = collections.Counter(m.split(".")[0] for m in new)
print("by package:", tops.most_common(12))
print("torch subpackages:", collections.Counter(".".join(m.split(".")[:2]) for m in new if m.startswith("torch.")).most_common(12))
t = time.perf_counter(); torch.cuda.memory._snapshot(); print("second _snapshot: %.4f s" % (time.perf_counter() - t))
