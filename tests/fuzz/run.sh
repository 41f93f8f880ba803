#!/bin/sh
# Runs the reader's fuzz target for N seconds on a corpus seeded with dumps the rig writes:
# tests/fuzz/run.sh BUILD SECONDS. Exits non-zero when libFuzzer found a crash (its input is kept in BUILD).
set -eu
B=$1
mkdir -p "$B/fuzz-corpus"
sh "$(dirname "$0")/seed.sh" "$B"
cd "$B"
exec ./fuzz_dumpfile -max_total_time="$2" -max_len=262144 -print_final_stats=1 fuzz-corpus
