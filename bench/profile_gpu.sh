#!/bin/sh
# Where the time goes in the GPT-2 decode loop (bench/gpt2_decode.py) on a GPU machine with no perf of its
# own: build/perf/ from bench/perf_bundle.sh, carried with build/. Samples the loop's process (4 kHz),
# bare (LIB=none) or under the library with the given configuration, and prints the flat profile of the
# measured batches alone (the span the script prints as decode_window, on CLOCK_MONOTONIC, which perf
# stamps its samples with): by shared object, the library's own functions, the library's functions with
# what they call, the hottest symbols. Keeps the flat profile with sample counts and the tokens decoded
# in the span ($name.flat, $name.tokens), which bench/perf_delta.py compares run against run a token.
#   profile_gpu.sh default|expandable|async [VAR=VALUE ...]
#       (CPUS=6, BATCHES=24 of 3 requests, LIB=none: bare; ANNOTATE="fn ...": their hot instructions;
#        results also in $OUT when set)
set -u
B=$PWD/build
ALLOC=$1; shift
CPUS=${CPUS:-6} BATCHES=${BATCHES:-24} LIB=${LIB:-$B/libvramtrace.so}
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
unset PYTORCH_CUDA_ALLOC_CONF
[ "$ALLOC" = async ] && export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
[ "$ALLOC" = expandable ] && export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
PRELOAD=LD_PRELOAD=$LIB
[ "$LIB" = none ] && PRELOAD=VT_BARE=1
# perf finds its own shared objects; the program keeps the machine's.
PERF="env LD_LIBRARY_PATH=$B/perf/lib $B/perf/perf"
name=profile_${ALLOC}$( [ "$LIB" = none ] && echo _bare)$(echo "$@" | tr ' =' '_-' | sed 's/^./_&/')
data=/tmp/$name.data
ev=cpu-clock
$PERF record -e $ev -o /tmp/probe.data true > /dev/null 2>&1 || ev=cpu-clock:u
$PERF record -e $ev -o /tmp/probe.data true > /tmp/probe.txt 2>&1 || { echo "perf cannot record here:"; cat /tmp/probe.txt; exit 1; }
$PERF record -e $ev -F 4000 -g -k CLOCK_MONOTONIC -o "$data" -- env -u LD_LIBRARY_PATH "$@" $PRELOAD \
  taskset -c "$CPUS" python3 bench/gpt2_decode.py "$BATCHES" 3 > /tmp/$name.run.txt 2>&1
tail -3 /tmp/$name.run.txt
set -- $(grep '^decode_window' /tmp/$name.run.txt)
[ $# = 4 ] || { echo "no decode_window in the run's output"; exit 1; }
WINDOW=$2,$3
echo "$4" > /tmp/$name.tokens
{
  $PERF report -i "$data" --time "$WINDOW" -n --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep '%' > /tmp/$name.flat
  echo "== $ALLOC LIB=$LIB $* (decode window $WINDOW, $4 tokens): share of all samples by shared object"
  awk '{sub("%", "", $1); s[$3] += $1} END {for (d in s) printf "%6.2f%% %s\n", s[d], d}' /tmp/$name.flat | sort -rn | head -20
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
[ -n "${OUT:-}" ] && cp /tmp/$name.txt /tmp/$name.run.txt /tmp/$name.flat /tmp/$name.tokens "$OUT/"
exit 0
