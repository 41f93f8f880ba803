#!/bin/sh
# On the GPU machine (build/ carried over): the alloc+free pair benchmark against the real driver,
# bare and under the library, interleaved rounds, medians.
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
