#!/bin/sh
# Runs the benchmarks side by side on the fake driver and prints the figures for docs/performance.md.
set -eu
B=$(cd "$(dirname "$0")/../build" && pwd)
export LD_LIBRARY_PATH=$B/fake
D=$(mktemp -d)
export VRAMTRACE_DIR=$D VRAMTRACE_AT_EXIT=0
cc -O2 -std=c11 -D_GNU_SOURCE -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench_alloc" bench/bench_alloc.c -L"$B/fake" -l:libcuda.so.1
cc -O2 -std=c11 -D_GNU_SOURCE -rdynamic -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench_dump" bench/bench_dump.c -L"$B/fake" -l:libcuda.so.1 -ldl -lpthread
echo "machine: $(nproc) cores, $(uname -m), $(date -u +%Y-%m-%d)"
for round in 1 2 3; do
  bare=$("$B/bench_alloc")
  off=$(VRAMTRACE_DEPTH=0 LD_PRELOAD=$B/libvramtrace.so "$B/bench_alloc")
  d32=$(VRAMTRACE_DEPTH=32 LD_PRELOAD=$B/libvramtrace.so "$B/bench_alloc")
  echo "alloc+free pair, ns: bare $bare, stacks off $off ($(echo "$off / $bare" | bc -l | cut -c1-4)x), depth 32 $d32 ($(echo "$d32 / $bare" | bc -l | cut -c1-4)x)"
done
for round in 1 2 3; do
  LD_PRELOAD=$B/libvramtrace.so "$B/bench_dump"
done
rm -rf "$D"
