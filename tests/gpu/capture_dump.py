# A dump asked for from outside while a CUDA graph is being captured (torch.cuda.graph, the global capture
# mode torch uses by default), as a user's `vramtrace dump PID` may land at any moment: the dump must come
# (the driver asked nothing of a context meanwhile, `counter capturing` says so) and the capture must
# still succeed and replay to the eager result. Run under the library:
#   LD_PRELOAD=build/libvramtrace.so python3 tests/gpu/capture_dump.py VRAMTRACE OUT.json
import json
import os
import subprocess
import sys
import threading
import time

import torch

vt, out_path = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).cuda().eval()
x = torch.randn(16, 256, device="cuda")
result = {}
with torch.no_grad():
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # warm-up outside the capture, as torch's docs ask
            model(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    asked = {}

    def ask():
        t0 = time.time()
        p = subprocess.run([vt, "dump", "--timeout", "30", str(os.getpid())], capture_output=True, text=True)
        asked.update(rc=p.returncode, secs=round(time.time() - t0, 3), path=p.stdout.strip(), err=p.stderr.strip())

    error = ""
    try:
        with torch.cuda.graph(g):
            y = model(x)
            t = threading.Thread(target=ask)
            t.start()
            time.sleep(1.5)  # still capturing while the dump is asked for and written
        t.join()
        g.replay()
        torch.cuda.synchronize()
        same = torch.allclose(y, model(x), atol=1e-3, rtol=1e-3)
    except Exception as e:  # the capture broken: what the test must never see
        error, same = "%s: %s" % (type(e).__name__, e), False
        t.join()
    capturing = None
    if asked.get("rc") == 0:
        for line in open(asked["path"]):
            w = line.split()
            if w[:2] == ["counter", "capturing"]:
                capturing = int(w[2])
    result = {"ask": asked, "capture_error": error, "replay_same_as_eager": same, "capturing_counter": capturing}
json.dump(result, open(out_path, "w"))
print(json.dumps(result), flush=True)
