/* Call-site stacks: captured with libunwind before any lock, our own frames dropped, with the
 * Python stack of the allocating thread where it has one (vt_pycapture.h), and deduplicated by both
 * into small integer ids. */
#ifndef VT_STACK_H
#define VT_STACK_H

#include <stdint.h>

#include "vt_hash.h"

struct vt_stack {
    UT_hash_handle hh;
    struct vt_stack *next; /* list of all stacks, newest first; nodes are never freed */
    uint32_t id;
    uint32_t n;
    uint32_t py;    /* the Python stack (vt_pystack.h), 0 for none */
    uint32_t gen;   /* vt_unload_gen() when it was taken: its addresses may lie in code unloaded since */
    uint8_t varies; /* its Python stack and calling instruction were seen with other native frames: the
                     * one field that changes after the stack is published (relaxed stores) */
    uintptr_t pc[]; /* n return addresses, then py: the key */
};

/* The calling thread's stack, as an id (0 when stacks are off or could not be kept). */
uint32_t vt_stack_capture(void);
/* What vt_stack_capture will read, asked for from memory without waiting (vt_pycapture_prefetch). */
void vt_stack_prefetch(void);

/* Frames of code between [lo, hi) at the top of a stack are left out like our own, while set on the
 * thread: an allocator's own frames above the blocks it tells us of (lib/hooks/vt_torch.c), which name
 * its inner paths, not the program's call. VT_SKIP_FRAMES more frames are unwound meanwhile. */
#define VT_SKIP_FRAMES 12
extern __thread uintptr_t vt_stack_skip_lo __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t vt_stack_skip_hi __attribute__((tls_model("initial-exec")));

/* A caching allocator's own code [lo, hi) (torch's libc10_cuda): the stack of memory it asks the driver for
 * from a thread with no Python frames (a segment made under autograd's backward()) starts past its
 * frames, as its blocks' do, so that it is named by the code that wanted the memory, not by the
 * allocator's inner path (alloc_block). Python threads' stacks are named by their Python frames. */
void vt_stack_allocator_code(uintptr_t lo, uintptr_t hi);

/* The program's return address into the hook that called us (along our own frame pointers), 0 if none
 * is found among the first frames. */
uintptr_t vt_stack_caller(void);

/* Captures that took the native frames of an earlier one (same Python stack and caller, vt_stack.c). */
uint64_t vt_stack_reused(void);

/* All stacks interned so far: newest first, immutable, safe to walk without the lock. */
const struct vt_stack *vt_stack_all(uint32_t *count);

#endif
