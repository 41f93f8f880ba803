#!/bin/sh
# The README's examples on the GPU, with the README's commands: each runs under `vramtrace run`, is
# dumped once it prints "warm" and again 8 s after that dump completed, then stopped; the report of the
# second dump and the diff of the two are kept for tests/gpu/check.py and the README.
#   sh tests/gpu/examples.sh RESULTS     (run.sh calls it; it can also run alone)
set -u
R=$1
B=$PWD/build
example() {
  name=$1; shift
  d=$R/example-$name
  mkdir -p "$d/dumps"
  "$B/vramtrace" run --dir "$d/dumps" -- "$@" > "$d/out.txt" 2>&1 &
  pid=$!
  tries=0
  until grep -q warm "$d/out.txt" 2>/dev/null || [ $tries -gt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
  first=$("$B/vramtrace" dump $pid)
  sleep 8
  second=$("$B/vramtrace" dump $pid)
  kill -TERM $pid
  wait $pid
  "$B/vramtrace" report "$second" --top 3 > "$d/report.txt" 2>&1
  "$B/vramtrace" diff "$first" "$second" > "$d/diff.txt" 2>&1
  "$B/vramtrace" diff "$first" "$second" --json > "$d/diff.json" 2>&1
}
nvcc -O2 -g -cudart shared -o "$R/cuda_leak" examples/cuda_leak.cu
example cuda_leak "$R/cuda_leak" 100000
example torch_leak python3 examples/torch_leak.py 300
example torch_cache python3 examples/torch_cache.py 300
