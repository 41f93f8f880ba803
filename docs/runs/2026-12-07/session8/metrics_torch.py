# GPU probe (session 6): the library's metrics file inside a torch process, its symbolizer loaded on the
# dumper thread. Runs a small model's forward passes for ~12 s (a leak kept every step), takes a dump
# through the public call at the end, and prints its own RSS peak and the library's counters.
import ctypes, json, os, sys, time
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "progs"))
from take_dump import dump

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
kept = []


def step(i):
    x = torch.randn(8, 1024, device="cuda")
    y = m(x)
    if i % 10 == 0:
        kept.append(y.detach().clone())  # LEAK
    return y.sum().item()


t0 = time.time()
i = 0
while time.time() - t0 < float(sys.argv[1] if len(sys.argv) > 1 else 12):
    step(i)
    i += 1
    time.sleep(0.002)
path = dump()
st = {}
for line in open("/proc/self/status"):
    k, v = line.split(":", 1)
    if k in ("VmRSS", "VmHWM"):
        st[k] = int(v.split()[0])
print(json.dumps({"steps": i, "dump": path, "rss_kib": st["VmRSS"], "hwm_kib": st["VmHWM"],
                  "libdw_loaded": any("libdw" in l for l in open("/proc/self/maps")),
                  "allocated": torch.cuda.memory_allocated()}), flush=True)
