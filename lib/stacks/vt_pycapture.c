/* Python call sites for allocations: who reads the allocating thread's Python frames.
 *
 * The thread itself, by the walk (vt_pywalk.h), with or without the GIL: it is blocked inside our
 * hook, so its frames cannot change, and nothing is asked of the interpreter. A Python thread that
 * released the GIL inside an extension (torch does around every operator, CuPy around its cudaMalloc)
 * must not take it back here: it may hold a lock (torch's allocator's) that the GIL's holder waits
 * for. The walk needs neither.
 *
 * The walk is trusted once it has read the same frames and lines as the interpreter's own frame API,
 * the first time a thread holding the GIL allocates (or our helper reads a thread for it, below).
 * Until then, and for good when it disagrees, when memory is not as the walk expects, or with
 * VRAMTRACE_PY_WALK=0 (said once), frames go the API's way: a thread holding the GIL reads its own; a
 * thread that released it asks our helper thread, which takes the GIL on its behalf, and waits at
 * most VRAMTRACE_PY_WAIT for the answer. A helper that missed that time is marked stalled, and nobody
 * waits for it again until it has had the GIL; meanwhile, while the walk is unchecked, a careful walk
 * (one that cannot crash) reads the frames, and the helper checks the walk against another thread at its
 * next turn with the GIL. Threads with no Python thread state (native threads) keep native stacks only. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "vt_config.h"
#include "vt_format.h"
#include "vt_records.h"
#include "vt_hot.h"
#include "vt_log.h"
#include "vt_modules.h"
#include "vt_pycapture.h"
#include "vt_pystack.h"
#include "vt_python.h"
#include "vt_stripe.h"
#include "vt_thread.h"
#include "vt_module.h"

enum { VT_JOB_QUEUED, VT_JOB_TAKEN, VT_JOB_DONE };

/* On the asking thread's stack: it leaves only once the job is done or taken off the queue. */
struct vt_pyjob {
    struct vt_pyjob *next;
    void *ts;
    uint32_t result;
    int state;
    int done; /* state is VT_JOB_DONE: set last, polled without the lock */
};

static pthread_mutex_t vt_ph_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vt_ph_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t vt_ph_done; /* on the monotonic clock: set up by vt_pycapture_init */
static struct vt_pyjob *vt_ph_queue;
static int vt_ph_started; /* 1 running, -1 could not be started */
static int vt_ph_stalled;
static int vt_ph_check; /* the walk is to be checked at the helper's next turn (vt_ph_want_check) */
static int vt_ph_pending;  /* jobs are queued: polled without the lock */
static int vt_ph_sleeping; /* the helper waits for vt_ph_work, not polling */
static void *vt_ph_ts; /* the helper's own thread state, kept between turns */

static pthread_once_t vt_pc_once = PTHREAD_ONCE_INIT;
/* Counted at every allocation of every thread: striped (vt_stripe.h). */
#define VT_PC_COUNT(c) vt_tally_add(c, 1)
static __thread int vt_pc_busy __attribute__((tls_model("initial-exec")));
/* Stacks read by the careful walk before the walk was checked (vt_pc_released): rare, so not striped. */
static uint64_t vt_pc_unchecked;

static void vt_pycapture_init(void)
{
    vt_cond_init_monotonic(&vt_ph_done);
}

static void vt_pc_decide(void)
{
    const char *v = vt_py_version();
    if (!v || !vt_cfg.python || vt_cfg.depth <= 0)
        return;
    const char *why = vt_py_frames_unusable();
    if (why) {
        vt_say("Python %s: %s; allocations keep native call sites", *v ? v : "of an unknown version", why);
        return;
    }
    vt_hotdata.pc_on = 1;
    const char *no = vt_cfg.py_walk ? vt_pystack_walk_setup() : "VRAMTRACE_PY_WALK=0";
    vt_hotdata.pc_walk = no ? -1 : 0;
    if (no && vt_cfg.py_walk)
        vt_say("Python %s: %s; its frames are read through the interpreter, with the GIL", v, no);
}

static void vt_pc_decide_once(void)
{
    vt_pc_decide();
    __atomic_store_n(&vt_hotdata.pc_decided, 1, __ATOMIC_RELEASE);
}

static inline void vt_pc_ready(void)
{
    if (VT_UNLIKELY(!__atomic_load_n(&vt_hotdata.pc_decided, __ATOMIC_ACQUIRE)))
        pthread_once(&vt_pc_once, vt_pc_decide_once);
}

static void vt_pc_walk_off(const char *why)
{
    int was = __atomic_exchange_n(&vt_hotdata.pc_walk, -1, __ATOMIC_ACQ_REL);
    if (was != -1)
        vt_say("Python %s: %s; its frames are read through the interpreter from now on, with the GIL",
               vt_py_version(), why);
}

