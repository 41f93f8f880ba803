#!/bin/sh
# On the GPU machine (build/ carried over): the alloc+free pair benchmark against the real driver, the
# same from Python with Python call sites off and on, and a PyTorch inference loop, each bare and under
# the library, interleaved rounds, medians.
set -eu
B=$PWD/build
cc -O2 -std=c11 -D_GNU_SOURCE -I/usr/local/cuda/include -o /tmp/bench_alloc bench/bench_alloc.c -lcuda
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
: >/tmp/bare; : >/tmp/off; : >/tmp/d32
for round in 1 2 3 4 5; do
  /tmp/bench_alloc 20000 >>/tmp/bare
  VRAMTRACE_DEPTH=0 LD_PRELOAD=$B/libvramtrace.so /tmp/bench_alloc 20000 >>/tmp/off
  VRAMTRACE_DEPTH=32 LD_PRELOAD=$B/libvramtrace.so /tmp/bench_alloc 20000 >>/tmp/d32
done
bare=$(median </tmp/bare); off=$(median </tmp/off); d32=$(median </tmp/d32)
echo "real driver, cuMemAlloc(256)+cuMemFree, median of 5 x 20,000, ns: bare $bare, stacks off $off ($(awk "BEGIN{printf \"%.2f\", $off/$bare}")x), depth 32 $d32 ($(awk "BEGIN{printf \"%.2f\", $d32/$bare}")x)"
echo "  rounds: bare $(tr '\n' ' ' </tmp/bare)| off $(tr '\n' ' ' </tmp/off)| depth 32 $(tr '\n' ' ' </tmp/d32)"

# Python call sites (bench/py_alloc.py): cudaMalloc(256)+cudaFree through ctypes at Python depths 10
# and 50, the GIL held and released, bare / library with VRAMTRACE_PYTHON=0 / library with it on (all
# frames kept: VRAMTRACE_PY_DEPTH=64); interleaved rounds, medians.
# The same on this machine's CPU through the fake runtime, where nothing hides vramtrace's own cost.
RT=$(ls /usr/local/cuda/lib64/libcudart.so.* | head -1)
pyrounds() { # label runtime pairs rounds
  for how in held released; do
    for depth in 10 50; do
      : >/tmp/p_bare; : >/tmp/p_off; : >/tmp/p_on
      for round in $(seq $4); do
        python3 bench/py_alloc.py "$2" $depth $3 $how >>/tmp/p_bare
        VRAMTRACE_PYTHON=0 LD_PRELOAD=$B/libvramtrace.so python3 bench/py_alloc.py "$2" $depth $3 $how >>/tmp/p_off
        VRAMTRACE_PY_DEPTH=64 LD_PRELOAD=$B/libvramtrace.so python3 bench/py_alloc.py "$2" $depth $3 $how >>/tmp/p_on
      done
      pb=$(median </tmp/p_bare); po=$(median </tmp/p_off); pn=$(median </tmp/p_on)
      echo "python $how depth $depth, $1, median of $4 x $3, ns: bare $pb, python off $po ($(awk "BEGIN{printf \"%.2f\", $po/$pb}")x), python on $pn ($(awk "BEGIN{printf \"%.2f\", $pn/$pb}")x); on - off = $(awk "BEGIN{printf \"%.0f\", $pn-$po}") ns"
    done
  done
}
pyrounds "real cudaMalloc(256)+cudaFree" "$RT" 5000 3
export LD_LIBRARY_PATH=$B/fake
pyrounds "fake runtime" "$B/fake/libcudart.so.13" 200000 5
unset LD_LIBRARY_PATH

# A PyTorch inference loop: bare, under the library with Python call sites off, and on (the default);
# torch's default allocator and its cudaMallocAsync backend (where every tensor is an allocation we
# record); interleaved rounds, medians of iterations per second. Then the bridge's cost per dump.
for conf in default async; do
  [ $conf = async ] && export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync || unset PYTORCH_CUDA_ALLOC_CONF
  : >/tmp/t_bare; : >/tmp/t_off; : >/tmp/t_on
  for round in 1 2 3; do
    python3 bench/torch_loop.py 300 | awk '/iterations_per_s/ {print $2}' >>/tmp/t_bare
    VRAMTRACE_PYTHON=0 LD_PRELOAD=$B/libvramtrace.so python3 bench/torch_loop.py 300 | awk '/iterations_per_s/ {print $2}' >>/tmp/t_off
    LD_PRELOAD=$B/libvramtrace.so python3 bench/torch_loop.py 300 > /tmp/t_on_out
    awk '/iterations_per_s/ {print $2}' /tmp/t_on_out >>/tmp/t_on
  done
  tb=$(median </tmp/t_bare); toff=$(median </tmp/t_off); ton=$(median </tmp/t_on)
  echo "torch ($conf allocator) TransformerEncoderLayer loop, median of 3 x 300 iterations, it/s: bare $tb, library with Python call sites off $toff ($(awk "BEGIN{printf \"%.3f\", $toff/$tb}")x), on $ton ($(awk "BEGIN{printf \"%.3f\", $ton/$tb}")x)"
  echo "  rounds: bare $(tr '\n' ' ' </tmp/t_bare)| off $(tr '\n' ' ' </tmp/t_off)| on $(tr '\n' ' ' </tmp/t_on)"
  echo "  Python call sites in the last dump: $(grep -E '^counter py_' "$(grep '^dump' /tmp/t_on_out | tail -1 | sed 's/.* path //')" 2>/dev/null | tr '\n' ' ')"
  echo "bridge cost per dump (last round):"
  grep '^dump' /tmp/t_on_out
done
