#!/bin/sh
# The GPU suite (`make gpu-test`), run on the GPU machine from the repository root with build/ built
# (or carried over from a CPU machine): builds the CUDA C programs, runs every scenario under the
# library with its dumps, then tests/gpu/check.py compares each figure with the ground truth and prints
# PASS/FAIL lines and "N passed, N failed". Everything lands in $OUT (default /tmp/vramtrace-gpu).
set -u
OUT=${OUT:-/tmp/vramtrace-gpu}
R=$OUT/results
rm -rf "$R" && mkdir -p "$R"
B=$PWD/build
LIB=$B/libvramtrace.so
[ -f "$LIB" ] && [ -x "$B/vramtrace" ] || { echo "gpu-test: build/ is missing: run make first" >&2; exit 2; }

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -1
} > "$R/versions.txt" 2>&1

# ONLY="kinds pools jax ...": run those scenarios alone (a re-run; CHECK_ONLY then picks check.py's steps).
want() { [ -z "${ONLY:-}" ] || case " $ONLY " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# In a scenario's folder: its dumps (dumps/) and what the program printed (out.txt).
scenario() { mkdir -p "$R/$1/dumps"; echo "$R/$1"; }

# 1, 2: CUDA C, five builds of one program.
if want kinds; then
for v in static shared driver entry ptsz; do
  case $v in
    static) flags= ;; shared) flags="-cudart shared" ;; driver) flags=-DVT_ROUTE_DRIVER ;;
    entry) flags=-DVT_ROUTE_ENTRY ;; ptsz) flags="--default-stream per-thread" ;;
  esac
  d=$(scenario kinds-$v)
  nvcc -O2 -g $flags -o "$d/kinds" tests/gpu/kinds.cu -lcuda -ldl > "$d/build.txt" 2>&1 &&
    VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB "$d/kinds" > "$d/out.txt" 2>&1
done
fi

# 2b: CUDA graphs' allocation nodes, as NVIDIA's graphMemoryFootprint sample makes them.
if want graphmem; then
d=$(scenario graphmem)
nvcc -O2 -g -o "$d/graphmem" tests/gpu/graphmem.cu -lcuda > "$d/build.txt" 2>&1 &&
  VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB "$d/graphmem" > "$d/out.txt" 2>&1
fi

# 2c: CUDA arrays (2D, 3D, mipmapped) and registered host memory.
if want arrays; then
d=$(scenario arrays)
nvcc -O2 -g -o "$d/arrays" tests/gpu/arrays.cu > "$d/build.txt" 2>&1 &&
  VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB "$d/arrays" > "$d/out.txt" 2>&1
fi

# 2d: a native pool (examples/native_pool.c) that reports its blocks, declares its segments, or only
# describes itself through NVTX's memory API (the library as NVTX's tool, as `vramtrace run` makes it).
if want pools; then
d=$(scenario pools)
nvcc -O2 -g -Iinclude -o "$d/native_pool" examples/native_pool.c > "$d/build.txt" 2>&1 &&
  for m in idle "idle declare" leak "idle nvtx" "leak nvtx"; do
    NVTX_INJECTION64_PATH=$LIB VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB "$d/native_pool" 200 $m \
      > "$d/$(echo $m | tr ' ' -).txt" 2>&1
  done
fi

# 3, 4, 5 (and 7): PyTorch's three allocator configurations.
if want torch; then
for cfg in default expandable async; do
  case $cfg in
    default) conf= ;; expandable) conf=expandable_segments:True ;; async) conf=backend:cudaMallocAsync ;;
  esac
  d=$(scenario torch-$cfg)
  PYTORCH_CUDA_ALLOC_CONF=$conf VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB python3 tests/gpu/torch_truth.py > "$d/out.txt" 2>&1
done
fi

# The torch bridge: the examples driven request by request, fragmentation, expandable segments.
if want bridge; then
# leak: torch's history on for good after the first dump, so that every block after it has its stack;
# sampled: as by default, on 5 % of each second.
for mode in leak cache frag sampled; do
  d=$(scenario bridge-$mode)
  sample=5; [ $mode = leak ] && sample=100
  VRAMTRACE_TORCH_SAMPLE=$sample VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB python3 tests/gpu/torch_bridge.py $mode \
    > "$d/out.txt" 2>&1
done
d=$(scenario bridge-expandable)
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB \
  python3 tests/gpu/torch_bridge.py cache > "$d/out.txt" 2>&1
fi

# 6: CuPy.
if want cupy; then
d=$(scenario cupy)
VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB python3 tests/gpu/cupy_pool.py > "$d/out.txt" 2>&1
# CuPy's blocks through the memory hook the first dump installs: the CPU test's program on the real CuPy.
d=$(scenario cupy-blocks)
PYTHONPATH=tests/progs VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB python3 tests/progs/cupy_prog.py blocks > "$d/out.txt" 2>&1
fi

