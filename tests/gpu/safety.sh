#!/bin/sh
# GPU suite, issue 13's figures on the real driver: immediate `vramtrace run ... &` / `vramtrace dump $!`
# pairs (CUDA C and PyTorch), exit() from a SIGTERM handler while the real driver allocates, and
# processes that load torch without using CUDA (no dump, nothing said). Prints one line per figure.
#   sh tests/gpu/safety.sh RESULTS
set -u
R=$1/safety
rm -rf "$R" && mkdir -p "$R"
B=$PWD/build
pairs() { # NAME COUNT BATCH CMD...: COUNT pairs, BATCH at a time
  name=$1 count=$2 batch=$3; shift 3
  d=$R/$name; mkdir -p "$d"
  killed=0 dumps=0 other=0 i=0
  while [ $i -lt $count ]; do
    pids=""; k=0
    while [ $k -lt $batch ]; do
      n=$((i + k))
      "$B/vramtrace" run --dir "$d/dumps" -- "$@" > "$d/t$n.out" 2>&1 &
      t=$!
      "$B/vramtrace" dump $t --timeout 60 > "$d/d$n.out" 2> "$d/d$n.err" &
      pids="$pids $t:$!"
      k=$((k + 1))
    done
    for p in $pids; do
      t=${p%:*} dp=${p#*:}
      wait $dp; ds=$?
      wait $t; ts=$?
      [ $ts -eq 138 ] && killed=$((killed + 1))
      [ $ts -ne 0 ] && [ $ts -ne 138 ] && other=$((other + 1))
      [ $ds -eq 0 ] && dumps=$((dumps + 1))
    done
    i=$((i + batch))
  done
  echo "pairs $name: $count pairs, $dumps dumps, $killed killed by the signal, $other ended otherwise" | tee -a "$R/summary.txt"
}
nvcc -O2 -g -cudart shared -o "$R/cuda_leak" examples/cuda_leak.cu
pairs cuda 40 8 "$R/cuda_leak" 300
pairs torch 40 8 python3 tests/gpu/pair_target.py 4

# exit() from a SIGTERM handler while the main thread allocates through the real driver, bare and under
# the library, interleaved (termexit.sh): the bare runs say how often the driver itself deadlocks in it.
sh tests/gpu/termexit.sh "$R/termexit" 100 bare lib > "$R/termexit.txt"
cat "$R/termexit.txt"
set -- $(sed -n 's/^termexit bare: \([0-9]*\) runs, \([0-9]*\) hangs, \([0-9]*\) exit 0.*/\1 \2 \3/p' "$R/termexit.txt") \
  $(sed -n 's/^termexit lib: \([0-9]*\) runs, \([0-9]*\) hangs, \([0-9]*\) exit 0, \([0-9]*\) exit dumps, \([0-9]*\) skipped/\1 \2 \3 \4 \5/p' "$R/termexit.txt")
[ $# -eq 8 ] || set -- ? ? ? ? ? ? ? ?
echo "termexit: bare $1 runs, $2 hangs, $3 exit 0; library $4 runs, $5 hangs, $6 exit 0, $7 exit dumps, $8 skipped (said)" | tee -a "$R/summary.txt"

# Processes that load torch but never use CUDA: no dump, nothing said.
d=$R/quiet; mkdir -p "$d/dumps"
( cd "$d/dumps" && LD_PRELOAD=$B/libvramtrace.so python3 -c 'import torch' 2> ../import.err
  LD_PRELOAD=$B/libvramtrace.so python3 -c 'import torch; print(torch.cuda.is_available())' > ../avail.out 2> ../avail.err
  LD_PRELOAD=$B/libvramtrace.so sh -c 'ls > /dev/null; nvidia-smi > /dev/null' 2> ../sh.err )
echo "quiet: import torch and torch.cuda.is_available() ($(cat "$d/avail.out")), a shell and nvidia-smi: $(ls "$d/dumps" | grep -c dump) dumps, $(cat "$d"/*.err | grep -c vramtrace) lines said" | tee -a "$R/summary.txt"
