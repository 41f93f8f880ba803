#!/bin/sh
# Seeds the fuzzing corpus with real dumps from the rig: routes, VMM, pools, kinds, OOM, exit, the
# torch bridge (fake torch: segments, blocks, Python stacks), native block hooks and Python call sites.
set -eu
B=$1
D=$(mktemp -d)
for m in direct gpa5_ptsz vmm pool kinds frees grow symbols manysites; do
  VRAMTRACE_DIR=$D LD_PRELOAD=$B/libvramtrace.so LD_LIBRARY_PATH=$B/fake "$B/tests/prog_driver" $m >/dev/null
done
VRAMTRACE_FAKE_MEMORY=1M VRAMTRACE_DIR=$D LD_PRELOAD=$B/libvramtrace.so LD_LIBRARY_PATH=$B/fake "$B/tests/prog_driver" oom >/dev/null
S=$(dirname "$0")/..
VRAMTRACE_DIR=$D PYTHONPATH=$S/fake LD_PRELOAD=$B/libvramtrace.so LD_LIBRARY_PATH=$B/fake \
  /usr/bin/python3 "$S/progs/torch_prog.py" leak >/dev/null
VRAMTRACE_DIR=$D LD_PRELOAD=$B/libvramtrace.so LD_LIBRARY_PATH=$B/fake "$B/tests/native_pool" 50 >/dev/null
VRAMTRACE_DIR=$D LD_PRELOAD=$B/libvramtrace.so LD_LIBRARY_PATH=$B/fake \
  /usr/bin/python3 "$S/progs/py_sites.py" "$B/fake/libcudart.so.13" "$B/tests/libpy_helpers.so" grow >/dev/null
for f in "$D"/vramtrace.*.dump; do cp "$f" "$B/fuzz-corpus/$(basename "$f")"; done
rm -rf "$D"
