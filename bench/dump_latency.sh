#!/bin/sh
# How long a dump of a PyTorch serving process takes to come back, dump after dump, with a metrics file
# kept every 2 s (`run --metrics`: until 237afc6 a process beside the program asking for dumps, since then
# the library itself): the seconds `vramtrace dump` waited for each, the dump's own
# account of the GIL wait and of the time spent in the interpreter (its `python` record), and when the
# metrics file was rewritten. Needs a GPU and torch.
#   sh bench/dump_latency.sh [SECONDS] [DUMPS]
set -eu
B=$(cd "$(dirname "$0")/../build" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-20}
N=${2:-6}
D=$(mktemp -d)
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
t_start=$(now)
"$B/vramtrace" run --dir "$D" --metrics "$D/m.prom" --metrics-interval 2 -- python3 "$ROOT/examples/torch_leak.py" "$SECS" \
  > "$D/out" 2> "$D/err" &
pid=$!
# The metrics file's rewrites, by polling its modification time.
( last=; while kill -0 "$pid" 2>/dev/null; do
    m=$(stat -c %.3Y "$D/m.prom" 2>/dev/null || true)
    [ -n "$m" ] && [ "$m" != "$last" ] && echo "$m" >> "$D/mtimes" && last=$m
    sleep 0.05
  done ) &
poller=$!
while ! grep -q warm "$D/out" 2>/dev/null; do sleep 0.1; done
echo "warm after $(sub "$(now)" "$t_start") s"
i=0
while [ $i -lt "$N" ]; do
  i=$((i + 1))
  t0=$(now)
  p=$("$B/vramtrace" dump "$pid")
  t1=$(now)
  echo "dump $i at $(sub "$t0" "$t_start") s: came back in $(sub "$t1" "$t0") s; $(grep '^python ' "$p" | cut -c1-60); $(grep '^history ' "$p" | cut -c1-40)"
  sleep 1
done
wait "$pid" || true
wait "$poller" || true
echo "metrics file rewritten at (s after start):"
[ -f "$D/mtimes" ] && while read -r m; do printf ' %s' "$(sub "$m" "$t_start")"; done < "$D/mtimes"; echo
tail -2 "$D/out"; tail -3 "$D/err"
rm -rf "$D"
