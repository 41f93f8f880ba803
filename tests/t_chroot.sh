#!/bin/sh
# TAP: build/ is self-contained. In a chroot that holds only the C and C++ runtimes (Debian's libc6,
# libgcc-s1 and libstdc++6: no libunwind, libdw, libelf, liblzma, zlib or libbz2), the command reports a
# dump (with a pprof profile, which needs zlib), runs the fake-driver demo program under the library (which
# needs libunwind and liblzma), and reads the new dump with its frames symbolized (libdw, libelf).
# Then the same with the RUNPATH taken off the carried copies: the command no longer starts, which is what
# shows that RUNPATH is what finds them. Needs root (chroot, and /proc bound in for the library's maps).
. "$(dirname "$0")/tap.sh"
echo "1..5"

R=$W/root
mkdir -p "$R/b/tests" "$R/b/fake" "$R/d" "$R/out" "$R/proc"
# The runtimes' shared objects where their packages put them, and the program interpreter.
{ dpkg -L libc6 libgcc-s1 libstdc++6 | grep -E '\.so(\.[0-9]+)*$'; echo /lib64/ld-linux-x86-64.so.2; } |
  while read -r f; do
    [ -f "$f" ] && mkdir -p "$R$(dirname "$f")" && cp -L "$f" "$R$f"
  done
for f in vramtrace libvramtrace.so libunwind.so.8 liblzma.so.5 libdw.so.1 libelf.so.1 libz.so.1 libbz2.so.1.0; do
  cp "$B/$f" "$R/b/"
done
cp -a "$B/fake/." "$R/b/fake/"
cp "$B/tests/cuda_leak" "$R/b/tests/"
cp "$D/grow.3.dump" "$R/d/"

mounted=0
if [ "$(id -u)" = 0 ] && mount --bind /proc "$R/proc" 2>"$W/out"; then
  mounted=1
  trap 'umount "$R/proc" 2>/dev/null; rm -rf "$W"' EXIT
fi
in_root() { chroot "$R" "$@"; }

# Nothing of what build/ carries is in the root outside /b.
extra=$(find "$R" -path "$R/b" -prune -o -path "$R/proc" -prune -o \
  \( -name 'libunwind*' -o -name 'libdw*' -o -name 'libelf*' -o -name 'liblzma*' -o -name 'libz.so*' -o -name 'libbz2*' \) -print)
echo "mounted $mounted; outside /b: $extra" > "$W/out"
[ $mounted = 1 ] && [ -z "$extra" ] && [ -e "$R/b/vramtrace" ]
check "a root with only the C and C++ runtimes and /proc (root needed: chroot and mount)"

in_root /b/vramtrace report /d/grow.3.dump > "$W/out" 2>&1 && grep -q '^top call sites' "$W/out" &&
  in_root /b/vramtrace report --pprof /out/p.pb.gz /d/grow.3.dump >> "$W/out" 2>&1 && [ -s "$R/out/p.pb.gz" ] &&
  in_root /b/vramtrace --version >> "$W/out" 2>&1
check "the command runs there: a report and a gzipped pprof profile (libdw, libelf, zlib carried)"

# The fake runtime finds the fake driver by LD_LIBRARY_PATH, as in the demo.
LD_LIBRARY_PATH=/b/fake in_root /b/vramtrace run --dir /out -- /b/tests/cuda_leak 20 > "$W/out" 2>&1 &&
  grep -q '^served 20 requests' "$W/out" && grep -q '^vramtrace: 1 dump in /out' "$W/out"
check "run starts the demo program there with the library (libunwind, liblzma carried)"

dump=$(cd "$R/out" && ls vramtrace.*.dump 2>/dev/null | head -1)
in_root /b/vramtrace report "/out/$dump" > "$W/out" 2>&1 && grep -q 'remember_request_for_debugging (cuda_leak.cu:19)' "$W/out"
check "its dump is read there with file and line (libdw symbolizes)"

for f in libunwind.so.8 libdw.so.1 libelf.so.1; do patchelf --remove-rpath "$R/b/$f"; done
in_root /b/vramtrace report /d/grow.3.dump > "$W/out" 2>&1
st=$?
[ $st != 0 ] && grep -q 'error while loading shared libraries: lib' "$W/out"
check "without RUNPATH on the carried copies the command cannot start there (exit $st)"
