#!/bin/sh
# What a Prometheus textfile kept every second costs a serving process: the serving-shaped loop
# (bench/py_serving.py, the library with its defaults) with `vramtrace metrics --interval 1` beside it
# and without, interleaved rounds, the program pinned to CPU (the metrics process on another, as it
# would run). Prints microseconds per request per round, the medians, and the metrics process's own
# CPU time per run.
#   metrics.sh ROUNDS CPU OTHER_CPU [REQUESTS]
set -u
B=$PWD/build
ROUNDS=$1 CPU=$2 OTHER=$3 N=${4:-1000000}
export LD_LIBRARY_PATH=$B/fake VRAMTRACE_AT_EXIT=0
D=$(mktemp -d)
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
: > "$D/without"; : > "$D/with"; : > "$D/cpu"
echo "serving-shaped loop, $N requests a run, CPU $CPU (metrics process on CPU $OTHER), us per request:"
for r in $(seq "$ROUNDS"); do
  for c in without with; do
    VRAMTRACE_DIR=$D LD_PRELOAD=$B/libvramtrace.so taskset -c "$CPU" python3 bench/py_serving.py \
      "$B/fake/libcudart.so.13" "$N" quiet > "$D/out" 2>/dev/null &
    pid=$!
    if [ $c = with ]; then
      sleep 0.3
      # Its CPU time when it ends, by the shell's own accounting of its children (times).
      sh -c 'taskset -c "$1" "$2" metrics --textfile "$3" --interval 1 "$4" 2>/dev/null; times' sh "$OTHER" "$B/vramtrace" \
        "$D/m.prom" $pid > "$D/times" &
      mpid=$!
    fi
    wait $pid
    if [ $c = with ]; then
      wait $mpid
      # times' second line: the children's user and system time, as 0m0.010000s 0m0.002000s.
      sed -n 2p "$D/times" | awk '{ gsub(/[ms]/, " ", $1); gsub(/[ms]/, " ", $2); split($1, u, " "); split($2, s, " ");
                                    printf "%.0f\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' >> "$D/cpu"
    fi
    v=$(cat "$D/out"); echo "$v" >> "$D/$c"
    printf '  round %s %s metrics: %s\n' "$r" "$c" "$v"
  done
done
a=$(median < "$D/without"); b=$(median < "$D/with")
echo "  medians: without $a, with $b us per request: ratio $(awk "BEGIN{printf \"%.3f\", $a/$b}") (with/without throughput);" \
     "the metrics process: $(median < "$D/cpu") ms of CPU a run (one file a second; counted in clock ticks of 10 ms)"
rm -rf "$D"
