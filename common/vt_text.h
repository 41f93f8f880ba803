/* The dump's text fields (paths, symbol names, Python names: anything a program, a file name or a
 * library's symbol table controls), escaped so that a name can never add a line, a record or a terminal
 * control to a dump or to what is shown of it. Shared by the writer (the library) and the reader.
 *
 * Escaped form: a byte below 0x20, 0x7f, a backslash, a byte that is not part of well-formed UTF-8,
 * the two bytes of a C1 control (U+0080-U+009F), and (in a field that ends at a space) a space are written \xHH; everything else as it is. The
 * result is valid UTF-8 with no control character, so it is also safe to print as it is: the reader
 * keeps names in this form, and only a path it must open is turned back into its bytes. */
#ifndef VT_TEXT_H
#define VT_TEXT_H

#include <stddef.h>

/* Length of the well-formed UTF-8 sequence at s (n bytes available), 0 when s does not start one. */
size_t vt_utf8_len(const unsigned char *s, size_t n);
/* s (n bytes) escaped into out (cap bytes, NUL-terminated; an escape is never cut in two). Returns the
 * length written. */
#define VT_TEXT_WORD 1       /* a space is escaped too */
#define VT_TEXT_KEEP_BSLASH 2 /* a backslash stays (a line that already holds escapes: older dumps) */
size_t vt_text_escape(char *out, size_t cap, const char *s, size_t n, int flags);
/* Whether the NUL-terminated s needs escaping at all (as a rest-of-line field: spaces allowed). */
int vt_text_needs_escape(const char *s);
/* Whether s is in escaped form (spaces allowed): no control byte, well-formed UTF-8, every backslash the
 * start of \xHH. */
int vt_text_is_escaped(const char *s);
/* The bytes s stands for (escapes undone) into out; -1 when they do not fit or hold a NUL. */
int vt_text_unescape(char *out, size_t cap, const char *s);

#endif
