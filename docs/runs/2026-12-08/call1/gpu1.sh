# GPU call 1 (session 9): the training leak's diff names (torch's segments made by autograd's thread, d8cc875),
# the torch.compile reduce-overhead and cudaMallocAsync serving scenarios, the metrics file's RSS inside torch
# sampled over time (262fe3b), the library's own count of what it costs GPT-2 decode, then cost cycles.
rm -rf build && cp -a gbuild build
B=$PWD/build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, transformers, sys; print(torch.__version__, transformers.__version__, sys.version.split()[0])'
mkdir -p $OUT/gpt2 $OUT/met
for sc in "train leak" "serve compiled" "serve eager backend:cudaMallocAsync"; do
  set -- $sc
  name=$1-$2${3:+-async}
  s=$(date +%s)
  env ${3:+PYTORCH_CUDA_ALLOC_CONF=$3} GPT2_ROUNDS=5 GPT2_BUSY_S=5 timeout 110 python3 tests/gpu/gpt2_leak_drive.py $B/vramtrace $B/libvramtrace.so $OUT/gpt2/$name $1 $2 > $OUT/gpt2/$name.json 2>&1
  echo "== $name rc=$? $(( $(date +%s) - s )) s"; tail -c 900 $OUT/gpt2/$name.json; echo
  a=$(ls -v $OUT/gpt2/$name/dumps/*.dump 2>/dev/null | sed -n 1p); z=$(ls -v $OUT/gpt2/$name/dumps/*.dump 2>/dev/null | sed -n 5p)
  [ -n "$a" ] && [ -n "$z" ] && $B/vramtrace diff "$a" "$z" > $OUT/gpt2/$name.diff.txt 2>&1 && head -45 $OUT/gpt2/$name.diff.txt
  [ -n "$z" ] && grep -h "^counter py_\(missed\|unchecked\|walked\) " "$z" | tr '\n' ' '; echo
  rm -rf $OUT/gpt2/$name/dumps
done
for r in 1 2; do
  for mode in off on; do
    d=$OUT/met/$mode$r; mkdir -p $d
    if [ $mode = on ]; then set -- VRAMTRACE_METRICS=$d/m-%p.prom VRAMTRACE_METRICS_INTERVAL=1; else set -- VRAMTRACE_X=1; fi
    env "$@" VRAMTRACE_DIR=$d LD_PRELOAD=$B/libvramtrace.so taskset -c 6 python3 probe/metrics_torch.py 12 > $d/out.json 2> $d/err.txt &
    pid=$!; : > $d/rss.txt; t0=$(date +%s.%N)
    while kill -0 $pid 2>/dev/null; do
      awk -v t0=$t0 -v t=$(date +%s.%N) '/^VmRSS/{printf "%.1f %d\n", t - t0, $2}' /proc/$pid/status >> $d/rss.txt 2>/dev/null
      grep -q libdw /proc/$pid/maps 2>/dev/null && echo "$(date +%s.%N) dw" >> $d/dw.txt
      sleep 0.5
    done
    wait $pid; echo "== $mode$r $(cat $d/out.json)"; head -2 $d/err.txt
    echo "rss (s kib): $(tail -n 20 $d/rss.txt | tr '\n' ' ')"; echo "libdw mapped in $(cat $d/dw.txt 2>/dev/null | wc -l) samples of $(wc -l < $d/rss.txt)"
    rm -f $d/*.dump
  done
done
SELF_CONFS="defaults nostack:VRAMTRACE_DEPTH=0" timeout 150 sh bench/serving_gpu.sh default 0 2>&1 | tail -n 12
C=${C:-30}
ONE_RUN=0 CONFS="bare bare_b lib lib_b" timeout 200 sh bench/serving_gpu.sh default $C 2>&1 | tail -n 14
cp /tmp/serving_*.txt $OUT/ 2>/dev/null