/* With the GIL held, for a thread (tstate) that runs no Python meanwhile: the walk checked against the
 * interpreter's frame API on it, and trusted from then on when they agree (a thread with no frames checks
 * nothing), switched off when they do not. 0 with its stack's id, or -1 when the walk is off now. */
static int vt_pc_check(void *ts, uint32_t *id)
{
    int compared, unchecked = 0;
    const char *why = vt_pystack_check(ts, id, &compared);
    if (why) {
        vt_pc_walk_off(why);
        return -1;
    }
    if (compared)
        __atomic_compare_exchange_n(&vt_hotdata.pc_walk, &unchecked, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return 0;
}

/* With the GIL held, for a thread (tstate) that runs no Python meanwhile. */
static __attribute__((noinline, cold)) uint32_t vt_pc_read_held(void *ts)
{
    if (__atomic_load_n(&vt_hotdata.pc_walk, __ATOMIC_ACQUIRE) != 0)
        return vt_pystack_read(ts);
    uint32_t id;
    if (vt_pc_check(ts, &id) < 0)
        return vt_pystack_read(ts);
    VT_PC_COUNT(VT_TALLY_PY_WALKED);
    return id;
}

/* With the GIL held, by the helper, while the walk is unchecked and no allocation asked for a check: the
 * walk checked against another thread's frames (none of them runs Python meanwhile), the first that has
 * any. */
static void vt_pc_check_any(void)
{
    void *ts[64];
    int n = vt_py_thread_states(ts, 64);
    for (int i = 0; i < n && __atomic_load_n(&vt_hotdata.pc_walk, __ATOMIC_ACQUIRE) == 0; i++) {
        if (ts[i] == vt_ph_ts)
            continue;
        uint32_t id;
        vt_pc_check(ts[i], &id);
    }
}

/* Allocations come in bursts (a forward pass), and waking a sleeping thread costs tens of µs: both
 * sides poll a little before they sleep. */
#define VT_PH_SPIN_NS 100000

static void vt_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Polls until *p is nonzero or VT_PH_SPIN_NS passed; returns 1 when it became nonzero. */
static int vt_spin_until(const int *p)
{
    uint64_t start = 0;
    for (unsigned i = 0;; i++) {
        if (__atomic_load_n(p, __ATOMIC_ACQUIRE))
            return 1;
        vt_pause();
        if (i % 64 == 0) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            uint64_t now = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
            if (!start)
                start = now;
            else if (now - start > VT_PH_SPIN_NS)
                return 0;
        }
    }
}

static void *vt_ph_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&vt_ph_mu);
    for (;;) {
        if (!vt_ph_queue && !vt_ph_check) {
            pthread_mutex_unlock(&vt_ph_mu);
            vt_spin_until(&vt_ph_pending);
            pthread_mutex_lock(&vt_ph_mu);
        }
        while (!vt_ph_queue && !vt_ph_check) {
            vt_ph_sleeping = 1;
            pthread_cond_wait(&vt_ph_work, &vt_ph_mu);
            vt_ph_sleeping = 0;
        }
        pthread_mutex_unlock(&vt_ph_mu);
        int running = vt_py_running();
        if (running)
            vt_py_attach(&vt_ph_ts);
        pthread_mutex_lock(&vt_ph_mu);
        vt_ph_stalled = 0;
        while (vt_ph_queue) {
            struct vt_pyjob *j = vt_ph_queue;
            vt_ph_queue = j->next;
            __atomic_store_n(&vt_ph_pending, vt_ph_queue != NULL, __ATOMIC_RELAXED);
            j->state = VT_JOB_TAKEN;
            pthread_mutex_unlock(&vt_ph_mu);
            uint32_t r = running ? vt_pc_read_held(j->ts) : 0;
            pthread_mutex_lock(&vt_ph_mu);
            j->result = r;
            j->state = VT_JOB_DONE;
            __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
            pthread_cond_broadcast(&vt_ph_done);
        }
        int check = vt_ph_check;
        vt_ph_check = 0;
        pthread_mutex_unlock(&vt_ph_mu);
        if (running && check && __atomic_load_n(&vt_hotdata.pc_walk, __ATOMIC_ACQUIRE) == 0)
            vt_pc_check_any();
        if (running)
            vt_py_detach(&vt_ph_ts);
        pthread_mutex_lock(&vt_ph_mu);
    }
    return NULL;
}

