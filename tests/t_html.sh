#!/bin/sh
# TAP: `vramtrace html` writes one self-contained page (nothing loaded from elsewhere) that headless
# Chromium (Debian's chromium; make test installs it) loads and draws without a script error: per
# process the verdict `vramtrace diff` or `trend` gives, the timeline, the device bars, the flame graph
# and the top sites, named as the reports name them; a frame name cannot end the page's script.
. "$(dirname "$0")/tap.sh"
# render PAGE: the page's DOM once its script ran (PAGE.dom), and Chromium's log (PAGE.log)
render() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 --dump-dom "file://$1" \
    > "$1.dom" 2> "$1.log"
}
echo "1..14"

command -v chromium > /dev/null
check "chromium is installed"

# Two processes: the H200's PyTorch process (two dumps) and the fake driver's leaking program (three).
"$V" html -o "$W/r.html" "$D/grow.3.dump" "$D/h200-torch-race.2.dump" "$D/grow.1.dump" "$D/h200-torch-race.1.dump" \
  "$D/grow.2.dump" > "$W/out" 2>&1 && [ -s "$W/r.html" ] && [ ! -s "$W/out" ]
check "html -o writes the page, silently"

! grep -Eiq '<(script|img|link|iframe)[^>]* (src|href)=|@import|url\(' "$W/r.html" > "$W/out" 2>&1
check "self-contained: no script, style sheet, image or font loaded from elsewhere"

render "$W/r.html"; grep CONSOLE "$W/r.html.log" > "$W/out"
grep -q 'data-rendered="ok"' "$W/r.html.dom" && ! grep -q 'Uncaught' "$W/r.html.log" &&
  grep -q '<div id="vt-errors"></div>' "$W/r.html.dom"
check "headless Chromium draws it with no script error"

diffv=$("$V" diff "$D/h200-torch-race.1.dump" "$D/h200-torch-race.2.dump" | sed -n 's/^verdict: \([a-z-]*\):.*/\1/p')
trendv=$("$V" trend "$D/grow.1.dump" "$D/grow.2.dump" "$D/grow.3.dump" | sed -n 's/^verdict: \([a-z-]*\).*/\1/p')
echo "diff says '$diffv', trend says '$trendv'" > "$W/out"; grep -o 'verdict: [^<]*' "$W/r.html.dom" >> "$W/out"
[ "$diffv" = cache-growth ] && [ "$trendv" = leak-suspect ] &&
  grep -q ">verdict: $diffv<" "$W/r.html.dom" && grep -q ">verdict: $trendv, most at grow_leak_site+0x16<" "$W/r.html.dom"
check "each process's verdict is the one diff (two dumps) and trend (three) give, with the leak's site"

grep -o '>[^<]*<' "$W/r.html.dom" > "$W/text"; cp "$W/text" "$W/out"
grep -q '>process 1711 /nonexistent/python3.12<' "$W/text" && grep -q '>process 31040 /nonexistent/prog_driver<' "$W/text" &&
  grep -q '>handle (torch_cache.py:18) 32.0 MiB<' "$W/text" && grep -q '>grow_leak_site+0x16 3.0 MiB<' "$W/text"
check "both processes side by side; the flame graph names the known sites with their live bytes"

grep -q '>device 0: nvidia-smi 958.0 MiB, reserved 344.0 MiB, allocated 97.0 MiB, cached 247.0 MiB<' "$W/text" &&
  grep -q '>releasable 118.0 MiB<' "$W/text" && grep -q '>fragmented 364.0 KiB<' "$W/text" &&
  grep -q '<polyline' "$W/r.html.dom"
check "the device bar has the report's figures (releasable, fragmented), and the timeline is drawn"

# A peak (tests/progs/prog_driver.c's peak mode: 8 MiB, then 11 MiB) and an exit dump, whose nvidia-smi
# figure is unknown: a dashed peak line with its moment; nvidia-smi's line stops where it is unknown.
mkdir "$W/pk"
VRAMTRACE_DIR="$W/pk" LD_LIBRARY_PATH="$B/fake" LD_PRELOAD="$B/libvramtrace.so" "$B/tests/prog_driver" peak > "$W/out" 2>&1 &&
  "$V" html -o "$W/pk.html" "$W/pk"/vramtrace.*.dump >> "$W/out" 2>&1 && render "$W/pk.html" &&
  grep -q 'data-rendered="ok"' "$W/pk.html.dom" && grep -q '<line class="peak"' "$W/pk.html.dom" &&
  grep -q '<circle class="peak-at"' "$W/pk.html.dom" && grep -q '>peak 11.0 MiB at [0-9.]* s<' "$W/pk.html.dom"
