#!/bin/sh
# The library's own count of what it costs (a dump's self cost: every 61st hook call timed) against
# perf's, in one run: the program runs under the library and under perf at once; `vramtrace diff` of
# its last two dumps gives the library's count, bench/perf_share.py the share of perf's samples between
# those two dumps (stamped on one clock) that fell in the library's code.
#   default|async: GPT-2 decode on the GPU (bench/gpt2_decode.py selfcost, BATCHES=10 of 3 requests);
#                  needs build/perf (bench/perf_bundle.sh) on a GPU machine without perf of its own.
#   cpu:           the serving-shaped loop on the fake driver (bench/py_serving.py; PY, LEVELS=2), dumps 4 s
#                  apart.
#   selfcost_perf.sh default|async|cpu [VAR=VALUE ...]     (CPUS=6 or 1 for cpu; LIB)
set -u
B=$PWD/build
ALLOC=$1; shift
LIB=${LIB:-$B/libvramtrace.so}
export VRAMTRACE_AT_EXIT=0 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1 VRAMTRACE_TORCH_HISTORY=off
if [ -x "$B/perf/perf" ]; then PERF="env LD_LIBRARY_PATH=$B/perf/lib $B/perf/perf"; else PERF=perf; fi
data=/tmp/selfcost_perf.data out=/tmp/selfcost_perf.txt
D=$(mktemp -d)
mono() { python3 -c 'import time; print("%.6f" % time.clock_gettime(time.CLOCK_MONOTONIC))'; }
if [ "$ALLOC" = cpu ]; then
  CPUS=${CPUS:-1} PY=${PY:-python3}
  $PERF record -k CLOCK_MONOTONIC -e cpu-clock -F 2000 -g -o "$data" -- env "$@" LD_LIBRARY_PATH=$B/fake \
    BENCH_LEVELS=${LEVELS:-2} VRAMTRACE_DIR=$D LD_PRELOAD=$LIB taskset -c "$CPUS" "$PY" bench/py_serving.py \
    "$B/fake/libcudart.so.13" 100000000 quiet > "$out" 2>&1 &
  sleep 3
  pid=$(pgrep -f "^$PY bench/py_serving" | head -1)
  [ -n "$pid" ] || { echo "selfcost_perf: the loop did not start"; cat "$out"; exit 1; }
  kill -USR1 "$pid"; t1=$(mono); sleep 4; kill -USR1 "$pid"; t2=$(mono); sleep 0.5; kill "$pid"; wait
  set -- $(ls "$D"/*.dump 2>/dev/null | sort -t. -k3 -n)
else
  CPUS=${CPUS:-6}
  [ "$ALLOC" = async ] && export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  $PERF record -k CLOCK_MONOTONIC -e cpu-clock -F 2000 -g -o "$data" -- env "$@" VRAMTRACE_DIR=$D LD_PRELOAD=$LIB \
    taskset -c "$CPUS" python3 bench/gpt2_decode.py "${BATCHES:-10}" 3 selfcost > "$out" 2>&1
  set -- $(awk '$1 == "dump" {print $2}' "$out" | tail -2)
  t1=$(awk '$1 == "dumped_at" {print $2}' "$out" | tail -2 | head -1)
  t2=$(awk '$1 == "dumped_at" {print $2}' "$out" | tail -1)
fi
if [ $# -lt 2 ] || [ -z "$t1" ]; then echo "selfcost_perf: the run failed"; tail -5 "$out"; rm -rf "$D"; exit 1; fi
"$B/vramtrace" diff --json "$1" "$2" | python3 -c '
import json, sys
c = json.load(sys.stdin)["self_cost"]
print("the library by its own count: %.2f %% of the process CPU (hooks %.2f: Python frames %.2f, native frames %.2f; threads %.2f)" % tuple(
    100.0 * x / c["process_cpu_ns"] for x in (c["hook_ns"] + c["threads_ns"], c["hook_ns"], c.get("python_ns") or 0,
                                             c.get("native_ns") or 0, c["threads_ns"])) +
      "; %d timed calls, %d of them left out (over 50 us)" % (c.get("timed_calls", 0) + c.get("timed_outliers", 0), c.get("timed_outliers", 0)))'
$PERF script -i "$data" -F comm,tid,ip,sym,dso --time "$t1,$t2" 2>/dev/null | python3 bench/perf_share.py
rm -rf "$D"
