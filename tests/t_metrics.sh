#!/bin/sh
# TAP: Prometheus metrics. `vramtrace report --prometheus` gives a dump's figures in the text exposition
# format that `promtool check metrics` (Debian's prometheus; make test installs it) accepts, equal to
# the report's own; VRAMTRACE_METRICS (`vramtrace run --metrics FILE`) has the library keep FILE up to
# date inside a live program on the fake driver and remove it when the program ends; `vramtrace
# metrics PID` does it from outside; the library's file names native frames by their lines, as the command
# does, through the symbolizer beside the library (never one that others may write); bad uses fail plainly.
. "$(dirname "$0")/tap.sh"
export LD_LIBRARY_PATH=$B/fake
value() { # value FILE METRIC: the value of the metric's first series
  sed -n "s/^$2{[^}]*} //p" "$1" | head -1
}
echo "1..23"

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
want["device_peak"] = dev["peak"]["bytes"] if dev["peak"] else 0
print(got, want)
sys.exit(0 if got == want else 1)
EOF
check "each device figure equals the report's (process used, reserved, allocated, cached, releasable, fragmented, overhead, peak)"

# handle (torch_cache.py:18) makes segments for two lines of main: each is named by its line
# (analyze/vt_labels.h), 257949696 + 33554432 = the 291504128 that was one series under handle.
grep '^vramtrace_site_live_bytes{' "$W/m.prom" | sed 's/} .*//' | sort | uniq -d > "$W/out"; [ ! -s "$W/out" ] &&
  grep -q '^vramtrace_site_live_bytes{pid="1711",program="python3.12",device="0",site="main (torch_cache.py:30)",kind="device",class="segment"} 257949696$' "$W/m.prom" &&
  grep -q '^vramtrace_site_live_bytes{pid="1711",program="python3.12",device="0",site="main (torch_cache.py:24)",kind="device",class="segment"} 33554432$' "$W/m.prom"
check "call sites named as the report names them, past the helper both call (handle's segments under main's two lines), no series twice"

"$V" report --prometheus --top 2 "$D/h200-torch-race.2.dump" > "$W/m2.prom" 2> "$W/out" &&
  [ "$(grep -c '^vramtrace_site_live_bytes{' "$W/m2.prom")" = 2 ] && [ "$(grep -c '^vramtrace_site_live_allocations{' "$W/m2.prom")" = 2 ]
check "--top 2: two site series per family"

# A live program: the fake driver's leaking server; the library keeps the file every second.
mkdir "$W/d"
"$V" run --quiet --dir "$W/d" --metrics "$W/live.prom" --metrics-interval 1 -- "$B/tests/cuda_leak" 6000 > "$W/prog.out" 2>&1 &
run=$!
# The first file is written at the program's first CUDA call, which may be before it uses a device (a
# file then without device figures): the first one with them is taken.
t0=$(date +%s.%N)
for i in $(seq 150); do
  cp "$W/live.prom" "$W/first.prom" 2> /dev/null && grep -q "^vramtrace_reserved_bytes{pid=\"$run\"" "$W/first.prom" && break
  sleep 0.1
done
t1=$(date +%s.%N)
{ echo "waited $(awk "BEGIN {print $t1 - $t0}") s; the folder:"; ls -la "$W"; echo "the program said:"; cat "$W/prog.out"; } > "$W/out"
promtool check metrics < "$W/first.prom" >> "$W/out" 2>&1 && grep -q "^vramtrace_reserved_bytes{pid=\"$run\",program=\"cuda_leak\",device=\"0\"} " "$W/first.prom"
check "run --metrics (VRAMTRACE_METRICS): the file appears with the device's figures (within 15 s; at once on an idle machine), accepted by promtool, named by the program's pid"

ls /proc/$run/task | wc -l > "$W/out"; pgrep -P $run >> "$W/out"; ls "$W/d" >> "$W/out"
[ "$(ls /proc/$run/task | wc -l)" = 3 ] && ! pgrep -P $run > /dev/null && [ -z "$(ls "$W/d")" ]
check "written by the library's dumper thread: no other process, no thread but the program's, the dumper and the socket's listener, no dump file"

sleep 2.5
a=$(value "$W/first.prom" vramtrace_allocated_bytes)
b=$(value "$W/live.prom" vramtrace_allocated_bytes)
echo "allocated $a then $b" > "$W/out"
[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ]
check "the file is rewritten: allocated grows with the leak"

wait $run
st=$?
echo "status $st; left: $(ls "$W"/live.prom* 2>&1)" > "$W/out"
[ $st = 0 ] && [ ! -e "$W/live.prom" ] && [ -z "$(ls "$W" | grep 'live\.prom\..*tmp')" ]
check "when the program ends (status 0 kept), the file is removed, and no temporary file is left"

