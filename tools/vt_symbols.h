/* Offline symbolization of a dump's PCs with elfutils' libdwfl: each module of the dump's module map is
 * opened from its path (only when its GNU build-id is the one the dump recorded) and placed at the
 * address it had in the process. Gives symbol names from .symtab too (not only exported ones),
 * demangled C++ names, file:line, and the chain of inlined calls. */
#ifndef VT_SYMBOLS_H
#define VT_SYMBOLS_H

#include <stdint.h>

#include "vt_dumpfile.h"
#include "vt_model.h"

struct vt_symbolizer;

/* NULL when nothing could be opened (the caller then falls back to the names in the dump). */
struct vt_symbolizer *vt_sym_open(const struct vt_dumpfile *d);
/* The frames at return address pc, innermost inlined call first, each "function (file:line)", joined by
 * '\n'; NULL when the PC is in no module the symbolizer could open. The string stays valid until close. */
const char *vt_sym_frames(struct vt_symbolizer *s, uint64_t pc);
void vt_sym_close(struct vt_symbolizer *s);

/* The three as the model takes them (vt_model_use_symbolizer). */
extern const struct vt_symbolizer_ops vt_libdw_symbolizer;
/* libstdc++'s demangler (vt_model_use_demangler's): the name, malloc'd, or NULL when it is no C++ name. */
char *vt_cxx_demangle(const char *mangled);

#endif
