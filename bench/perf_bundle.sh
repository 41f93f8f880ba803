#!/bin/sh
# Copies this machine's perf and the shared objects it needs (all but the C library's own) into
# build/perf/, so that bench/profile_gpu.sh can profile on a GPU machine that has no perf: carry build/.
#   sh bench/perf_bundle.sh
set -eu
P=$(command -v perf) || { echo "perf_bundle: no perf on this machine" >&2; exit 2; }
P=$(readlink -f "$P")
D=build/perf
rm -rf "$D" && mkdir -p "$D/lib"
cp "$P" "$D/perf"
ldd "$P" | awk '$3 ~ /^\// {print $3}' | while read -r so; do
  case $(basename "$so") in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$so" "$D/lib/" ;;
  esac
done
du -sh "$D"
