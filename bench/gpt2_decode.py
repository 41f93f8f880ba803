# Benchmark: a launch-bound serving loop, for bench/serving_gpu.sh to run bare and under libvramtrace.so.
# transformers' GPT-2 (GPT2LMHeadModel(GPT2Config()): 124M parameters, fp16, random weights, nothing
# downloaded) answers requests of 16 prompt tokens with 32 new tokens each, greedy, at batch 1: the GPU
# waits on the CPU's kernel launches, so any CPU time vramtrace spends shows. Prints the median tokens/s
# of BATCHES batches of REQUESTS requests, and with "dump" takes one vramtrace dump after the warm-up (as
# an operator would; with VRAMTRACE_TORCH_HISTORY=dump that switches torch's block history on).
# BENCH_NOOP_TRACKER=1 attaches a trace tracker that only counts (bench/noop_tracker.py): torch's own
# cost of any tracker, without the library.
# BENCH_TORCH_HISTORY=1 switches torch's own _record_memory_history() on instead: the anchor. Under
# bench/pingpong.py it takes turns instead (bench/turns.py), a batch of REQUESTS requests per turn. With
# "selfcost", a dump also before and after the measured batches: `vramtrace diff` of the two says what
# the library cost the process in between (its self-timed hooks and threads against the process's CPU).
# With "historyab", no library needed: torch's block history as the library arms it (enabled="state",
# context="alloc", stacks="python") switched on and off batch by batch in this one process; prints the
# median ratio of throughput with it to throughput without it, pairs of batches side by side.
#   gpt2_decode.py BATCHES REQUESTS [dump|selfcost|historyab]
import ctypes
import os
import statistics
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging

import turns

logging.set_verbosity_error()
batches, requests = int(sys.argv[1]), int(sys.argv[2])
take_dump = len(sys.argv) > 3 and sys.argv[3] in ("dump", "selfcost")
self_cost = len(sys.argv) > 3 and sys.argv[3] == "selfcost"
torch.manual_seed(0)
if os.environ.get("BENCH_TORCH_HISTORY") == "1":
    torch.cuda.memory._record_memory_history()
model = GPT2LMHeadModel(GPT2Config()).half().cuda().eval()
if os.environ.get("BENCH_NOOP_TRACKER") == "1":
    import noop_tracker

    noop_tracker.attach()
prompt = torch.randint(0, 50257, (1, 16), device="cuda")
NEW = 32


def batch(n):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        model.generate(prompt, max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False, pad_token_id=50256)
    torch.cuda.synchronize()
    return n * NEW / (time.perf_counter() - t)




def dump():
    buf = ctypes.create_string_buffer(4096)
    lib = ctypes.CDLL(None)
    if hasattr(lib, "vramtrace_dump") and lib.vramtrace_dump(buf, ctypes.c_size_t(4096)) == 0:
        print("dump", buf.value.decode(), flush=True)
        # when it was taken, on the clock perf can stamp its samples with (perf record -k CLOCK_MONOTONIC)
        print("dumped_at %.6f" % time.clock_gettime(time.CLOCK_MONOTONIC), flush=True)


with torch.no_grad():
    batch(3)
    if take_dump:
        dump()
        batch(2)
    if turns.serve(lambda: batch(requests)):  # under bench/pingpong.py
        sys.exit(0)
    if len(sys.argv) > 3 and sys.argv[3] == "historyab":
        ratios = []
        for i in range(batches):
            off = batch(requests)
            torch.cuda.memory._record_memory_history(enabled="state", context="alloc", stacks="python")
            on = batch(requests)
            torch.cuda.memory._record_memory_history(enabled=None)
            ratios.append(on / off)
        print("history_ratios " + " ".join("%.3f" % r for r in ratios), flush=True)
        print("history_ratio %.3f" % statistics.median(ratios), flush=True)
        sys.exit(0)
    if self_cost:
        dump()
    # the measured batches' span on the clock perf can stamp its samples with (bench/profile_gpu.sh)
    began = time.clock_gettime(time.CLOCK_MONOTONIC)
    rates = [batch(requests) for _ in range(batches)]
    print("decode_window %.6f %.6f %d" % (began, time.clock_gettime(time.CLOCK_MONOTONIC), batches * requests * NEW),
          flush=True)
    if self_cost:
        dump()
        print("tokens", batches * requests * NEW, flush=True)
print("batches " + " ".join("%.1f" % r for r in rates), flush=True)
print("tokens_per_s %.1f" % statistics.median(rates), flush=True)
