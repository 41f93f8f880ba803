#!/bin/sh
# Where the library's time goes in the GPT-2 decode loop (bench/gpt2_decode.py) on a GPU machine with
# no perf of its own: build/perf/ from bench/perf_bundle.sh, carried with build/. Samples the loop's
# process (4 kHz) under the library with the given configuration and prints the flat profile of the
# decode alone (the last WINDOW of the run's time: the model is built and warmed up before): by shared
# object, the library's own functions, the library's functions with what they call, the hottest symbols.
#   profile_gpu.sh default|async [VAR=VALUE ...]     (CPUS=6, BATCHES=24 of 3 requests, WINDOW=40%-100%;
#                                                     ANNOTATE="fn ...": their hot instructions;
#                                                     results also in $OUT when set)
set -u
B=$PWD/build
ALLOC=$1; shift
CPUS=${CPUS:-6} BATCHES=${BATCHES:-24} WINDOW=${WINDOW:-40%-100%}
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
[ "$ALLOC" = async ] && export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
# perf finds its own shared objects; the program keeps the machine's.
PERF="env LD_LIBRARY_PATH=$B/perf/lib $B/perf/perf"
name=profile_${ALLOC}$(echo "$@" | tr ' =' '_-' | sed 's/^./_&/')
data=/tmp/$name.data
ev=cpu-clock
$PERF record -e $ev -o /tmp/probe.data true > /dev/null 2>&1 || ev=cpu-clock:u
$PERF record -e $ev -o /tmp/probe.data true > /tmp/probe.txt 2>&1 || { echo "perf cannot record here:"; cat /tmp/probe.txt; exit 1; }
$PERF record -e $ev -F 4000 -g -o "$data" -- env -u LD_LIBRARY_PATH "$@" LD_PRELOAD=$B/libvramtrace.so \
  taskset -c "$CPUS" python3 bench/gpt2_decode.py "$BATCHES" 3 > /tmp/$name.run.txt 2>&1
tail -2 /tmp/$name.run.txt
{
  $PERF report -i "$data" --time "$WINDOW" --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep '%' > /tmp/$name.flat
  echo "== $ALLOC $* (time $WINDOW): share of all samples by shared object"
  awk '{sub("%", "", $1); s[$2] += $1} END {for (d in s) printf "%6.2f%% %s\n", s[d], d}' /tmp/$name.flat | sort -rn | head -20
  echo "== the library's own functions (self)"
  grep 'libvramtrace' /tmp/$name.flat | head -40
  echo "== the library's functions with what they call (children)"
  $PERF report -i "$data" --time "$WINDOW" --children --sort sym --stdio -g none 2>/dev/null | grep '%' | grep -E ' vt_|cuMem|cudaMalloc|cudaFree' | head -40
  echo "== hottest symbols"
  head -50 /tmp/$name.flat
  # Which instructions of the library's hottest functions the samples fell on (where a load waits).
  for fn in ${ANNOTATE:-}; do
    echo "== annotate $fn (instructions with 0.5 % or more of its samples)"
    $PERF annotate -i "$data" --stdio -s "$fn" 2>/dev/null | awk -F: '$1 + 0 >= 0.5' | head -60
  done
} > /tmp/$name.txt 2>&1
cat /tmp/$name.txt
[ -n "${OUT:-}" ] && cp /tmp/$name.txt /tmp/$name.run.txt "$OUT/"
exit 0
