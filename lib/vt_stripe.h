/* Counters that many threads change at once, split into stripes, each on a cache line of its own: a
 * thread changes its own stripe (picked once per thread, in turn), a reader sums them. One shared
 * counter would move its cache line from core to core at every allocation. */
#ifndef VT_STRIPE_H
#define VT_STRIPE_H

#include <stdint.h>

#define VT_STRIPES 16

/* Aligned, so that no other variable shares a stripe's line: a flag read at every call, placed next to
 * a stripe that one thread writes at every call, moved between cores as often as a shared counter. */
struct vt_stripe {
    uint64_t v;
    char pad[56];
} __attribute__((aligned(64)));

extern __thread unsigned vt_stripe_me __attribute__((tls_model("initial-exec"))); /* stripe + 1; 0: none yet */
unsigned vt_stripe_pick(void);

/* The calling thread's stripe, 0 to VT_STRIPES - 1. */
static inline unsigned vt_stripe_index(void)
{
    return vt_stripe_me ? vt_stripe_me - 1 : vt_stripe_pick();
}

/* d may be negative (added modulo 2^64). order: an __ATOMIC_ order. */
static inline void vt_stripe_add(struct vt_stripe *s, uint64_t d, int order)
{
    __atomic_add_fetch(&s[vt_stripe_index()].v, d, order);
}

static inline uint64_t vt_stripe_sum(const struct vt_stripe *s, int order)
{
    uint64_t sum = 0;
    for (int i = 0; i < VT_STRIPES; i++)
        sum += __atomic_load_n(&s[i].v, order);
    return sum;
}

#endif
