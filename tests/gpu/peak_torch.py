# GPU suite: a peak of torch's reserved memory (512 MiB at line 5), freed and given back (empty_cache),
# then a smaller phase; prints torch's own figures (max_memory_reserved). Run under `vramtrace run`, the
# exit dump's peak must equal max_memory_reserved to the byte, with line 5's 512 MiB "freed since" among
# its sites (docs/validation.md, 2026-12-07 fifth session).
import json, torch
x = torch.empty(1, device="cuda")
big = [torch.empty(64 << 20, dtype=torch.uint8, device="cuda") for _ in range(8)]   # 512 MiB
torch.cuda.synchronize()
peak_reserved = torch.cuda.max_memory_reserved()
del big
torch.cuda.empty_cache()
small = [torch.empty(16 << 20, dtype=torch.uint8, device="cuda") for _ in range(4)]  # 64 MiB
torch.cuda.synchronize()
print(json.dumps({"max_memory_reserved": peak_reserved, "reserved_now": torch.cuda.memory_reserved()}))
