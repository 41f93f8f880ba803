#!/bin/sh
# Runs on the GPU machine, from the repository root, with build/ carried over: builds the CUDA smoke
# program both ways, runs it and a PyTorch workload under the library, and reports every dump.
# Results go to $OUT (or /tmp/vramtrace-gpu).
set -u
OUT=${OUT:-/tmp/vramtrace-gpu}
mkdir -p "$OUT/dumps"
LIB=$PWD/build/libvramtrace.so
export VRAMTRACE_DIR=$OUT/dumps
log=$OUT/gpu.log
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
  nvcc -O2 -g -o /tmp/alloc_static tests/gpu/alloc.cu -ldl && echo "built static"
  nvcc -O2 -g -cudart shared -o /tmp/alloc_shared tests/gpu/alloc.cu -ldl && echo "built shared"
  for p in alloc_static alloc_shared; do
    echo "== $p"; LD_PRELOAD=$LIB /tmp/$p; echo "exit $?"
  done
  for cfg in "" "expandable_segments:True" "backend:cudaMallocAsync"; do
    echo "== torch PYTORCH_CUDA_ALLOC_CONF=$cfg"
    PYTORCH_CUDA_ALLOC_CONF=$cfg LD_PRELOAD=$LIB python3 tests/gpu/torch_alloc.py; echo "exit $?"
  done
  for mode in leak cache; do
    echo "== torch $mode"
    LD_PRELOAD=$LIB python3 tests/gpu/torch_leak.py $mode > /tmp/$mode.txt; cat /tmp/$mode.txt
    set -- $(sed 's/.* dump //' /tmp/$mode.txt)
    build/vramtrace diff "$1" "$2" | tail -14
  done
  for f in "$OUT"/dumps/*.dump; do
    echo "== report $f"; build/vramtrace report "$f" --top 2
    grep -E '^(device|pool|api|kind [a-z_]+ [1-9]|counter|unwatched)' "$f"
  done
} > "$log" 2>&1
tar czf "$OUT/dumps.tgz" -C "$OUT" dumps && rm -rf "$OUT/dumps"
tail -c 11000 "$log"
