/* A clock cheap enough to stamp every allocation and time the library's own hooks: the CPU's time
 * stamp counter where it ticks at one rate on every core (constant_tsc and nonstop_tsc), CLOCK_MONOTONIC's
 * nanoseconds elsewhere. On the H200's host (kvm-clock) clock_gettime took ~60 ns, which every
 * allocation's stamp paid. Ticks order events; a vt_ticks_scale turns them into CLOCK_MONOTONIC
 * nanoseconds (vt_now_ns's) where they are written out. The flags do not promise that every core's
 * counter reads the same at once: where they do not, two threads' stamps could be out of order by that
 * skew, which only the rare replacement of an entry whose free was not seen compares (vt_table_fold). */
#ifndef VT_CLOCK_H
#define VT_CLOCK_H

#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "vt_hot.h" /* vt_hotdata.tsc_mode: 0 not decided yet, 1 ticks are the TSC's, 2 ticks are nanoseconds */

/* CLOCK_MONOTONIC in nanoseconds: for deadlines and the dump's times, where ~60 ns does not matter. */
uint64_t vt_now_ns(void);

uint64_t vt_ticks_slow(void);

static inline uint64_t vt_ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(__atomic_load_n(&vt_hotdata.tsc_mode, __ATOMIC_RELAXED) == 1, 1))
        return __rdtsc();
#endif
    return vt_ticks_slow();
}

/* The same clock for timing a span: each read waits for the instructions before it (lfence), so that
 * a span holds the whole wait of its loads, as a profiler's samples find it, at a read's cost that
 * barely varies (so taking off the least one seen is right). On the CPU machine the count read this
 * way matches perf's samples; unfenced, the end of a span is read before the span's last loads have
 * come, and it came out a sixth short. On the H200 it reads half again above perf's share, as the
 * clock_gettime spans did (docs/performance.md, 2026-12-04 fourth: not explained yet). */
static inline uint64_t vt_ticks_fenced(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(__atomic_load_n(&vt_hotdata.tsc_mode, __ATOMIC_RELAXED) == 1, 1)) {
        _mm_lfence();
        return __rdtsc();
    }
#endif
    return vt_ticks_slow();
}

/* How ticks turn into nanoseconds, as of when it was taken (vt_ticks_scale): one per dump, not one per
 * entry, which would read both clocks a million times for a million entries. */
struct vt_ticks_scale {
    uint64_t tsc0, ns0; /* ticks and CLOCK_MONOTONIC's nanoseconds read together, at the first tick */
    double ns_per_tick; /* 0: ticks are nanoseconds */
};
void vt_ticks_scale(struct vt_ticks_scale *s);

/* A stamp as CLOCK_MONOTONIC nanoseconds. */
static inline uint64_t vt_ticks_at(const struct vt_ticks_scale *s, uint64_t ticks)
{
    if (!s->ns_per_tick)
        return ticks;
    double off = (double)(int64_t)(ticks - s->tsc0) * s->ns_per_tick;
    return off <= -(double)s->ns0 ? 0 : s->ns0 + (uint64_t)(int64_t)off;
}

/* A span of ticks as nanoseconds. */
static inline uint64_t vt_ticks_span(const struct vt_ticks_scale *s, uint64_t ticks)
{
    return s->ns_per_tick ? (uint64_t)((double)ticks * s->ns_per_tick) : ticks;
}

#endif
