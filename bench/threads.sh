#!/bin/sh
# Threads allocating at once (bench/bench_threads.c), bare and under the library, at 1, 4 and 16
# threads, plain (cuMemAlloc) and stream-ordered (cuMemAllocAsync) pairs, ROUNDS interleaved rounds:
# prints one line per run and then, per mode and thread count, the median ns per pair per thread and
# what the library adds to a pair (library - bare, medians). On bench/stub_cuda.c by default, a driver
# that shares nothing between threads, so that what grows with threads is ours; FAKE=1: on the test
# rig's fake driver instead. LIBS names more builds of the library to compare side by side
# ("name=path/libvramtrace.so ..."). Builds what it runs, so the binary is never older than its source.
# Then what unwinding costs per native frame (bench/bench_unwind.c).
#   threads.sh [ROUNDS]
set -eu
B=$PWD/build
ROUNDS=${1:-3} PAIRS=${PAIRS:-100000}
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
mkdir -p "$B/bench-stub"
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fPIC -shared -I"$CUDA_INC" -Wl,-soname,libcuda.so.1 \
  -o "$B/bench-stub/libcuda.so.1" bench/stub_cuda.c
cc -O2 -std=c11 -D_GNU_SOURCE -I"$CUDA_INC" -o "$B/bench_threads" bench/bench_threads.c -L"$B/fake" -l:libcuda.so.1 -lpthread
cc -O2 -std=c11 -D_GNU_SOURCE -fomit-frame-pointer -I"$CUDA_INC" -o "$B/bench_unwind" bench/bench_unwind.c -L"$B/fake" -l:libcuda.so.1
if [ "${FAKE:-0}" = 1 ]; then DRIVER=$B/fake; else DRIVER=$B/bench-stub; fi
export LD_LIBRARY_PATH=$DRIVER VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp
LIBS="library=$B/libvramtrace.so ${LIBS:-}"
T=$(mktemp)
for r in $(seq "$ROUNDS"); do
  for mode in plain async; do
    for t in 1 4 16; do
      echo "$r $mode $t bare $("$B/bench_threads" $t "$PAIRS" $mode)" >> "$T"
      for l in $LIBS; do
        echo "$r $mode $t ${l%%=*} $(LD_PRELOAD=${l#*=} "$B/bench_threads" $t "$PAIRS" $mode)" >> "$T"
      done
    done
  done
done
echo "driver: $DRIVER"
sed 's/^/  round /' "$T"
med() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for mode in plain async; do
  for t in 1 4 16; do
    bare=$(awk -v m=$mode -v t=$t '$2 == m && $3 == t && $4 == "bare" {print $5}' "$T" | med)
    line="$mode, $t threads: bare $bare"
    for l in $LIBS; do
      v=$(awk -v m=$mode -v t=$t -v n="${l%%=*}" '$2 == m && $3 == t && $4 == n {print $5}' "$T" | med)
      line="$line; ${l%%=*} $v (adds $(awk -v a="$v" -v b="$bare" 'BEGIN {printf "%.0f", a - b}'))"
    done
    echo "$line ns per pair per thread"
  done
done
rm -f "$T"
# What unwinding costs a frame (bench/bench_unwind.c: pairs 40 calls deep, no frame pointers), on the
# same driver, one core: bare, then the library keeping 0, 12 and 32 native frames.
for r in $(seq "$ROUNDS"); do
  line="unwinding, 40 calls deep, ns per pair: bare $(taskset -c 0 "$B/bench_unwind" 40 300000)"
  for d in 0 12 32; do
    line="$line; VRAMTRACE_DEPTH=$d $(VRAMTRACE_DEPTH=$d LD_PRELOAD=$B/libvramtrace.so taskset -c 0 "$B/bench_unwind" 40 300000)"
  done
  echo "$line"
done