ls "$W/d" > "$W/out"; [ "$(ls "$W/d" | wc -l)" = 1 ] && ls "$W/d" | grep -q "^vramtrace\.$run\.[0-9]*\.dump$"
check "no dump files for the metrics: only the program's exit dump is in the dump directory"

# An idle program: the file's device figures are those of the report of a dump taken meanwhile.
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/d" VRAMTRACE_METRICS="$W/idle-%p.prom" VRAMTRACE_METRICS_INTERVAL=1 \
  LD_PRELOAD="$B/libvramtrace.so" "$B/tests/prog_driver" sleep 4000 > /dev/null 2>&1 &
idle=$!
for i in $(seq 50); do [ -s "$W/idle-$idle.prom" ] && break; sleep 0.1; done
sleep 1.2
dump=$("$V" dump $idle 2> "$W/out")
"$V" report --prometheus "$dump" > "$W/rep.prom" 2>> "$W/out"
grep '^vramtrace_[a-z_]*_bytes{' "$W/idle-$idle.prom" | grep -v _site_ > "$W/a"
grep '^vramtrace_[a-z_]*_bytes{' "$W/rep.prom" | grep -v _site_ > "$W/b"
cat "$W/a" "$W/b" >> "$W/out"
[ -s "$W/a" ] && cmp -s "$W/a" "$W/b"
check "VRAMTRACE_METRICS with %p under a plain LD_PRELOAD: FILE-PID; its device figures equal report --prometheus of a dump"

# Two processes, one file without %p: the first keeps it, the second says so once.
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/d" VRAMTRACE_METRICS="$W/one.prom" LD_PRELOAD="$B/libvramtrace.so" \
  "$B/tests/prog_driver" sleep 2000 > /dev/null 2>&1 &
first=$!
for i in $(seq 50); do [ -s "$W/one.prom" ] && break; sleep 0.1; done
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/d" VRAMTRACE_METRICS="$W/one.prom" LD_PRELOAD="$B/libvramtrace.so" \
  "$B/tests/prog_driver" sleep 300 > /dev/null 2> "$W/second.err"
grep -q "pid=\"$first\"" "$W/one.prom" && cp "$W/second.err" "$W/out" &&
  grep -q "$W/one.prom exists already: .*this process keeps no metrics file (put %p in VRAMTRACE_METRICS" "$W/second.err"
check "without %p one process keeps the file; another says so and keeps none"
kill $idle $first 2> /dev/null; wait $idle $first 2> /dev/null

# A program that forks a child which uses CUDA too: with %p each keeps (and removes) its own file;
# without, the child finds the parent's file and says so.
mkdir "$W/fk"
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/fk" VRAMTRACE_METRICS="$W/fk/a-%p.prom" LD_PRELOAD="$B/libvramtrace.so" \
  "$B/tests/prog_driver" fork > "$W/fk.out" 2> "$W/fk.err"
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/fk" VRAMTRACE_METRICS="$W/fk/b.prom" LD_PRELOAD="$B/libvramtrace.so" \
  "$B/tests/prog_driver" fork >> "$W/fk.out" 2>> "$W/fk.err"
cat "$W/fk.out" "$W/fk.err" > "$W/out"; ls "$W/fk" >> "$W/out"
[ "$(grep -c '^child ' "$W/fk.out")" = 2 ] && [ -z "$(ls "$W/fk" | grep '\.prom$')" ] &&
  [ "$(grep -c 'exists already' "$W/fk.err")" = 1 ] && [ "$(grep -c 'exists already' "$W/fk.err")" = "$(grep -c vramtrace: "$W/fk.err")" ]
check "a forked child: its own file with %p (both removed at their ends); without %p it says another keeps it"

env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_METRICS="$W/nodir/x.prom" "$V" run -q -- true > "$W/out" 2>&1
st=$?
[ $st = 2 ] && grep -q "VRAMTRACE_METRICS=$W/nodir/x.prom cannot be used: its directory $W/nodir: No such file or directory" "$W/out"
check "a metrics file in no directory: run refuses it (exit 2), naming the directory"

"$V" metrics --once "$run" > "$W/out" 2>&1
st1=$?
"$V" metrics --textfile "$W/x.prom" --once 2147483646 >> "$W/out" 2>&1
st2=$?
[ $st1 = 2 ] && grep -q 'no --textfile given' "$W/out" && [ $st2 = 1 ] && grep -q 'no process 2147483646' "$W/out"
check "metrics without --textfile: usage error (exit 2); of no process: exit 1"

