# GPU smoke: PyTorch's caching allocator under libvramtrace.so; prints torch's own figures next to
# the dump path so the two can be compared.
import ctypes
import os
import subprocess
import torch

keep = [torch.empty(256 << 20, dtype=torch.uint8, device="cuda")]
tmp = torch.empty(100 << 20, dtype=torch.uint8, device="cuda")
del tmp
a = torch.randn(2048, 2048, device="cuda")
b = a @ a  # cuBLAS: its workspace is allocated outside torch's allocator
torch.cuda.synchronize()
print("torch allocated", torch.cuda.memory_allocated(), "reserved", torch.cuda.memory_reserved())
lib = ctypes.CDLL(None)
buf = ctypes.create_string_buffer(4096)
rc = lib.vramtrace_dump(buf, ctypes.c_size_t(4096))
print("dump", buf.value.decode() if rc == 0 else "failed")
# nvidia-smi's figure for this process at the same moment, to compare with the dump's process used.
smi = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                     capture_output=True, text=True).stdout
print("nvidia-smi", [l for l in smi.splitlines() if l.split(",")[0].strip() == str(os.getpid())])
