#!/bin/sh
# TAP: torch's blocks through its allocator's own trace tracker (lib/hooks/vt_torch.c), on the fake c10
# (tests/fake/c10: torch 2.11's allocator object, TraceEntry and segment rules). A C++-kind program
# (tests/progs/c10_prog.c, no Python) and a Python one through the fake torch (tests/progs/c10_py.py):
# every block named by its line from its first allocation, torch's view equal to the allocator's own
# totals to the byte, with fixed and with expandable segments; the leak named past the tensor factory;
# and where the tracker cannot be used (a pluggable allocator, another vtable or version, entries laid out
# otherwise, switched off),
# the dump says why and the program runs on. Then a threaded server that does not leak (each worker holds
# its last output until its next request), dumped 50 times: no diff against its first dump says
# leak-suspect; the same server leaking: every one does, once its workers have served more than a request each.
. "$(dirname "$0")/tap.sh"
echo "1..29"

# run NAME [VAR=VALUE...]: c10_prog under the library in $W/NAME, its output in $W/NAME/run.
run() {
  name=$1
  shift
  mkdir -p "$W/$name"
  (cd "$W/$name" && env "$@" VRAMTRACE_DIR="$W/$name" LD_PRELOAD="$B/libvramtrace.so" "$B/tests/c10_prog") \
    > "$W/$name/run" 2> "$W/$name/err"
  echo $? > "$W/$name/rc"
}
dump_of() { awk -v n="$2" '$1 == "dump" && $2 == n { print $3 }' "$W/$1/run"; }
truth_of() { awk -v n="$2" '$1 == "truth" && $2 == n { print $3, $4 }' "$W/$1/run"; }
# view FILE: torch's view in report --json as "ALLOCATED RESERVED UNMATCHED NOSTACK", and the share of
# torch's allocated bytes with a call site as "COVERED ALLOCATED".
view() {
  "$V" report --json "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
t = [a for d in r["devices"] for a in d.get("allocators", []) if a["name"] == "torch"]
c = [a for a in r["stack_coverage"]["allocators"] if a["allocator"] == "torch"]
print(*(t and (t[0]["allocated"], t[0]["reserved"], t[0]["segments_unmatched"], t[0]["blocks_without_stack"])
        or ("none",)), *(c and (c[0]["with_stack"], c[0]["allocated"]) or ("none",)))'
}

run fixed
d1=$(dump_of fixed 1) d2=$(dump_of fixed 2) d3=$(dump_of fixed 3) d4=$(dump_of fixed 4)
cp "$W/fixed/err" "$W/out"
[ "$(cat "$W/fixed/rc")" = 0 ] && [ -f "$d1" ] && [ -f "$d4" ] &&
  grep -q "^tracker torch on torch 2.11.0+fake, trace entries read as torch 2.6-2.11's, checked against its first segment (0x[0-9a-f]*, 2097152 bytes)$" "$d1"
check "C program: the tracker attached at torch's first segment and checked against it"

view "$d3" > "$W/out" 2>&1
set -- $(cat "$W/out") $(truth_of fixed 3)
[ "$1 $2" = "$7 $8" ] && [ "$3 $4" = "0 0" ] && [ "$5" = "$6" ] && [ "$6" = "$1" ]
check "torch's view = the allocator's own totals to the byte (blocks larger than asked for counted whole: rounded, a remainder not split off); every segment matched; every block with its stack"

view "$d4" > "$W/out" 2>&1
set -- $(cat "$W/out") $(truth_of fixed 4)
[ "$1 $2" = "$7 $8" ]
check "after empty_cache(): still equal"

"$V" report "$d3" | sed -n '/^top call sites/,/^caching allocators/p' > "$W/out" 2>&1
grep -q "^   72.0 MiB in 24 × block (torch), device 0$" "$W/out" && ! grep -q "fake_c10_cuda.cpp" "$W/out" &&
  grep -A1 "72.0 MiB in 24" "$W/out" | grep -q "make_tensor (c10_prog.c:[0-9]*)$"
check "report: one site for the leak's 24 blocks, its stack starting at the program's call (the allocator's own frames left out)"

