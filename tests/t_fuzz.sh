#!/bin/sh
# TAP: the reader's fuzz target builds (make test builds it) and survives a short run on the seeded
# corpus. Longer runs: make fuzz FUZZ_SECONDS=600.
B=$(cd "$(dirname "$0")/../build" && pwd)
echo "1..2"
if [ -x "$B/fuzz_dumpfile" ]; then echo "ok 1 - the fuzz target is built"; else echo "not ok 1 - the fuzz target is built"; fi
out=$(sh "$(dirname "$0")/fuzz/run.sh" "$B" "${VRAMTRACE_FUZZ_SECONDS:-20}" 2>&1)
st=$?
runs=$(printf '%s\n' "$out" | sed -n 's/^stat::number_of_executed_units: *//p')
if [ $st -eq 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
  echo "ok 2 - ${VRAMTRACE_FUZZ_SECONDS:-20} s of fuzzing: $runs inputs, no crash"
else
  echo "not ok 2 - fuzzing found a problem (exit $st)"
  printf '%s\n' "$out" | tail -30 | sed 's/^/# /'
fi
