#!/bin/sh
# TAP: the command explains itself: --version (the public header's release and the git revision), help
# for every verb (every option it takes, the settings, the exit codes), VERB --help, --opt=value, "--"
# before files, a suggestion for a mistyped verb or a program given to run without "--", and the line
# run's program says as it ends: where its dumps are and the command that reads them (which works).
. "$(dirname "$0")/tap.sh"
echo "1..22"

release=$(sed -n 's/^#define VRAMTRACE_VERSION "\(.*\)"$/\1/p' "$T/../include/vramtrace.h")
"$V" --version > "$W/out" 2>&1 && grep -Eq "^vramtrace $release( \(git [0-9a-f]+\))?$" "$W/out" && [ -n "$release" ]
check "--version: the release of include/vramtrace.h ($release), with the git revision of a checkout"

ok=1
for verb in run dump report diff trend html metrics; do
  "$V" help "$verb" > "$W/h" 2>&1 && "$V" "$verb" --help > "$W/h2" 2>&1 && cmp -s "$W/h" "$W/h2" &&
    grep -q "^usage: vramtrace $verb" "$W/h" && grep -q "^exit status: 0 done" "$W/h" || { ok=0; echo "$verb" >> "$W/out"; }
done
[ $ok = 1 ]
check "help VERB and VERB --help: the same text, with usage and exit status, for every verb"

"$V" help report > "$W/out" 2>&1
missing=0
for o in --top --device --json --folded --pprof --prometheus --full-stacks; do grep -q "^  $o" "$W/out" || missing=1; done
[ $missing = 0 ] && "$V" help diff | grep -q '3 allocated memory grew by more than --fail-on-growth'
check "report's help names each of its options; diff's its exit code 3"

"$V" help run > "$W/out" 2>&1
want=$(grep -c '^    {"VRAMTRACE_' "$T/../common/vt_settings.c")
got=$(grep -c '^  VRAMTRACE_' "$W/out")
echo "settings in the table $want, in the help $got" >> "$W/out"
[ "$want" -gt 10 ] && [ "$got" = "$want" ] && grep -q '^  --depth N .*(VRAMTRACE_DEPTH, default 32)' "$W/out"
check "run's help lists every setting of the settings table, and the options that set them"

"$V" report --top 1 "$D/grow.3.dump" > "$W/a" 2>&1 && "$V" report --top=1 "$D/grow.3.dump" > "$W/b" 2>&1 && cmp -s "$W/a" "$W/b" &&
  "$V" report --top=1 -- "$D/grow.3.dump" > "$W/c" 2>&1 && cmp -s "$W/a" "$W/c"; cp "$W/b" "$W/out"
check "--top=1 is --top 1, and -- before the dump is taken"

"$V" repotr "$D/grow.3.dump" > "$W/out" 2>&1
[ $? = 2 ] && grep -q "unknown verb 'repotr' (did you mean 'report'?)" "$W/out"
check "a mistyped verb: exit 2 and the verb meant"

"$V" run ./prog > "$W/out" 2>&1
[ $? = 2 ] && grep -q "put -- before it (vramtrace run -- ./prog)" "$W/out"
check "run given a program without --: exit 2 and how to write it"

"$V" help nosuchverb > "$W/out" 2>&1
[ $? = 2 ] && grep -q "no verb 'nosuchverb'" "$W/out"
check "help of no verb: exit 2"

"$V" > "$W/out" 2>&1
[ $? = 2 ] && grep -q '^usage: vramtrace VERB' "$W/out" && "$V" --help | grep -q '^  vramtrace metrics --textfile'
check "no verb: the synopsis of every verb on stderr, exit 2; --help the same on stdout"

env LD_LIBRARY_PATH="$B/fake" "$V" run --depth=4 --dir "$W/d" -- "$B/tests/prog_plain" > "$W/out" 2>&1
[ $? = 0 ] && ls "$W/d" | grep -q '\.dump$' &&
  "$V" run --dir="$W/d" -- sh -c 'printf "%s\n" "$1"' sh --keep=me > "$W/out" 2> "$W/err" && [ "$(cat "$W/out")" = "--keep=me" ]
check "run takes --opt=value before --, and leaves the program's own arguments (--keep=me) alone"

