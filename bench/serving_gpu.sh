#!/bin/sh
# On the GPU machine (build/ carried over): the launch-bound serving loop (bench/gpt2_decode.py) bare and
# under the library, through bench/pingpong.py: one process per configuration, all alive at once and
# pinned to one core (CPUS), taking turns a batch of 3 requests at a time, CYCLES cycles. Prints each
# cycle and each configuration's throughput ratio to bare in the same cycle. Then the Python call sites'
# counters of one run. Separate processes interleaved by rounds could not resolve 2 %: on the H200
# machine one bare process ran its batches at 84 to 172 tokens/s, and processes a minute apart differed
# as much; batches seconds apart in turn see the same machine.
#   serving_gpu.sh default|expandable|async [CYCLES]      (LIB: another build of the library; CYCLES 0: the one-process figures alone; CPUS=6 by default: not the first cores, which serve the
#                                                machine's own interrupts and agents)
set -u
B=$PWD/build
ALLOC=$1 CYCLES=${2:-30} CPUS=${CPUS:-6} LIB=${LIB:-$B/libvramtrace.so}
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
if [ "$ALLOC" = async ]; then
  export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  # bare_b: a second bare process, the control (bench/pingpong.py: how far two processes of one program
  # differ, 1 % on the H200 over 200 cycles)
  set -- bare bare_b defaults python_off:VRAMTRACE_PYTHON=0
else
  unset PYTORCH_CUDA_ALLOC_CONF
  [ "$ALLOC" = expandable ] && export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  # defaults: torch's history still off (armed by the first dump); dumped: after one dump, history on
  # 5 % of each second (sampled); dumped_full: on for good after it; dumped_off: never on;
  # bare_torch_history: no vramtrace, torch's own _record_memory_history() (the anchor).
  set -- bare defaults dumped:+dump dumped_full:+dump,VRAMTRACE_TORCH_SAMPLE=100 \
    dumped_off:+dump,VRAMTRACE_TORCH_HISTORY=off python_off:VRAMTRACE_PYTHON=0 bare_torch_history:BENCH_TORCH_HISTORY=1
fi
# CONFS="bare NAME:ITEM,..." runs those configurations instead (bench/pingpong.py's words).
[ -n "${CONFS:-}" ] && set -- $CONFS
echo "GPT-2 decode, batch 1, 32 new tokens, $ALLOC allocator, tokens/s, CPU $CPUS:"
[ "$CYCLES" = 0 ] || python3 bench/pingpong.py --cycles "$CYCLES" --cpus "$CPUS" --unit per_s --lib "$LIB" "$@" -- \
  python3 bench/gpt2_decode.py 1 3 | tee /tmp/serving_$ALLOC.txt
[ "$CYCLES" != 0 ] && [ -n "${OUT:-}" ] && cp /tmp/serving_$ALLOC.txt "$OUT/"
# What the library cost one process in between two dumps, by its own count (vramtrace diff's
# self_cost: its hooks, timed at every 61st call, and its threads, against the process's CPU), torch's
# history off (the defaults until a first dump); then torch's block history switched on and off batch by
# batch in one process without the library: what a first dump costs afterwards. Neither depends on
# how the machine drifts, as both sides are measured in one process at once. SELF_CONFS names other
# configurations for the first ("name:VAR=value,VAR=value ..."); LIBS="DIR/libvramtrace.so ..." several
# builds, each configuration under each in the order given (name builds twice to interleave rounds),
# each line then naming the build's folder.
[ "${ONE_RUN:-1}" = 0 ] && exit 0
for lib in ${LIBS:-$LIB}; do
for conf in ${SELF_CONFS:-defaults python_off:VRAMTRACE_PYTHON=0}; do
  label=${conf%%:*}
  [ -n "${LIBS:-}" ] && label="$label $(basename "$(dirname "$lib")")"
  env LD_PRELOAD=$lib VRAMTRACE_TORCH_HISTORY=off $(echo "$conf" | sed -n 's/^[^:]*://p' | tr , ' ') \
    taskset -c "$CPUS" python3 bench/gpt2_decode.py 10 3 selfcost > /tmp/one.txt 2>&1
  set -- $(awk '$1 == "dump" {print $2}' /tmp/one.txt | tail -2)
  tokens=$(awk '$1 == "tokens" {print $2}' /tmp/one.txt)
  if [ $# -eq 2 ] && [ -n "$tokens" ]; then
    "$B/vramtrace" diff --json "$1" "$2" | python3 -c '
import json, sys
c = json.load(sys.stdin)["self_cost"]; t = int(sys.argv[2])
print("%s: library %.1f us a token (hooks %.1f: Python frames %s, native frames %s; threads %.1f) of the process CPU %.1f us a token: %.2f %%; %d hook calls a token" % (
    sys.argv[1], (c["hook_ns"] + c["threads_ns"]) / t / 1e3, c["hook_ns"] / t / 1e3,
    "-" if c.get("python_ns") is None else "%.1f" % (c["python_ns"] / t / 1e3),
    "-" if c.get("native_ns") is None else "%.1f" % (c["native_ns"] / t / 1e3), c["threads_ns"] / t / 1e3,
    c["process_cpu_ns"] / t / 1e3, 100.0 * (c["hook_ns"] + c["threads_ns"]) / c["process_cpu_ns"], c["calls"] / t))' \
      "$label" "$tokens"
  else
    echo "$label: no self cost (run failed)"; tail -3 /tmp/one.txt; continue
  fi
  grep -E '^counter (py_|batch_freed|replaced|unknown_frees)' "$2" 2>/dev/null | tr '\n' ' '; echo
done
done
# torch records block history only with its native allocator
[ "$ALLOC" = async ] && exit 0
taskset -c "$CPUS" python3 bench/gpt2_decode.py 15 3 historyab 2>&1 | grep history_ | tee -a /tmp/serving_$ALLOC.txt
[ -n "${OUT:-}" ] && cp /tmp/serving_$ALLOC.txt "$OUT/"
exit 0
