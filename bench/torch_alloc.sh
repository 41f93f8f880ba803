#!/bin/sh
# On the GPU machine (build/ carried over): bench/torch_alloc.py bare and under the library (defaults;
# 32 native frames above the Python ones instead of 12; Python call sites off; native stacks off; both
# off), one core (CPUS, 6 by default), ROUNDS interleaved rounds; prints each run and the median ns per
# allocation and what the library adds.
#   torch_alloc.sh [ROUNDS [ALLOCATIONS]]
set -u
B=$PWD/build
ROUNDS=${1:-3} N=${2:-100000} CPUS=${CPUS:-6}
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp OMP_NUM_THREADS=1
CONFS="bare defaults native32 python_off depth0 both_off"
T=$(mktemp)
for r in $(seq "$ROUNDS"); do
  for c in $CONFS; do
    case $c in
      bare) pre= ;; defaults) pre="LD_PRELOAD=$B/libvramtrace.so" ;;
      native32) pre="LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_PY_NATIVE_DEPTH=32" ;;
      python_off) pre="LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_PYTHON=0" ;;
      depth0) pre="LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_DEPTH=0" ;;
      both_off) pre="LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_DEPTH=0 VRAMTRACE_PYTHON=0" ;;
    esac
    v=$(env $pre taskset -c "$CPUS" python3 bench/torch_alloc.py "$N" 2>&1 | awk '/^ns_per_alloc/ {print $2}')
    echo "$r $c ${v:-failed}" >> "$T"
  done
done
sed 's/^/  round /' "$T"
med() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
bare=$(awk '$2 == "bare" {print $3}' "$T" | med)
for c in $CONFS; do
  v=$(awk -v c=$c '$2 == c {print $3}' "$T" | med)
  echo "torch cudaMallocAsync tensor, ns per allocation: $c $v (library adds $(awk -v a="$v" -v b="$bare" 'BEGIN {printf "%.0f", a - b}'))"
done
rm -f "$T"
