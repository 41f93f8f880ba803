#!/bin/sh
# TAP: what a target, a planted file or a name controls cannot make the command (often run as root)
# open, trust, hang on, or destroy anything, and a name cannot forge a record or reach a terminal, a
# page or a metric raw. Attacks that need two users run the target as user nobody (setpriv) against
# root's command; the test itself needs root (make test runs as root in CI; elsewhere each such check
# is reported as skipped, with why).
. "$(dirname "$0")/tap.sh"
echo "1..24"
chmod 755 "$W"
S=$W/shared
mkdir -m 1777 "$S"
# What a nobody target needs, where nobody may read it (the checkout may sit in root's home).
mkdir -p "$W/b/tests"
cp -r "$B/fake" "$B/libvramtrace.so" "$B/libunwind.so.8" "$B/liblzma.so.5" "$W/b/"
cp "$B/tests/prog_driver" "$B/tests/cuda_leak" "$T/progs/forger.py" "$W/b/tests/"
chmod -R a+rX "$W/b"
export LD_LIBRARY_PATH=$W/b/fake
LIB=$W/b/libvramtrace.so
root=0
[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && root=1
# A command as user nobody (a word list, not a function: "$!" must be the program's own pid).
asnobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
skip2() { n=$((n + 1)); echo "ok $n # skip $1"; }
# waitfor FILE TEXT: until FILE holds TEXT (5 s at most)
waitfor() { for i in $(seq 50); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.1; done; return 1; }
# waitsock PID: until the library in PID listens (its first CUDA call), 5 s at most
waitsock() { for i in $(seq 50); do grep -q "@vramtrace\.$1\." /proc/$1/net/unix 2> /dev/null && return 0; sleep 0.1; done; return 1; }
# elapsed CMD...: runs CMD, its status kept, and sets $took to the seconds it took (whole)
elapsed() { t0=$(date +%s.%N); "$@"; st=$?; took=$(awk "BEGIN {printf \"%d\", $(date +%s.%N) - $t0}"); return $st; }

# 1. Names planted beside a target's dumps: a link to a root-only file and a FIFO, named as its next
#    dumps, in a shared directory. Root's command never looks for dumps by name: it prints the dump the
#    target sent, and never blocks.
if [ $root = 1 ]; then
  echo secret > "$W/rootonly"; chmod 600 "$W/rootonly"
  $asnobody env VRAMTRACE_DIR="$S" LD_PRELOAD="$LIB" "$W/b/tests/prog_driver" sleep 8000 > "$W/t1.out" 2>&1 &
  t1=$!
  waitsock $t1
  for k in 1 2 3 50; do $asnobody ln -s "$W/rootonly" "$S/vramtrace.$t1.$k.dump"; done
  $asnobody mkfifo "$S/vramtrace.$t1.51.dump"
  elapsed timeout 20 "$V" dump --timeout 10 $t1 > "$W/out" 2>&1
  st=$?
  p=$(head -1 "$W/out")
  [ $st = 0 ] && [ $took -lt 5 ] && [ -f "$p" ] && [ ! -L "$p" ] && [ "$(stat -c %U "$p")" = nobody ] &&
    head -1 "$p" | grep -q '^vramtrace-dump '
  check "a target's dump dir with links and a FIFO planted under its dump names: root's dump prints the real dump ($p), at once"
  elapsed timeout 20 "$V" metrics --textfile "$W/m1.prom" --once --timeout 10 $t1 > "$W/out" 2>&1
  st=$?
  [ $st = 0 ] && [ $took -lt 5 ] && grep -q "^vramtrace_reserved_bytes{pid=\"$t1\"" "$W/m1.prom"
  check "root's metrics --once of it: the target's own figures, at once, nothing planted read"
  kill $t1; wait $t1 2> /dev/null
else
  skip2 "planted dump names against root's command: needs root and setpriv"
  skip2 "planted dump names against root's metrics: needs root and setpriv"
fi

# 2. A target whose dump directory it cannot use: from the start (it falls back to its private
#    directory), or taken away while it runs (its dumper's reason comes back at once, not after the
#    timeout).
if [ $root = 1 ]; then
  mkdir -m 755 "$W/rootdir"
  mkdir -m 1777 "$W/ntmp" # its TMPDIR: the private directory falls there, inside this test's own folder
  $asnobody env TMPDIR="$W/ntmp" VRAMTRACE_DIR="$W/rootdir" LD_PRELOAD="$LIB" "$W/b/tests/prog_driver" sleep 8000 > "$W/t2.out" 2>&1 &
  t2=$!
  waitsock $t2
  elapsed timeout 40 "$V" dump --timeout 30 $t2 > "$W/out" 2>&1
  st=$?
  p=$(head -1 "$W/out")
  [ $st = 0 ] && [ $took -lt 5 ] && [ "$(stat -c %U "$p")" = nobody ] && case $p in "$W/ntmp/vramtrace-65534/"*) ;; *) false ;; esac
  check "root dumping nobody's process whose VRAMTRACE_DIR it cannot write: its dump, from its private directory, at once"
  kill $t2; wait $t2 2> /dev/null
  mkdir -m 777 "$W/gone"
  $asnobody env VRAMTRACE_DIR="$W/gone" LD_PRELOAD="$LIB" "$W/b/tests/prog_driver" sleep 8000 > "$W/t2.out" 2>&1 &
  t2=$!
  waitsock $t2
  chmod 755 "$W/gone"
  elapsed timeout 40 "$V" dump --timeout 30 $t2 > "$W/out" 2>&1
  st=$?
  [ $st = 1 ] && [ $took -lt 5 ] && grep -q "no dump: cannot write dumps in $W/gone" "$W/out"
  check "and once its directory is taken away: exit 1 within 5 s (${took}s), with the library's reason"
  kill $t2; wait $t2 2> /dev/null