/* Under vt_ph_mu: the helper started, the first time. */
static void vt_ph_start_locked(void)
{
    if (vt_ph_started)
        return;
    int err = vt_thread_start(vt_ph_main, NULL, "vramtrace-py");
    vt_ph_started = err ? -1 : 1;
    if (err)
        vt_say_once(VT_ONCE_PYTHON, "cannot start the Python frames thread: %s; threads that released the "
                    "GIL keep native call sites", strerror(err));
}

/* The helper asked to check the walk at its next turn with the GIL (vt_pc_check_any); nobody waits. */
static void vt_ph_want_check(void)
{
    pthread_mutex_lock(&vt_ph_mu);
    vt_ph_start_locked();
    if (vt_ph_started > 0 && !vt_ph_check) {
        vt_ph_check = 1;
        __atomic_store_n(&vt_ph_pending, 1, __ATOMIC_RELEASE);
        if (vt_ph_sleeping)
            pthread_cond_signal(&vt_ph_work);
    }
    pthread_mutex_unlock(&vt_ph_mu);
}

/* 0 with the stack's id in *id (0: none), or -1 when the helper could not answer in time. */
static __attribute__((noinline, cold)) int vt_pc_ask_helper(void *ts, uint32_t *id)
{
    struct vt_pyjob j = {.ts = ts, .state = VT_JOB_QUEUED};
    struct timespec until = vt_deadline(vt_cfg.py_wait / 1e3);
    pthread_mutex_lock(&vt_ph_mu);
    vt_ph_start_locked();
    if (vt_ph_started < 0 || vt_ph_stalled) {
        pthread_mutex_unlock(&vt_ph_mu);
        return -1;
    }
    j.next = vt_ph_queue;
    vt_ph_queue = &j;
    __atomic_store_n(&vt_ph_pending, 1, __ATOMIC_RELEASE);
    if (vt_ph_sleeping)
        pthread_cond_signal(&vt_ph_work);
    pthread_mutex_unlock(&vt_ph_mu);
    vt_spin_until(&j.done);
    pthread_mutex_lock(&vt_ph_mu);
    while (j.state != VT_JOB_DONE) {
        if (j.state == VT_JOB_TAKEN) {
            /* The helper has the GIL and reads our frames: that never waits for anything of ours. */
            pthread_cond_wait(&vt_ph_done, &vt_ph_mu);
        } else if (pthread_cond_timedwait(&vt_ph_done, &vt_ph_mu, &until) == ETIMEDOUT &&
                   j.state == VT_JOB_QUEUED) {
            struct vt_pyjob **p = &vt_ph_queue;
            while (*p != &j)
                p = &(*p)->next;
            *p = j.next;
            __atomic_store_n(&vt_ph_pending, vt_ph_queue != NULL, __ATOMIC_RELAXED);
            vt_ph_stalled = 1;
            pthread_mutex_unlock(&vt_ph_mu);
            return -1;
        }
    }
    pthread_mutex_unlock(&vt_ph_mu);
    *id = j.result;
    return 0;
}

/* A thread that released the GIL, where the walk is not in use yet (or not at all): the helper reads its
 * frames with the GIL, checking the walk. Where it cannot in time (a loaded machine, a busy GIL), and the
 * walk is still unchecked, the careful walk reads them: every read through the kernel, every pointer's
 * type checked, so a layout that does not fit ends it and nothing can crash. Without it the first blocks
 * of a program whose threads all release the GIL (torch's operators do) kept no line until the helper
 * got the GIL. What it read is counted apart (py_unchecked): if the check fails later, those lines are
 * the ones in doubt. */
static __attribute__((noinline, cold)) uint32_t vt_pc_released(void *ts)
{
    uint32_t id = 0;
    if (vt_cfg.py_wait > 0 && vt_pc_ask_helper(ts, &id) == 0) {
        VT_PC_COUNT(VT_TALLY_PY_RELEASED);
        return id;
    }
    if (__atomic_load_n(&vt_hotdata.pc_walk, __ATOMIC_ACQUIRE) == 0 && (id = vt_pystack_walk_careful(ts))) {
        vt_ph_want_check();
        VT_PC_COUNT(VT_TALLY_PY_RELEASED);
        VT_PC_COUNT(VT_TALLY_PY_WALKED);
        __atomic_add_fetch(&vt_pc_unchecked, 1, __ATOMIC_RELAXED);
        return id;
    }
    VT_PC_COUNT(VT_TALLY_PY_MISSED);
    return 0;
}

VT_HOT void vt_pycapture_prefetch(void)
{
    if (vt_hotdata.pc_on && !vt_pc_busy && __atomic_load_n(&vt_hotdata.pc_walk, __ATOMIC_RELAXED) == 1)
        vt_pystack_prefetch();
}

