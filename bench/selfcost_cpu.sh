#!/bin/sh
# The library's own count of its hooks on the serving-shaped loop (bench/py_serving.py, fake driver), for
# one or more builds of the library side by side, in interleaved rounds: two dumps 3 s apart, and
# `vramtrace diff --json`'s self_cost between them: ns a hook call, of which reading Python frames and
# unwinding native ones. EVICT=N touches N random cache lines before each request (bench/evict.c), as a
# real program evicts the library's data; LEVELS=4 gives 256 call paths (BENCH_LEVELS); PY=python3.12 runs
# another interpreter; DISTINCT=1 makes the 40 frames 40 functions of their own (BENCH_DISTINCT).
#   selfcost_cpu.sh ROUNDS CPU LIB[:VAR=VALUE,...]...   (e.g. an older build's libvramtrace.so against build/'s,
#                                                          or build/'s with VRAMTRACE_PY_NATIVE_DEPTH=4)
set -u
B=$PWD/build
ROUNDS=$1 CPU=$2; shift 2
export LD_LIBRARY_PATH=$B/fake VRAMTRACE_AT_EXIT=0 BENCH_EVICT=${EVICT:-0} BENCH_EVICT_LIB=$B/bench_evict.so BENCH_DISTINCT=${DISTINCT:-0} \
  BENCH_LEVELS=${LEVELS:-2}
cc -O2 -shared -fPIC -o "$B/bench_evict.so" bench/evict.c
D=$(mktemp -d)
echo "hook cost by the library's own count, serving-shaped loop, evict $BENCH_EVICT lines, 4^$BENCH_LEVELS paths, CPU $CPU:"
for r in $(seq "$ROUNDS"); do
  for lib in "$@"; do
    rm -f "$D"/*.dump
    so=${lib%%:*}; vars=$(echo "$lib" | sed -n 's/^[^:]*://p' | tr , ' ')
    env $vars VRAMTRACE_DIR=$D LD_PRELOAD=$so taskset -c "$CPU" ${PY:-python3} bench/py_serving.py "$B/fake/libcudart.so.13" 100000000 quiet \
      > /dev/null 2>&1 &
    pid=$!
    sleep 2; kill -USR1 $pid; sleep 3; kill -USR1 $pid; sleep 0.5; kill $pid; wait $pid 2>/dev/null
    set -- $(ls "$D"/*.dump | sort -t. -k3 -n) "$@"
    "$B/vramtrace" diff --json "$1" "$2" | python3 -c '
import json, sys
c = json.load(sys.stdin)["self_cost"]
n = max(1, c["calls"])
print("  round %s %s: %.0f ns a hook call (Python frames %.0f, native frames %.0f), %d calls" % (sys.argv[1], sys.argv[2],
      c["hook_ns"] / n, (c.get("python_ns") or 0) / n, (c.get("native_ns") or 0) / n, c["calls"]))' "$r" "$lib"
    shift 2
  done
done
rm -rf "$D"