else
  skip2 "an unusable dump directory of another user's target: needs root and setpriv"
  skip2 "a dump directory taken away from another user's target: needs root and setpriv"
fi

# 3. A squatter bound under the name the target's socket would have: never asked.
LD_PRELOAD="$LIB" "$W/b/tests/prog_driver" sleep 8000 > "$W/t3.out" 2>&1 &
t3=$!
waitsock $t3
python3 "$W/b/tests/forger.py" squat $t3 "$W/squat.hit" > "$W/sq.out" 2>&1 &
sq=$!
waitfor "$W/sq.out" ready
"$V" dump --timeout 10 $t3 > "$W/out" 2>&1
st=$?
sleep 0.2
[ $st = 0 ] && [ ! -e "$W/squat.hit" ]
check "a socket squatting under the target's name: the command asks the target's own socket, never the squatter"
kill $sq $t3 2> /dev/null; wait $sq $t3 2> /dev/null

# 4. A process that pretends: libvramtrace.so loaded (no CUDA call, so no socket of the library's), a
#    socket of its own, and forged answers. Each refused at once; nothing read from them.
for kind in devzero fifo path; do
  LD_PRELOAD="$LIB" python3 "$W/b/tests/forger.py" answer $kind > "$W/f.out" 2>&1 &
  f=$!
  waitfor "$W/f.out" ready
  elapsed timeout 20 "$V" dump --timeout 10 $f > "$W/out" 2>&1
  st=$?
  elapsed timeout 20 "$V" metrics --textfile "$W/f.prom" --once --timeout 10 $f >> "$W/out" 2>&1
  st2=$?
  [ $st = 1 ] && [ $st2 = 1 ] && [ $took -lt 5 ] && [ "$(grep -c 'not trusted' "$W/out")" = 2 ] && [ ! -e "$W/f.prom" ] &&
    ! grep -q '^/' "$W/out"
  check "a forged answer ($kind): dump and metrics refuse it at once (not trusted), print no path, leave no file"
  kill $f 2> /dev/null; wait $f 2> /dev/null
done

# 5. The library answers only its own user and root.
if [ $root = 1 ]; then
  $asnobody env LD_PRELOAD="$LIB" "$W/b/tests/prog_driver" sleep 8000 > "$W/t5.out" 2>&1 &
  t5=$!
  waitsock $t5
  name=$(grep -o "@vramtrace\.[0-9]*\.[0-9a-f]*" /proc/$t5/net/unix | head -1 | cut -c2-)
  setpriv --reuid=1 --regid=1 --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("\0" + sys.argv[1]); s.settimeout(5)
