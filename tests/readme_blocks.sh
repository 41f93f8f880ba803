#!/bin/sh
# Runs the README's command blocks of one kind as written, each with `sh -e` from the repository root,
# and prints TAP: one test per block. KIND is "sh" (the CPU blocks: make test runs them, except the
# line `make test` itself, which is what runs this) or "sh gpu" (the GPU suite runs them).
#   sh tests/readme_blocks.sh KIND
# The blocks keep their files in out/, as a user does: they run in a temporary root whose entries are
# links to the repository's own, all but out/, so a user's out/ is never touched (nor removed).
set -u
KIND=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
mkdir "$T/tmp"
export TMPDIR="$T/tmp" # what the blocks leave in $TMPDIR (the demo's folder) goes with the rest
mkdir "$T/root"
for e in "$ROOT"/* "$ROOT"/.git; do
  [ -e "$e" ] && [ "${e##*/}" != out ] && ln -s "$e" "$T/root/${e##*/}"
done
cd "$ROOT"
# Each block into its own file, named by its first line in the README.
awk -v kind="$KIND" -v dir="$T" '
  /^```/ && !inb { inb = 1; take = (substr($0, 4) == kind); if (take) { f = dir "/" NR ".sh"; printf "" > f } next }
  /^```/ && inb  { inb = 0; if (take) close(f); take = 0; next }
  inb && take    { if ($0 != "make test") print >> f }
' README.md
n=$(ls "$T" | grep -c '\.sh$')
echo "1..$((n + 1))"
echo "ok 1 - the README has $n \"$KIND\" blocks"
i=1
cd "$T/root"
for f in $(ls "$T" | grep '\.sh$' | sort -n); do
  i=$((i + 1))
  line=${f%.sh}
  rm -rf out
  if out=$(sh -e "$T/$f" 2>&1); then
    echo "ok $i - README block at line $line runs as written"
  else
    echo "not ok $i - README block at line $line runs as written"
    printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
  fi
done
cd /
rm -rf "$T"
