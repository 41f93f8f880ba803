#!/bin/sh
# Runs the command blocks of one kind of the README and the user's guide (docs/guide.md) as written, each
# with `sh -e` from the repository root,
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
# Each block into its own file, named by its document and its first line there (README 1, guide 2).
awk -v kind="$KIND" -v dir="$T" '
  FNR == 1       { doc++ }
  /^```/ && !inb { inb = 1; take = (substr($0, 4) == kind); if (take) { f = dir "/" doc "-" FNR ".sh"; printf "" > f } next }
  /^```/ && inb  { inb = 0; if (take) close(f); take = 0; next }
  inb && take    { if ($0 != "make test") print >> f }
' README.md docs/guide.md
n=$(ls "$T" | grep -c '\.sh$')
echo "1..$((n + 2))"
echo "ok 1 - the README and the guide have $n \"$KIND\" blocks"
i=1
cd "$T/root"
for f in $(ls "$T" | grep '\.sh$' | sort -t- -k1,1n -k2,2n); do
  i=$((i + 1))
  line=${f%.sh}
  case $line in 1-*) line="README.md:${line#1-}" ;; *) line="docs/guide.md:${line#2-}" ;; esac
  rm -rf out
  if out=$(sh -e "$T/$f" 2>&1); then
    echo "ok $i - block at $line runs as written"
  else
    echo "not ok $i - block at $line runs as written"
    printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
  fi
done
# Nothing the blocks ran (the demo, the tests' programs) leaves anything in $TMPDIR.
i=$((i + 1))
if [ -z "$(ls -A "$T/tmp")" ]; then
  echo "ok $i - nothing left in \$TMPDIR"
else
  echo "not ok $i - left in \$TMPDIR: $(ls -A "$T/tmp" | head -5 | tr '\n' ' ')"
fi
cd /
rm -rf "$T"