# A path that exists is never ours: refused at start, left byte for byte, never removed (a file, a link,
# /dev/full as root once lost it).
printf 'precious\n' > "$W/theirs.prom"; cp "$W/theirs.prom" "$W/theirs.copy"; ln -s "$W/theirs.prom" "$W/link.prom"
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/d" VRAMTRACE_METRICS="$W/theirs.prom" LD_PRELOAD="$B/libvramtrace.so" \
  "$B/tests/prog_driver" sleep 300 > /dev/null 2> "$W/own.err"
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/d" VRAMTRACE_METRICS="$W/link.prom" LD_PRELOAD="$B/libvramtrace.so" \
  "$B/tests/prog_driver" sleep 300 > /dev/null 2>> "$W/own.err"
cp "$W/own.err" "$W/out"
cmp -s "$W/theirs.prom" "$W/theirs.copy" && [ -L "$W/link.prom" ] && [ "$(grep -c 'exists already' "$W/own.err")" = 2 ] &&
  [ -z "$(ls "$W" | grep 'theirs\.prom\..*tmp\|\.lock$')" ]
check "VRAMTRACE_METRICS naming an existing file or link: refused at start (said), left as it was, nothing left beside it"

mkdir "$W/pk"
env LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/pk" LD_PRELOAD="$B/libvramtrace.so" "$B/tests/prog_driver" sleep 4000 \
  > /dev/null 2>&1 &
pk=$!
"$V" metrics --textfile "$W/theirs.prom" --once $pk > "$W/out" 2>&1
st=$?
[ $st = 1 ] && grep -q "theirs.prom exists already" "$W/out" && cmp -s "$W/theirs.prom" "$W/theirs.copy"
check "metrics --textfile of an existing file: exit 1, said, the file left as it was"

"$V" metrics --textfile "$W/peek.prom" --once $pk > "$W/out" 2>&1 && promtool check metrics < "$W/peek.prom" >> "$W/out" 2>&1 &&
  grep -q "^vramtrace_reserved_bytes{pid=\"$pk\"" "$W/peek.prom" && [ -z "$(ls -A "$W/pk")" ]
check "metrics --once of a live process: the file, accepted by promtool, from a dump in memory (no dump file written)"

"$V" metrics --textfile "$W/gone.prom" --interval 1 $pk > "$W/out" 2>&1 &
m=$!
for i in $(seq 50); do [ -s "$W/gone.prom" ] && break; sleep 0.1; done
[ -s "$W/gone.prom" ]; had=$?
kill $pk; wait $pk 2> /dev/null; wait $m
st=$?
[ $had = 0 ] && [ $st = 0 ] && [ ! -e "$W/gone.prom" ] && [ -z "$(ls "$W" | grep 'gone\.prom\.')" ]
check "metrics PID keeps the file while the process lives, and removes it (and only it) when it ends"

# The library's file names native frames by their lines through the symbolizer beside it; a library with
# no symbolizer beside it, or one that others may write, says so once and keeps the dump's names.
# libfile NAME LIBDIR: cuda_leak's metrics file with the library of LIBDIR, its label for the leaking line.
# The program runs long enough for a loaded machine (~30 s at most), and is stopped once the label is read.
libfile() {
  mkdir -p "$W/$1"
  env VRAMTRACE_DIR="$W/$1" VRAMTRACE_METRICS="$W/$1/m.prom" VRAMTRACE_METRICS_INTERVAL=1 LD_PRELOAD="$2/libvramtrace.so" \
    "$B/tests/cuda_leak" 6000 > /dev/null 2> "$W/$1/err" &
  lp=$!
  for i in $(seq 300); do grep -q "^vramtrace_site_live_bytes.*remember_request" "$W/$1/m.prom" 2> /dev/null && break; sleep 0.1; done
  sed -n 's/^vramtrace_site_live_bytes{.*site="\(remember_request[^"]*\)".*/\1/p' "$W/$1/m.prom" | head -1 > "$W/$1/label"
  kill $lp 2> /dev/null
  wait $lp 2> /dev/null
}
libfile sym "$B"
cat "$W/sym/label" "$W/sym/err" > "$W/out"
[ "$(cat "$W/sym/label")" = "remember_request_for_debugging (cuda_leak.cu:19)" ] && ! grep -q "by symbol" "$W/sym/err"
check "the library's own file names the leaking line by file and line (its symbolizer loaded beside it)"

