/* What every wrapper does around the real call: keep errno, take the stack once per user call,
 * let a runtime call label the driver allocation it causes, and record the outcome. */
#ifndef VT_CALL_H
#define VT_CALL_H

#include <stdint.h>

#include "vt_fns.h"
#include "vt_table.h"

struct vt_call {
    enum vt_fn api;   /* the label recorded: the runtime call when nested under one */
    uint32_t stack;
    int saved_errno;
    int outer;        /* this call is a runtime call that labels nested driver calls */
    int prev_outer_api;
    uint32_t prev_outer_stack;
    int prev_seen;
};

/* An allocating driver call: stack now (unless a runtime call above us took it). */
void vt_call_alloc_begin(struct vt_call *c, enum vt_fn api);
/* A freeing or bookkeeping driver call: no stack. */
void vt_call_plain_begin(struct vt_call *c, enum vt_fn api);
/* Right after the real call: keeps the errno it left, which vt_call_end (or runtime_end) restores
 * after our bookkeeping. */
#include <errno.h>
static inline void vt_call_after(struct vt_call *c)
{
    c->saved_errno = errno;
}
void vt_call_end(struct vt_call *c);

/* A runtime call: takes the stack and labels driver calls made inside it. vt_call_nested_seen tells
 * whether a driver wrapper ran inside (so the runtime wrapper must not record it a second time). */
void vt_call_runtime_begin(struct vt_call *c, enum vt_fn api, int allocating);
int vt_call_nested_seen(const struct vt_call *c);
void vt_call_runtime_end(struct vt_call *c);

/* Outcome of an allocating call: on success
 * adds the entry (fields from a, api/stack from c; a device of VT_DEVICE_FROM_PTR is asked of the
 * pointer), on failure counts it; an out-of-memory result is recorded and triggers the OOM dump. */
#define VT_DEVICE_FROM_PTR (-2)
void vt_call_record_alloc(struct vt_call *c, int ok, int oom, int result, struct vt_alloc *a);

/* A free: takes the entry out before the real call (the address may be handed out again the moment
 * the real free returns). Returns 1 when the address was ours. free_done counts, and puts the entry
 * back when the real free failed. */
int vt_call_free_take(uint64_t addr, enum vt_kind space, struct vt_alloc *taken);
void vt_call_free_done(struct vt_call *c, int ok, uint64_t addr, int was_ours, const struct vt_alloc *taken);

/* A call that changes no entry: counted as done or failed. */
void vt_call_counted(struct vt_call *c, int ok);

/* The device of a plain (not stream-ordered) allocation, from the pointer; -1 when unknown. */
int vt_call_device_of(uint64_t ptr);

#endif
