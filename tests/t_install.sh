#!/bin/sh
# TAP: make install PREFIX=... (and DESTDIR) puts the command, the library with what it carries, the header
# and pkg-config's file in place; the installed command, run from elsewhere, preloads the installed
# library; pkg-config gives what compiles a program against the header; make uninstall takes it all away.
. "$(dirname "$0")/tap.sh"
ROOT=$(cd "$T/.." && pwd)
P=$W/prefix
echo "1..9"

make -s -C "$ROOT" install PREFIX="$P" > "$W/out" 2>&1 &&
  for f in bin/vramtrace lib/vramtrace/libvramtrace.so lib/vramtrace/libunwind.so.8 lib/vramtrace/liblzma.so.5 \
           lib/vramtrace/libdw.so.1 lib/vramtrace/libelf.so.1 lib/vramtrace/libz.so.1 lib/vramtrace/libbz2.so.1.0 \
           include/vramtrace.h lib/pkgconfig/vramtrace.pc share/man/man1/vramtrace.1 share/man/man3/vramtrace.3 \
           share/doc/vramtrace/JSON.md share/doc/vramtrace/FORMAT.md share/doc/vramtrace/vramtrace-alerts.yml; do [ -f "$P/$f" ] || { echo "missing $f" >> "$W/out"; false; }; done
check "make install PREFIX: the command, the library and what it carries, the header, pkg-config's file, the JSON and format docs, the alerting rules"

cd "$W" && "$P/bin/vramtrace" --version > "$W/out" 2>&1 && grep -q '^vramtrace [0-9]' "$W/out"
check "the installed command runs from another directory"

env LD_LIBRARY_PATH="$B/fake" "$P/bin/vramtrace" run --dir "$W/d" -- "$B/tests/prog_plain" > "$W/out" 2>&1 &&
  grep -q " $P/lib/vramtrace/libvramtrace.so\$" "$W"/d/*.dump
check "the installed command preloads the installed library (the dump's module map names it)"

PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs vramtrace > "$W/flags" 2>"$W/out" &&
  grep -q -- "-I$P/include" "$W/flags" &&
  cc -c -o "$W/pool.o" $(cat "$W/flags" | sed 's/-ldl//') -I"${CUDA_HOME:-/usr/local/cuda}/include" "$ROOT/examples/native_pool.c" >> "$W/out" 2>&1 &&
  [ "$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --variable=preload vramtrace)" = "$P/lib/vramtrace/libvramtrace.so" ]
check "pkg-config --cflags --libs vramtrace compiles an allocator against the installed header; its preload path"

rm -rf "$W/stage" && make -s -C "$ROOT" install PREFIX=/opt/vt DESTDIR="$W/stage" > "$W/out" 2>&1 &&
  [ -x "$W/stage/opt/vt/bin/vramtrace" ] && grep -q '^prefix=/opt/vt$' "$W/stage/opt/vt/lib/pkgconfig/vramtrace.pc"
check "DESTDIR stages the files under it, for the PREFIX they will have"

MANWIDTH=200 man -l "$P/share/man/man1/vramtrace.1" > "$W/man1" 2> "$W/out" &&
  MANWIDTH=200 man -l "$P/share/man/man3/vramtrace.3" > "$W/man3" 2>> "$W/out" && grep -q '^NAME' "$W/man1" &&
  for v in run dump report diff trend html metrics; do grep -q "^   $v\$" "$W/man1" || { echo "no $v" >> "$W/out"; false; }; done &&
  [ "$(grep -c '^       VRAMTRACE_' "$W/man1")" = "$(grep -c '^    {"VRAMTRACE_' "$ROOT/common/vt_settings.c")" ] &&
  grep -q 'int vramtrace_pool_segment(const void \*ptr, const char \*allocator);' "$W/man3"
check "man -l renders vramtrace(1) (every verb, every VRAMTRACE_* setting) and vramtrace(3) (the API)"

bash -c '. "$1"; COMP_WORDS=(vramtrace rep); COMP_CWORD=1; _vramtrace; echo "${COMPREPLY[*]}";
  COMP_WORDS=(vramtrace report --p); COMP_CWORD=2; _vramtrace; echo "${COMPREPLY[*]}";
  COMP_WORDS=(vramtrace run --de); COMP_CWORD=2; _vramtrace; echo "${COMPREPLY[*]}";
  COMP_WORDS=(vramtrace help tr); COMP_CWORD=2; _vramtrace; echo "${COMPREPLY[*]}"' sh \
  "$P/share/bash-completion/completions/vramtrace" > "$W/out" 2>&1 &&
  [ "$(cat "$W/out" | tr '\n' '|')" = "report|--pprof --prometheus|--depth|trend|" ]
check "bash completion: verbs, a verb's options, run's settings' options, help's verbs"

make -s -C "$ROOT" uninstall PREFIX="$P" > "$W/out" 2>&1 && find "$P" -mindepth 1 >> "$W/out" && [ -z "$(find "$P" -mindepth 1)" ]
check "make uninstall removes every installed file, and the folders it made empty"

man_page="$P/share/man/man1/vramtrace.1"
make -s -C "$ROOT" install PREFIX="$P" > "$W/out" 2>&1 && grep -q '^\.SH EXAMPLES' "$man_page" &&
  grep -q 'vramtrace diff /tmp/vt/vramtrace' "$man_page" && grep -q 'share/doc/vramtrace' "$man_page" &&
  MANWIDTH=100 man -l "$man_page" 2> /dev/null | grep -q '^EXAMPLES'
check "vramtrace(1) has EXAMPLES, and says where JSON.md is installed"
make -s -C "$ROOT" uninstall PREFIX="$P" > /dev/null 2>&1
