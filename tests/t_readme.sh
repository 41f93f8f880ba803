#!/bin/sh
# TAP: every CPU command block of the README and the user's guide runs as written (tests/readme_blocks.sh), a user's own out/
# (where the README keeps dumps) is left byte for byte as it was, and the README's settings table names
# every setting of common/vt_settings.c with its default (in docs/guide.md, where the README points).
D=$(dirname "$0")
R=$(cd "$D/.." && pwd)
T=$(mktemp -d)
# What out/ holds before: every file's path, mode and bytes (or that there is none).
outstate() { if [ -e "$R/out" ] || [ -L "$R/out" ]; then (cd "$R" && find out -exec ls -ld --time-style=+ {} + | awk '{$2=""; print}' && find out -type f -exec cksum {} +) | sort; else echo none; fi; }
outstate > "$T/before"
sh "$D/readme_blocks.sh" sh > "$T/blocks" 2>&1
n=$(sed -n 's/^1\.\.//p' "$T/blocks")
echo "1..$((n + 2))"
grep -v '^1\.\.' "$T/blocks"
outstate > "$T/after"
if cmp -s "$T/before" "$T/after"; then
  echo "ok $((n + 1)) - the repository's own out/ is as it was ($(head -c 60 "$T/before" | tr '\n' ' '))"
else
  echo "not ok $((n + 1)) - the repository's own out/ changed"; diff "$T/before" "$T/after" | head -20 | sed 's/^/# /'
fi
rm -rf "$T"
missing=$(sed -n 's/^    {"\(VRAMTRACE_[A-Z_]*\)", [^,]*, [A-Z_]*, [^"]*"\([^"]*\)".*/\1 \2/p' "$D/../common/vt_settings.c" |
  while read -r name dflt; do
    # The directory's default is a sentence; the others are values, shown in backquotes.
    case $name in VRAMTRACE_DIR) want="| \`$name\` |" ;; *) want="| \`$name\` | \`$dflt\`" ;; esac
    grep -qF "$want" "$D/../docs/guide.md" || printf ' %s' "$name"
  done)
if [ -z "$missing" ]; then
  echo "ok $((n + 2)) - the guide's settings table (docs/guide.md) has every setting with its default"
else
  echo "not ok $((n + 2)) - the guide's settings table (docs/guide.md) lacks or misstates:$missing"
fi
