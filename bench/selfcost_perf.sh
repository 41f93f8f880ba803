#!/bin/sh
# The library's own count of what it costs (a dump's self cost: every 61st hook call timed) against
# perf's, in one run: GPT-2 decode (bench/gpt2_decode.py selfcost) under the library and under perf at
# once; `vramtrace diff` of the run's last two dumps gives the library's count, bench/perf_share.py the
# share of perf's samples between those two dumps (on one clock) that fell in the library's code.
# Needs build/perf (bench/perf_bundle.sh) on a GPU machine without perf of its own.
#   selfcost_perf.sh default|async [VAR=VALUE ...]     (CPUS=6, BATCHES=10 of 3 requests; LIB)
set -u
B=$PWD/build
ALLOC=$1; shift
CPUS=${CPUS:-6} BATCHES=${BATCHES:-10} LIB=${LIB:-$B/libvramtrace.so}
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1 VRAMTRACE_TORCH_HISTORY=off
[ "$ALLOC" = async ] && export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
if [ -x "$B/perf/perf" ]; then PERF="env LD_LIBRARY_PATH=$B/perf/lib $B/perf/perf"; else PERF=perf; fi
data=/tmp/selfcost_perf.data
$PERF record -k CLOCK_MONOTONIC -e cpu-clock -F 2000 -g -o "$data" -- env "$@" LD_PRELOAD=$LIB \
  taskset -c "$CPUS" python3 bench/gpt2_decode.py "$BATCHES" 3 selfcost > /tmp/selfcost_perf.txt 2>&1
set -- $(awk '$1 == "dump" {print $2}' /tmp/selfcost_perf.txt | tail -2)
t1=$(awk '$1 == "dumped_at" {print $2}' /tmp/selfcost_perf.txt | tail -2 | head -1)
t2=$(awk '$1 == "dumped_at" {print $2}' /tmp/selfcost_perf.txt | tail -1)
if [ $# -ne 2 ] || [ -z "$t1" ]; then echo "selfcost_perf: the run failed"; tail -5 /tmp/selfcost_perf.txt; exit 1; fi
"$B/vramtrace" diff --json "$1" "$2" | python3 -c '
import json, sys
c = json.load(sys.stdin)["self_cost"]
print("the library by its own count: %.2f %% of the process CPU (hooks %.2f: Python frames %.2f, native frames %.2f; threads %.2f)" % tuple(
    100.0 * x / c["process_cpu_ns"] for x in (c["hook_ns"] + c["threads_ns"], c["hook_ns"], c.get("python_ns") or 0,
                                             c.get("native_ns") or 0, c["threads_ns"])))'
$PERF script -i "$data" -F comm,tid,ip,sym,dso --time "$t1,$t2" 2>/dev/null | python3 bench/perf_share.py
