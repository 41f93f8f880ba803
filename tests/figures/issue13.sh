#!/bin/sh
# Issue 13's figures, measured again on the fake rig: one line per figure, for docs/validation.md.
# (make test asserts each of them; this prints the numbers.)   sh tests/figures/issue13.sh
set -u
B=$(cd "$(dirname "$0")/../../build" && pwd)
V=$B/vramtrace
export LD_LIBRARY_PATH=$B/fake
T=$(mktemp -d /tmp/vramtrace-fig.XXXXXX)
cd "$T"
say() { printf '%s\n' "$*"; }

sleep 30 & victim=$!
for p in 4294967295 99999999999999999999 $((4294967296 + victim)) 0 -1; do
  "$V" dump "$p" >/dev/null 2>err; st=$?
  say "dump $p: exit $st, victim $(kill -0 $victim 2>/dev/null && echo alive || echo DEAD): $(cat err)"
done
kill $victim

for delay in 0 0.005; do
  killed=0 dumps=0 notloaded=0 i=0
  while [ $i -lt 40 ]; do
    "$V" run --dir pairs -- "$B/tests/prog_safety" sleep 600 >/dev/null 2>&1 &
    t=$!
    sleep $delay
    "$V" dump $t >/dev/null 2>err && dumps=$((dumps + 1))
    grep -q 'not loaded' err && notloaded=$((notloaded + 1))
    wait $t; [ $? -eq 138 ] && killed=$((killed + 1))
    i=$((i + 1))
  done
  say "run & / dump \$! after ${delay}s, 40 pairs: $killed killed, $dumps dumps, $notloaded told 'not loaded'"
done

LD_PRELOAD=$B/libvramtrace.so "$B/tests/prog_safety" sigreset 1500 >/dev/null 2>&1 & t=$!
sleep 0.5; "$V" dump $t >/dev/null 2>err; st=$?; wait $t; ts=$?
say "SIGUSR1 reset to default after the library loaded: dump exit $st ($(cut -c1-120 err)...), program exit $ts"

mkdir -p work other && cd work
VRAMTRACE_DIR=rel LD_PRELOAD=$B/libvramtrace.so "$B/tests/prog_safety" sleep 1500 >/dev/null 2>&1 & t=$!
mkdir -p rel; sleep 0.5; cd ../other
say "relative VRAMTRACE_DIR (missing at start), dump from another directory: $("$V" dump $t 2>&1)"
wait $t; cd ..

h=0 i=0
mkdir -p term
while [ $i -lt 100 ]; do
  LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_DIR=$T/term "$B/tests/prog_safety" termexit >out.$i 2>>term.err & p=$!
  until grep -q ready out.$i 2>/dev/null; do sleep 0.005; done
  sleep 0.00$((i % 9 + 1)); kill -TERM $p
  w=0; while kill -0 $p 2>/dev/null && [ $w -lt 50 ]; do sleep 0.1; w=$((w + 1)); done
  kill -0 $p 2>/dev/null && { h=$((h + 1)); kill -KILL $p; }
  wait $p 2>/dev/null; i=$((i + 1))
done 2>/dev/null
say "exit() from a SIGTERM handler while allocating, 100 runs: $h hangs, $(ls term | grep -c dump) exit dumps, $(grep -c 'no exit dump' term.err) skipped (said)"
rm -f out.*

say "fork while 4 threads take stacks: $(LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_DIR=$T "$B/tests/prog_safety" forkload 200 | head -1)"

(VRAMTRACE_DEPTH=lots LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_DIR=$T "$B/tests/prog_driver" direct 2>&1 >pipe.out; echo $? > pipe.st) | true
say "stderr a pipe nobody reads, a bad setting to say: program exit $(cat pipe.st), its output: $(tr '\n' ' ' < pipe.out)"

mkdir -p fsz
(ulimit -f 4; LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_DIR=$T/fsz "$B/tests/prog_safety" bigdump >/dev/null 2>fsz.err; echo $? > fsz.st)
say "ulimit -f 4 (KiB), a larger dump: program exit $(cat fsz.st), $(ls -A fsz | grep -c tmp) temporary files left: $(cat fsz.err)"

for lim in 5 16; do
  b=$(prlimit --nofile=$lim "$B/tests/prog_safety" fds 2>/dev/null | head -1)
  l=$(LD_PRELOAD=$B/libvramtrace.so prlimit --nofile=$lim "$B/tests/prog_safety" fds 2>/dev/null | head -1)
  z=$(VRAMTRACE_DEPTH=0 LD_PRELOAD=$B/libvramtrace.so prlimit --nofile=$lim "$B/tests/prog_safety" fds 2>/dev/null | head -1)
  say "prlimit --nofile=$lim, files the program opens: bare '$b', library '$l', library with VRAMTRACE_DEPTH=0 '$z'"
done
say "threads the library adds once CUDA is used: $(LD_PRELOAD=$B/libvramtrace.so VRAMTRACE_DIR=$T "$B/tests/prog_safety" threads | head -1)"

mkdir -p quiet && cd quiet
for c in /bin/true "bash -c true" "ls" "timeout 1 true"; do LD_PRELOAD=$B/libvramtrace.so $c >/dev/null 2>>q.err; done
LD_PRELOAD=$B/libvramtrace.so sh -c 'i=0; while [ $i -lt 200 ]; do /bin/echo x >/dev/null; i=$((i+1)); done' 2>>q.err
say "/bin/true, bash, ls, timeout, 200 fork+exec of echo under the library: $(ls | grep -c dump) dumps, $(cat q.err | wc -l) lines said"
"$V" run -- bash -c "ls >/dev/null; \"$B/tests/prog_safety\" twodumps >/dev/null"
say "vramtrace run -- bash -c 'ls; prog': $(ls | grep -c dump) dumps (prog's two asked for and its exit dump)"
cd ..

