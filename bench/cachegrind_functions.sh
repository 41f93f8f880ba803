#!/bin/sh
# Where a block's cost goes, function by function: bench/cachegrind_tracker.sh's loop (fake torch's blocks
# through the tracker, DEPTH Python frames, 4 ** 2 call paths) under cachegrind, bare and with the library,
# each with N1 and N2 requests; per function, (N2 run - N1 run) / (N2 - N1) with the library less the same
# without: instructions, L1 code misses, L1 data read misses and write misses a block. Functions of the
# interpreter that move are the library's reads pushing the program's own lines out.
#   cachegrind_functions.sh [ROWS]     (LIB: another build; PY, DEPTH, N1, N2 as cachegrind_tracker.sh)
set -u
B=$PWD/build
command -v valgrind > /dev/null || { echo "cachegrind_functions.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 2; }
. "$(dirname "$0")/python312.sh"
PY=${PY:-$(first_python312)}
PY=${PY:-python3.12} DEPTH=${DEPTH:-20} N1=${N1:-5000} N2=${N2:-15000} LIB=${LIB:-$B/libvramtrace.so} ROWS=${1:-40}
export LD_LIBRARY_PATH=$B/fake VRAMTRACE_AT_EXIT=0 VRAMTRACE_DIR=/tmp BENCH_C10=$B/fake/torch/lib/libc10_cuda.so \
  BENCH_DEPTH=$DEPTH BENCH_DISTINCT=1 VRAMTRACE_PY_WAIT=10000
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
for side in bare lib; do
  pre="LD_PRELOAD=$LIB"
  [ $side = bare ] && pre=VT_BARE=1
  for n in $N1 $N2; do
    valgrind --tool=cachegrind --trace-children=yes --cache-sim=yes --LL=2097152,16,64 --D1=32768,8,64 \
      --I1=32768,8,64 --cachegrind-out-file="$D/cg.$side.$n.%p" env $pre "$PY" bench/py_serving.py \
      "$B/fake/libcudart.so.13" "$n" quiet > /dev/null 2> "$D/err" || { tail -3 "$D/err"; exit 1; }
    cg_annotate --show=Ir,I1mr,D1mr,D1mw "$(ls -S "$D"/cg.$side.$n.* | head -1)" > "$D/$side.$n.txt"
  done
done
python3 - "$D" "$N1" "$N2" "$ROWS" <<'PY'
import re, sys
d, n1, n2, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# Four counts, each with its share in brackets unless it is 0, then the function.
row = re.compile(r'\s*' + r'([\d,]+)(?: \([^)]*\))?\s+' * 4 + r'(\S.*)$')
def load(side, n):
    out = {}
    for line in open("%s/%s.%d.txt" % (d, side, n)):
        m = row.match(line)
        if m:
            out[m.group(5).strip()] = [int(m.group(i).replace(",", "")) for i in range(1, 5)]
    return out
def per_block(side):
    a, b = load(side, n1), load(side, n2)
    return {k: [(b[k][i] - a.get(k, [0] * 4)[i]) / (n2 - n1) for i in range(4)] for k in b}
lib, bare = per_block("lib"), per_block("bare")
diff = []
for k in set(lib) | set(bare):
    l, b = lib.get(k, [0] * 4), bare.get(k, [0] * 4)
    diff.append(([l[i] - b[i] for i in range(4)], k))
diff.sort(key=lambda r: -abs(r[0][0]) - 10 * abs(r[0][1]))
print("a block, with the library less without: instructions, L1 code misses, L1 data read misses, write misses")
for v, k in diff[:rows]:
    print("%8.0f %7.1f %7.1f %7.1f  %s" % (v[0], v[1], v[2], v[3], k[-100:]))
PY
