# GPU call 14 (session 7): cost cycles, GPT-2 decode batch 1, bare / bare_b / defaults, default allocator then
# expandable segments, processes taking turns (bench/serving_gpu.sh).
rm -rf build && cp -a gbuild build
nvidia-smi --query-gpu=name --format=csv,noheader
C=${C:-28}
ONE_RUN=0 CONFS="bare bare_b defaults" timeout 290 sh bench/serving_gpu.sh default $C 2>&1 | tail -n 40
ONE_RUN=0 CONFS="bare bare_b defaults" timeout 280 sh bench/serving_gpu.sh expandable $C 2>&1 | tail -n 40
cp /tmp/serving_*.txt $OUT/ 2>/dev/null; ls $OUT