"$V" report "$d3" > "$W/out" 2>&1
sed -n '/^caching allocators/,$p' "$W/out" | grep -A1 "× device (cudaMalloc)" > "$W/segs"
grep -q "^   80.0 MiB in 4 × device (cudaMalloc), device 0$" "$W/segs" && ! grep -q "fake_c10_cuda.cpp" "$W/segs" &&
  grep -A1 "80.0 MiB in 4 ×" "$W/segs" | grep -q "make_tensor (c10_prog.c:[0-9]*)$" &&
  sed -n '/at the peak/,/allocated/p' "$W/out" | grep -q "^ *at the peak *80.0 MiB  keep_request (c10_prog.c:[0-9]*)$" &&
  ! sed -n '/at the peak/,/allocated/p' "$W/out" | grep -q "fake_c10_cuda.cpp"
check "report: torch's segments made on a thread with no Python frames start at the program's call too (the allocator's frames left out, the first segment's included), and are named by the program's line"

"$V" diff "$d1" "$d2" > "$W/out" 2>&1
grep -q "^verdict: leak-suspect: .*; most at keep_request (c10_prog.c:[0-9]*) (+24.0 MiB, +8 blocks)$" "$W/out"
check "diff: leak-suspect at keep_request's line, past the tensor factory"

grep -c "^alloc .* block torch " "$d3" > "$W/out"
[ "$(cat "$W/out")" = 30 ]
check "the dump: torch's 30 live blocks are entries of kind block"

readelf -d "$B/libvramtrace.so" > "$W/out" 2>&1
! grep -q "libstdc++" "$W/out"
check "the library needs no C++ runtime of its own"

run expandable VRAMTRACE_FAKE_C10=expandable
e3=$(dump_of expandable 3) e4=$(dump_of expandable 4)
cp "$W/expandable/err" "$W/out"
[ "$(cat "$W/expandable/rc")" = 0 ] && grep -q "^tracker torch on " "$e3" && grep -q "^segment .* torch .* expandable$" "$e3"
check "expandable segments: the tracker on, torch's mapped ranges written as expandable segments"

view "$e3" > "$W/out" 2>&1
set -- $(cat "$W/out") $(truth_of expandable 3)
[ "$1 $2" = "$7 $8" ] && [ "$3 $4" = "0 0" ] && [ "$5" = "$6" ]
check "expandable: torch's view = the allocator's totals; every range matched to its mappings"

view "$e4" > "$W/out" 2>&1
set -- $(cat "$W/out") $(truth_of expandable 4)
[ "$1 $2" = "$7 $8" ]
check "expandable, after empty_cache() unmapped the free pages: still equal"

# The fake c10 in MODE: the program runs, the tracker is refused with WHY (a pattern after the tracker
# line's version) in its third dump, and no block is recorded through it.
refused() {
  run "$1" VRAMTRACE_FAKE_C10="$1"
  d=$(dump_of "$1" 3)
  cp "$W/$1/err" "$W/out"
  [ "$(cat "$W/$1/rc")" = 0 ] && grep -q "^tracker torch off torch 2.11.0+fake: $2" "$d" &&
    ! grep -q "^alloc .* block torch " "$d"
  check "$3"
}

refused pluggable "torch's CUDA allocator is 'pluggable', not its native caching allocator" \
  "a pluggable allocator (its name() says so): its attachAllocatorTraceTracker never called (it aborts), the dump says why"
refused vtable "the CUDA allocator's vtable is not laid out as torch 2.11's (slot 50)\$" \
  "a vtable of another layout (one slot more): nothing of it called, the dump says why"

# The same library under a torch whose version.py says 2.10: no vtable known, nothing called.
mkdir -p "$W/t210/torch/lib"
cp "$B/fake/torch/lib/libc10_cuda.so" "$W/t210/torch/lib/"
printf "__all__ = ['__version__']\n__version__ = '2.10.0+fake'\n" > "$W/t210/torch/version.py"
mkdir -p "$W/v210"
(cd "$W/v210" && VRAMTRACE_DIR="$W/v210" LD_PRELOAD="$B/libvramtrace.so" LD_LIBRARY_PATH="$W/t210/torch/lib:$B/fake" \
  "$B/tests/c10_prog") > "$W/v210/run" 2>&1
