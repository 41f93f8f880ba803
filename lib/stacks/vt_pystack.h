/* Python call stacks: a thread's Python frames, read from the interpreter's memory by the thread
 * itself or through the interpreter's API with the GIL held, interned into small ids that native
 * stacks refer to (vt_stack.h). */
#ifndef VT_PYSTACK_H
#define VT_PYSTACK_H

#include <stdint.h>
#include "vt_out.h"

#define VT_PY_DEPTH_DEFAULT 32
#define VT_PY_DEPTH_MAX 256

/* With the GIL held: the Python stack of tstate (whose thread runs no Python meanwhile) as an id, 0
 * when it has no frames or could not be kept. Read through the interpreter's frame API. */
uint32_t vt_pystack_read(void *tstate);

/* NULL when the walk (vt_pywalk.h) can be used on this interpreter, else why not. */
const char *vt_pystack_walk_setup(void);
/* On tstate's own thread, with or without the GIL, once vt_pystack_walk_setup said yes: the stack as
 * above, read by the walk; *failed is set when the interpreter's memory was not as the walk expects. */
uint32_t vt_pystack_walk(void *tstate, int *failed);
/* On tstate's own thread, with or without the GIL, before the walk is checked: the walk, careful (every
 * read through the kernel, every pointer's type checked: a layout that does not fit this interpreter ends
 * it, nothing can crash); 0 when it read no frames or did not end well. */
uint32_t vt_pystack_walk_careful(void *tstate);
/* What the calling thread's next walk and look-up will read, asked for ahead (vt_tcache_prefetch). */
void vt_pystack_prefetch(void);
/* With the GIL held: reads tstate's frames both ways; NULL when they are the same frames and lines
 * (its id then in *id, and how many frames were compared in *compared: none is no check), else how
 * they differ. */
const char *vt_pystack_check(void *tstate, uint32_t *id, int *compared);

/* Writes the pyframe and pystack records of the Python stacks whose ids are marked in used[1..count]
 * (count: vt_pystack_count() when used was made). Ids in the dump are ours plus frame_base and
 * stack_base, so that they never meet the bridges' own. */
uint32_t vt_pystack_count(void);
/* What the walks did: frames read, of those the ones whose code object was read (not in the thread's
 * memo: its first walk, or after one was destroyed), and walks whose stack the thread's cache did not
 * hold (looked up under a shard's lock). */
void vt_pystack_counters(uint64_t *frames, uint64_t *code_reads, uint64_t *lookups);
void vt_pystack_write(struct vt_out *f, const unsigned char *used, uint32_t count, uint32_t frame_base, uint32_t stack_base);

#endif
