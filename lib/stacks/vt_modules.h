/* The loaded modules (path, load address, executable ranges, GNU build-id), so a reader can
 * symbolize a dump's PCs offline, and the code range of one module (libvramtrace itself, the Python
 * interpreter). */
#ifndef VT_MODULES_H
#define VT_MODULES_H

#include <stdint.h>
#include "vt_out.h"

/* The executable segments' range of the module that holds addr ({0, 0} when none does). */
void vt_modules_code_range(const void *addr, uintptr_t *lo, uintptr_t *hi);

/* Writes one "module" line per loaded object; returns 0, or -1 when f reported an error. */
int vt_modules_write(struct vt_out *f);

#endif
