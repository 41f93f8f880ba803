#!/bin/sh
# TAP: every CPU command block of the README runs as written (tests/readme_blocks.sh), and the README's
# settings table names every setting of common/vt_settings.c with its default.
D=$(dirname "$0")
sh "$D/readme_blocks.sh" sh > /tmp/vramtrace-readme.$$ 2>&1
n=$(sed -n 's/^1\.\.//p' /tmp/vramtrace-readme.$$)
echo "1..$((n + 1))"
grep -v '^1\.\.' /tmp/vramtrace-readme.$$
rm -f /tmp/vramtrace-readme.$$
missing=$(sed -n 's/^    {"\(VRAMTRACE_[A-Z_]*\)", [^,]*, [A-Z_]*, [^"]*"\([^"]*\)".*/\1 \2/p' "$D/../common/vt_settings.c" |
  while read -r name dflt; do
    # The directory's default is a sentence; the others are values, shown in backquotes.
    case $name in VRAMTRACE_DIR) want="| \`$name\` |" ;; *) want="| \`$name\` | \`$dflt\`" ;; esac
    grep -qF "$want" "$D/../README.md" || printf ' %s' "$name"
  done)
if [ -z "$missing" ]; then
  echo "ok $((n + 1)) - the README's settings table has every setting with its default"
else
  echo "not ok $((n + 1)) - the README's settings table lacks or misstates:$missing"
fi
