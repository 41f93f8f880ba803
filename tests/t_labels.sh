#!/bin/sh
# TAP: the leaking line named past an allocation helper (analyze/vt_labels.h). A C server allocates only
# through my_cuda_malloc(); a bounded cache and a leak both call it. Every output that names a site
# names audit_request's line, the leak, not the wrapper both go through: diff's and trend's verdicts, the
# Prometheus labels (the cache keeps its own name apart) and the HTML page. Then the same server with one
# more helper that alone calls the wrapper (the first frames agree; the stacks part at the third), and two
# dumps of PyTorch training on an H100 whose segments, made on autograd's thread, all start in
# empty_generic() and part further out.
. "$(dirname "$0")/tap.sh"
echo "1..12"

# The server under the library (alloc_helper's arguments): its three dumps in d1, d2, d3.
serve() {
  (cd "$W" && rm -f vramtrace.*.dump && VRAMTRACE_DIR=$W LD_PRELOAD=$B/libvramtrace.so "$B/tests/alloc_helper" "$@") > "$W/run" 2>&1
  d1=$(awk '$1 == "dump" && $2 == 1 { print $3 }' "$W/run")
  d2=$(awk '$1 == "dump" && $2 == 2 { print $3 }' "$W/run")
  d3=$(awk '$1 == "dump" && $2 == 3 { print $3 }' "$W/run")
}

serve
cp "$W/run" "$W/out"
[ -f "$d1" ] && [ -f "$d2" ] && [ -f "$d3" ]
check "the server ran under the library and took three dumps"

"$V" diff "$d1" "$d2" > "$W/out" 2>&1
grep -q "^verdict: leak-suspect: .*; most at audit_request (alloc_helper.c:[0-9]*) (+8.0 MiB, +8 blocks)" "$W/out"
check "diff: leak-suspect at audit_request's line, past my_cuda_malloc"

"$V" trend "$d1" "$d2" "$d3" > "$W/out" 2>&1
grep -q "^verdict: leak-suspect: .* at audit_request (alloc_helper.c:[0-9]*)" "$W/out"
check "trend: the same line"

"$V" report --prometheus "$d3" > "$W/out" 2>&1
grep -q 'vramtrace_site_live_bytes{.*site="audit_request (alloc_helper.c:[0-9]*)".*} 25165824$' "$W/out" &&
  grep -q 'vramtrace_site_live_bytes{.*site="cache_fill (alloc_helper.c:[0-9]*)".*} 8388608$' "$W/out"
check "Prometheus: the leak and the cache, each under its own line (24 MiB and 8 MiB)"

! grep -q 'site="my_cuda_malloc' "$W/out"
check "Prometheus: no series named after the wrapper"

# The page's sites carry the command's name for each (the page's script shows it): the wrapper names none.
"$V" html -o "$W/page.html" "$d1" "$d2" "$d3" > "$W/out" 2>&1 &&
  grep -q '"name":"audit_request (alloc_helper.c:[0-9]*)"' "$W/page.html" && ! grep -q '"name":"my_cuda_malloc' "$W/page.html"
check "HTML: the leak named by its line, the wrapper naming no site"

# A helper named by hand: with the wrapper and both its callers named, each site is named by the line of
# serve() that called them.
VRAMTRACE_ALLOC_FNS="my_cuda_malloc, cache_fill,audit_request" "$V" report --prometheus "$d3" > "$W/out" 2>&1
grep -q 'site="serve (alloc_helper.c:[0-9]*)".*} 25165824$' "$W/out" && ! grep -q 'site="audit_request' "$W/out"
check "VRAMTRACE_ALLOC_FNS: named helpers are passed, to the line that called them"

VRAMTRACE_ALLOC_FNS="$(printf 'a\tb')" "$V" report "$d3" > "$W/got" 2> "$W/out"
[ $? = 0 ] && grep -q "^vramtrace: VRAMTRACE_ALLOC_FNS holds a control character; ignored$" "$W/out" &&
  grep -q "audit_request (alloc_helper.c:" "$W/got"
check "VRAMTRACE_ALLOC_FNS with a control character: said, ignored, the report as without it"

# chain: audit_request and cache_fill both reach the wrapper through new_buffer(). The line that parts them
# is named in every dump of a diff, though each site is there twice (once in each dump, frames alike).
serve chain
"$V" diff "$d1" "$d2" > "$W/out" 2>&1
grep -q "^verdict: leak-suspect: .*; most at my_cuda_malloc (alloc_helper.c:[0-9]*) via audit_request (alloc_helper.c:[0-9]*) (+8.0 MiB, +8 blocks)" "$W/out"
check "chain: diff's verdict names audit_request's line, where the stacks part"

"$V" trend "$d1" "$d2" "$d3" > "$W/out" 2>&1
grep -q "^verdict: leak-suspect: .* at my_cuda_malloc (alloc_helper.c:[0-9]*) via audit_request (alloc_helper.c:[0-9]*)" "$W/out"
check "chain: trend's verdict the same"

"$V" report --prometheus "$d3" > "$W/out" 2>&1
grep -q 'site="my_cuda_malloc (alloc_helper.c:[0-9]*) via audit_request (alloc_helper.c:[0-9]*)".*} 25165824$' "$W/out" &&
  grep -q 'site="my_cuda_malloc (alloc_helper.c:[0-9]*) via cache_fill (alloc_helper.c:[0-9]*)".*} 8388608$' "$W/out"
check "chain: Prometheus keeps the leak and the cache apart"

# The H100's training leak (docs/runs/2026-12-08): its three largest segment sites start with the same four
# frames of torch's (no symbols here: the names the dumps recorded, with offsets) and part at an address
# with no name; each is named past it, by the first frame further out that has one.
gzip -dc "$D/h100-train-leak.1.dump.gz" > "$W/t1.dump" && gzip -dc "$D/h100-train-leak.5.dump.gz" > "$W/t5.dump"
"$V" diff --json "$W/t1.dump" "$W/t5.dump" > "$W/out" 2>&1
python3 - "$W/out" > "$W/names" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
segs = [s["name"] for s in d["sites"] if s["class"] == "segment" and s["stack"][0].startswith("at::detail::empty_generic")]
print(d["verdict"], d["sites"][0]["name"], len(segs), len(set(segs)))
for n in segs[:3]:
    print(n)
PY
head -1 "$W/names" | grep -q "^leak-suspect <module> (gpt2_leak.py:101) \([0-9]*\) \1$" &&
  grep -q " via at::meta::structured__log_softmax_backward_data::meta(" "$W/names" &&
  grep -q " via at::TensorIteratorBase::fast_set_up(" "$W/names"
check "torch's segments from one allocation path, parting further out: each its own name"
