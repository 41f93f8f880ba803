/* A code object's line table read as CPython reads it (PyCode_Addr2Line of each version), from its
 * bytes alone: no interpreter call, so it works on a thread that does not hold the GIL. */
#ifndef VT_PYLINES_H
#define VT_PYLINES_H

#include <stddef.h>

#include "vt_pylayout.h"

/* The line of the instruction at byte offset addr (negative: the code's first line), from the line
 * table t of len bytes of a code object whose first line is firstlineno; -1 when the instruction has no
 * line or the table ends before it. Never reads past t + len. */
int vt_pylines_line(enum vt_py_lines kind, const unsigned char *t, size_t len, int firstlineno, int addr);

#endif
