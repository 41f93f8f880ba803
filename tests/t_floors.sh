#!/bin/sh
# TAP: the library's floors hold (make floors: tests/floors.sh over the Makefile's LIB_DIRS), and the check
# catches each way of breaking them, planted in a copy of the tree: a floor of lib/ that includes one
# above it, a file of lib/ that includes tools/, the reader wing (analyze/) that includes lib/, and
# common/ that includes the wing.
. "$(dirname "$0")/tap.sh"
echo "1..6"
R=$T/..

make -s --no-print-directory -C "$R" floors > "$W/out" 2>&1
check "the tree as it is: no include runs up a floor"

mkdir "$W/tree"
cp -r "$R/Makefile" "$R/lib" "$R/analyze" "$R/common" "$R/include" "$R/tools" "$R/tests" "$W/tree/"
echo '#include "vt_table.h"' >> "$W/tree/lib/core/vt_log.c"
echo '#include "vt_units.h"' >> "$W/tree/lib/table/vt_slab.c"
echo '#include "vt_dumper.h"' >> "$W/tree/analyze/vt_frame.c"
echo '#include "vt_model.h"' >> "$W/tree/common/vt_text.c"
make -s --no-print-directory -C "$W/tree" floors > "$W/got" 2>&1
st=$?
cp "$W/got" "$W/out"
[ $st -ne 0 ]
check "planted includes: make floors fails"
grep -q '^floors: lib/core/vt_log.c (lib/core) includes vt_table.h of lib/table, a floor above it' "$W/got"
check "core including the table is named"
grep -q '^floors: lib/table/vt_slab.c includes vt_units.h, a file of tools/' "$W/got"
check "the library including tools/ is named"
grep -q '^floors: analyze/vt_frame.c includes vt_dumper.h' "$W/got"
check "the reader wing including lib/ is named"
grep -q '^floors: common/vt_text.c includes vt_model.h' "$W/got"
check "common/ including the wing is named"