grep -q "^tracker torch off torch 2.10.0+fake: the CUDA allocator's vtable is not known for this version (known: 2.11)$" \
  "$(dump_of v210 3)" > "$W/out" 2>&1
check "a torch version whose vtable is not known: nothing called, the dump names the version"

run layout VRAMTRACE_FAKE_C10=layout
l3=$(dump_of layout 3)
cp "$W/layout/err" "$W/out"
[ "$(cat "$W/layout/rc")" = 0 ] && grep -q "^tracker torch off torch 2.11.0+fake: its first trace entry is not the segment just made" "$l3" &&
  ! grep -q "^alloc .* block torch " "$l3" && ! grep -q "^segment " "$l3"
check "entries laid out otherwise: refused at the first one, nothing read from them, the dump says why"

view "$l3" > "$W/out" 2>&1
grep -q "^none" "$W/out" && "$V" report "$l3" | grep -q "^  tracker       torch's trace tracker off: "
check "refused: no torch view made up from the entries; the report says the tracker is off"

run off VRAMTRACE_TORCH_TRACKER=off
grep -q "^tracker torch off VRAMTRACE_TORCH_TRACKER=off$" "$(dump_of off 3)" > "$W/out" 2>&1
check "VRAMTRACE_TORCH_TRACKER=off: said in the dump"

mkdir -p "$W/plain"
(cd "$W/plain" && VRAMTRACE_DIR="$W/plain" LD_PRELOAD="$B/libvramtrace.so" "$B/tests/alloc_helper") > "$W/plain/run" 2>&1
pd=$(awk '$1 == "dump" { print $3; exit }' "$W/plain/run")
[ -f "$pd" ] && ! grep -q "^tracker " "$pd"
check "a process without torch's CUDA library: no tracker record"

# A forged dump: torch's blocks as records after the tracker says they are entries.
awk '{ print } /^segment .* torch / && !done { print "block 0x1000 512 512 active_allocated 0"; done = 1 }' "$d3" > "$W/forged.dump"
"$V" report "$W/forged.dump" > "$W/out" 2>&1
[ $? != 0 ] && grep -q "forged.dump:[0-9]*: a 'block' record with torch's tracker on" "$W/out"
check "the reader refuses torch block records when the tracker is on, naming the line"

