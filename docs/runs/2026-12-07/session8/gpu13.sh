# GPU call 13 (session 6): GPT-2 accuracy with the careful walk (py_unchecked/py_missed), the metrics
# file's symbolizer inside torch (labels, RSS, CPU), then cost rounds.
rm -rf build && cp -a gbuild build
B=$PWD/build
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -c 'import torch; print(torch.__version__)'
mkdir -p $OUT/gpt2 $OUT/met
for sc in "serve eager" "train leak" "train ok" "serve eager expandable_segments:True"; do
  set -- $sc
  name=$1-$2${3:+-expandable}
  s=$(date +%s)
  env ${3:+PYTORCH_CUDA_ALLOC_CONF=$3} GPT2_ROUNDS=5 GPT2_BUSY_S=5 timeout 80 python3 tests/gpu/gpt2_leak_drive.py $B/vramtrace $B/libvramtrace.so $OUT/gpt2/$name $1 $2 > $OUT/gpt2/$name.json 2>&1
  echo "== $name rc=$? $(( $(date +%s) - s )) s"; tail -c 600 $OUT/gpt2/$name.json; echo
  for d in $(ls $OUT/gpt2/$name/dumps/*.dump 2>/dev/null | head -1) $(ls $OUT/gpt2/$name/dumps/*.dump 2>/dev/null | tail -1); do
    grep -h "^counter py_\(missed\|unchecked\|walked\|released\|held\) " $d | tr '\n' ' '; echo
  done
done
rm -rf $OUT/gpt2/*/dumps
# metrics file: with and without, three times each, interleaved
for r in 1 2; do
  for mode in off on; do
    d=$OUT/met/$mode$r; mkdir -p $d
    if [ $mode = on ]; then set -- VRAMTRACE_METRICS=$d/m-%p.prom VRAMTRACE_METRICS_INTERVAL=1; else set -- VRAMTRACE_X=1; fi
    env "$@" VRAMTRACE_DIR=$d LD_PRELOAD=$B/libvramtrace.so taskset -c 6 python3 probe/metrics_torch.py 12 > $d/out.json 2> $d/err.txt
    echo "== $mode$r rc=$? $(cat $d/out.json)"; head -3 $d/err.txt
    dp=$(python3 -c "import json; print(json.load(open('$d/out.json'))['dump'])" 2>/dev/null)
    [ -f "$dp" ] && $B/vramtrace report $dp | grep "vramtrace  " ; [ -f "$dp" ] && $B/vramtrace report --prometheus $dp > $d/rep.prom
  done
done
for r in 1 2; do
  d=$OUT/met/on$r
  grep -h "^vramtrace_site_live_bytes" $d/m-*.prom 2>/dev/null | sed 's/.*site="\([^"]*\)".*/\1/' | sort -u > $d/lib_labels
  grep -h "^vramtrace_site_live_bytes" $d/rep.prom | sed 's/.*site="\([^"]*\)".*/\1/' | sort -u > $d/rep_labels
  echo "== labels on$r: lib $(wc -l < $d/lib_labels) rep $(wc -l < $d/rep_labels) common $(comm -12 $d/lib_labels $d/rep_labels | wc -l)"
  comm -3 $d/lib_labels $d/rep_labels | head -8
done
head -30 $OUT/met/on1/lib_labels
