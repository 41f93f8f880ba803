#!/bin/sh
# What a Prometheus textfile kept every second costs a serving process: the serving-shaped loop
# (bench/py_serving.py, the library with its defaults) with VRAMTRACE_METRICS (the library's dumper thread
# writes the file, interval 1 s) and without, interleaved rounds, pinned to one CPU (the dumper thread
# shares it with the loop, the worst case). Prints microseconds per request per round, the medians, and
# what the library counts of its own threads' CPU per run (`vramtrace report`'s self-cost of the exit dump).
#   metrics.sh ROUNDS CPU [REQUESTS]
set -u
B=$PWD/build
ROUNDS=$1 CPU=$2 N=${3:-1000000}
export LD_LIBRARY_PATH=$B/fake
D=$(mktemp -d)
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
: > "$D/without"; : > "$D/with"; : > "$D/threads"
echo "serving-shaped loop, $N requests a run, CPU $CPU, us per request:"
for r in $(seq "$ROUNDS"); do
  for c in without with; do
    rm -rf "$D/dumps" && mkdir "$D/dumps"
    if [ $c = with ]; then set -- VRAMTRACE_METRICS="$D/m.prom" VRAMTRACE_METRICS_INTERVAL=1; else set --; fi
    env "$@" VRAMTRACE_DIR="$D/dumps" LD_PRELOAD="$B/libvramtrace.so" taskset -c "$CPU" python3 bench/py_serving.py \
      "$B/fake/libcudart.so.13" "$N" quiet > "$D/out" 2>/dev/null
    v=$(cat "$D/out"); echo "$v" >> "$D/$c"
    # The library's own threads' CPU over the run, by its exit dump.
    t=$("$B/vramtrace" report --json "$D"/dumps/*.dump | python3 -c 'import json,sys; print(json.load(sys.stdin)["self_cost"]["threads_ns"] // 1000000)')
    [ $c = with ] && echo "$t" >> "$D/threads"
    printf '  round %s %s metrics: %s us a request; the library threads %s ms of CPU\n' "$r" "$c" "$v" "$t"
  done
done
a=$(median < "$D/without"); b=$(median < "$D/with")
echo "  medians: without $a, with $b us per request: ratio $(awk "BEGIN{printf \"%.3f\", $a/$b}") (with/without throughput);" \
     "the library's threads with metrics: $(median < "$D/threads") ms of CPU a run"
rm -rf "$D"
