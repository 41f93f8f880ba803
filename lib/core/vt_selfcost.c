/* vramtrace's own cost (vt_selfcost.h). Hook time: sampled, as profilers that report their overhead do,
 * since reading a clock twice around every call would itself cost a tenth of a hook. Threads: each of
 * ours is registered while it runs (its CPU clock read live at a dump) and adds its total when it
 * ends; the registry's lock keeps a thread from ending while its clock is read. */
#include <pthread.h>
#include <time.h>

#include "vt_selfcost.h"
#include "vt_stripe.h"
#include "vt_thread.h"
#include "vt_module.h"

__thread unsigned vt_self_tick __attribute__((tls_model("initial-exec")));
__thread int vt_self_on __attribute__((tls_model("initial-exec")));
__thread struct vt_self_parts vt_self_parts __attribute__((tls_model("initial-exec")));

static struct vt_stripe vt_self_samples[VT_STRIPES], vt_self_outliers[VT_STRIPES], vt_self_ticks[VT_STRIPES],
    vt_self_py[VT_STRIPES], vt_self_native[VT_STRIPES];

#define VT_SELF_THREADS 16
static pthread_mutex_t vt_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int used;
    clockid_t clock;
} vt_reg[VT_SELF_THREADS];
static uint64_t vt_threads_done_ns;

static uint64_t vt_clock_ns(clockid_t c)
{
    struct timespec t;
    if (clock_gettime(c, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* What reading the clock adds to a timed span (each span holds one read's worth), measured once as the
 * least of a few back-to-back reads and taken off each timed call's two spans. */
static uint64_t vt_self_read_ticks = UINT64_MAX;

static uint64_t vt_self_read_cost(void)
{
    uint64_t c = __atomic_load_n(&vt_self_read_ticks, __ATOMIC_RELAXED);
    if (c != UINT64_MAX)
        return c;
    c = UINT64_MAX;
    for (int i = 0; i < 32; i++) {
        uint64_t a = vt_ticks_fenced(), b = vt_ticks_fenced();
        if (b - a < c)
            c = b - a;
    }
    __atomic_store_n(&vt_self_read_ticks, c, __ATOMIC_RELAXED);
    return c;
}

/* VT_SELF_OUTLIER_NS in ticks, learnt at the first timed call. */
static uint64_t vt_self_cap;

static uint64_t vt_self_cap_ticks(void)
{
    uint64_t cap = __atomic_load_n(&vt_self_cap, __ATOMIC_RELAXED);
    if (cap)
        return cap;
    struct vt_ticks_scale s;
    vt_ticks_scale(&s);
    cap = s.ns_per_tick > 0 ? (uint64_t)(VT_SELF_OUTLIER_NS / s.ns_per_tick) : VT_SELF_OUTLIER_NS;
    __atomic_store_n(&vt_self_cap, cap, __ATOMIC_RELAXED);
    return cap;
}

void vt_self_add(uint64_t ticks)
{
    uint64_t read = vt_self_read_cost();
    /* The span's own two reads' worth, and each part's: a part reads the clock once more inside the
     * call's span when it starts the capture's timing (the Python part), once when it follows one. */
    struct vt_self_parts p = vt_self_parts;
    vt_self_parts = (struct vt_self_parts){{0}, {0}};
    uint64_t reads = (2 + 2 * (uint64_t)p.spans[VT_SELF_PY] + p.spans[VT_SELF_NATIVE]) * read;
    ticks = ticks > reads ? ticks - reads : 0;
    if (ticks > vt_self_cap_ticks()) {
        vt_stripe_add(vt_self_outliers, 1, __ATOMIC_RELAXED);
        return;
    }
    vt_stripe_add(vt_self_samples, 1, __ATOMIC_RELAXED);
    vt_stripe_add(vt_self_ticks, ticks, __ATOMIC_RELAXED);
    for (int i = 0; i < VT_SELF_PARTS; i++) {
        uint64_t own = (uint64_t)p.spans[i] * read;
        if (p.spans[i])
            vt_stripe_add(i == VT_SELF_PY ? vt_self_py : vt_self_native, p.ticks[i] > own ? p.ticks[i] - own : 0,
                          __ATOMIC_RELAXED);
    }
}

int vt_self_thread_begin(void)
{
    clockid_t c;
    if (pthread_getcpuclockid(pthread_self(), &c) != 0)
        return -1;
    pthread_mutex_lock(&vt_reg_lock);
    int slot = -1;
    for (int i = 0; i < VT_SELF_THREADS && slot < 0; i++)
        if (!vt_reg[i].used)
            slot = i;
    if (slot >= 0) {
        vt_reg[slot].used = 1;
        vt_reg[slot].clock = c;
    }
    pthread_mutex_unlock(&vt_reg_lock);
    return slot;
}

void vt_self_thread_end(int slot)
{
    uint64_t ns = vt_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    pthread_mutex_lock(&vt_reg_lock);
    vt_threads_done_ns += ns;
    if (slot >= 0)
        vt_reg[slot].used = 0;
    pthread_mutex_unlock(&vt_reg_lock);
}

void vt_selfcost_read(struct vt_selfcost *out)
{
    out->hook_samples = vt_stripe_sum(vt_self_samples, __ATOMIC_RELAXED);
    out->hook_outliers = vt_stripe_sum(vt_self_outliers, __ATOMIC_RELAXED);
    struct vt_ticks_scale scale;
    vt_ticks_scale(&scale);
    out->hook_ns = vt_ticks_span(&scale, vt_stripe_sum(vt_self_ticks, __ATOMIC_RELAXED)) * VT_SELF_EVERY;
    out->py_ns = vt_ticks_span(&scale, vt_stripe_sum(vt_self_py, __ATOMIC_RELAXED)) * VT_SELF_EVERY;
    out->native_ns = vt_ticks_span(&scale, vt_stripe_sum(vt_self_native, __ATOMIC_RELAXED)) * VT_SELF_EVERY;
    pthread_mutex_lock(&vt_reg_lock);
    out->threads_ns = vt_threads_done_ns;
    for (int i = 0; i < VT_SELF_THREADS; i++)
        if (vt_reg[i].used)
            out->threads_ns += vt_clock_ns(vt_reg[i].clock);
    pthread_mutex_unlock(&vt_reg_lock);
    out->process_ns = vt_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static void vt_selfcost_atfork_child(void)
{
    /* The child has none of our threads, and its own clocks start at zero. */
    vt_mutex_reset(&vt_reg_lock);
    for (int i = 0; i < VT_SELF_THREADS; i++)
        vt_reg[i].used = 0;
    vt_threads_done_ns = 0;
    for (int i = 0; i < VT_STRIPES; i++)
        vt_self_samples[i].v = vt_self_outliers[i].v = vt_self_ticks[i].v = vt_self_py[i].v = vt_self_native[i].v = 0;
}

VT_MODULE(selfcost, .child = vt_selfcost_atfork_child);
