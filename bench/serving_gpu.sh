#!/bin/sh
# On the GPU machine (build/ carried over): the launch-bound serving loop (bench/gpt2_decode.py) bare and
# under the library, through bench/pingpong.py: one process per configuration, all alive at once and
# pinned to one core (CPUS), taking turns a batch of 3 requests at a time, CYCLES cycles. Prints each
# cycle and each configuration's throughput ratio to bare in the same cycle. Then the Python call sites'
# counters of one run. Separate processes interleaved by rounds could not resolve 2 %: on the H200
# machine one bare process ran its batches at 84 to 172 tokens/s, and processes a minute apart differed
# as much; batches seconds apart in turn see the same machine.
#   serving_gpu.sh default|async [CYCLES]      (CPUS=6 by default: not the first cores, which serve the
#                                                machine's own interrupts and agents)
set -u
B=$PWD/build
ALLOC=$1 CYCLES=${2:-30} CPUS=${CPUS:-6}
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
if [ "$ALLOC" = async ]; then
  export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  set -- bare defaults python_off:VRAMTRACE_PYTHON=0
else
  unset PYTORCH_CUDA_ALLOC_CONF
  # defaults: torch's history still off (armed by the first dump); dumped: after one dump, history on;
  # bare_torch_history: no vramtrace, torch's own _record_memory_history() (the anchor).
  set -- bare defaults dumped:+dump python_off:VRAMTRACE_PYTHON=0 history_always:VRAMTRACE_TORCH_HISTORY=always \
    bare_torch_history:BENCH_TORCH_HISTORY=1
fi
echo "GPT-2 decode, batch 1, 32 new tokens, $ALLOC allocator, tokens/s, CPU $CPUS:"
python3 bench/pingpong.py --cycles "$CYCLES" --cpus "$CPUS" --unit per_s --lib "$B/libvramtrace.so" "$@" -- \
  python3 bench/gpt2_decode.py 1 3 | tee /tmp/serving_$ALLOC.txt
[ -n "${OUT:-}" ] && cp /tmp/serving_$ALLOC.txt "$OUT/"
# The Python call sites of one run with the defaults and a dump.
[ "${ONE_RUN:-1}" = 0 ] && exit 0
LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_TORCH_HISTORY=off taskset -c "$CPUS" python3 bench/gpt2_decode.py 1 1 dump > /tmp/one.txt 2>&1
d=$(awk '/^dump/ {print $2}' /tmp/one.txt)
echo "one run's dump ($d): $(grep -E '^counter ' "$d" 2>/dev/null | tr '\n' ' ')"
