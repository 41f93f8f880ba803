#!/bin/sh
# Runs the benchmarks side by side on the fake driver and prints the figures for docs/performance.md.
set -eu
B=$(cd "$(dirname "$0")/../build" && pwd)
export LD_LIBRARY_PATH=$B/fake
D=$(mktemp -d)
export VRAMTRACE_DIR=$D VRAMTRACE_AT_EXIT=0
cc -O2 -std=c11 -D_GNU_SOURCE -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench_alloc" bench/bench_alloc.c -L"$B/fake" -l:libcuda.so.1
cc -O2 -std=c11 -D_GNU_SOURCE -rdynamic -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench_dump" bench/bench_dump.c -L"$B/fake" -l:libcuda.so.1 -ldl -lpthread
cc -O2 -std=c11 -D_GNU_SOURCE -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench_mem" bench/bench_mem.c -L"$B/fake" -l:libcuda.so.1
cc -O2 -std=c11 -D_GNU_SOURCE -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/bench_thread_mem" bench/bench_thread_mem.c -L"$B/fake" -l:libcuda.so.1 -lpthread
echo "machine: $(nproc) cores, $(uname -m), $(date -u +%Y-%m-%d)"
# Interleaved rounds, so that a slow moment of the machine hits all three alike; the median is kept.
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
: >"$D/bare"; : >"$D/off"; : >"$D/d32"
for round in 1 2 3 4 5; do
  "$B/bench_alloc" 1000000 >>"$D/bare"
  VRAMTRACE_DEPTH=0 LD_PRELOAD=$B/libvramtrace.so "$B/bench_alloc" 1000000 >>"$D/off"
  VRAMTRACE_DEPTH=32 LD_PRELOAD=$B/libvramtrace.so "$B/bench_alloc" 1000000 >>"$D/d32"
done
bare=$(median <"$D/bare"); off=$(median <"$D/off"); d32=$(median <"$D/d32")
echo "alloc+free pair, median of 5 x 1,000,000, ns: bare $bare, stacks off $off ($(echo "$off / $bare" | bc -l | cut -c1-4)x), depth 32 $d32 ($(echo "$d32 / $bare" | bc -l | cut -c1-4)x)"
echo "  rounds: bare $(tr '\n' ' ' <"$D/bare")| off $(tr '\n' ' ' <"$D/off")| depth 32 $(tr '\n' ' ' <"$D/d32")"

# Python call sites (bench/py_alloc.py): the pair through ctypes at Python depths 10 and 50, the GIL
# held and released, bare / Python call sites off / on (all frames kept).
PY=/usr/bin/python3
for how in held released; do
  for depth in 10 50; do
    : >"$D/p_bare"; : >"$D/p_off"; : >"$D/p_on"
    for round in 1 2 3 4 5; do
      $PY bench/py_alloc.py "$B/fake/libcudart.so.13" $depth 200000 $how >>"$D/p_bare"
      VRAMTRACE_PYTHON=0 LD_PRELOAD=$B/libvramtrace.so $PY bench/py_alloc.py "$B/fake/libcudart.so.13" $depth 200000 $how >>"$D/p_off"
      VRAMTRACE_PY_DEPTH=64 LD_PRELOAD=$B/libvramtrace.so $PY bench/py_alloc.py "$B/fake/libcudart.so.13" $depth 200000 $how >>"$D/p_on"
    done
    pb=$(median <"$D/p_bare"); po=$(median <"$D/p_off"); pn=$(median <"$D/p_on")
    echo "python $how depth $depth, pair through ctypes, median of 5 x 200,000, ns: bare $pb, python off $po ($(echo "$po / $pb" | bc -l | cut -c1-4)x), python on $pn ($(echo "$pn / $pb" | bc -l | cut -c1-4)x); on - off = $(echo "$pn - $po" | bc) ns"
  done
done

# The serving-shaped loop (bench/serving_cpu.sh): Python call sites read by the allocating thread
# against the old route through the interpreter, pinned to the last CPU.
sh bench/serving_cpu.sh 5 "$(($(nproc) - 1))" /usr/bin/python3

# Resident memory per live allocation (bench/bench_mem.c), 1,000,000 of them: bare (the fake driver's own)
# and under the library; the difference is the library's.
for round in 1 2 3; do
  echo "bytes per live allocation: bare $("$B/bench_mem" 1000000), library $(LD_PRELOAD=$B/libvramtrace.so "$B/bench_mem" 1000000)"
done

# Resident memory per allocating thread (bench/bench_thread_mem.c), 1,000 threads alive at once: bare,
# the library with call sites (the default), and without (VRAMTRACE_DEPTH=0).
for round in 1 2 3; do
  b=$("$B/bench_thread_mem" 1000 | cut -d' ' -f2)
  l=$(LD_PRELOAD=$B/libvramtrace.so "$B/bench_thread_mem" 1000 | cut -d' ' -f2)
  z=$(VRAMTRACE_DEPTH=0 LD_PRELOAD=$B/libvramtrace.so "$B/bench_thread_mem" 1000 | cut -d' ' -f2)
  echo "KiB per allocating thread (1,000 alive): library $(( (l - b) / 1000 )), without call sites $(( (z - b) / 1000 )) (RSS bare $b, library $l, no stacks $z KiB)"
done

# Threads allocating at once: bench/threads.sh (bare and library side by side, 1, 4 and 16 threads).
sh bench/threads.sh 3

for round in 1 2 3; do
  LD_PRELOAD=$B/libvramtrace.so "$B/bench_dump" | sed 's/ path .*//'
done
# The reader on a large dump: 1,000,000 live allocations over 50,000 stacks (two of them, for diff).
out=$(VRAMTRACE_DEPTH=32 LD_PRELOAD=$B/libvramtrace.so "$B/bench_dump" 1000000 50000 64)
echo "dump of 1,000,000 allocations: $(echo "$out" | sed 's/ path .*//')"
a=$(echo "$out" | sed 's/.* path //')
b=$(VRAMTRACE_DEPTH=32 LD_PRELOAD=$B/libvramtrace.so "$B/bench_dump" 1000000 50000 64 | sed 's/.* path //')
echo "large dump: $(du -m "$a" | cut -f1) MiB, $(grep -c '^alloc ' "$a") allocations, $(grep -c '^stack ' "$a") stacks"
/usr/bin/time -f "report: %e s, peak %M KiB" "$B/vramtrace" report "$a" >/dev/null
/usr/bin/time -f "report --json: %e s, peak %M KiB" "$B/vramtrace" report "$a" --json >/dev/null
/usr/bin/time -f "diff: %e s, peak %M KiB" "$B/vramtrace" diff "$a" "$b" >/dev/null
# A series of ten such dumps of one process (the last nine after 10,000 more allocations at one site each).
series=$(VRAMTRACE_DEPTH=32 VRAMTRACE_AT_EXIT=0 LD_PRELOAD=$B/libvramtrace.so "$B/bench_dump" 1000000 50000 64 9 |
  sed -n 's/^series //p')
/usr/bin/time -f "trend of 10: %e s, peak %M KiB" "$B/vramtrace" trend $series >/dev/null
rm -rf "$D"
