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
# Hostile names: one dump with its exe, a module and a frame renamed to hold escapes, controls, '<', '>',
# quotes and bytes that are not UTF-8, as this version writes them (escaped) and as an older dump
# held them (raw, version 5), so that the fuzzer starts from both.
f=$(ls "$D"/vramtrace.*.dump | head -1)
/usr/bin/python3 - "$f" "$B/fuzz-corpus" <<'PY'
import sys
src, out = sys.argv[1], sys.argv[2]
raw = b'/tmp/x\n\x1b[31m<!--<script>"q"\\ \xff\xc2\x9b\xe2\x80\xae'
def esc(b, word=False):
    o = bytearray()
    i = 0
    while i < len(b):
        c = b[i]
        if c < 0x20 or c == 0x7f or c == 0x5c or c >= 0x80 or (word and c == 0x20):
            o += b"\\x%02x" % c
        else:
            o.append(c)
        i += 1
    return bytes(o)
lines = open(src, "rb").read().split(b"\n")
for version, name in ((b"6", esc(raw)), (b"5", raw.replace(b"\n", b"?"))):
    new = []
    for l in lines:
        if l.startswith(b"vramtrace-dump "):
            l = b"vramtrace-dump " + version
        elif l.startswith(b"exe "):
            l = b"exe " + name
        elif l.startswith(b"module 0 "):
            l = b" ".join(l.split(b" ")[:6]) + b" " + name
        elif l.startswith(b"frame ") and not l.endswith(b" -"):
            l = b" ".join(l.split(b" ")[:2]) + b" " + (esc(raw, True) if version == b"6" else b"f\x1b\xff<b>")
        new.append(l)
    open("%s/hostile-v%s.dump" % (out, version.decode()), "wb").write(b"\n".join(new))
PY
rm -rf "$D"
