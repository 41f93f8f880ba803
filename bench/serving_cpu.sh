#!/bin/sh
# The serving-shaped CPU loop (bench/py_serving.py) on the fake runtime: bare, the library with Python
# call sites off, with the defaults (frames read by the allocating thread itself), and with
# VRAMTRACE_PY_WALK=off (frames read through the interpreter: vramtrace's helper takes the GIL); quiet
# and with a second Python thread contending for the GIL; pinned to CPUS, interleaved rounds. Prints
# per-round microseconds per request and the medians, and the library's cost per allocation against
# Python call sites off.
#   serving_cpu.sh ROUNDS CPUS [PYTHON]
set -u
B=$PWD/build
ROUNDS=$1 CPUS=$2 PY=${3:-python3}
export LD_LIBRARY_PATH=$B/fake VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "serving-shaped CPU loop, $($PY --version 2>&1), pinned to CPUs $CPUS of $(nproc), $ROUNDS rounds, us per request:"
for mode in quiet contended; do
  for c in bare off walk api; do : >"/tmp/sv_$c"; done
  for r in $(seq "$ROUNDS"); do
    line="  $mode round $r:"
    for c in bare off walk api; do
      case $c in
        bare) pre= ; set -- ;;
        off) pre=$B/libvramtrace.so; set -- VRAMTRACE_PYTHON=0 ;;
        walk) pre=$B/libvramtrace.so; set -- ;;
        api) pre=$B/libvramtrace.so; set -- VRAMTRACE_PY_WALK=off ;;
      esac
      n=100000; [ $c = api ] && n=5000
      v=$(env LD_PRELOAD=$pre "$@" taskset -c "$CPUS" $PY bench/py_serving.py "$B/fake/libcudart.so.13" $n $mode 2>/dev/null)
      echo "$v" >>"/tmp/sv_$c"; line="$line $c $v"
    done
    echo "$line"
  done
  b=$(median </tmp/sv_bare); o=$(median </tmp/sv_off); w=$(median </tmp/sv_walk); a=$(median </tmp/sv_api)
  echo "  $mode medians: bare $b, Python call sites off $o, defaults (walk) $w, VRAMTRACE_PY_WALK=off $a;" \
       "Python call sites cost per allocation: walk $(awk "BEGIN{printf \"%.2f\", $w-$o}") us," \
       "through the interpreter $(awk "BEGIN{printf \"%.2f\", $a-$o}") us; the library in all, walk: $(awk "BEGIN{printf \"%.2f\", $w-$b}") us"
done