try:
    s.send(b"dump\n")
    sys.exit(0 if s.recv(4096) == b"" else 1)
except (BrokenPipeError, ConnectionResetError):
    sys.exit(0)' "$name" > "$W/out" 2>&1
  rc=$?
  [ -n "$name" ] && [ $rc = 0 ] && [ -z "$(ls -A "$W/b/tests" | grep '\.dump$')" ]
  check "another user (uid 1) connecting to nobody's dump socket: closed without an answer, no dump"
  kill $t5; wait $t5 2> /dev/null
else
  skip2 "another user's request to the dump socket: needs root and setpriv"
fi

# 6. Names that hold newlines, escapes and bytes that are not UTF-8: a program in such a directory, its
#    dumps in another. No record is forged, every dump reads, nothing raw reaches the output.
evil=$(printf '%s/x\nfailed 1 cuMemAlloc 68719476736 2 1 0 0 0 0\n\033[31m<!--<script>\377' "$W")
mkdir -p "$evil" "$W/dd
ir"
cp "$B/tests/prog_driver" "$evil/prog"
LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/dd
ir" LD_PRELOAD="$B/libvramtrace.so" "$evil/prog" direct > /dev/null 2>&1
for dump in "$W/dd
ir"/vramtrace.*.dump; do break; done
"$V" report "$dump" > "$W/rep.txt" 2> "$W/out"
st=$?
[ $st = 0 ] && ! grep -q '64\.0 GiB' "$W/rep.txt" && grep -q 'x\\x0afailed' "$W/rep.txt" &&
  [ "$(grep -c '^exe ' "$dump")" = 1 ] && [ "$(grep -c '^failed ' "$dump")" = 0 ]
check "an executable whose path holds a newline and a record: one exe record, escaped, no failure forged"
[ $st = 0 ] && ! tr -d '\n' < "$W/rep.txt" | grep -q "$(printf '\033')" && python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' "$W/rep.txt"
check "the text report holds no terminal control character and is valid UTF-8 (the escape shown as \\x1b)"
"$V" report --json "$dump" > "$W/rep.json" 2>> "$W/out" && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$W/rep.json"
check "--json of it is valid JSON"
"$V" html -o "$W/rep.html" "$dump" 2>> "$W/out" && ! grep -q '<!--<script>' "$W/rep.html" &&
  grep -q 'u003c!--\\u003cscript\\u003e' "$W/rep.html"
check "the HTML page: the name's <!--<script> written as \\u003c...\\u003e in the data, which cannot end or hide the page's script"
"$V" report --prometheus "$dump" > "$W/rep.prom" 2>> "$W/out" && promtool check metrics < "$W/rep.prom" >> "$W/out" 2>&1 &&
  python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' "$W/rep.prom"
check "--prometheus of it: valid UTF-8, accepted by promtool"
LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/dd
ir" VRAMTRACE_METRICS="$W/lib.prom" VRAMTRACE_METRICS_INTERVAL=1 LD_PRELOAD="$B/libvramtrace.so" "$evil/prog" sleep 1500 \
  > /dev/null 2>&1 &
pm=$!
for i in $(seq 30); do [ -s "$W/lib.prom" ] && cp "$W/lib.prom" "$W/lib.copy" && break; sleep 0.1; done
wait $pm
promtool check metrics < "$W/lib.copy" > "$W/out" 2>&1 && grep -q 'program="prog"' "$W/lib.copy"
check "the library's own metrics file of such a program: accepted by promtool"
[ "$(ls "$W/dd
ir" | grep -c '\.dump$')" -ge 2 ] && for f in "$W/dd
ir"/*.dump; do "$V" report "$f" > /dev/null 2>> "$W/out" || exit 1; done
check "a dump directory whose name holds a newline: every dump in it reads"

