/* Python call stacks: a thread's Python frames, read with the GIL held and interned by their (code
 * object, line) pairs into small ids that native stacks refer to (vt_stack.h). */
#ifndef VT_PYSTACK_H
#define VT_PYSTACK_H

#include <stdint.h>
#include "vt_out.h"

#define VT_PY_DEPTH_DEFAULT 32
#define VT_PY_DEPTH_MAX 256

/* With the GIL held: the Python stack of tstate (whose thread runs no Python meanwhile) as an id, 0
 * when it has no frames or could not be kept. */
uint32_t vt_pystack_read(void *tstate);

/* Writes the pyframe and pystack records of the Python stacks whose ids are marked in used[1..count]
 * (count: vt_pystack_count() when used was made). Ids in the dump are ours plus frame_base and
 * stack_base, so that they never meet the bridges' own. */
uint32_t vt_pystack_count(void);
void vt_pystack_write(struct vt_out *f, const unsigned char *used, uint32_t count, uint32_t frame_base, uint32_t stack_base);

void vt_pystack_atfork_prepare(void);
void vt_pystack_atfork_parent(void);
void vt_pystack_atfork_child(void);

#endif
