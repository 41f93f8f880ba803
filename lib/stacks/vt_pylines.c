/* Line tables of CPython 3.9 to 3.13 (vt_pylines.h). The formats are described in CPython's
 * Objects/lnotab_notes.txt (3.9, 3.10) and InternalDocs/locations.md (3.11+); the search for an
 * address follows PyCode_Addr2Line, so that a line here is the line the interpreter would report. */
#include "vt_pylines.h"

/* 3.9: (address increment, signed line increment) byte pairs. */
static int vt_lnotab(const unsigned char *t, size_t len, int line, int addr)
{
    int a = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        a += t[i];
        if (a > addr)
            break;
        line += (signed char)t[i + 1];
    }
    return line;
}

/* 3.10: (start delta, line delta) byte pairs; a line delta of -128 marks instructions with no line.
 * Ranges of zero length only carry a line delta. */
static int vt_linetable(const unsigned char *t, size_t len, int line, int addr)
{
    int end = 0, range_line = -1;
    size_t i = 0;
    while (end <= addr) {
        int start;
        do {
            if (i + 1 >= len)
                return -1;
            start = end;
            end += t[i];
            int delta = (signed char)t[i + 1];
            i += 2;
            if (delta == -128) {
                range_line = -1;
            } else {
                line += delta;
                range_line = line;
            }
        } while (start == end);
    }
    return range_line;
}

/* An unsigned varint of the location table: 6 bits a byte, 0x40 says more follow. */
static unsigned vt_varint(const unsigned char *t, size_t len, size_t *i)
{
    unsigned v = 0, shift = 0, b;
    do {
        if (*i >= len || shift > 30)
            return 0;
        b = t[(*i)++];
        v |= (b & 63u) << shift;
        shift += 6;
    } while (b & 64);
    return v;
}

/* 3.11+: entries that start with a byte whose top bit is set: its bits 3-6 the form, bits 0-2 the
 * length in code units less one. */
static int vt_locations(const unsigned char *t, size_t len, int line, int addr)
{
    int end = 0, range_line = -1;
    size_t i = 0;
    while (end <= addr) {
        if (i >= len)
            return -1;
        unsigned char head = t[i];
        unsigned form = (head >> 3) & 15;
        int delta = 0;
        if (form == 13 || form == 14) { /* no columns, long form: a signed varint line delta first */
            size_t j = i + 1;
            unsigned u = vt_varint(t, len, &j);
            delta = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (form == 11 || form == 12) { /* one line, one or two lines down */
            delta = (int)form - 10;
        }
        line += delta;
        range_line = form == 15 ? -1 : line;
        end += ((head & 7) + 1) * 2;
        do
            i++;
        while (i < len && !(t[i] & 128));
    }
    return range_line;
}

int vt_pylines_line(enum vt_py_lines kind, const unsigned char *t, size_t len, int firstlineno, int addr)
{
    if (addr < 0 && kind != VT_LINES_LNOTAB)
        return firstlineno;
    switch (kind) {
    case VT_LINES_LNOTAB:
        return vt_lnotab(t, len, firstlineno, addr);
    case VT_LINES_LINETABLE:
        return vt_linetable(t, len, firstlineno, addr);
    case VT_LINES_LOCATIONS:
        return vt_locations(t, len, firstlineno, addr);
    }
    return -1;
}
