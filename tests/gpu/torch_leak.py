# GPU: two PyTorch patterns, each dumped twice through vramtrace_dump(). "leak" keeps 8 MiB tensors in a
# list (allocated memory grows); "cache" allocates and frees ever larger tensors (reserved grows, allocated
# does not). Prints torch's own figures at each dump, to compare with what `vramtrace diff` says.
import ctypes
import sys
import torch

lib = ctypes.CDLL(None)
buf = ctypes.create_string_buffer(4096)


def dump(tag):
    torch.cuda.synchronize()
    rc = lib.vramtrace_dump(buf, ctypes.c_size_t(4096))
    print(tag, "allocated", torch.cuda.memory_allocated(), "reserved", torch.cuda.memory_reserved(),
          "dump", buf.value.decode() if rc == 0 else "failed", flush=True)


mode = sys.argv[1]
kept = []
for i in range(40):
    if mode == "leak":
        kept.append(torch.empty(8 << 20, dtype=torch.uint8, device="cuda"))
    else:
        t = torch.empty((i + 1) << 22, dtype=torch.uint8, device="cuda")
        del t
    if i in (9, 39):
        dump(f"{mode}-{i + 1}")
