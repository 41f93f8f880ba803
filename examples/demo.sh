#!/bin/sh
# The README's demo: run the serving loop under vramtrace, take two dumps while it serves, report the
# second and diff the two: the leaking call site comes out on top. Uses the GPU when there is one,
# else the bundled fake driver.
set -eu
B=$(cd "$(dirname "$0")/../build" && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  echo "demo: using the GPU"
  nvcc -O2 -g -cudart shared -o "$B/cuda_leak" examples/cuda_leak.cu
else
  echo "demo: no GPU; using the fake CUDA driver in build/fake"
  cc -O2 -g -std=c11 -D_GNU_SOURCE -rdynamic -I"$CUDA_HOME/include" -o "$B/cuda_leak" \
     -x c examples/cuda_leak.cu -x none -L"$B/fake" -lcudart
  export LD_LIBRARY_PATH="$B/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# The dumps go to build/demo, emptied at each run (make clean removes it): nothing left in $TMPDIR.
D=$B/demo
rm -rf "$D"
mkdir -m 700 "$D"
"$B/vramtrace" run --dir "$D" -- "$B/cuda_leak" 400 >/dev/null &
pid=$!
sleep 0.7
first=$("$B/vramtrace" dump "$pid")
sleep 1
second=$("$B/vramtrace" dump "$pid")
wait "$pid"
echo "== vramtrace report $second"
"$B/vramtrace" report "$second" --top 3
echo
echo "== vramtrace diff $first $second"
"$B/vramtrace" diff "$first" "$second"
echo
echo "dumps are in $D (the third one was written at exit)"
