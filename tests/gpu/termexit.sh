#!/bin/sh
# GPU suite: exit() from a SIGTERM handler while the main thread allocates through the real driver, in
# several configurations interleaved run by run. exit() is not async-signal-safe: the driver itself can
# deadlock in it when the signal interrupts one of its calls, so the bare runs say how often that happens
# without vramtrace. A process still alive 6 s after the signal is a hang: where each of its threads
# waits is kept (its system call and address, its kernel wait channel), then it is killed.
# A run is mostly the driver's start (seconds): PAR processes run at once, each configuration's runs
# side by side in every batch, so that whatever the batch's crowding does to the timing, all meet it.
#   termexit.sh DIR RUNS CONF...      CONF: bare, lib (the library's defaults), or NAME:VAR=VALUE,...
#                                     (the library with those settings); PAR=8 processes at once
# Prints one line a configuration: "termexit NAME: RUNS runs, H hangs, C exit 0, D exit dumps, S skipped".
set -u
d=$1 runs=$2; shift 2
B=$PWD/build
PAR=${PAR:-8}
mkdir -p "$d"
gcc -O2 -g -std=c11 -D_GNU_SOURCE -Itests/progs -I/usr/local/cuda/include -o "$d/prog_safety" \
  tests/progs/prog_safety.c tests/progs/prog_common.c -lcuda -ldl -lpthread || exit 1
for conf in "$@"; do
  mkdir -p "$d/${conf%%:*}/dumps"
done
per=$((PAR / $#))
[ $per -ge 1 ] || per=1

# One run's watcher: the signal 10 to 90 ms after the program is ready (by its run number, so each
# configuration meets the same moments), then 6 s for it to end, else the hang's record and SIGKILL.
watch() { # PID OUTDIR RUN
  p=$1 o=$2 i=$3
  until grep -q ready "$o/out.$i" 2>/dev/null || ! kill -0 "$p" 2>/dev/null; do sleep 0.01; done
  sleep 0.0$((i % 9 + 1))
  kill -TERM "$p" 2>/dev/null
  w=0
  while kill -0 "$p" 2>/dev/null && [ $w -lt 60 ]; do sleep 0.1; w=$((w + 1)); done
  kill -0 "$p" 2>/dev/null || return 0
  for t in /proc/"$p"/task/*; do
    echo "$(cat "$t/comm") $(cut -d' ' -f1,9 "$t/syscall") $(cat "$t/wchan" 2>/dev/null)"
  done > "$o/hang.$i"
  grep -E 'libc\.so|libcuda|libvramtrace' /proc/"$p"/maps | awk '{print $1, $6}' | sort -u -k2 >> "$o/hang.$i"
  kill -KILL "$p"
}

i=0
while [ $i -lt "$runs" ]; do
  procs=""
  j=$i
  while [ $j -lt "$runs" ] && [ $j -lt $((i + per)) ]; do
    for conf in "$@"; do
      name=${conf%%:*} o=$d/${conf%%:*}
      settings=$(echo "$conf" | sed -n 's/^[^:]*://p' | tr , ' ')
      if [ "$name" = bare ]; then
        "$d/prog_safety" termexit > "$o/out.$j" 2>> "$o/err.$j" &
      else
        env VRAMTRACE_DIR="$o/dumps" LD_PRELOAD="$B/libvramtrace.so" $settings "$d/prog_safety" termexit \
          > "$o/out.$j" 2>> "$o/err.$j" &
      fi
      p=$!
      watch $p "$o" $j &
      procs="$procs $p:$!:$o:$j"
    done
    j=$((j + 1))
  done
  for e in $procs; do
    p=${e%%:*} rest=${e#*:}
    w=${rest%%:*} rest=${rest#*:}
    wait "$p"
    echo $? > "${rest%:*}/status.${rest##*:}"
    wait "$w"
  done
  i=$j
done
for conf in "$@"; do
  name=${conf%%:*} o=$d/${conf%%:*}
  echo "termexit $name: $runs runs, $(ls "$o" | grep -c '^hang\.') hangs, $(cat "$o"/status.* | grep -cx 0) exit 0, $(ls "$o/dumps" | grep -c '\.dump$') exit dumps, $(cat "$o"/err.* | grep -c 'no exit dump') skipped"
done
