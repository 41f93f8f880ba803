#!/bin/sh
# On the GPU machine (build/ carried over): the alloc+free pair benchmark against the real driver, and
# a PyTorch inference loop, each bare and under the library, interleaved rounds, medians.
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

# A PyTorch inference loop: bare, under the library with torch's block history off, and on (the
# default); interleaved rounds, medians of iterations per second. Then the bridge's cost per dump.
: >/tmp/t_bare; : >/tmp/t_off; : >/tmp/t_on
for round in 1 2 3; do
  python3 bench/torch_loop.py 300 | awk '/iterations_per_s/ {print $2}' >>/tmp/t_bare
  VRAMTRACE_TORCH_HISTORY=0 LD_PRELOAD=$B/libvramtrace.so python3 bench/torch_loop.py 300 | awk '/iterations_per_s/ {print $2}' >>/tmp/t_off
  LD_PRELOAD=$B/libvramtrace.so python3 bench/torch_loop.py 300 > /tmp/t_on_out
  awk '/iterations_per_s/ {print $2}' /tmp/t_on_out >>/tmp/t_on
done
tb=$(median </tmp/t_bare); toff=$(median </tmp/t_off); ton=$(median </tmp/t_on)
echo "torch TransformerEncoderLayer loop, median of 3 x 300 iterations, it/s: bare $tb, library with history off $toff ($(awk "BEGIN{printf \"%.3f\", $toff/$tb}")x), history on $ton ($(awk "BEGIN{printf \"%.3f\", $ton/$tb}")x)"
echo "  rounds: bare $(tr '\n' ' ' </tmp/t_bare)| off $(tr '\n' ' ' </tmp/t_off)| on $(tr '\n' ' ' </tmp/t_on)"
echo "bridge cost per dump (last round, history on):"
grep '^dump' /tmp/t_on_out
