#!/bin/sh
# TAP: Prometheus metrics. `vramtrace report --prometheus` gives a dump's figures in the text exposition
# format that `promtool check metrics` (Debian's prometheus; make test installs it) accepts, equal to
# the report's own; `vramtrace run --metrics FILE` keeps FILE up to date beside a live program on the
# fake driver and removes it when the program ends; bad uses fail plainly.
. "$(dirname "$0")/tap.sh"
export LD_LIBRARY_PATH=$B/fake
value() { # value FILE METRIC: the value of the metric's first series
  sed -n "s/^$2{[^}]*} //p" "$1" | head -1
}
echo "1..11"

command -v promtool > /dev/null
check "promtool is installed (prometheus)"

"$V" report --prometheus "$D/h200-torch-race.2.dump" > "$W/m.prom" 2> "$W/out" && promtool check metrics < "$W/m.prom" > "$W/out" 2>&1
check "report --prometheus: promtool check metrics accepts it"

"$V" report --json "$D/h200-torch-race.2.dump" > "$W/r.json" &&
  python3 - "$W/r.json" "$W/m.prom" > "$W/out" 2>&1 <<'EOF'
import json, re, sys
dev = json.load(open(sys.argv[1]))["devices"][0]
got = {}
for line in open(sys.argv[2]):
    m = re.match(r'vramtrace_(\w+)_bytes\{pid="1711",program="python3.12",device="0"\} (\d+)$', line)
    if m:
        got[m.group(1)] = int(m.group(2))
want = {k: dev[k] for k in ("process_used", "reserved", "allocated", "cached", "releasable", "fragmented", "overhead")}
want["device_total"], want["device_free"] = dev["total"], dev["free"]
print(got, want)
sys.exit(0 if got == want else 1)
EOF
check "each device figure equals the report's (process used, reserved, allocated, cached, releasable, fragmented, overhead)"

grep '^vramtrace_site_live_bytes{' "$W/m.prom" | sed 's/} .*//' | sort | uniq -d > "$W/out"; [ ! -s "$W/out" ] &&
  grep -q '^vramtrace_site_live_bytes{pid="1711",program="python3.12",device="0",site="handle (torch_cache.py:18)",kind="device",class="segment"} 291504128$' "$W/m.prom"
check "call sites named as the report names them, those sharing a name added up (291504128 = two stacks' segments at handle), no series twice"

"$V" report --prometheus --top 2 "$D/h200-torch-race.2.dump" > "$W/m2.prom" 2> "$W/out" &&
  [ "$(grep -c '^vramtrace_site_live_bytes{' "$W/m2.prom")" = 2 ] && [ "$(grep -c '^vramtrace_site_live_allocations{' "$W/m2.prom")" = 2 ]
check "--top 2: two site series per family"

# A live program: the fake driver's leaking server, with the metrics file kept every second.
mkdir "$W/d"
"$V" run --dir "$W/d" --metrics "$W/live.prom" --metrics-interval 1 -- "$B/tests/cuda_leak" 6000 > "$W/prog.out" 2>&1 &
run=$!
for i in $(seq 50); do [ -s "$W/live.prom" ] && break; sleep 0.1; done
cp "$W/live.prom" "$W/first.prom" 2> /dev/null
promtool check metrics < "$W/first.prom" > "$W/out" 2>&1 && grep -q "^vramtrace_reserved_bytes{pid=\"$run\",program=\"cuda_leak\",device=\"0\"} " "$W/first.prom"
check "run --metrics: the file appears within 5 s, accepted by promtool, named by the program's pid"

ps -o ppid= -p "$(pgrep -x vt-metrics | head -1)" > "$W/out" 2>&1 && [ "$(tr -d ' ' < "$W/out")" != "$run" ]
check "the metrics process is not the program's child"

sleep 2.5
a=$(value "$W/first.prom" vramtrace_allocated_bytes)
b=$(value "$W/live.prom" vramtrace_allocated_bytes)
echo "allocated $a then $b" > "$W/out"
[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ]
check "the file is rewritten: allocated grows with the leak"

wait $run
st=$?
for i in $(seq 20); do [ -e "$W/live.prom" ] || pgrep -x vt-metrics > /dev/null || break; sleep 0.1; done
echo "status $st; file left: $(ls "$W/live.prom" 2>&1); metrics process: $(pgrep -x vt-metrics)" > "$W/out"
[ $st = 0 ] && [ ! -e "$W/live.prom" ] && ! pgrep -x vt-metrics > /dev/null
check "when the program ends (status 0 kept), the file is removed and the metrics process is gone"

ls "$W/d" > "$W/out"; [ "$(ls "$W/d" | wc -l)" = 1 ] && ls "$W/d" | grep -q "^vramtrace\.$run\.[0-9]*\.dump$"
check "the dumps the metrics were read from are removed: only the program's exit dump is left"

"$V" metrics --once "$run" > "$W/out" 2>&1
st1=$?
"$V" metrics --textfile "$W/x.prom" --once 2147483646 >> "$W/out" 2>&1
st2=$?
[ $st1 = 2 ] && grep -q 'no --textfile given' "$W/out" && [ $st2 = 1 ] && grep -q 'no process 2147483646' "$W/out"
check "metrics without --textfile: usage error (exit 2); of no process: exit 1"