# 7. Paths a dump names, and paths given, are never blocked on: a FIFO as a dump, a FIFO as a module.
mkfifo "$W/fifo.dump"
elapsed timeout 10 "$V" report "$W/fifo.dump" > "$W/out" 2>&1
st=$?
[ $st = 2 ] && [ $took -lt 5 ] && grep -q "fifo.dump: not a regular file (a FIFO)" "$W/out"
check "report of a FIFO: refused at once (exit 2), not read"
mkfifo "$W/fifo.so"
awk -v f="$W/fifo.so" '/^module 1 / {$NF = f} {print}' "$D/h200-torch-race.2.dump" > "$W/modfifo.dump"
grep -q "^module 1 .*fifo.so$" "$W/modfifo.dump" && elapsed timeout 20 "$V" report "$W/modfifo.dump" > "$W/out" 2>&1 &&
  [ $took -lt 10 ] && elapsed timeout 20 "$V" html -o "$W/modfifo.html" "$W/modfifo.dump" >> "$W/out" 2>&1
check "a dump whose module path is a FIFO: report and html finish (the FIFO never opened for reading)"

# 8. Files vramtrace writes never replace what is there.
if [ $root = 1 ]; then
  mknod "$W/full" c 1 7
  LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/d8" VRAMTRACE_METRICS="$W/full" LD_PRELOAD="$B/libvramtrace.so" \
    "$B/tests/prog_driver" sleep 300 > /dev/null 2> "$W/out"
  [ -c "$W/full" ] && grep -q "full exists already" "$W/out"
  check "VRAMTRACE_METRICS naming a device (a /dev/full of our own): refused, the device left in place"
else
  skip2 "a device as the metrics file: needs root for mknod"
fi
mkfifo "$W/m8.prom.$$.tmp"
touch "$W/m8.prom.lock"
LD_PRELOAD="$B/libvramtrace.so" "$B/tests/prog_driver" sleep 8000 > "$W/t8.out" 2>&1 &
t8=$!
waitsock $t8
elapsed timeout 20 "$V" metrics --textfile "$W/m8.prom" --once $t8 > "$W/out" 2>&1
st=$?
kill $t8; wait $t8 2> /dev/null
[ $st = 0 ] && [ $took -lt 5 ] && [ -p "$W/m8.prom.$$.tmp" ] && grep -q reserved "$W/m8.prom" &&
  [ "$(ls "$W" | grep -c '^m8\.prom')" = 3 ]
check "metrics with a FIFO planted at a temporary name and a .lock planted: written at once, the plants untouched, nothing else left"

# 9. Impossible headers are refused, with the file's name.
awk '/^start / {$3 = "999999999999999999"} {print}' "$D/h200-torch-race.2.dump" > "$W/imp.dump"
"$V" report "$W/imp.dump" > "$W/out" 2>&1
[ $? = 2 ] && grep -q "imp.dump: the header is impossible" "$W/out"
check "a dump whose time is before its start: refused, named"
sed '2{h;d};3{G}' "$D/h200-torch-race.2.dump" > "$W/order.dump"
"$V" report "$W/order.dump" > "$W/out" 2>&1
[ $? = 2 ] && grep -q "order.dump:2: 'ppid' where the header's 'pid' record belongs" "$W/out"
check "a dump whose header is out of order: refused at its line"

# 10. A value of any length is named in one line.
LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DEPTH=$(python3 -c 'print("x" * 5000)') LD_PRELOAD="$B/libvramtrace.so" \
  "$B/tests/prog_driver" sleep 10 > /dev/null 2> "$W/out"
grep -q "VRAMTRACE_DEPTH=xxxxx.*\.\.\. (5000 characters) is not a whole number" "$W/out" && [ "$(wc -l < "$W/out")" -le 2 ]
check "a 5000-character setting value: named (cut, its length said), in one line"

# 11. After dlclose, an old frame is never named after the code mapped where it was.
mkdir "$W/u"
LD_LIBRARY_PATH="$B/fake:$B/tests" VRAMTRACE_DIR="$W/u" LD_PRELOAD="$B/libvramtrace.so" "$B/tests/prog_driver" unload \
  > "$W/u.out" 2>&1
for ud in "$W/u"/vramtrace.*.dump; do break; done
"$V" report "$ud" > "$W/out" 2>&1 && cat "$W/u.out" >> "$W/out"
grep -q "(code unloaded since)" "$W/out" && ! grep -qi "nccl" "$W/out"
check "a live allocation made in a library since unloaded, another loaded in its place ($(grep -o 'reused [01]' "$W/u.out")): its frame reads (code unloaded since), never the new library's"
