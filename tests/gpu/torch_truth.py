# GPU suite: PyTorch's allocator (whichever PYTORCH_CUDA_ALLOC_CONF selects) under libvramtrace.so,
# dumped twice through vramtrace_dump(); at each dump prints torch's own figures and nvidia-smi's for
# this pid as one JSON line, which tests/gpu/check.py compares with the dump. It also prints the lines
# that allocate, for the check that torch's segments and cuBLAS's workspace carry them.
import ctypes
import json
import os
import subprocess
import torch

lib = ctypes.CDLL(None)
buf = ctypes.create_string_buffer(4096)


def smi_mib():
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, mib = line.split(",")
        if int(pid) == os.getpid():
            return int(mib)
    return None


def dump(phase):
    torch.cuda.synchronize()
    allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    rc = lib.vramtrace_dump(buf, ctypes.c_size_t(4096))
    print("torch", json.dumps({"phase": phase, "dump": buf.value.decode() if rc == 0 else None,
                               "allocated": allocated, "reserved": reserved, "smi_mib": smi_mib()}), flush=True)


def line_of(text):
    return next(i + 1 for i, l in enumerate(open(__file__)) if l.startswith(text))


print("lines", json.dumps({"keep": line_of("keep = "), "matmul": line_of("b = a @ a")}), flush=True)
keep = [torch.empty(256 << 20, dtype=torch.uint8, device="cuda")]
tmp = torch.empty(100 << 20, dtype=torch.uint8, device="cuda")
del tmp
a = torch.randn(2048, 2048, device="cuda")
b = a @ a  # cuBLAS: its workspace is allocated outside torch's allocator
dump(1)
many = [torch.empty((i % 7 + 1) << 20, dtype=torch.uint8, device="cuda") for i in range(40)]
del many[::2]
small = [torch.empty(1000 * (i + 1), dtype=torch.uint8, device="cuda") for i in range(50)]
dump(2)
