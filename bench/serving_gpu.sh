#!/bin/sh
# On the GPU machine (build/ carried over): the launch-bound serving loop (bench/gpt2_decode.py) bare and
# under the library in several configurations, processes pinned to one core (CPUS), interleaved rounds;
# prints each configuration's per-round tokens/s and its ratio to bare in the same round, and the median
# ratio. Then the Python call sites' counters of one run.
#   serving_gpu.sh default|async ROUNDS       (CPUS=6 by default: one core, not the first ones, which
#                                               serve the machine's own interrupts and agents; CONFS: the
#                                               configurations; ONE_RUN=0: no counters run at the end)
# One core and one OpenMP thread: a process pinned to four cores ran at ~75 or ~150 tokens/s, whichever
# it was, bare too, as if it mattered where its threads landed; on one core every configuration meets
# the same core.
set -u
B=$PWD/build
ALLOC=$1 ROUNDS=$2 CPUS=${CPUS:-6}
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
if [ "$ALLOC" = async ]; then
  export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  CONFS="${CONFS:-bare defaults python_off}"
else
  unset PYTORCH_CUDA_ALLOC_CONF
  CONFS="${CONFS:-bare defaults defaults_dumped python_off}"
fi
run() { # configuration -> tokens/s
  case $1 in
    bare) env taskset -c $CPUS python3 bench/gpt2_decode.py 6 3 ;;
    torch_anchor) env BENCH_TORCH_HISTORY=1 taskset -c $CPUS python3 bench/gpt2_decode.py 6 3 ;;
    defaults) env LD_PRELOAD=$B/libvramtrace.so taskset -c $CPUS python3 bench/gpt2_decode.py 6 3 ;;
    defaults_dumped) env LD_PRELOAD=$B/libvramtrace.so taskset -c $CPUS python3 bench/gpt2_decode.py 6 3 dump ;;
    history_always) env LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_TORCH_HISTORY=always taskset -c $CPUS python3 bench/gpt2_decode.py 6 3 ;;
    history_off) env LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_TORCH_HISTORY=off taskset -c $CPUS python3 bench/gpt2_decode.py 6 3 ;;
    python_off) env LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_PYTHON=0 taskset -c $CPUS python3 bench/gpt2_decode.py 6 3 ;;
    walk_off) env LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_PY_WALK=0 taskset -c $CPUS python3 bench/gpt2_decode.py 6 3 ;;
  esac > /tmp/serving_run.txt 2>&1
  awk '/^tokens_per_s/ {v = $2} /^batches/ {$1 = ""; b = $0} END {print v, "batches" b}' /tmp/serving_run.txt
}
# The machine's state with each run, to tell its drift from ours: CPU time stolen by other tenants (the
# steal column of /proc/stat, in clock ticks) and the GPU's SM clock afterwards.
steal() { awk '/^cpu / {print $9}' /proc/stat; }
for r in $(seq "$ROUNDS"); do
  for c in $CONFS; do
    s0=$(steal)
    v=$(run "$c")
    clk=$(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits 2>/dev/null | head -1)
    echo "round $r $c ${v:-failed} steal $(($(steal) - s0)) sm_mhz ${clk:-?}"
  done
done > /tmp/serving_$ALLOC.txt
[ -n "${OUT:-}" ] && cp /tmp/serving_$ALLOC.txt "$OUT/"
sed 's/^/  /' /tmp/serving_$ALLOC.txt
echo "GPT-2 decode, batch 1, 32 new tokens, $ALLOC allocator, $ROUNDS rounds, tokens/s and ratio to bare of the same round:"
for c in $CONFS; do
  line="$c:"; ratios=""
  for r in $(seq "$ROUNDS"); do
    b=$(awk -v r="$r" '$2 == r && $3 == "bare" {print $4}' /tmp/serving_$ALLOC.txt)
    v=$(awk -v r="$r" -v c="$c" '$2 == r && $3 == c {print $4}' /tmp/serving_$ALLOC.txt)
    ratio=$(awk -v a="$v" -v b="$b" 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "-"}')
    line="$line $v ($ratio)"; ratios="$ratios $ratio"
  done
  med=$(echo "$ratios" | tr ' ' '\n' | grep -v '^$' | grep -v '^-$' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
  echo "  $line; median ratio $med"
done
# The Python call sites of one run with the defaults and a dump.
[ "${ONE_RUN:-1}" = 0 ] && exit 0
LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_TORCH_HISTORY=off taskset -c $CPUS python3 bench/gpt2_decode.py 1 1 dump > /tmp/one.txt 2>&1
d=$(awk '/^dump/ {print $2}' /tmp/one.txt)
echo "one run's dump ($d): $(grep -E '^counter ' "$d" 2>/dev/null | tr '\n' ' ')"
