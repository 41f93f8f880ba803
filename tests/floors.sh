#!/bin/sh
# The library's floors, checked: every file under lib/ includes only headers of its own floor, of the
# floors below it, of common/, include/ and analyze/ (the reader wing both halves stand on) -- never a
# floor above it and never tools/; and analyze/ and common/ include nothing of lib/ or tools/. Includes are by bare name (every folder is on the include path), so a
# header is placed by where its name lives. The floors come as arguments, ground first (the Makefile's
# LIB_DIRS); exits 1 naming each include that runs up, so the build stops there.
#   floors.sh [-C ROOT] lib/core lib/table ...
set -u
root=.
[ "${1:-}" = -C ] && { root=$2; shift 2; }
cd "$root" || exit 2
[ $# -gt 0 ] || { echo "floors.sh: no floors given" >&2; exit 2; }
# Every header's home: "name floor-number" (common/, include/, analyze/: -1, below every floor; tools/: 99).
homes=$(
  n=0
  for d in "$@"; do
    for h in "$d"/*.h; do [ -e "$h" ] && echo "${h##*/} $n"; done
    n=$((n + 1))
  done
  for d in common include analyze; do
    for h in "$d"/*.h; do [ -e "$h" ] && echo "${h##*/} -1"; done
  done
  for h in tools/*.h; do [ -e "$h" ] && echo "${h##*/} 99"; done
)
bad=0
n=0
for d in "$@"; do
  for f in "$d"/*.c "$d"/*.cpp "$d"/*.h; do
    [ -e "$f" ] || continue
    for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
      at=$(echo "$homes" | awk -v h="${h##*/}" '$1 == h { print $2; exit }')
      [ -n "$at" ] || continue # generated (build/lib) or a system header
      if [ "$at" -eq 99 ]; then
        echo "floors: $f includes $h, a file of tools/ (the command): the library stands on analyze/ and common/ only"
        bad=1
      elif [ "$at" -gt $n ]; then
        up=$(echo "$@" | cut -d' ' -f$((at + 1)))
        echo "floors: $f ($d) includes $h of $up, a floor above it: ask for it through the post box (lib/core/vt_post.h) or move the code down"
        bad=1
      fi
    done
  done
  n=$((n + 1))
done
# The wing and the shared words stand on nothing of either half (common/ not even on analyze/).
for d in analyze common; do
  for f in "$d"/*.c "$d"/*.cpp "$d"/*.h; do
    [ -e "$f" ] || continue
    for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
      at=$(echo "$homes" | awk -v h="${h##*/}" '$1 == h { print $2; exit }')
      [ -e "$d/${h##*/}" ] && continue
      up=0
      [ -n "$at" ] && [ "$at" -ge 0 ] && up=1             # a floor of lib/, or tools/
      [ $d = common ] && [ -e "analyze/${h##*/}" ] && up=1
      if [ $up = 1 ]; then
        echo "floors: $f includes $h, which is not of common/ or include/: $d/ stands on those only"
        bad=1
      fi
    done
  done
done
exit $bad
