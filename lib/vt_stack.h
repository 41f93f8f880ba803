/* Call-site stacks: captured with libunwind before any lock, our own frames dropped, and
 * deduplicated by their PC vector into small integer ids. */
#ifndef VT_STACK_H
#define VT_STACK_H

#include <stdint.h>

#include "vt_hash.h"

struct vt_stack {
    UT_hash_handle hh;
    struct vt_stack *next; /* list of all stacks, newest first; nodes are never freed */
    uint32_t id;
    uint32_t n;
    uintptr_t pc[];
};

/* The calling thread's stack, as an id (0 when stacks are off or could not be kept). */
uint32_t vt_stack_capture(void);

/* All stacks interned so far: newest first, immutable, safe to walk without the lock. */
const struct vt_stack *vt_stack_all(uint32_t *count);

void vt_stack_init(void);
void vt_stack_atfork_prepare(void);
void vt_stack_atfork_parent(void);
void vt_stack_atfork_child(void);

#endif
