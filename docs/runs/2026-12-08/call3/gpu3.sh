# GPU call 3 (session 9): the segments' labels with torch's symbols (the training leak's diff), a program that
# records torch's history itself, and the library's own count of its cost under expandable segments and
# cudaMallocAsync (one process each).
rm -rf build && cp -a gbuild build
B=$PWD/build
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/gpt2 $OUT/hist
name=train-leak
GPT2_ROUNDS=5 GPT2_BUSY_S=5 timeout 110 python3 tests/gpu/gpt2_leak_drive.py $B/vramtrace $B/libvramtrace.so $OUT/gpt2/$name train leak > $OUT/gpt2/$name.json 2>&1
echo "== $name rc=$?"; tail -c 500 $OUT/gpt2/$name.json; echo
a=$(ls -v $OUT/gpt2/$name/dumps/*.dump | sed -n 1p); z=$(ls -v $OUT/gpt2/$name/dumps/*.dump | sed -n 5p)
$B/vramtrace diff "$a" "$z" > $OUT/gpt2/$name.diff.txt 2>&1; grep "^verdict" $OUT/gpt2/$name.diff.txt
$B/vramtrace diff --json "$a" "$z" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for s in d["sites"][:6]:
    print(s["class"], s["delta_bytes"], s.get("name"))'
$B/vramtrace report --prometheus "$z" | grep "^vramtrace_site_live_bytes" | sed "s/.*site=\"\([^\"]*\)\".*/\1/" | sort | uniq -c | sort -rn | head -5
rm -rf $OUT/gpt2/$name/dumps
cd $OUT/hist && VRAMTRACE_DIR=$OUT/hist LD_PRELOAD=$B/libvramtrace.so python3 $OLDPWD/probe/own_history.py > out.json 2> err.txt; echo "== own history rc=$? $(cat out.json)"; head -3 err.txt; cd $OLDPWD
for d in $(python3 -c "import json; print(' '.join(json.load(open('$OUT/hist/out.json'))['dumps']))"); do
  $B/vramtrace report --json $d | python3 -c '
import json, sys
r = json.load(sys.stdin)
t = [a for dev in r["devices"] for a in dev.get("allocators", []) if a["name"] == "torch"]
c = [a for a in r["stack_coverage"]["allocators"] if a["allocator"] == "torch"]
print("torch view", t[0]["allocated"], t[0]["reserved"], "coverage", c[0]["with_stack"], "/", c[0]["allocated"], "tracker", (r.get("torch_tracker") or {}).get("state"))'
  $B/vramtrace report $d | grep -i "history\|tracker" | head -3
done
rm -f $OUT/hist/*.dump
SELF_CONFS="defaults nostack:VRAMTRACE_DEPTH=0" timeout 100 sh bench/serving_gpu.sh expandable 0 2>&1 | grep -v history_ | tail -n 4
SELF_CONFS="defaults nostack:VRAMTRACE_DEPTH=0" timeout 100 sh bench/serving_gpu.sh async 0 2>&1 | tail -n 4
