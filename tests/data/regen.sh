#!/bin/sh
# Remakes the fixture dumps from the rig (after a format change), with every module path made
# unreachable so that the golden outputs use the names recorded in the dumps on every machine. Then:
# VRAMTRACE_GOLDEN_UPDATE=1 build/tests/t_golden, and review `git diff tests/data`. h200-torch-race.*.dump
# came from the H200 (gpu-test's example-torch_cache, 2026-12-03) through the same awk; it is not remade.
set -eu
B=$(cd "$(dirname "$0")/../../build" && pwd)
OUTDIR=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d)
for m in grow pool; do
  VRAMTRACE_DIR=$D LD_PRELOAD=$B/libvramtrace.so LD_LIBRARY_PATH=$B/fake "$B/tests/prog_driver" $m >/dev/null
  for f in "$D"/vramtrace.*.dump; do
    seq=$(echo "$f" | sed 's/.*\.\([0-9]*\)\.dump$/\1/')
    case "$m.$seq" in pool.[345]) continue ;; esac
    awk '/^module / { n = split($7, p, "/"); $7 = "/nonexistent/" p[n] } /^exe / { n = split($2, p, "/"); $2 = "/nonexistent/" p[n] } { print }' \
      "$f" >"$OUTDIR/$m.$seq.dump"
  done
  rm -f "$D"/*
done
rmdir "$D"
