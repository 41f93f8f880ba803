#!/bin/sh
# Torch's blocks through its trace tracker on the CPU machine: the serving-shaped loop (bench/py_serving.py)
# taking each request's tensor from the fake torch's caching allocator (tests/fake/c10), bare, under the
# library as shipped (the tracker on: every block with its stack, walked by paths), with the walk that
# hashes every frame (VRAMTRACE_PY_PATHS=off) and with VRAMTRACE_TORCH_TRACKER=off
# (the blocks not tracked), the processes alive at once and taking turns (bench/pingpong.py), pinned to
# CPUS. The launch-bound GPT-2 loop's blocks come ~20 Python frames deep: DEPTH.
#   tracker_cpu.sh [CYCLES] [CPUS] [DEPTH]        (PY: the interpreter, python3 by default)
set -u
B=$PWD/build
CYCLES=${1:-20} CPUS=${2:-1} DEPTH=${3:-20}
export LD_LIBRARY_PATH=$B/fake VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp BENCH_C10=$B/fake/torch/lib/libc10_cuda.so \
  BENCH_DEPTH=$DEPTH BENCH_DISTINCT=1
echo "fake torch blocks through the tracker, $DEPTH Python frames deep, $(${PY:-python3} --version 2>&1), CPU $CPUS, us a request:"
${PY:-python3} bench/pingpong.py --cycles "$CYCLES" --cpus "$CPUS" --unit us --lib "$B/libvramtrace.so" \
  bare defaults hashed:VRAMTRACE_PY_PATHS=off tracker_off:VRAMTRACE_TORCH_TRACKER=off -- ${PY:-python3} bench/py_serving.py "$B/fake/libcudart.so.13" 20000 quiet
