#!/bin/sh
# The training run of the library's profile-guided build (the Makefile's PGO): the serving-shaped loop
# (bench/py_serving.py, on the fake runtime) under the instrumented library, with plain and stream-ordered
# pairs, quiet and with the GIL contended, and tensors from the fake torch's caching allocator (tests/fake/c10:
# torch's blocks through its trace tracker, the common path of a PyTorch process), so that the profile
# holds the hooks' common path as a serving
# process takes it: through the runtime's hooks and the driver's, as torch calls them (until 2026-12-06 the
# loop called the runtime past its hooks, and the profile had never seen the runtime hooks run). CPython
# 3.12 (the GPU image's) is preferred, as the walk has a path of its own per version; the system's python3
# runs too. The profiles land in PGO_DIR/prof, where the real build reads them (the Makefile names them).
#   pgo_train.sh PGO_DIR BUILD
set -eu
pgo=$1 build=$2
find "$pgo/prof" -name '*.gcda' -delete
# The first 3.12 that starts, then python3.
. "$(dirname "$0")/python312.sh"
pys="$(first_python312) $(command -v python3)"
# The library's defaults, whatever the builder's environment sets.
for v in $(env | sed -n 's/^\(VRAMTRACE_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export LD_LIBRARY_PATH="$build/fake" VRAMTRACE_AT_EXIT=0 BENCH_DISTINCT=1 BENCH_LEVELS=4
for py in $pys; do
  for async in 1 0; do
    for mode in quiet contended; do
      BENCH_ASYNC=$async LD_PRELOAD="$PWD/$pgo/libvramtrace.so" "$py" bench/py_serving.py \
        "$build/fake/libcudart.so.13" 10000 $mode > /dev/null ||
        { echo "pgo_train.sh: the training run failed ($py, BENCH_ASYNC=$async, $mode)" >&2; exit 1; }
    done
  done
  BENCH_C10="$build/fake/torch/lib/libc10_cuda.so" BENCH_DEPTH=20 LD_PRELOAD="$PWD/$pgo/libvramtrace.so" "$py" \
    bench/py_serving.py "$build/fake/libcudart.so.13" 10000 quiet > /dev/null ||
    { echo "pgo_train.sh: the training run through torch's tracker failed ($py)" >&2; exit 1; }
done
n=$(find "$pgo/prof" -name '*.gcda' | wc -l)
[ "$n" -gt 0 ] || { echo "pgo_train.sh: the training run left no profile in $pgo/prof" >&2; exit 1; }
