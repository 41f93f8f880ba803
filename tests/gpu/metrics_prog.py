# GPU suite, "metrics": a PyTorch process whose metrics file the library keeps (VRAMTRACE_METRICS, given
# as argv[1] with %p for the pid). It keeps 20 MiB of tensors and frees 60 MiB more (cached by torch),
# then waits until the file has been written twice since (the second write's dump began after the
# memory stopped changing) and prints torch's own figures with the file: tag "metrics", then JSON.
import json
import os
import sys
import time

import torch

path = sys.argv[1].replace("%p", str(os.getpid()))
keep = [torch.empty(n << 20, dtype=torch.uint8, device="cuda") for n in (10, 3, 7)]
gone = [torch.empty(20 << 20, dtype=torch.uint8, device="cuda") for _ in range(3)]
del gone
torch.cuda.synchronize()


def inode():
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


seen, changes, deadline = inode(), 0, time.monotonic() + 60
while changes < 2 and time.monotonic() < deadline:
    time.sleep(0.05)
    now = inode()
    if now is not None and now != seen:
        seen, changes = now, changes + 1
text = open(path).read() if os.path.exists(path) else ""
print("metrics " + json.dumps({"pid": os.getpid(), "allocated": torch.cuda.memory_allocated(),
                               "reserved": torch.cuda.memory_reserved(), "writes_seen": changes, "file": text}),
      flush=True)
