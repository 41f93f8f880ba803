#!/bin/sh
# Where the library's cache misses are, simulated: cachegrind (32 KiB L1s, a 2 MiB last level, as an H200
# host's L2) on the serving-shaped loop (bench/py_serving.py, fake runtime) with 2.5 MB of random lines
# touched before each request, as a real program's work evicts the library's code and data between two
# allocations. For each build of the library given, the instructions and the last level's code and data
# misses of the library's own functions, per alloc+free pair, in all and by source folder (lib/stacks,
# lib/table, ...). The figures are deterministic for a build, so builds compare without rounds; what they
# miss is what real caches add (prefetching, a larger L3): docs/performance.md pairs them with the H200.
# "called": the C library's and the interpreter's functions a hook calls (see below).
#   cachegrind.sh LIB...        (ASYNC=0: plain cudaMalloc/cudaFree instead of stream-ordered pairs;
#                                PY: the interpreter, CPython 3.12 by default; REQUESTS=5000)
set -u
B=$PWD/build
command -v valgrind > /dev/null && command -v cg_annotate > /dev/null ||
  { echo "cachegrind.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 2; }
PY=${PY:-python3.12} REQUESTS=${REQUESTS:-5000}
# VRAMTRACE_PY_WAIT: under valgrind the Python helper that checks the walk once (on a thread that released
# the GIL) can miss the default 10 ms, and then the walk is never trusted and no Python frames are read.
export LD_LIBRARY_PATH=$B/fake VRAMTRACE_AT_EXIT=0 BENCH_EVICT=40000 BENCH_EVICT_LIB=$B/bench_evict.so \
  BENCH_DISTINCT=1 BENCH_LEVELS=4 BENCH_ASYNC=${ASYNC:-1} VRAMTRACE_PY_WAIT=10000
cc -O2 -shared -fPIC -o "$B/bench_evict.so" bench/evict.c
D=$(mktemp -d)
# The warm-up's 2,000 requests are counted too (cachegrind sees the whole run): pairs = REQUESTS + 2000.
pairs=$((REQUESTS + 2000))
echo "cachegrind, serving-shaped loop, 2.5 MB evicted a request, $pairs pairs; the library's functions per pair:"
for lib in "$@"; do
  rm -f "$D"/cg.*
  # Through env, which execs the interpreter: traced across the exec, the interpreter's counts the largest.
  valgrind --tool=cachegrind --trace-children=yes --cache-sim=yes --LL=2097152,16,64 --D1=32768,8,64 \
    --I1=32768,8,64 --cachegrind-out-file="$D/cg.%p" env LD_PRELOAD="$lib" "$PY" bench/py_serving.py \
    "$B/fake/libcudart.so.13" "$REQUESTS" quiet > /dev/null 2> "$D/err.txt" ||
    { echo "$lib: the run failed"; tail -3 "$D/err.txt"; continue; }
  cg_annotate --show=Ir,ILmr,DLmr --threshold=0 "$(ls -S "$D"/cg.* | head -1)" 2> /dev/null | python3 -c '
import re, sys, collections
pairs, lib = int(sys.argv[1]), sys.argv[2]
by = collections.defaultdict(lambda: [0, 0, 0])
for line in sys.stdin:
    # Our sources by folder, libunwind (unwinding is part of the cost too), and the functions of the C
    # library and the interpreter that a hook calls on every allocation (the thread state, once, a key
    # compare): their code lines are fetched for us. The program makes some of those calls itself: a bare
    # run of this loop has them at ~1.7 code and ~0.9 data lines a pair.
    m = re.search(r"\s(/\S*?/(lib/[a-z]+|common)/[^:/]+\.[ch]):", line)
    u = None if m else re.search(r"\s(\?\?\?:(?:_UL|_Ux86|unw_)\S*)", line)
    c = None if m or u else re.search(r"\s(\S*:(?:PyGILState_GetThisThreadState|_PyThreadState_UncheckedGet|"
                                      r"PyThreadState_GetUnchecked|Py_IsInitialized|_Py_IsFinalizing|"
                                      r"PyThreadState_GetInterpreter|PyInterpreterState_Main|PyThread_tss_get|"
                                      r"pthread_getspecific|pthread_once|__memcmp\w*))\b", line)
    if not m and not u and not c:
        continue
    where, group = (m.group(1), m.group(2)) if m else (u.group(1), "libunwind") if u else (c.group(1), "called")
    vals = [int(x.replace(",", "")) for x in re.findall(r"(\d[\d,]*)\s+(?:\([^)]*\))?", line.split(where)[0])[:3]]
    if len(vals) == 3:
        for i in range(3):
            by[group][i] += vals[i]
tot = [sum(v[i] for v in by.values()) / pairs for i in range(3)]
print("%s: instructions %.0f, code lines missed %.1f, data lines missed %.1f" % (lib, *tot))
for k, v in sorted(by.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
    print("    %-12s instructions %6.0f  code %5.1f  data %5.1f" % (k, v[0] / pairs, v[1] / pairs, v[2] / pairs))' \
    "$pairs" "$lib"
done
rm -rf "$D"