# Progress: on a terminal (script gives the command one), never into a pipe.
script -qc "'$V' trend '$D/grow.1.dump' '$D/grow.2.dump' '$D/grow.3.dump' > '$W/t1'" "$W/tty" > /dev/null 2>&1
"$V" trend "$D/grow.1.dump" "$D/grow.2.dump" "$D/grow.3.dump" > "$W/t2" 2> "$W/err"
cp "$W/tty" "$W/out"
grep -q '3 of 3 dumps read' "$W/tty" && [ ! -s "$W/err" ] && cmp -s "$W/t1" "$W/t2"
check "a series read says how far it is on a terminal, nothing when stderr is a pipe; the same output"

# One large dump (900,000 more allocations, 73 MiB) says how far its reading is too, on a terminal only.
awk 'NR == 45 { for (i = 0; i < 900000; i++)
  printf "alloc 0x7e%08x 4096 device cuMemAlloc_v2 0 0x0 0x0 0x0 0 1 1 6773293801444 31040\n", i * 16 } { print }' \
  "$D/grow.3.dump" > "$W/big.dump"
script -qc "'$V' report '$W/big.dump' > '$W/b1'" "$W/tty" > /dev/null 2>&1
"$V" report "$W/big.dump" > "$W/b2" 2> "$W/err"
cp "$W/tty" "$W/out"
grep -q "reading $W/big.dump: [0-9]* % of 7[0-9] MiB" "$W/tty" && [ ! -s "$W/err" ] && cmp -s "$W/b1" "$W/b2" &&
  grep -q '900001 × device' "$W/b2"
check "a large dump's reading says how far it is on a terminal, nothing into a pipe; the same report"

# The end note: the last line on stderr, from the program run started (not its children), and the
# command it gives runs. $1: the dump directory; the note is in $W/err.
note_cmd() { sed -n 's/^vramtrace: .* \(with\|last\): \(vramtrace [^(]*\).*/\2/p' "$W/err" | sed 's/ *$//; s/^vramtrace /"$V" /'; }
runs_note() { c=$(note_cmd) && [ -n "$c" ] && eval "$c" > "$W/r" 2>&1; }
fake() { env LD_LIBRARY_PATH="$B/fake" "$@"; }

fake "$V" run --dir "$W/n1" -- "$B/tests/prog_plain" > /dev/null 2> "$W/err"; cp "$W/err" "$W/out"
pid=$(sed -n 's/^vramtrace: running .* as pid \([0-9]*\); dumps go to .*/\1/p' "$W/err")
[ "$(grep -c '^vramtrace: ' "$W/err")" = 2 ] && [ -n "$pid" ] &&
  grep -q "^vramtrace: running $B/tests/prog_plain as pid $pid; dumps go to $W/n1 (vramtrace dump $pid takes one)$" "$W/err" &&
  [ -f "$W/n1/vramtrace.$pid.1.dump" ] &&
  grep -q "^vramtrace: 1 dump in $W/n1; read it with: vramtrace report $W/n1/vramtrace\.[0-9]*\.1\.dump$" "$W/err" &&
  runs_note && grep -q '^process ' "$W/r"
check "run says the program's pid and dump directory at start; it ends saying where its one dump is and the report that reads it (which runs)"

ok=1
long=$(printf 'a-long-directory-name%.0s' 1 2 3 4 5 6 7 8 9 10) # the diff's two paths: a line of ~1,000 characters
for req in 300:diff 500:trend; do
  rm -rf "$W/n2" && mkdir -p "$W/n2/$long" && n2=$W/n2/$long
  fake "$V" run --dir "$n2" --interval 1 -- "$B/tests/cuda_leak" "${req%:*}" > /dev/null 2> "$W/err"; cat "$W/err" >> "$W/out"
  ndumps=$(ls "$n2" | grep -c '\.dump$')
  grep -q "^vramtrace: $ndumps dumps in $n2; see what gr[a-z]* with: vramtrace ${req#*:} " "$W/err" &&
    runs_note && grep -q 'remember_request_for_debugging' "$W/r" || ok=0
done
[ $ok = 1 ]
check "several dumps (interval and exit): how many, and the diff of two or the trend of three (which runs, long paths whole)"

fake "$V" run --dir "$W/n3" -- bash -c '"$1" 20 > /dev/null; true' sh "$B/tests/cuda_leak" > /dev/null 2> "$W/err"; cp "$W/err" "$W/out"
[ "$(grep -c '^vramtrace: ' "$W/err")" = 2 ] &&
  grep -q "^vramtrace: pid [0-9]* wrote no dump (it made no CUDA call); the processes it started wrote 1 in $W/n3, the last: vramtrace report " "$W/err" &&
  runs_note && grep -q 'cuda_leak' "$W/r"
check "a launcher (bash) that made no CUDA call names its child's dump; the child itself says nothing"

