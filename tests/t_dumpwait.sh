#!/bin/sh
# TAP: a dump request that cannot be served at once says why within a second, not only at its timeout:
# a stopped process is named as stopped, and a request that comes while the dumper is at work hears
# what it is doing (here: waiting for a GIL the program holds).
. "$(dirname "$0")/tap.sh"
export LD_LIBRARY_PATH=$B/fake
echo "1..3"
waitsock() { for i in $(seq 50); do grep -q "@vramtrace\.$1\." /proc/$1/net/unix 2> /dev/null && return 0; sleep 0.1; done; return 1; }

LD_PRELOAD="$B/libvramtrace.so" VRAMTRACE_DIR="$W" "$B/tests/prog_driver" sleep 8000 > /dev/null 2>&1 &
p=$!
waitsock $p
kill -STOP $p
t0=$(date +%s.%N)
"$V" dump --timeout 20 $p > "$W/out" 2>&1
st=$?
took=$(awk "BEGIN {print $(date +%s.%N) - $t0}")
kill -CONT $p; kill $p; wait $p 2> /dev/null
echo "took $took s" >> "$W/out"
[ $st = 1 ] && grep -q "it is stopped (T (stopped)" "$W/out" && awk "BEGIN {exit !($took < 2)}"
check "dump of a stopped process: said within a second ($took s), not after the 20 s timeout"

LD_PRELOAD="$B/libvramtrace.so" VRAMTRACE_DIR="$W" python3 "$T/progs/gil_holder.py" 5 > "$W/g.out" 2>&1 &
g=$!
waitsock $g
"$V" dump --timeout 10 $g > "$W/first.out" 2>&1 &
first=$!
sleep 0.5
"$V" dump --timeout 1 $g > "$W/out" 2>&1
st=$?
wait $first
st1=$?
cat "$W/first.out" >> "$W/out"
[ $st = 1 ] && grep -q "its dumper was busy then (waiting for the program's GIL" "$W/out"
check "a request while the dumper waits for the GIL the program holds: its timeout says what the dumper was doing"
[ $st1 = 0 ] && grep -q '\.dump$' "$W/first.out" && wait $g
check "and the first request still gets its dump (the bridge gave up on the GIL after its own timeout)"
