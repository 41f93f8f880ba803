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
# the library, interleaved. exit() is not async-signal-safe: the driver itself can deadlock in it when the
# signal interrupts one of its calls, so the bare runs say how often that happens without vramtrace.
gcc -O2 -g -std=c11 -D_GNU_SOURCE -Itests/progs -I/usr/local/cuda/include -o "$R/prog_safety" \
  tests/progs/prog_safety.c tests/progs/prog_common.c -lcuda -ldl -lpthread
d=$R/termexit; mkdir -p "$d/dumps"
for how in bare lib; do eval "hangs_$how=0 clean_$how=0"; done
i=0
while [ $i -lt 200 ]; do
  how=bare; [ $((i % 2)) -eq 1 ] && how=lib
  if [ $how = lib ]; then
    VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$B/libvramtrace.so "$R/prog_safety" termexit > "$d/out.$i" 2>> "$d/err.txt" &
  else
    "$R/prog_safety" termexit > "$d/out.$i" 2>> "$d/err.txt" &
  fi
  p=$!
  until grep -q ready "$d/out.$i" 2>/dev/null; do sleep 0.01; done
  sleep 0.0$((i / 2 % 9 + 1))
  kill -TERM $p
  w=0
  while kill -0 $p 2>/dev/null && [ $w -lt 60 ]; do sleep 0.1; w=$((w + 1)); done
  if kill -0 $p 2>/dev/null; then
    eval "hangs_$how=\$((hangs_$how + 1))"
    # Where each thread waits: the syscall and the address it was made from, and the libraries' ranges.
    { for t in /proc/$p/task/*; do echo "$(cat $t/comm) $(cut -d' ' -f1,9 $t/syscall)"; done
      grep -E 'libc\.so|libcuda|libvramtrace' /proc/$p/maps | awk '{print $1, $6}' | sort -u -k2; } > "$d/hang.$how.$i"
    kill -KILL $p
  fi
  wait $p && eval "clean_$how=\$((clean_$how + 1))"
  i=$((i + 1))
done
echo "termexit: bare 100 runs, $hangs_bare hangs, $clean_bare exit 0; library 100 runs, $hangs_lib hangs, $clean_lib exit 0, $(ls "$d/dumps" | grep -c '\.dump$') exit dumps, $(grep -c 'no exit dump' "$d/err.txt") skipped (said)" | tee -a "$R/summary.txt"

# Processes that load torch but never use CUDA: no dump, nothing said.
d=$R/quiet; mkdir -p "$d/dumps"
( cd "$d/dumps" && LD_PRELOAD=$B/libvramtrace.so python3 -c 'import torch' 2> ../import.err
  LD_PRELOAD=$B/libvramtrace.so python3 -c 'import torch; print(torch.cuda.is_available())' > ../avail.out 2> ../avail.err
  LD_PRELOAD=$B/libvramtrace.so sh -c 'ls > /dev/null; nvidia-smi > /dev/null' 2> ../sh.err )
echo "quiet: import torch and torch.cuda.is_available() ($(cat "$d/avail.out")), a shell and nvidia-smi: $(ls "$d/dumps" | grep -c dump) dumps, $(cat "$d"/*.err | grep -c vramtrace) lines said" | tee -a "$R/summary.txt"
