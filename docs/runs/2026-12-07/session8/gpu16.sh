# GPU call 16 (session 8): the library's metrics file inside torch, its labels against report --prometheus
# (the file is removed at exit, so it is copied while the program runs); then async cost cycles.
rm -rf build && cp -a gbuild build
B=$PWD/build
d=$OUT/met; mkdir -p $d
VRAMTRACE_METRICS=$d/m-%p.prom VRAMTRACE_METRICS_INTERVAL=1 VRAMTRACE_DIR=$d LD_PRELOAD=$B/libvramtrace.so taskset -c 6 python3 probe/metrics_torch.py 10 > $d/out.json 2> $d/err.txt &
pid=$!
while kill -0 $pid 2>/dev/null; do for f in $d/m-*.prom; do [ -f "$f" ] && cp "$f" $d/copy.prom; done; sleep 0.3; done
wait $pid; echo "rc=$? $(cat $d/out.json)"; head -3 $d/err.txt
dp=$(python3 -c "import json; print(json.load(open('$d/out.json'))['dump'])")
$B/vramtrace report --prometheus $dp > $d/rep.prom
grep -h "^vramtrace_site_live_bytes" $d/copy.prom | sed 's/.*site="\([^"]*\)".*/\1/' | sort -u > $d/lib_labels
grep -h "^vramtrace_site_live_bytes" $d/rep.prom | sed 's/.*site="\([^"]*\)".*/\1/' | sort -u > $d/rep_labels
echo "== labels: lib $(wc -l < $d/lib_labels) rep $(wc -l < $d/rep_labels) common $(comm -12 $d/lib_labels $d/rep_labels | wc -l)"
comm -3 $d/lib_labels $d/rep_labels | head -8; cat $d/lib_labels; grep -c . $d/copy.prom
rm -f $d/*.dump
C=${C:-16}
ONE_RUN=0 CONFS="bare bare_b defaults" timeout 300 sh bench/serving_gpu.sh async $C 2>&1 | tail -n 30
cp /tmp/serving_*.txt $OUT/ 2>/dev/null
