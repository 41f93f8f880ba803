# docs/performance.md (2026-12-07, sixth session): the library's metrics file with the symbolizer beside it
# (build/) and without (/tmp/noplug: libvramtrace.so, libunwind.so.8, liblzma.so.5 copied alone): the
# library threads' CPU over a run and the peak RSS. Run from the repository root.
B=/work/main/build
export LD_LIBRARY_PATH=$B/fake
for r in 1 2 3; do
  for lib in $B /tmp/noplug; do
    D=$(mktemp -d); mkdir $D/dumps
    /usr/bin/time -f "%M" -o $D/rss env VRAMTRACE_METRICS=$D/m.prom VRAMTRACE_METRICS_INTERVAL=1 VRAMTRACE_DIR=$D/dumps LD_PRELOAD=$lib/libvramtrace.so taskset -c 1 python3 bench/py_serving.py $B/fake/libcudart.so.13 2000000 quiet > $D/out 2>$D/err
    t=$($B/vramtrace report --json $D/dumps/*.dump | python3 -c 'import json,sys; print(json.load(sys.stdin)["self_cost"]["threads_ns"] / 1e6)')
    echo "round $r lib $lib: $(cat $D/out) us/request, threads $t ms, peak RSS $(cat $D/rss) KiB, said: $(grep -c 'by symbol' $D/err)"
    rm -rf $D
  done
done
