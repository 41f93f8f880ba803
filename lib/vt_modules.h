/* The loaded modules (path, load address, executable ranges, GNU build-id), so a reader can
 * symbolize a dump's PCs offline, and the address range of libvramtrace itself. */
#ifndef VT_MODULES_H
#define VT_MODULES_H

#include <stdint.h>
#include <stdio.h>

void vt_modules_self_range(uintptr_t *lo, uintptr_t *hi);

/* Writes one "module" line per loaded object; returns 0, or -1 when f reported an error. */
int vt_modules_write(FILE *f);

#endif
