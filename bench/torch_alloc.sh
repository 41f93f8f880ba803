#!/bin/sh
# On the GPU machine (build/ carried over): bench/torch_alloc.py, one core (CPUS, 6 by default), ROUNDS
# interleaved rounds; prints each run and the median ns per allocation and what each adds to its bare
# line. With backend:cudaMallocAsync, bare and under the library: defaults; 32 native frames above the
# Python ones instead of 12; Python call sites off; native stacks off; both off. With torch's own
# caching allocator (no driver call per tensor): bare, and torch's block history as the library arms it
# at a dump, at 12 and at 40 Python frames.
#   torch_alloc.sh [ROUNDS [ALLOCATIONS]]
set -u
B=$PWD/build
ROUNDS=${1:-3} N=${2:-100000} CPUS=${CPUS:-6}
export VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp OMP_NUM_THREADS=1
LIB="LD_PRELOAD=$B/libvramtrace.so"
# name, its bare line, torch_alloc.py's arguments after ALLOCATIONS, the environment.
CONFS="bare bare async -
defaults bare async $LIB
native32 bare async $LIB,VRAMTRACE_PY_NATIVE_DEPTH=32
python_off bare async $LIB,VRAMTRACE_PYTHON=0
depth0 bare async $LIB,VRAMTRACE_DEPTH=0
both_off bare async $LIB,VRAMTRACE_DEPTH=0,VRAMTRACE_PYTHON=0
native_bare native_bare native,0,12 -
native_history12 native_bare native,1,12 -
native_bare40 native_bare40 native,0,40 -
native_history40 native_bare40 native,1,40 -"
T=$(mktemp)
for r in $(seq "$ROUNDS"); do
  echo "$CONFS" | while read -r name base args envs; do
    [ "$envs" = - ] && envs= || envs=$(echo "$envs" | tr , ' ')
    v=$(env $envs taskset -c "$CPUS" python3 bench/torch_alloc.py "$N" $(echo "$args" | tr , ' ') 2>&1 |
      awk '/^ns_per_alloc/ {print $2}')
    echo "$r $name ${v:-failed}" >> "$T"
  done
done
sed 's/^/  round /' "$T"
med() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "$CONFS" | while read -r name base args envs; do
  v=$(awk -v c="$name" '$2 == c {print $3}' "$T" | med)
  b=$(awk -v c="$base" '$2 == c {print $3}' "$T" | med)
  echo "torch tensor ($args), ns per allocation: $name $v (adds $(awk -v a="$v" -v b="$b" 'BEGIN {printf "%.0f", a - b}') to $base)"
done
rm -f "$T"
