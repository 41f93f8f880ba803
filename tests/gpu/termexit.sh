#!/bin/sh
# GPU suite: exit() from a SIGTERM handler while the main thread allocates through the real driver, in
# several configurations interleaved run by run. exit() is not async-signal-safe: the driver itself can
# deadlock in it when the signal interrupts one of its calls, so the bare runs say how often that happens
# without vramtrace. A process still alive 6 s after the signal is a hang: where each of its threads
# waits is kept (the system call and its address, and, for the first HANG_STACKS hangs of a
# configuration, every thread's stack by cuda-gdb where the machine has it), then it is killed.
#   termexit.sh DIR RUNS CONF...      CONF: bare, lib (the library's defaults), or NAME:VAR=VALUE,...
#                                     (the library with those settings)
# Prints one line a configuration: "termexit NAME: RUNS runs, H hangs, C exit 0, D exit dumps, S skipped".
set -u
d=$1 runs=$2; shift 2
B=$PWD/build
HANG_STACKS=${HANG_STACKS:-0}
mkdir -p "$d"
gcc -O2 -g -std=c11 -D_GNU_SOURCE -Itests/progs -I/usr/local/cuda/include -o "$d/prog_safety" \
  tests/progs/prog_safety.c tests/progs/prog_common.c -lcuda -ldl -lpthread || exit 1
names=""
for conf in "$@"; do
  name=${conf%%:*}
  names="$names $name"
  mkdir -p "$d/$name/dumps"
  eval "hangs_$name=0 clean_$name=0"
done
i=0
while [ $i -lt "$runs" ]; do
  for conf in "$@"; do
    name=${conf%%:*} o=$d/${conf%%:*}
    settings=$(echo "$conf" | sed -n 's/^[^:]*://p' | tr , ' ')
    if [ "$name" = bare ]; then
      "$d/prog_safety" termexit > "$o/out.$i" 2>> "$o/err.txt" &
    else
      env VRAMTRACE_DIR="$o/dumps" LD_PRELOAD="$B/libvramtrace.so" $settings "$d/prog_safety" termexit \
        > "$o/out.$i" 2>> "$o/err.txt" &
    fi
    p=$!
    until grep -q ready "$o/out.$i" 2>/dev/null; do sleep 0.01; done
    # The signal 10 to 90 ms into the loop, in turn, so each configuration meets the same moments.
    sleep 0.0$((i % 9 + 1))
    kill -TERM $p
    w=0
    while kill -0 $p 2>/dev/null && [ $w -lt 60 ]; do sleep 0.1; w=$((w + 1)); done
    if kill -0 $p 2>/dev/null; then
      eval "hangs_$name=\$((hangs_$name + 1)); h=\$hangs_$name"
      { for t in /proc/$p/task/*; do echo "$(cat $t/comm) $(cut -d' ' -f1,9 $t/syscall)"; done
        grep -E 'libc\.so|libcuda|libvramtrace' /proc/$p/maps | awk '{print $1, $6}' | sort -u -k2; } > "$o/hang.$i"
      if [ "$h" -le "$HANG_STACKS" ] && command -v cuda-gdb > /dev/null; then
        timeout 120 cuda-gdb -q -batch -nx -p $p -ex 'set pagination off' -ex 'info threads' -ex 'thread apply all bt' > "$o/stacks.$i" 2>&1
      fi
      kill -KILL $p
    fi
    wait $p && eval "clean_$name=\$((clean_$name + 1))"
  done
  i=$((i + 1))
done
for name in $names; do
  eval "h=\$hangs_$name c=\$clean_$name"
  echo "termexit $name: $runs runs, $h hangs, $c exit 0, $(ls "$d/$name/dumps" | grep -c '\.dump$') exit dumps, $(grep -c 'no exit dump' "$d/$name/err.txt") skipped"
done