mkdir "$W/nosym" "$W/opensym" "$W/linksym"
cp "$B/libvramtrace.so" "$B/libunwind.so.8" "$B/liblzma.so.5" "$W/nosym/"
cp "$B/libvramtrace.so" "$B/libunwind.so.8" "$B/liblzma.so.5" "$B"/libvramtrace-symbols.so "$W/opensym/"
chmod 666 "$W/opensym/libvramtrace-symbols.so"
cp "$B/libvramtrace.so" "$B/libunwind.so.8" "$B/liblzma.so.5" "$W/linksym/"
ln -s "$B/libvramtrace-symbols.so" "$W/linksym/libvramtrace-symbols.so"
for k in nosym opensym linksym; do libfile $k "$W/$k"; done
cat "$W"/*sym/label "$W"/*sym/err > "$W/out"
grep -q "^remember_request_for_debugging+0x[0-9a-f]*$" "$W/nosym/label" &&
  [ "$(grep -c "the metrics file names native frames by symbol, not by line (.*libvramtrace-symbols.so: No such file or directory)" "$W/nosym/err")" = 1 ] &&
  for k in opensym linksym; do
    grep -q "^remember_request_for_debugging+0x[0-9a-f]*$" "$W/$k/label" &&
      [ "$(grep -c "by symbol, not by line (.*libvramtrace-symbols.so is not a file that only root or this user may write)" "$W/$k/err")" = 1 ] || exit_k=1
  done && [ -z "${exit_k:-}" ]
check "no symbolizer beside the library, one anyone may write, or a link: said once, never loaded, the dump's names kept"

# A rendering that takes seconds (a symbolizer 3 s an address, tests/progs/slow_symbols.c) when the
# program exits: the exit dump waits for it while it moves, and it stops naming frames once exit() has
# begun (the file is about to be removed), so the program ends a moment later, with its exit dump. The
# program serves 3 s: its exit lands in the rendering begun at 1 s, which has the leak's frames to name.
mkdir "$W/slowsym" "$W/slowsym/d"
cp "$B/libvramtrace.so" "$B/libunwind.so.8" "$B/liblzma.so.5" "$W/slowsym/"
cp "$B/tests/libslow_symbols.so" "$W/slowsym/libvramtrace-symbols.so"
t0=$(date +%s)
env SLOW_SYMBOLS_MS=3000 SLOW_SYMBOLS_MARK="$W/slowsym/used" VRAMTRACE_DIR="$W/slowsym/d" VRAMTRACE_METRICS="$W/slowsym/m.prom" \
  VRAMTRACE_METRICS_INTERVAL=1 LD_PRELOAD="$W/slowsym/libvramtrace.so" "$B/tests/cuda_leak" 600 > /dev/null 2> "$W/slowsym/err"
st=$?
took=$(($(date +%s) - t0))
{ echo "status $st, $took s"; cat "$W/slowsym/err"; ls "$W/slowsym" "$W/slowsym/d"; } > "$W/out"
[ $st = 0 ] && [ -e "$W/slowsym/used" ] && [ "$took" -lt 15 ] && [ "$(ls "$W/slowsym/d" | wc -l)" = 1 ] &&
  ! grep -q "made no progress" "$W/slowsym/err" && [ ! -e "$W/slowsym/m.prom" ]
check "an exit while the metrics file renders slowly: the exit dump written, the rendering cut short (the program ends within 15 s, not after every address's 3 s), the file removed"

# The symbolizer opened only where a rendering meets an address it has not named yet, and closed after the
# next rendering that meets none (open, it holds every module's symbol table: +90 MiB in a PyTorch
# process): the program serves 4 s, a file every second, its sites the same throughout; each address is
# asked for once, and the symbolizer is closed before the program ends.
mkdir "$W/keptsym" "$W/keptsym/d"
cp "$B/libvramtrace.so" "$B/libunwind.so.8" "$B/liblzma.so.5" "$W/keptsym/"
cp "$B/tests/libslow_symbols.so" "$W/keptsym/libvramtrace-symbols.so"
env SLOW_SYMBOLS_MS=0 SLOW_SYMBOLS_LOG="$W/keptsym/log" VRAMTRACE_DIR="$W/keptsym/d" VRAMTRACE_METRICS="$W/keptsym/m.prom" \
  VRAMTRACE_METRICS_INTERVAL=1 LD_PRELOAD="$W/keptsym/libvramtrace.so" "$B/tests/cuda_leak" 800 > /dev/null 2> "$W/keptsym/err"
st=$?
{ echo "status $st"; cat "$W/keptsym/err"; sort "$W/keptsym/log" | uniq -c | sort -rn | head -20; } > "$W/out"
opens=$(grep -c "^open$" "$W/keptsym/log") asked=$(grep -c "^frames " "$W/keptsym/log")
[ $st = 0 ] && [ "$opens" -ge 1 ] && [ "$opens" -le 2 ] && [ "$asked" -ge 1 ] &&
  [ "$(grep "^frames " "$W/keptsym/log" | sort -u | wc -l)" = "$asked" ] &&
  awk '/^open$/ { if (o) bad = 1; o = 1 } /^close$/ { if (!o) bad = 1; o = 0 } /^frames/ { if (!o) bad = 1 }
       END { exit bad || o }' "$W/keptsym/log"
check "the metrics file's symbolizer: each address asked for once over four renderings, opened only for addresses not named yet, closed once a rendering needs it no more"