VT_HOT uint32_t vt_pycapture(void)
{
    vt_pc_ready();
    /* busy: something the interpreter did for us allocated CUDA memory on this thread. */
    if (!vt_hotdata.pc_on || vt_pc_busy)
        return 0;
    int holds, native;
    void *ts = vt_py_thread_state(&holds, &native);
    if (!ts) {
        if (native)
            VT_PC_COUNT(VT_TALLY_PY_NATIVE);
        return 0;
    }
    vt_pc_busy = 1;
    uint32_t id = 0;
    int walked = 0;
    if (__atomic_load_n(&vt_hotdata.pc_walk, __ATOMIC_ACQUIRE) == 1) {
        int failed;
        id = vt_pystack_walk(ts, &failed);
        walked = !failed;
        if (failed)
            vt_pc_walk_off("a frame in memory was not as vramtrace expects");
    }
    if (walked) {
        VT_PC_COUNT(VT_TALLY_PY_WALKED);
        VT_PC_COUNT(holds ? VT_TALLY_PY_HELD : VT_TALLY_PY_RELEASED);
    } else if (holds) {
        id = vt_pc_read_held(ts);
        VT_PC_COUNT(VT_TALLY_PY_HELD);
    } else {
        id = vt_pc_released(ts);
    }
    vt_pc_busy = 0;
    return id;
}

void vt_pycapture_write(struct vt_out *f)
{
    const char *v = vt_py_version();
    if (!v)
        return;
    vt_pc_ready();
    uintptr_t lo, hi;
    vt_modules_code_range(vt_py_interpreter_code(), &lo, &hi);
    const char *state = vt_hotdata.pc_on ? "on" : vt_cfg.python && vt_cfg.depth > 0 ? "unsupported" : "off";
    vt_outs(f, VT_REC_INTERPRETER " ");
    vt_out_text(f, v, 1);
    vt_outf(f, " %s 0x%lx 0x%lx\n", state, (unsigned long)lo, (unsigned long)hi);
    static const struct { const char *name; enum vt_tally v; } counters[] = {
        {VT_CTR_PY_HELD, VT_TALLY_PY_HELD},
        {VT_CTR_PY_RELEASED, VT_TALLY_PY_RELEASED},
        {VT_CTR_PY_MISSED, VT_TALLY_PY_MISSED},
        {VT_CTR_PY_NATIVE, VT_TALLY_PY_NATIVE},
        {VT_CTR_PY_WALKED, VT_TALLY_PY_WALKED},
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        vt_outf(f, VT_REC_FMT(COUNTER), counters[i].name,
                (unsigned long long)vt_tally_sum(counters[i].v));
    vt_outf(f, VT_COUNTER_LINE(VT_CTR_PY_UNCHECKED), (unsigned long long)__atomic_load_n(&vt_pc_unchecked, __ATOMIC_RELAXED));
    uint64_t frames, code_reads, lookups;
    vt_pystack_counters(&frames, &code_reads, &lookups);
    vt_outf(f,
            VT_COUNTER_LINE(VT_CTR_PY_FRAMES) VT_COUNTER_LINE(VT_CTR_PY_CODE_READS) VT_COUNTER_LINE(VT_CTR_PY_LOOKUPS)
                VT_COUNTER_LINE(VT_CTR_PY_STATE_READ),
            (unsigned long long)frames, (unsigned long long)code_reads, (unsigned long long)lookups,
            (unsigned long long)vt_py_state_read());
}

static void vt_pycapture_atfork_child(void)
{
    /* The helper did not survive the fork, nor did the threads whose jobs it had queued, and its thread
     * state is the interpreter's to clean up. */
    pthread_cond_t work = PTHREAD_COND_INITIALIZER;
    vt_mutex_reset(&vt_ph_mu);
    memcpy(&vt_ph_work, &work, sizeof work);
    vt_pycapture_init();
    vt_ph_queue = NULL;
    vt_ph_started = 0;
    vt_ph_stalled = 0;
    vt_ph_check = 0;
    vt_ph_pending = 0;
    vt_ph_sleeping = 0;
    vt_ph_ts = NULL;
    vt_tally_clear(VT_TALLY_PY_HELD);
    vt_tally_clear(VT_TALLY_PY_RELEASED);
    vt_tally_clear(VT_TALLY_PY_MISSED);
    vt_tally_clear(VT_TALLY_PY_NATIVE);
    vt_tally_clear(VT_TALLY_PY_WALKED);
    vt_pc_unchecked = 0;
    vt_pc_busy = 0;
    vt_py_atfork_child();
}

VT_MODULE(pycapture, .init = vt_pycapture_init, .child = vt_pycapture_atfork_child);
