# GPU suite: a Python process that never touches CUDA. Times a CPU loop (best of 5) and says whether
# libcuda was ever loaded and whether nvidia-smi lists this pid (a context would make it appear).
import json
import os
import subprocess
import time


def work():
    t = time.perf_counter()
    acc = 0
    for i in range(2_000_000):
        acc = (acc * 31 + i) % 1_000_003
    return time.perf_counter() - t


best = min(work() for _ in range(5))
maps = open("/proc/self/maps").read()
apps = subprocess.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
                      capture_output=True, text=True).stdout.split()
print("nocuda", json.dumps({"seconds": best, "libcuda_loaded": "libcuda" in maps,
                            "in_nvidia_smi": str(os.getpid()) in apps}), flush=True)