check "the timeline draws the peak of reserved memory, dashed, with its moment"

grep -o '>[^<]*<' "$W/pk.html.dom" > "$W/out"
grep -q '>device 0 at its peak: 11.0 MiB reserved, [0-9.]* s after start<' "$W/out" &&
  grep -q '<table class="peak-sites">' "$W/pk.html.dom" && grep -q '>peak_kept_site (prog_driver.c:[0-9]*)<' "$W/out"
check "the page lists the lines that held each device's peak"

ls "$W/pk"/vramtrace.*.dump > "$W/out"; grep -c 'class="point-used"' "$W/pk.html.dom" >> "$W/out"
[ "$(ls "$W/pk"/vramtrace.*.dump | wc -l)" = 3 ] && [ "$(grep -o 'class="point-used"' "$W/pk.html.dom" | wc -l)" = 2 ] &&
  [ "$(grep -o 'class="point-reserved"' "$W/pk.html.dom" | wc -l)" = 3 ]
check "an unknown figure (nvidia-smi's at exit) is left out, not drawn as 0"

# The legend: each name in its colour (an inline style, which the page's text colour does not override),
# above every line of the plot.
grep -o '<text class="legend"[^>]*>' "$W/pk.html.dom" > "$W/out"
grep -o 'points="[^"]*"' "$W/pk.html.dom" | tr -d 'points="' | tr ' ' '\n' | cut -d, -f2 >> "$W/out"
[ "$(grep -c 'style="fill: rgb(' "$W/out")" -ge 3 ] &&
  awk -F, '/^[0-9.]+$/ { if ($1 + 0 < 34) bad = 1 } END { exit bad }' "$W/out" &&
  ! grep -q '<text class="legend"[^>]* y="[4-9][0-9]' "$W/out"
check "the legend keeps its colours and stays above the plotted lines"

# And as Chromium paints it: a screenshot holds the timeline's colours (reserved's blue, the lines and the
# legend's; nvidia-smi's grey; allocated's red), so the page is drawn, not only built.
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,900 \
  --screenshot="$W/pk.png" "file://$W/pk.html" > /dev/null 2>&1
python3 "$T/png_colours.py" "$W/pk.png" 337ab7 9aa5b1 d9534f > "$W/out" 2>&1 &&
  awk '{ n[$1] = $2 } END { exit !(n["337ab7"] >= 50 && n["9aa5b1"] >= 100 && n["d9534f"] >= 1000) }' "$W/out"
check "a screenshot in headless Chromium shows the timeline's colours"

# A frame named to end the script and run another: shown as text, never run.
sed 's/grow_leak_site/grow<\/script><script>document.title="taken"<\/script>/' "$D/grow.1.dump" > "$W/inj.dump"
"$V" html -o "$W/inj.html" "$W/inj.dump" > "$W/out" 2>&1 && render "$W/inj.html" &&
  grep -q 'data-rendered="ok"' "$W/inj.html.dom" && grep -q '<title>vramtrace report</title>' "$W/inj.html.dom" &&
  grep -q 'grow&lt;/script&gt;' "$W/inj.html.dom"
check "a frame name with </script> in it stays text"

"$V" html "$D/grow.1.dump" > "$W/out" 2>&1
st1=$?
printf 'not a dump\n' > "$W/bad.dump"
"$V" html -o "$W/x.html" "$W/bad.dump" >> "$W/out" 2>&1
st2=$?
[ $st1 = 2 ] && grep -q 'no -o FILE given' "$W/out" && [ $st2 = 2 ] && grep -q "$W/bad.dump:1:" "$W/out" && [ ! -e "$W/x.html" ]
check "no -o: usage error; a bad dump: exit 2 naming the file and line, no page"
