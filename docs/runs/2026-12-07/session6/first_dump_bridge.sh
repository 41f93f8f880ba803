# docs/performance.md (2026-12-07, sixth session): the first dump's bridge (the GIL it held: RUN_NS of the python record) in the fake-torch server's warm
# mode (one request, 0.3 s of loading, a dump), libraries taking turns: LIBS="name:DIR ...", ROUNDS.
T=/work/main/tests B=/work/main/build
for r in $(seq ${ROUNDS:-5}); do
  for nl in $LIBS; do
    name=${nl%%:*} dir=${nl#*:}
    D=$(mktemp -d)
    (cd $D && PYTHONPATH="$T/fake:$T/progs" VRAMTRACE_FAKE_TORCH=native VRAMTRACE_FAKE_C10_LIB="$B/fake/torch/lib/libc10_cuda.so" \
      LD_LIBRARY_PATH="$B/fake" VRAMTRACE_DIR=$D LD_PRELOAD=$dir/libvramtrace.so python3 $T/progs/py_server.py warm > out 2>&1)
    f=$(awk '$1 == "dump" { print $3 }' $D/out)
    echo "round $r $name: first dump's bridge held the GIL $(awk '$1 == "python" { printf "%.2f", $4 / 1e6 }' $f) ms; compiled ahead $(awk '$1 == "counter" && $2 == "bridge_warm_ns" { printf "%.2f", $3 / 1e6 }' $f) ms"
    rm -rf $D
  done
done
