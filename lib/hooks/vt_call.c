/* Shared wrapper logic. The thread-local state links a runtime call to the driver calls it makes,
 * which is how one cudaMalloc is recorded once, as api=cudaMalloc, with the user's stack. */
#include <errno.h>

#include "vt_call.h"
#include "vt_devices.h"
#include "vt_config.h"
#include "vt_post.h"
#include "vt_hot.h"
#include "vt_module.h"
#include "vt_pending.h"
#include "vt_real.h"
#include "vt_stack.h"
#include "vt_torch.h"

struct vt_tls {
    int outer_api;   /* 0 when no runtime call is in progress on this thread */
    uint32_t outer_stack;
    int outer_seen;
};

static __thread struct vt_tls vt_tls __attribute__((tls_model("initial-exec")));
__thread int vt_rt_async_depth __attribute__((tls_model("initial-exec")));

/* Timing a call (vt_selfcost.h): from the hook's start to the real call, and from its return to the
 * hook's end. */
static void vt_self_start(struct vt_call *c)
{
    c->timed = vt_self_pick();
    if (VT_UNLIKELY(c->timed))
        c->self_t = vt_ticks_fenced();
    vt_self_on = c->timed;
}

static void vt_self_ready(struct vt_call *c)
{
    vt_self_on = 0;
    if (VT_UNLIKELY(c->timed))
        c->self_ns = vt_ticks_fenced() - c->self_t;
}

static void vt_self_done(const struct vt_call *c)
{
    if (VT_UNLIKELY(c->timed) && c->after_done)
        vt_self_add(c->self_ns + (vt_ticks_fenced() - c->self_t));
}

VT_HOT static void vt_begin_common(struct vt_call *c, enum vt_fn api)
{
    c->saved_errno = errno;
    vt_self_start(c);
    vt_activate();
    c->after_done = 0;
    c->api = api;
    c->stack = 0;
    c->outer = 0;
    if (vt_tls.outer_api) {
        c->api = (enum vt_fn)vt_tls.outer_api;
        c->stack = vt_tls.outer_stack;
        vt_tls.outer_seen = 1;
    }
}

VT_HOT void vt_call_alloc_begin(struct vt_call *c, enum vt_fn api)
{
    vt_begin_common(c, api);
    vt_torch_watch(api);
    if (!vt_tls.outer_api)
        c->stack = vt_stack_capture();
    vt_self_ready(c);
    errno = c->saved_errno;
}

VT_HOT void vt_call_plain_begin(struct vt_call *c, enum vt_fn api)
{
    vt_begin_common(c, api);
    vt_self_ready(c);
    errno = c->saved_errno;
}

VT_HOT void vt_call_end(struct vt_call *c)
{
    vt_self_done(c);
    errno = c->saved_errno;
}

VT_HOT void vt_call_runtime_begin(struct vt_call *c, enum vt_fn api, int allocating)
{
    c->saved_errno = errno;
    vt_self_start(c);
    vt_activate();
    c->after_done = 0;
    c->api = api;
    c->outer = 1;
    c->prev_outer_api = vt_tls.outer_api;
    c->prev_outer_stack = vt_tls.outer_stack;
    c->prev_seen = vt_tls.outer_seen;
    /* Before the stack: torch's first segment makes its allocator's code known (vt_stack_allocator_code). */
    if (allocating)
        vt_torch_watch(api);
    if (vt_tls.outer_api) {
        /* A runtime call made inside another keeps the outer label and stack. */
        c->api = (enum vt_fn)vt_tls.outer_api;
        c->stack = vt_tls.outer_stack;
    } else {
        c->stack = allocating ? vt_stack_capture() : 0;
    }
    vt_tls.outer_api = (int)c->api;
    vt_tls.outer_stack = c->stack;
    vt_tls.outer_seen = 0;
    vt_self_ready(c);
    errno = c->saved_errno;
}

VT_HOT void vt_call_prefetch(void)
{
    vt_stack_prefetch();
    vt_pending_prefetch();
}

VT_HOT void vt_call_capture_after(struct vt_call *c)
{
    if (c->stack)
        return; /* a runtime call's around it, taken before */
    vt_self_on = c->timed;
    c->stack = vt_stack_capture();
    vt_self_on = 0;
}