fake "$V" run --quiet --dir "$W/n4" -- "$B/tests/prog_plain" > /dev/null 2> "$W/err"
fake env LD_PRELOAD="$B/libvramtrace.so" VRAMTRACE_DIR="$W/n4" "$B/tests/prog_plain" > /dev/null 2>> "$W/err"
fake env VRAMTRACE_END_NOTE_PID=0 "$V" run --dir "$W/n4" -- "$B/tests/prog_plain" > /dev/null 2> "$W/err2"
cp "$W/err" "$W/out"; cat "$W/err2" >> "$W/out"; ls "$W/n4" >> "$W/out"
[ ! -s "$W/err" ] && [ "$(ls "$W/n4" | grep -c '\.dump$')" = 3 ] && [ "$(grep -c '^vramtrace: running ' "$W/err2")" = 1 ] &&
  [ "$(wc -l < "$W/err2")" = 1 ]
check "run --quiet says nothing, nor does a plain LD_PRELOAD (production stays quiet); VRAMTRACE_END_NOTE_PID=0: no end note"

mkdir "$W/n5"
fake "$V" run --dir "$W/n5/new" -- true 2> "$W/err"; cp "$W/err" "$W/out"
[ -d "$W/n5/new" ] && grep -q "^vramtrace: pid [0-9]* wrote no dump in $W/n5/new (it made no CUDA call)$" "$W/err" &&
  (cd "$W/n5" && "$V" run -- true 2> "$W/err3") && grep -q "dumps go to $W/n5 (" "$W/err3"
check "run makes --dir; a program that never used CUDA says it wrote no dump; without --dir the dumps go to the working directory"

# A CUDA runtime that found no driver (the fake driver left off the library path): the end note says
# where the bundled one is.
"$V" run --dir "$W/n6" -- python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$B/fake/libcudart.so.13" \
  2> "$W/err"; cp "$W/err" "$W/out"
grep -q "wrote no dump in $W/n6 (it made no CUDA call: its CUDA runtime found no driver; with no GPU here, the bundled fake driver is in $B/fake: LD_LIBRARY_PATH=$B/fake)$" "$W/err"
check "a CUDA runtime with no driver: the end note names the bundled fake driver's folder"

# vramtrace dump of a launcher (a shell's pid, \$! of a subshell) that has no library while its child has:
# the child named, not "not loaded" alone.
sh -c "LD_LIBRARY_PATH='$B/fake' VRAMTRACE_DIR='$W' LD_PRELOAD='$B/libvramtrace.so' '$B/tests/prog_driver' sleep 4000; true" 2> /dev/null &
sh_pid=$!
"$V" dump "$sh_pid" > "$W/out" 2>&1
child=$(sed -n 's/.*but in its child \([0-9]*\).*/\1/p' "$W/out")
[ -n "$child" ] && grep -q "vramtrace dump $child" "$W/out" && [ "$(cat /proc/"$child"/comm 2> /dev/null)" = prog_driver ]
check "dump of a launcher without the library names its child that has it"
kill "$child" 2> /dev/null; wait "$sh_pid" 2> /dev/null

"$V" run --dir "$W/n7" -- "$W/no-such-program" > "$W/out" 2>&1
st=$?
[ $st = 127 ] && grep -q "^vramtrace run: cannot run $W/no-such-program: No such file or directory$" "$W/out" &&
  ! grep -q "running" "$W/out"
check "a program that cannot be run: said, exit 127, never announced as running"

# The closing line is the last one even when the program's stdout is a pipe (buffered until its exit).
fake "$V" run --dir "$W/n8" -- "$B/tests/prog_plain" 2>&1 | cat > "$W/out"
tail -1 "$W/out" | grep -q "^vramtrace: .*dump"
check "the end note is the last line when stdout is a pipe"

# trend on a folder that holds two runs (the README's glob after a second run): the one-process glob named.
fake "$V" run --quiet --dir "$W/n9" -- "$B/tests/prog_driver" grow > /dev/null 2>&1
fake "$V" run --quiet --dir "$W/n9" -- "$B/tests/prog_driver" grow > /dev/null 2>&1
"$V" trend "$W"/n9/vramtrace.*.dump > "$W/out" 2>&1
st=$?
[ $st = 2 ] && grep -q "trend needs dumps of one process (one process's: vramtrace trend $W/n9/vramtrace\.[0-9]*\.\*\.dump)$" "$W/out"
check "trend of two runs' dumps: exit 2, naming the glob of one process's dumps"
