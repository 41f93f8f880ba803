#!/bin/sh
# TAP: `vramtrace report --pprof` writes profiles that the real pprof (Go's, `go tool pprof`; make test
# installs golang-go) reads: exact values per call site, growth of a known leak with -base, Python
# frames as functions with their file and line, labels to filter on; and bad uses fail plainly.
. "$(dirname "$0")/tap.sh"
export HOME=$W # pprof keeps nothing there for local files, but never writes into a real home
pprof() { go tool pprof "$@" > "$W/out" 2>&1; }
echo "1..10"

command -v go > /dev/null && go tool pprof -h > /dev/null 2>&1
check "Go's pprof is installed (golang-go)"

"$V" report --pprof "$W/g1.pb.gz" "$D/grow.1.dump" > "$W/out" 2>&1 &&
  "$V" report --pprof "$W/g2.pb.gz" "$D/grow.2.dump" >> "$W/out" 2>&1 &&
  [ "$(od -An -tx1 -N2 "$W/g2.pb.gz" | tr -d ' ')" = "1f8b" ] && [ ! -s "$W/out" ]
check "report --pprof writes a gzipped profile, silently"

# The dump: 2 allocations of 1 MiB at grow_leak_site (1 in the first dump), 1 of 2 MiB at main+0xf58.
pprof -raw "$W/g2.pb.gz" && grep -q '^ *2 *2097152: 1 2 *$' "$W/out" && grep -q '^ *1 *2097152: 3 *$' "$W/out" &&
  grep -q '^ *1: 0x1 M=1 grow_leak_site+0x16 ' "$W/out" && grep -q '^ *3: 0x3 M=1 main+0xf58 ' "$W/out" &&
  grep -q 'inuse_objects/count inuse_space/bytes\[dflt\]' "$W/out"
check "pprof reads both sites' count and bytes exactly, inuse_space the default"

pprof -top "$W/g2.pb.gz" && grep -Eq '^ +2MB +50\.00% .* grow_leak_site\+0x16$' "$W/out" &&
  grep -Eq '^ +0 +0% .* 2MB +50\.00%  main\+0xf78$' "$W/out"
check "pprof -top: grow_leak_site holds 2 MiB, called from main"

pprof -top -base "$W/g1.pb.gz" "$W/g2.pb.gz" && grep -Eq '^ +1MB .* grow_leak_site\+0x16$' "$W/out" &&
  ! grep -q 'main+0xf58' "$W/out"
check "pprof -base: the growth is 1 MiB at grow_leak_site, nothing at the site that did not grow"

pprof -traces "$W/g2.pb.gz" && grep -q 'kind:  device' "$W/out" && grep -q 'api:  cuMemAlloc_v2' "$W/out" &&
  grep -q 'class:  allocated' "$W/out" && grep -q 'device:  0' "$W/out"
check "each sample carries its kind, api, class and device"

# A dump of a PyTorch process (H200): Python frames become functions with their file and line.
"$V" report --pprof "$W/t.pb.gz" "$D/h200-torch-race.2.dump" > "$W/out" 2>&1 &&
  pprof -top -lines -nodecount=200 "$W/t.pb.gz" && grep -Eq ' handle torch_cache\.py:18$' "$W/out" &&
  grep -Eq ' main torch_cache\.py:30$' "$W/out"
check "Python frames are functions with file and line (handle torch_cache.py:18)"

pprof -top -tagfocus=class=allocated "$W/t.pb.gz" && grep -q 'Showing nodes accounting for 97.65MB' "$W/out" &&
  grep -q 'cuBLAS\|libcublas' "$W/out"
check "-tagfocus class=allocated keeps what the program holds (97.65 MB of 409.65), leaving out torch's segments"

"$V" report --pprof "$W/x.pb.gz" "$D/grow.1.dump" "$D/grow.2.dump" > "$W/out" 2>&1
st=$?
[ $st = 2 ] && grep -q 'pprof takes one dump' "$W/out" && [ ! -e "$W/x.pb.gz" ]
check "two dumps: a usage error (exit 2), no file"

"$V" report --pprof "$W/no/such/dir/x.pb.gz" "$D/grow.1.dump" > "$W/out" 2>&1
st=$?
[ $st = 1 ] && grep -q "cannot write $W/no/such/dir/x.pb.gz" "$W/out"
check "an unwritable file: exit 1, naming the file"
