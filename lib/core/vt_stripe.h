/* Counters that many threads change at once, split into stripes, each on a cache line of its own: a
 * thread changes its own stripe, a reader sums them. One shared counter would move its cache line from
 * core to core at every allocation. Most threads are given a stripe of their own while they live (the
 * first VT_STRIPES_SOLO at once; one that ends gives its stripe back), and change it with a plain load
 * and store: an atomic add (a locked instruction on x86) waits for every load and store before it,
 * so a hook with a few of them could not overlap its cache misses. Threads beyond those share the
 * other stripes, with atomic adds. */
#ifndef VT_STRIPE_H
#define VT_STRIPE_H

#include <stdint.h>

#include "vt_hot.h"

#define VT_STRIPES 64
#define VT_STRIPES_SOLO 48

/* Aligned, so that no other variable shares a stripe's line: a flag read at every call, placed next to
 * a stripe that one thread writes at every call, moved between cores as often as a shared counter. */
struct vt_stripe {
    uint64_t v;
    char pad[56];
} __attribute__((aligned(64)));

extern __thread unsigned vt_stripe_me __attribute__((tls_model("initial-exec"))); /* stripe + 1; 0: none yet */
extern __thread int vt_stripe_solo __attribute__((tls_model("initial-exec")));    /* the stripe's only writer */
unsigned vt_stripe_pick(void);

/* The calling thread's stripe, 0 to VT_STRIPES - 1. */
static inline unsigned vt_stripe_index(void)
{
    return VT_LIKELY(vt_stripe_me) ? vt_stripe_me - 1 : vt_stripe_pick();
}

/* Adds d to a counter of the calling thread's stripe (after vt_stripe_index). Readers load it
 * atomically, so a plain store by its only writer is never seen torn. */
static inline void vt_stripe_bump(uint64_t *v, uint64_t d)
{
    if (VT_LIKELY(vt_stripe_solo))
        __atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
    else
        __atomic_add_fetch(v, d, __ATOMIC_RELAXED);
}

/* d may be negative (added modulo 2^64). order: an __ATOMIC_ order; any but relaxed is an atomic add,
 * for counters that order other memory operations (vt_stack.c's fork handshake). */
static inline void vt_stripe_add(struct vt_stripe *s, uint64_t d, int order)
{
    unsigned i = vt_stripe_index();
    if (order == __ATOMIC_RELAXED)
        vt_stripe_bump(&s[i].v, d);
    else
        __atomic_add_fetch(&s[i].v, d, order);
}

static inline uint64_t vt_stripe_sum(const struct vt_stripe *s, int order)
{
    uint64_t sum = 0;
    for (int i = 0; i < VT_STRIPES; i++)
        sum += __atomic_load_n(&s[i].v, order);
    return sum;
}

/* The counters a Python thread's every allocation changes, eight to a stripe's line, so that a capture
 * writes one line of counters, not four (a struct vt_stripe each, as the rest have: docs/performance.md,
 * 2026-12-06 third). Each module owns its names. */
enum vt_tally {
    VT_TALLY_PY_HELD, VT_TALLY_PY_RELEASED, VT_TALLY_PY_MISSED, VT_TALLY_PY_NATIVE, VT_TALLY_PY_WALKED, /* vt_pycapture.c */
    VT_TALLY_PY_FRAMES, VT_TALLY_PY_CODE_READS, /* vt_pystack.c */
    VT_TALLY_REUSED, /* vt_stack.c */
    VT_TALLIES
};
struct vt_tally_line {
    uint64_t v[8];
} __attribute__((aligned(64)));
_Static_assert(VT_TALLIES <= 8, "the tallies fill one line of a stripe: a rare count belongs elsewhere");
_Static_assert(VT_TALLIES <= 8, "the tallies fill one line");
extern struct vt_tally_line vt_tally_lines[VT_STRIPES];

static inline void vt_tally_add(enum vt_tally t, uint64_t d)
{
    vt_stripe_bump(&vt_tally_lines[vt_stripe_index()].v[t], d);
}

static inline uint64_t vt_tally_sum(enum vt_tally t)
{
    uint64_t sum = 0;
    for (int i = 0; i < VT_STRIPES; i++)
        sum += __atomic_load_n(&vt_tally_lines[i].v[t], __ATOMIC_RELAXED);
    return sum;
}

/* In a fork's child: the counter starts again from zero. */
static inline void vt_tally_clear(enum vt_tally t)
{
    for (int i = 0; i < VT_STRIPES; i++)
        __atomic_store_n(&vt_tally_lines[i].v[t], 0, __ATOMIC_RELAXED);
}

#endif
