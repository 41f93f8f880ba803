# GPU call 2 (session 9): the training leak again, its first and fifth quiet dumps kept (the segments'
# labels read on the CPU machine), then cost cycles with expandable segments and cudaMallocAsync, two
# processes with the library and two without, taking turns.
rm -rf build && cp -a gbuild build
B=$PWD/build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/gpt2
name=train-leak
GPT2_ROUNDS=5 GPT2_BUSY_S=5 timeout 110 python3 tests/gpu/gpt2_leak_drive.py $B/vramtrace $B/libvramtrace.so $OUT/gpt2/$name train leak > $OUT/gpt2/$name.json 2>&1
echo "== $name rc=$?"; tail -c 600 $OUT/gpt2/$name.json; echo
a=$(ls -v $OUT/gpt2/$name/dumps/*.dump | sed -n 1p); z=$(ls -v $OUT/gpt2/$name/dumps/*.dump | sed -n 5p)
$B/vramtrace diff --json "$a" "$z" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for s in d["sites"][:8]:
    print(s["class"], s["delta_bytes"], repr(s.get("name")), [f[:60] for f in s["stack"][:6]])'
mkdir -p $OUT/keep && cp "$a" "$z" $OUT/keep/ && gzip -9 $OUT/keep/*.dump && ls -la $OUT/keep
rm -rf $OUT/gpt2/$name/dumps
C=${C:-22}
ONE_RUN=0 CONFS="bare bare_b lib lib_b" timeout 230 sh bench/serving_gpu.sh expandable $C 2>&1 | tail -n 6
ONE_RUN=0 CONFS="bare bare_b lib lib_b" timeout 200 sh bench/serving_gpu.sh async $C 2>&1 | tail -n 6
cp /tmp/serving_*.txt $OUT/ 2>/dev/null
