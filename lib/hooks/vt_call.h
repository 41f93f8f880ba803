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
    int after_done;     /* errno after the real call is saved */
    uint64_t free_addr; /* a free: the address, whether it was ours, and its entry */
    int free_ours;
    struct vt_alloc taken;  /* a copy of the entry taken out of the table ... */
    const struct vt_alloc *taken_at; /* ... or where it is (vt_table_take) */
    int timed;        /* one of the calls timed (vt_selfcost.h): self_ns so far, self_t the clock then */
    uint64_t self_t, self_ns;
};

/* Set (a depth) while a stream-ordered runtime hook (cudaMallocAsync, cudaFreeAsync, ...) is inside its
 * real call: the runtime hook records the call itself, from what it was given and returned, and the
 * driver hooks the runtime's call reaches pass it straight through. One hook's bookkeeping a call, not
 * two (torch's cudaMallocAsync backend makes two such calls a tensor). */
extern __thread int vt_rt_async_depth __attribute__((tls_model("initial-exec")));

/* An allocating driver call: stack now (unless a runtime call above us took it). */
void vt_call_alloc_begin(struct vt_call *c, enum vt_fn api);
/* A freeing or bookkeeping driver call: no stack. */
void vt_call_plain_begin(struct vt_call *c, enum vt_fn api);
/* Right after the real call: keeps the errno it left, which vt_call_end (or runtime_end) restores
 * after our bookkeeping. Only the first call counts, so a wrapper that does its own bookkeeping calls
 * it at once and may still end with one of the *_end functions below. */
#include <errno.h>
#include "vt_hot.h"
#include "vt_selfcost.h"
static inline void vt_call_after(struct vt_call *c)
{
    if (!c->after_done) {
        c->saved_errno = errno;
        if (VT_UNLIKELY(c->timed))
            c->self_t = vt_ticks_fenced();
    }
    c->after_done = 1;
}
void vt_call_end(struct vt_call *c);

/* A runtime call: takes the stack and labels driver calls made inside it. vt_call_nested_seen tells
 * whether a driver wrapper ran inside (so the runtime wrapper must not record it a second time). */
void vt_call_runtime_begin(struct vt_call *c, enum vt_fn api, int allocating);
int vt_call_nested_seen(const struct vt_call *c);
/* A stream-ordered runtime hook is begun as a plain call (vt_call_plain_begin: the driver hooks under it
 * pass its call through, so it labels none) and takes its stack after its real call: the thread's frames
 * cannot change while it is inside the hook. vt_call_prefetch, before the real call, asks memory for
 * what the stack and the record will read, so that the microseconds the runtime and the driver take
 * cover the wait instead of the hook waiting for each line in turn. */
void vt_call_prefetch(void);
void vt_call_capture_after(struct vt_call *c);
void vt_call_runtime_end(struct vt_call *c);

/* The three call shapes, each begun before and ended right after the real call:
 * - an allocation: end adds the entry built by the wrapper (see vt_call_record_alloc);
 * - a free by address: begin takes the entry out (the address may be handed out again the moment the
 *   real free returns), end counts and, when the real free failed, puts it back;
 * - anything else: end counts it as done or failed. */
void vt_call_alloc_end(struct vt_call *c, int ok, int oom, int result, struct vt_alloc *a);
void vt_call_free_begin(struct vt_call *c, enum vt_fn api, uint64_t addr, enum vt_kind space);
/* The second half of vt_call_free_begin, after vt_call_plain_begin: for a hook that learns only then that
 * the call frees an entry now (a stream-ordered free that is not being captured). */
void vt_call_free_entry(struct vt_call *c, uint64_t addr, enum vt_kind space);
void vt_call_free_end(struct vt_call *c, int ok);
void vt_call_plain_end(struct vt_call *c, int ok);

/* Outcome of an allocating call: on success
 * adds the entry (fields from a, api/stack from c; a device of VT_DEVICE_FROM_PTR is asked of the
 * pointer), on failure counts it; an out-of-memory result is recorded and triggers the OOM dump. */
#define VT_DEVICE_FROM_PTR (-2)
void vt_call_record_alloc(struct vt_call *c, int ok, int oom, int result, struct vt_alloc *a);

/* A free: takes the entry out before the real call (the address may be handed out again the moment
 * the real free returns). Returns 1 when the address was ours. free_done counts, and puts the entry
 * back when the real free failed. */
int vt_call_free_take(uint64_t addr, enum vt_kind space, struct vt_alloc *copy, const struct vt_alloc **taken);
void vt_call_free_done(struct vt_call *c, int ok, uint64_t addr, int was_ours, const struct vt_alloc *taken);

#endif
