/* Code that went away: a stack keeps the return addresses it was taken with, and after a dlclose() that
 * unmapped a library another may be mapped at the same addresses, so a dump would name an old frame after
 * whatever is there now. The dlclose hook (lib/hooks/vt_dlclose.c) notes each range that was unloaded,
 * with a generation; a stack remembers the generation it was taken in, and the dump writes each of its
 * addresses that lies in code unloaded since as VT_PC_UNLOADED, which the reader names as such. */
#ifndef VT_UNLOAD_H
#define VT_UNLOAD_H

#include <stdint.h>

/* The number of unloads so far: a stack's generation. */
uint32_t vt_unload_gen(void);
/* [lo, hi) was unmapped by a dlclose. */
void vt_unload_note(uintptr_t lo, uintptr_t hi);
/* Whether pc, in a stack taken at generation gen, lies in code unloaded since (the dumper's question). */
int vt_unload_stale(uintptr_t pc, uint32_t gen);

#endif