VT_HOT int vt_call_nested_seen(const struct vt_call *c)
{
    (void)c;
    return vt_tls.outer_seen;
}

VT_HOT void vt_call_runtime_end(struct vt_call *c)
{
    int seen = vt_tls.outer_seen;
    vt_tls.outer_api = c->prev_outer_api;
    vt_tls.outer_stack = c->prev_outer_stack;
    vt_tls.outer_seen = c->prev_seen || (c->prev_outer_api && seen);
    vt_self_done(c);
    errno = c->saved_errno;
}

/* The device of a plain (not stream-ordered) allocation, from the pointer; -1 when unknown. */
static int vt_call_device_of(uint64_t ptr)
{
    int dev = -1;
    __typeof__(cuPointerGetAttribute) *get = VT_REAL(cuPointerGetAttribute);
    if (!get || get(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)ptr) != CUDA_SUCCESS)
        dev = -1;
    return dev;
}

/* A call that changes no entry: counted as done or failed. */
static void vt_call_counted(struct vt_call *c, int ok)
{
    if (ok)
        vt_count_call(c->api);
    else
        vt_count_failure(c->api);
}

VT_HOT void vt_call_record_alloc(struct vt_call *c, int ok, int oom, int result, struct vt_alloc *a)
{
    if (a->device == VT_DEVICE_FROM_PTR)
        a->device = ok ? vt_call_device_of(a->addr) : -1;
    if (ok) {
        a->api = (uint16_t)c->api;
        a->stack = c->stack;
        vt_table_add(a);
        vt_post_alloc_seen();
        if (a->kind == VT_KIND_DEVICE || a->kind == VT_KIND_VMM_MAP)
            vt_torch_made(a->addr, a->size, a->device);
    } else {
        vt_count_failure(c->api);
        if (oom) {
            /* What the device had left, asked on this thread (whose context failed the request); never
             * for stream-ordered requests, which may fail inside a stream capture. */
            int dev = a->device;
            uint64_t free_then = a->kind == VT_KIND_ASYNC ? VT_UNKNOWN : vt_devices_free_now(&dev);
            vt_record_oom(c->api, a->size, dev, c->stack, result, free_then);
            if (vt_cfg.on_oom)
                vt_post(VT_POST_OOM);
        }
    }
}

VT_HOT int vt_call_free_take(uint64_t addr, enum vt_kind space, struct vt_alloc *copy, const struct vt_alloc **taken)
{
    int saved = errno;
    int ours = addr ? vt_table_take(addr, space, copy, taken) : 0;
    errno = saved;
    return ours;
}

VT_HOT void vt_call_free_done(struct vt_call *c, int ok, uint64_t addr, int was_ours, const struct vt_alloc *taken)
{
    vt_call_counted(c, ok);
    if (was_ours) {
        if (!ok)
            vt_table_restore(taken);
    } else if (addr) {
        vt_count_unknown_free();
    }
}

VT_HOT void vt_call_alloc_end(struct vt_call *c, int ok, int oom, int result, struct vt_alloc *a)
{
    vt_call_after(c);
    vt_call_record_alloc(c, ok, oom, result, a);
    vt_call_end(c);
}

VT_HOT void vt_call_free_begin(struct vt_call *c, enum vt_fn api, uint64_t addr, enum vt_kind space)
{
    vt_call_plain_begin(c, api);
    vt_call_free_entry(c, addr, space);
}

VT_HOT void vt_call_free_entry(struct vt_call *c, uint64_t addr, enum vt_kind space)
{
    c->free_addr = addr;
    c->free_ours = vt_call_free_take(addr, space, &c->taken, &c->taken_at);
    vt_self_ready(c);
    errno = c->saved_errno;
}

VT_HOT void vt_call_free_end(struct vt_call *c, int ok)
{
    vt_call_after(c);
    vt_call_free_done(c, ok, c->free_addr, c->free_ours, c->taken_at);
    vt_call_end(c);
}

VT_HOT void vt_call_plain_end(struct vt_call *c, int ok)
{
    vt_call_after(c);
    vt_call_counted(c, ok);
    vt_call_end(c);
}

