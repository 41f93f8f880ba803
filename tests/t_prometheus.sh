#!/bin/sh
# TAP: the fleet's path end to end, on the engines users run. The alerting rules
# (examples/prometheus/vramtrace-alerts.yml) pass promtool's check and its unit tests (a leak, a cache
# growing as fast, a site whose requests come and go). Then node_exporter (Debian's package) reads the
# file the library keeps for a leaking program on the fake driver (tests' cuda_leak, VRAMTRACE_METRICS),
# a Prometheus server on 127.0.0.1 scrapes it every second with the same rules on a shorter window
# (seconds for minutes), and its HTTP API gives the leaking line's bytes and fires the alert at that
# line, and at no other.
. "$(dirname "$0")/tap.sh"
echo "1..6"
R=$T/../examples/prometheus/vramtrace-alerts.yml

promtool check rules "$R" > "$W/out" 2>&1
check "the rules file passes promtool check rules"

(cd "$T/prometheus" && promtool test rules vramtrace-alerts.test.yml) > "$W/out" 2>&1
check "promtool test rules: the leak fires at its line, the cache and the requests' sawtooth do not"

# Two free ports on the loopback, for node_exporter and Prometheus.
set -- $(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
NE=$1 PR=$2
mkdir "$W/tf" "$W/data" "$W/dumps"
pids=
trap 'for p in $pids; do kill $p 2> /dev/null; done; wait 2> /dev/null; rm -rf "$W"' EXIT
# The leaking program: 2 MiB kept every fifth request, a request every ~5 ms, for ~30 s.
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/dumps" VRAMTRACE_METRICS="$W/tf/vramtrace-%p.prom" \
  VRAMTRACE_METRICS_INTERVAL=1 LD_PRELOAD="$B/libvramtrace.so" "$B/tests/cuda_leak" 6000 > "$W/prog.out" 2>&1 &
pids="$pids $!"
prometheus-node-exporter --collector.disable-defaults --collector.textfile --collector.textfile.directory="$W/tf" \
  --web.listen-address="127.0.0.1:$NE" > "$W/ne.log" 2>&1 &
pids="$pids $!"
# The rules of the file, on a window of seconds: 30m -> 8s, for 15m -> 2s, 256 MiB -> 16 MiB.
sed -e 's/30m/8s/g' -e 's/for: 15m/for: 2s/' -e 's/256 \* 1024 \* 1024/16 * 1024 * 1024/g' "$R" > "$W/rules.yml"
cat > "$W/prom.yml" <<CONF
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$W/rules.yml"]
scrape_configs:
  - job_name: gpu
    static_configs: [{targets: ["127.0.0.1:$NE"]}]
CONF
prometheus --config.file="$W/prom.yml" --storage.tsdb.path="$W/data" --web.listen-address="127.0.0.1:$PR" \
  > "$W/prom.log" 2>&1 &
pids="$pids $!"

# ask PATH: Prometheus' HTTP API, JSON on stdout (empty when it does not answer yet).
ask() { python3 -c 'import sys, urllib.request
try: print(urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), timeout=2).read().decode())
except Exception: pass' "$PR" "$1"; }

# The leaking line's bytes, as PromQL gives them: a positive multiple of 2 MiB, named by its function.
for i in $(seq 60); do
  ask '/api/v1/query?query=vramtrace_site_live_bytes%7Bsite%3D~%22remember_request_for_debugging.%2A%22%7D' > "$W/q.json"
  python3 - "$W/q.json" > "$W/q.txt" 2>&1 <<'PY' && break
import json, sys
r = json.load(open(sys.argv[1]))["data"]["result"]
v = [int(x["value"][1]) for x in r]
print(r[0]["metric"]["site"] if r else None, v)
sys.exit(0 if len(v) == 1 and v[0] > 0 and v[0] % (2 << 20) == 0 else 1)
PY
  sleep 0.5
done
{ cat "$W/q.txt"; tail -5 "$W/prom.log"; tail -5 "$W/ne.log"; ls "$W/tf"; } > "$W/out"
grep -q "^remember_request_for_debugging (cuda_leak.cu:19) \[" "$W/q.txt"
check "node_exporter reads the library's file; a PromQL query gives the leaking line's bytes"

# The alert: firing for the leaking line (the cache's line holds 4 MiB and does not grow).
for i in $(seq 90); do
  ask '/api/v1/alerts' > "$W/a.json"
  grep -q '"state":"firing"' "$W/a.json" && break
  sleep 0.5
done
python3 - "$W/a.json" "$W/q.txt" > "$W/out" 2>&1 <<'PY'
import json, sys
alerts = json.load(open(sys.argv[1]))["data"]["alerts"]
print(alerts)
sites = {a["labels"].get("site") for a in alerts if a["labels"]["alertname"] == "VramtraceSiteLeaking" and a["state"] == "firing"}
site = open(sys.argv[2]).read().split(" [")[0]
sys.exit(0 if sites == {site} else 1)
PY
check "Prometheus fires VramtraceSiteLeaking for the leaking line, and for no other site"

python3 - "$W/a.json" > "$W/out" 2>&1 <<'PY'
import json, sys
alerts = json.load(open(sys.argv[1]))["data"]["alerts"]
print(alerts)
sys.exit(0 if any(a["labels"]["alertname"] == "VramtraceDeviceAllocatedGrowing" for a in alerts) else 1)
PY
check "and VramtraceDeviceAllocatedGrowing for its device (pending or firing)"

# One label for one site on every route: the library's own file, report --prometheus of a dump taken now,
# and vramtrace metrics.
prog=$(echo "$pids" | awk '{print $1}')
dump=$("$V" dump "$prog" 2> "$W/out")
"$V" report --prometheus "$dump" > "$W/rep.prom" 2>> "$W/out"
"$V" metrics --textfile "$W/cmd.prom" --interval 1 "$prog" >> "$W/out" 2>&1 &
cmdm=$!
pids="$pids $cmdm"
for i in $(seq 50); do [ -s "$W/cmd.prom" ] && break; sleep 0.1; done
for f in "$W/tf/vramtrace-$prog.prom" "$W/rep.prom" "$W/cmd.prom"; do
  sed -n 's/^vramtrace_site_live_bytes{.*site="\(remember_request[^"]*\)".*/\1/p' "$f" | head -1
done > "$W/labels"
cat "$W/labels" >> "$W/out"
[ "$(wc -l < "$W/labels")" = 3 ] && [ "$(sort -u "$W/labels" | wc -l)" = 1 ] && grep -q '(cuda_leak.cu:19)' "$W/labels"
check "the leaking line has one label, with its line, on the library's file, report --prometheus and vramtrace metrics"
