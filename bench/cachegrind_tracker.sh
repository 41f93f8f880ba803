#!/bin/sh
# What the library's tracker path costs a block in memory traffic, simulated and whole-process: the
# serving-shaped loop (bench/py_serving.py) taking each request's tensor from the fake torch's caching
# allocator (tests/fake/c10: a block the tracker reports, DEPTH Python frames deep), under cachegrind
# (32 KiB L1s, a 2 MiB last level), bare and in each configuration. Counts are the whole process's, so
# that what the library's reads push out of the program's caches -- misses the program then takes in its
# own code, after the hook has returned -- is counted too (on the H100, the library's own code was 3.3 %
# of the GPT-2 loop's samples and its cost 6 %: docs/performance.md). Each configuration runs twice,
# with N1 and N2 requests, and the difference is divided by N2 - N1: a block's marginal cost, with the
# interpreter's start and the library's set-up left out. Deterministic for a build: builds and settings
# compare without rounds.
#   cachegrind_tracker.sh [NAME[:VAR=VALUE,...]]...   (default: bare defaults hashed:VRAMTRACE_PY_PATHS=off
#                                                      nostack:VRAMTRACE_DEPTH=0; names that begin with
#                                                      "bare" run without the library; LIB: another build;
#                                                      PY: CPython 3.12 by default; DEPTH=20; N1=5000 N2=15000)
set -u
B=$PWD/build
command -v valgrind > /dev/null || { echo "cachegrind_tracker.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 2; }
. "$(dirname "$0")/python312.sh"
PY=${PY:-$(first_python312)}
PY=${PY:-python3.12} DEPTH=${DEPTH:-20} N1=${N1:-5000} N2=${N2:-15000} LIB=${LIB:-$B/libvramtrace.so}
export LD_LIBRARY_PATH=$B/fake VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp BENCH_C10=$B/fake/torch/lib/libc10_cuda.so \
  BENCH_DEPTH=$DEPTH BENCH_DISTINCT=1 VRAMTRACE_PY_WAIT=10000
[ $# -gt 0 ] || set -- bare defaults hashed:VRAMTRACE_PY_PATHS=off nostack:VRAMTRACE_DEPTH=0
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
# The summary line of a run: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw (cachegrind's order of events).
summary() {
  rm -f "$D"/cg.*
  # Through env, which execs the interpreter: traced across the exec, the interpreter's file the largest.
  valgrind --tool=cachegrind --trace-children=yes --cache-sim=yes --LL=2097152,16,64 --D1=32768,8,64 \
    --I1=32768,8,64 --cachegrind-out-file="$D/cg.%p" env "$@" > /dev/null 2> "$D/err" || return 1
  sed -n 's/^summary: //p' "$(ls -S "$D"/cg.* | head -1)"
}
echo "cachegrind, fake torch's blocks through the tracker, $DEPTH Python frames deep, $($PY --version 2>&1);"
echo "whole process, a block (made and given back), marginal over $N1 to $N2 requests:"
printf '%-12s %12s %12s %12s %12s\n' "" instructions "L1 data miss" "L1 code miss" "last level"
bare=
for conf in "$@"; do
  name=${conf%%:*}
  vars=$(echo "$conf" | sed -n 's/^[^:]*://p' | tr , ' ')
  pre="LD_PRELOAD=$LIB"
  case $name in bare*) pre=VT_BARE=1 ;; esac
  s1=$(summary $vars $pre "$PY" bench/py_serving.py "$B/fake/libcudart.so.13" "$N1" quiet) &&
    s2=$(summary $vars $pre "$PY" bench/py_serving.py "$B/fake/libcudart.so.13" "$N2" quiet) ||
    { echo "$name: the run failed:"; tail -3 "$D/err"; continue; }
  line=$(echo "$s1 $s2" | awk -v n=$((N2 - N1)) '{
    ir = ($10 - $1) / n; d1 = ($14 + $17 - $5 - $8) / n; i1 = ($11 - $2) / n; ll = ($12 + $15 + $18 - $3 - $6 - $9) / n
    printf "%.1f %.2f %.2f %.3f", ir, d1, i1, ll }')
  [ -z "$bare" ] && case $name in bare*) bare=$line ;; esac
  echo "$name $line $bare" | awk '{
    if (NF == 9) printf "%-12s %12.0f %12.2f %12.2f %12.3f   (%+.0f, %+.2f, %+.2f, %+.3f against bare)\n", $1, $2, $3, $4, $5, $2 - $6, $3 - $7, $4 - $8, $5 - $9
    else printf "%-12s %12.0f %12.2f %12.2f %12.3f\n", $1, $2, $3, $4, $5 }'
done