# 6b: request loops that keep memory or only cache it, in CuPy and numba.
if want requests; then
for fm in cupy:leak cupy:cache numba:leak; do
  d=$(scenario requests-${fm%:*}-${fm#*:})
  VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB python3 tests/gpu/requests.py ${fm%:*} ${fm#*:} > "$d/out.txt" 2>&1
done
fi

# 7: JAX, its pool preallocated (the default) and grown on demand.
if want jax; then
for pre in true false; do
  d=$(scenario jax-$pre)
  XLA_PYTHON_CLIENT_PREALLOCATE=$pre VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB python3 tests/gpu/jax_pool.py > "$d/out.txt" 2>&1
done
fi

# 7b: the metrics file the library keeps (VRAMTRACE_METRICS) in a PyTorch process.
if want metrics; then
d=$(scenario metrics)
"$B/vramtrace" run --quiet --dir "$d/dumps" --metrics "$d/m-%p.prom" --metrics-interval 1 -- \
  python3 tests/gpu/metrics_prog.py "$d/m-%p.prom" > "$d/out.txt" 2>&1
ls "$d" > "$d/left.txt"
fi

# 8: no CUDA at all; bare and preloaded runs interleaved.
if want nocuda; then
d=$(scenario nocuda)
for round in 1 2 3 4 5; do
  python3 tests/gpu/nocuda.py >> "$d/bare.txt" 2>&1
  VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB python3 tests/gpu/nocuda.py >> "$d/preloaded.txt" 2>&1
done
fi

# 9: the two-thread loop, twice bare, then preloaded with a dump signal every 20 ms while it runs.
if want threads; then
d=$(scenario threads)
export CUBLAS_WORKSPACE_CONFIG=:4096:8
python3 tests/gpu/torch_threads.py > "$d/bare1.txt" 2>&1
python3 tests/gpu/torch_threads.py > "$d/bare2.txt" 2>&1
VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB python3 tests/gpu/torch_threads.py > "$d/preloaded.txt" 2>&1 &
pid=$!
n=0
until grep -q ready "$d/preloaded.txt" 2>/dev/null; do sleep 0.05; done
while ! grep -q done "$d/preloaded.txt"; do kill -USR1 $pid 2>/dev/null && n=$((n + 1)); sleep 0.02; done
wait $pid
echo "sent $n" > "$d/signals.txt"
fi

# torch.compile in each mode and with expandable segments, dumped from outside while it compiles,
# captures CUDA graphs and replays them (tests/gpu/torch_compile.py).
if want compile; then
d=$(scenario compile)
# And a dump asked for while a CUDA graph is being captured (torch.cuda.graph): the capture must survive.
VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB timeout 120 python3 tests/gpu/capture_dump.py "$B/vramtrace" "$d/capture.json" \
  > "$d/capture.txt" 2>&1
# COMPILE_ALLOC / COMPILE_MODES pick some (a short run): allocators "default expandable", the three modes.
for alloc in ${COMPILE_ALLOC:-default expandable}; do
  conf=; [ $alloc = expandable ] && conf=expandable_segments:True
  for m in ${COMPILE_MODES:-default reduce-overhead max-autotune}; do
    PYTORCH_CUDA_ALLOC_CONF=$conf VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB timeout 300 \
      python3 tests/gpu/torch_compile.py $m "$B/vramtrace" "$d/results.jsonl" > "$d/$m-$alloc.txt" 2>&1
  done
done
# The other route: kill -USR1 every 0.5 s through a reduce-overhead run (the audit's old `dump` used it).
VRAMTRACE_DIR=$d/dumps LD_PRELOAD=$LIB timeout 300 python3 tests/gpu/torch_compile.py reduce-overhead "$B/vramtrace" \
  "$d/signal.jsonl" signal > "$d/signal.txt" 2>&1
fi

# The peak of reserved memory and what held it, against torch's max_memory_reserved() (issue 44).
if want peak; then
d=$(scenario peak)
"$B/vramtrace" run --dir "$d/dumps" -- python3 tests/gpu/peak_torch.py > "$d/out.txt" 2> "$d/err.txt"
fi

# The examples, with the README's commands (tests/gpu/examples.sh).
if want examples; then
sh tests/gpu/examples.sh "$R"
fi

# The README's GPU command blocks, as written.
if want readme; then
sh tests/readme_blocks.sh "sh gpu" > "$R/readme.txt" 2>&1
fi

# Issue 13's figures on the real driver: run & / dump $! pairs, SIGTERM exits, silence without CUDA.
if want safety; then
sh tests/gpu/safety.sh "$R"
fi

cat "$R/versions.txt"
python3 tests/gpu/check.py "$R" "$B/vramtrace" > "$R/check.txt" 2>&1
status=$?
tar czf "$OUT/results.tgz" -C "$OUT" results
cat "$R/check.txt"
exit $status
