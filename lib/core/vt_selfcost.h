/* What vramtrace costs the process it runs in, measured by itself, so that a user can read the price of
 * leaving it on from any dump: the time its hooks take (timed at every VT_SELF_EVERY-th call of each
 * thread, so the timing costs almost nothing), and the CPU time of its own threads. */
#ifndef VT_SELFCOST_H
#define VT_SELFCOST_H

#include <stdint.h>

#include "vt_clock.h"
#include "vt_format.h"

/* A timed call longer than VT_SELF_OUTLIER_US (vt_format.h) was not the hook's alone: its thread was
 * descheduled or interrupted meanwhile (a hook call takes about a microsecond). It is left out, and
 * counted. */
#define VT_SELF_OUTLIER_NS (VT_SELF_OUTLIER_US * 1000.0)

struct vt_selfcost {
    uint64_t hook_samples;  /* hook calls timed, the outliers left out */
    uint64_t hook_outliers; /* timed calls over VT_SELF_OUTLIER_NS, left out */
    uint64_t hook_ns;       /* the kept timed calls' time x VT_SELF_EVERY (a reader scales it by
                               (samples + outliers) / samples) */
    uint64_t py_ns;         /* of which reading Python frames (the same estimate) */
    uint64_t native_ns;     /* of which unwinding and interning native frames */
    uint64_t threads_ns;    /* CPU time of vramtrace's own threads, finished and running */
    uint64_t process_ns;    /* CPU time of the whole process */
};

/* Whether this call of the calling thread is one to time. */
static inline int vt_self_pick(void)
{
    extern __thread unsigned vt_self_tick __attribute__((tls_model("initial-exec")));
    if (++vt_self_tick < VT_SELF_EVERY)
        return 0;
    vt_self_tick = 0;
    return 1;
}

/* ticks: a timed call's time in the hook, outside the real call (read with vt_ticks_fenced). */
void vt_self_add(uint64_t ticks) __attribute__((cold));

/* Set while a timed call takes its stack, so that the capture times its own parts. */
extern __thread int vt_self_on __attribute__((tls_model("initial-exec")));
enum vt_self_part { VT_SELF_PY, VT_SELF_NATIVE, VT_SELF_PARTS };
/* A timed call's parts wait on its thread until the call's last clock read is taken (vt_self_add), so
 * that putting them in the shared counters, whose lines are cold by then, is not inside what they time
 * (it was: a cold call and two cold lines inside every timed span). */
struct vt_self_parts {
    uint64_t ticks[VT_SELF_PARTS];
    unsigned spans[VT_SELF_PARTS];
};
extern __thread struct vt_self_parts vt_self_parts __attribute__((tls_model("initial-exec")));
/* ticks: one part of a timed call's stack capture (one clock read in it, as vt_self_add's spans). Each part
 * reads the clock inside the call's own span: those reads are the timing's, not the hook's, and are
 * taken off the call's time too. */
static inline void vt_self_part(enum vt_self_part part, uint64_t ticks)
{
    vt_self_parts.ticks[part] += ticks;
    vt_self_parts.spans[part]++;
}

/* For vt_thread.c: a thread of ours begins and ends (under the registry's lock, with its CPU clock). */
int vt_self_thread_begin(void);
void vt_self_thread_end(int slot);

void vt_selfcost_read(struct vt_selfcost *out);

#endif