mkdir -p oom && (cd oom && LD_PRELOAD=$B/libvramtrace.so "$B/tests/prog_safety" oomburst >/dev/null)
last=$(ls oom/*.dump | sort -t. -k3 -n | tail -1)
say "65 out-of-memory failures in a burst, then exit: $(grep -l '^reason oom' oom/*.dump | wc -l) OOM dump(s), $(ls oom/*.dump | wc -l) dumps; the exit dump: $(grep '^failed' "$last" | cut -d' ' -f3-8)"
say "report of it: $("$V" report "$last" | grep -A1 'failed requests' | tr '\n' ' ')"

for iv in 1e-9 0x10; do
  mkdir -p iv$iv; (cd iv$iv && VRAMTRACE_INTERVAL=$iv LD_PRELOAD=$B/libvramtrace.so "$B/tests/prog_safety" sleep 1300 >/dev/null 2>err)
  say "VRAMTRACE_INTERVAL=$iv over 1.3 s: $(ls iv$iv | grep -c dump) dump(s); $(cat iv$iv/err)"
done
say "bad VRAMTRACE_DIR: $(cd quiet && VRAMTRACE_DIR=/nonexistent LD_PRELOAD=$B/libvramtrace.so "$B/tests/prog_safety" sleep 10 2>&1 >/dev/null)"
mkdir -p keep; (cd keep && VRAMTRACE_INTERVAL=1 VRAMTRACE_KEEP=3 LD_PRELOAD=$B/libvramtrace.so "$B/tests/prog_safety" sleep 6300 >/dev/null)
say "VRAMTRACE_INTERVAL=1 VRAMTRACE_KEEP=3 over 6.3 s: $(grep -l '^reason interval' keep/*.dump | wc -l) interval dumps kept"

start=$(date +%s.%N); "$V" report /dev/zero >/dev/null 2>err; st=$?; end=$(date +%s.%N)
say "report /dev/zero: exit $st in $(echo "$end - $start" | bc) s: $(cat err)"
mkdir -p g1 g2 && (cd g1 && LD_PRELOAD=$B/libvramtrace.so "$B/tests/prog_driver" grow >/dev/null) && (cd g2 && LD_PRELOAD=$B/libvramtrace.so "$B/tests/prog_driver" pool >/dev/null)
good=$(ls g1/*.3.dump)
for case in dup huge big59 crlf; do
  case $case in
    dup) awk '/^alloc /&&!d{print; d=1} {print}' "$good" > c.dump ;;
    huge) awk '/^end$/{print "alloc 0x10 18446744073709551615 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 1 1 1"} {print}' "$good" > c.dump ;;
    big59) awk '/^end$/{for(i=1;i<=59;i++) printf "alloc 0x%x 9223372036854775807 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 0 1 1 1\n", i*4096} {print}' "$good" > c.dump ;;
    crlf) sed 's/$/\r/' "$good" > c.dump ;;
  esac
  "$V" report c.dump >/dev/null 2>err; say "report, $case: exit $?: $(cat err)"
done
cp "$good" odd.dump && sed -i 's|^exe .*|exe /tmp/\xff\xfe-bin|' odd.dump
say "--json of a path with bytes that are not UTF-8: $("$V" report odd.dump --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("parses, exe =", ascii(d["exe"]))' 2>&1)"
"$V" report "$good" > /dev/full 2>err; say "report > /dev/full: exit $?: $(cat err)"

g=$(ls g1/*.1.dump) g3=$(ls g1/*.3.dump) p=$(ls g2/*.1.dump)
"$V" diff "$g" "$p" >/dev/null 2>err; say "diff of two programs: exit $?: $(cut -c1-160 err)..."
say "diff NEW OLD: $("$V" diff "$g3" "$g" 2>&1 | grep -E 'taken after|apart|verdict' | cut -c1-110 | tr '\n' ' ')"
"$V" diff "$g" "$g3" --fail-on-growth 512K >/dev/null 2>err; say "--fail-on-growth 512K: exit $?: $(cat err)"
"$V" diff "$g" "$g3" --fail-on-growth nan >/dev/null 2>err; say "--fail-on-growth nan: exit $?: $(cat err)"
i=0; for m in 10 20 30 30 40 50; do i=$((i + 1))
  printf 'vramtrace-dump 4\npid 4242\nppid 1\nexe /bin/server\ncmdline server\nreason interval\nseq %d\ntime %d000000000 %d000000000\nstart 1000 1000\ndepth 32\nstack 1 1 0x401000 0\nframe 0x401000 handle_request+0x10\nalloc 0x100000 %d device cuMemAlloc_v2 0 0x0 0x0 0x0 0 1 1 1 1\nend\n' $i $((1700000000 + 60 * i)) $((60 * i)) $((m << 20)) > tr$i.dump; done
say "trend 10, 20, 30, 30, 40, 50 MiB: $("$V" trend tr1.dump tr2.dump tr3.dump tr4.dump tr5.dump tr6.dump | grep -E 'grew in|verdict' | tr '\n' ' ')"
cd /; rm -rf "$T"