# Python, as a PyTorch server: the fake torch hands every tensor to the fake c10, through ctypes, which
# lets the GIL go as torch's operators do.
mkdir -p "$W/py"
(cd "$W/py" && PYTHONPATH="$T/fake:$T/progs" VRAMTRACE_FAKE_TORCH=native VRAMTRACE_FAKE_C10_LIB="$B/fake/torch/lib/libc10_cuda.so" \
  LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/py" LD_PRELOAD="$B/libvramtrace.so" python3 "$T/progs/c10_py.py") > "$W/py/run" 2>&1
y1=$(awk '$2 == 1 { print $3 }' "$W/py/run") y2=$(awk '$2 == 2 { print $3 }' "$W/py/run") y3=$(awk '$2 == 3 { print $3 }' "$W/py/run")
view "$y3" > "$W/out" 2>&1
set -- $(cat "$W/out") $(awk '$2 == 3 { print $4, $5 }' "$W/py/run")
[ "$1 $2" = "$7 $8" ] && [ "$3 $4" = "0 0" ] && [ "$5" = "$6" ] && [ "$6" = "$1" ]
check "Python: torch's view = memory_allocated()/memory_reserved(); every block with its stack"

"$V" report "$y3" > "$W/out" 2>&1
grep -A1 "^   72.0 MiB in 24 × block (torch)" "$W/out" | grep -q "device_alloc (c10_py.py:[0-9]*)$" &&
  grep -q "^  history       torch's block history off: torch's trace tracker gives every block its call site$" "$W/out" &&
  grep -q "^  torch         ok: native allocator: its totals" "$W/out"
check "Python: blocks named by their Python lines (read without the GIL), torch's history left alone, only its totals asked"

"$V" diff "$y1" "$y2" > "$W/out" 2>&1
grep -q "^verdict: leak-suspect: .*; most at audit_request (c10_py.py:[0-9]*) (+24.0 MiB, +8 blocks)$" "$W/out"
check "Python: diff names audit_request's line, past device_alloc"

# server MODE: py_server.py MODE dumped 50 times; the verdicts of the 49 diffs against its first dump,
# counted, in $W/server-MODE/verdicts.
server() {
  mkdir -p "$W/server-$1"
  (cd "$W/server-$1" && PYTHONPATH="$T/fake:$T/progs" VRAMTRACE_FAKE_TORCH=native \
    VRAMTRACE_FAKE_C10_LIB="$B/fake/torch/lib/libc10_cuda.so" LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/server-$1" \
    LD_PRELOAD="$B/libvramtrace.so" python3 "$T/progs/py_server.py" "$1" 50) > "$W/server-$1/run" 2>&1
  first=$(awk '$1 == "dump" && $2 == 1 { print $3 }' "$W/server-$1/run")
  awk '$1 == "dump" && $2 > 1 { print $2, $3 }' "$W/server-$1/run" | while read -r n f; do
    echo "$n $("$V" diff "$first" "$f" 2>&1 | sed -n 's/^verdict: \([a-z-]*\):.*/\1/p')"
  done > "$W/server-$1/each"
  awk '{ print $2 }' "$W/server-$1/each" | sort | uniq -c | awk '{ print $2, $1 }' > "$W/server-$1/verdicts"
}
server ok
cp "$W/server-ok/verdicts" "$W/out"
[ "$(awk '{ n += $2 } END { print n }' "$W/server-ok/verdicts")" = 49 ] && ! grep -q "^leak-suspect" "$W/server-ok/verdicts"
check "a threaded server that does not leak, dumped 50 times: none of the 49 diffs against its first says leak-suspect"

# Which of those diffs says what depends on the workers' state at each dump (dump 1 may catch a request
# in flight); py_server.py held makes the case every time: four workers each holding one output.
mkdir -p "$W/held"
(cd "$W/held" && PYTHONPATH="$T/fake:$T/progs" VRAMTRACE_FAKE_TORCH=native \
  VRAMTRACE_FAKE_C10_LIB="$B/fake/torch/lib/libc10_cuda.so" LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/held" \
  LD_PRELOAD="$B/libvramtrace.so" python3 "$T/progs/py_server.py" held) > "$W/held/run" 2>&1
"$V" diff $(awk '$1 == "dump" { print $3 }' "$W/held/run") > "$W/out" 2>&1
grep -q "^verdict: undecided: .*two dumps cannot tell: .* at most 1 each, as their last requests may; \`vramtrace trend .*\` over later dumps of this process can$" "$W/out"
check "diff says two dumps cannot tell the workers' held outputs from a leak, and names the trend command"

# Until each worker has kept more outputs than one request's, two dumps cannot tell (undecided), or the
# few requests since the first dump are all in flight; by the fifth dump some worker has served several.
server leak
cp "$W/server-leak/each" "$W/out"
[ "$(awk '$2 != "leak-suspect" && $1 >= 5' "$W/server-leak/each")" = "" ] &&
  [ "$(wc -l < "$W/server-leak/each")" = 49 ]
check "the same server keeping every output: every diff against its first dump says leak-suspect from the fifth on"

# The running records' AT, forged: when every thread was looked at before anything was made, every entry
# is a request the dump did not see start (in flight); looked at after everything, the leak is the leak.
l1=$(awk '$1 == "dump" && $2 == 1 { print $3 }' "$W/server-leak/run")
l30=$(awk '$1 == "dump" && $2 == 30 { print $3 }' "$W/server-leak/run")
awk '$1 == "running" { $4 = 1 } { print }' "$l30" > "$W/early.dump"
awk '$1 == "running" { $4 = "18446744073709551000" } { print }' "$l30" > "$W/late.dump"
"$V" diff "$l1" "$W/early.dump" > "$W/out" 2>&1
"$V" diff "$l1" "$W/late.dump" >> "$W/out" 2>&1
[ "$(grep -c '^verdict: leak-suspect: ' "$W/out")" = 1 ] && grep -q '(in flight), not counted$' "$W/out" &&
  grep '^verdict: ' "$W/out" | tail -1 | grep -q '^verdict: leak-suspect: '
check "entries made after their thread was looked at (the running record's AT) are in flight; made before, a leak"

# pyserver NAME MODE [VAR=VALUE...]: py_server.py MODE in $W/NAME on the fake torch and c10, its output there.
pyserver() {
  name=$1 mode=$2
  shift 2
  mkdir -p "$W/$name"
  (cd "$W/$name" && env "$@" PYTHONPATH="$T/fake:$T/progs" VRAMTRACE_FAKE_TORCH=native \
    VRAMTRACE_FAKE_C10_LIB="$B/fake/torch/lib/libc10_cuda.so" LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR="$W/$name" \
    LD_PRELOAD="$B/libvramtrace.so" python3 "$T/progs/py_server.py" "$mode" 10) > "$W/$name/run" 2>&1
}

# A leak smaller than the request that was in flight at the older dump: the request's going does not hide it.
pyserver early early
"$V" diff $(awk '$1 == "dump" { print $3 }' "$W/early/run") > "$W/out" 2>&1
grep -q "^verdict: leak-suspect: reserved [^,]*, allocated -2.0 MiB; most at early (py_server.py:[0-9]*) (+2.0 MiB, +8 blocks); 4.0 MiB that statements running at the older dump held then (in flight) and freed since, not set against the growth$" "$W/out"
check "a leak smaller than a request in flight at the older dump: leak-suspect at its line, the request's 4 MiB not set against it"

# Every thread allocates with the GIL released and the helper is never waited for: the first blocks are
# read by the careful walk (py_unchecked), none missed, and the helper checks the walk against another
# thread, after which the plain walk reads them.
pyserver nowait leak VRAMTRACE_PY_WAIT=0
# the first dump with torch's blocks live (a dump may come before the workers' first request), and the last
for n1 in $(awk '$1 == "dump" { print $3 }' "$W/nowait/run"); do
  case $(view "$n1" | cut -d' ' -f1) in none | 0) ;; *) break ;; esac
done
n10=$(awk '$1 == "dump" && $2 == 10 { print $3 }' "$W/nowait/run")
{ view "$n1"; grep -h "^counter py_\(missed\|unchecked\|walked\) " "$n1" "$n10"; } > "$W/out" 2>&1
# the view's six words, then missed, walked, unchecked of dump 1 and of dump 10 (counter NAME VALUE each)
set -- $(cat "$W/out")
[ "$5" = "$6" ] && [ "$6" -gt 0 ] && [ "$9" = 0 ] && [ "${15}" -gt 0 ] && [ "${12}" -ge "${15}" ] &&
  [ "${18}" = 0 ] && [ "${21}" -gt "${24}" ]
check "VRAMTRACE_PY_WAIT=0, no thread holding the GIL: the first blocks all have their lines (the careful walk), none missed; the walk checked later, and used"

# The bridge's code compiled ahead of the first dump, while the program loads: the dump says what that
# held of the GIL; with the bridges off (VRAMTRACE_BRIDGE_TIMEOUT=0), nothing is compiled.
pyserver warm warm
pyserver warm0 warm VRAMTRACE_BRIDGE_TIMEOUT=0
w1=$(awk '$1 == "dump" { print $3 }' "$W/warm/run") w0=$(awk '$1 == "dump" { print $3 }' "$W/warm0/run")
{ grep -h "^counter bridge_warm" "$w1" "$w0"; "$V" report "$w1" | grep "^  bridges"; "$V" report --json "$w1" | grep -o '"warm_ns":[0-9]*'; } > "$W/out" 2>&1
set -- $(grep "^counter" "$W/out")
[ "$3" -gt 0 ] && [ "$6" -gt 0 ] && [ "$9" = 0 ] && [ "${12}" = 0 ] &&
  grep -q "^  bridges       ok: waited [0-9]* µs for the GIL, ran [0-9.]* ms; its code compiled ahead, at the program's first CUDA call (the GIL held [0-9.]* ms then)$" "$W/out" &&
  grep -q "\"warm_ns\":$3$" "$W/out"
check "the bridge's code compiled ahead of the first dump, while the program loads (said, with the GIL it held); none with the bridges off"
