/* The bridges' C half. At a dump, a helper thread takes the GIL and runs collect() (lib/bridges/vt_bridge.py);
 * the dump waits at most VRAMTRACE_BRIDGE_TIMEOUT for the GIL. A helper that did not get the GIL in time
 * is abandoned: when it gets the GIL at last it gives it straight back and does nothing, and until
 * then later dumps skip the bridge ("busy") instead of piling up threads. A thread that already
 * holds the GIL (vramtrace_dump() called through a GIL-holding binding) collects inline. No GIL is
 * ever taken at exit or while the interpreter finalizes.
 * Torch's block history is switched on and off elsewhere (vt_history.c). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vt_bridge.h"
#include "vt_doing.h"
#include "vt_text.h"
#include "vt_config.h"
#include "vt_format.h"
#include "vt_history.h"
#include "vt_python.h"
#include "vt_table.h"
#include "vt_thread.h"
#include "vt_torch.h"
#include "vt_module.h"

struct vt_job {
    int got_gil, done, abandoned;
    uint64_t wait_ns, run_ns;
    char *text;
    char err[160];
    struct vt_snapshot snap; /* the table, taken while the GIL is still held */
    int have_snap;
};

static pthread_mutex_t vt_br_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vt_br_cv;
static int vt_br_busy; /* a helper thread is alive */
static int vt_br_warm_tried;
static uint64_t vt_br_warm_ns, vt_br_warm_wait_ns; /* the GIL held to compile ahead, and waited for */

/* In a fork child: no bridge thread survived the fork, whatever it held is free again. */
static void vt_bridge_atfork_child(void)
{
    /* The compiled code came along (the interpreter's memory is the parent's); its cost was the parent's. */
    vt_br_warm_ns = vt_br_warm_wait_ns = 0;
    vt_mutex_reset(&vt_br_mu);
    vt_cond_init_monotonic(&vt_br_cv);
    vt_br_busy = 0;
}

static void vt_bridge_init(void)
{
    vt_cond_init_monotonic(&vt_br_cv);
}

/* With the GIL held: collect() and its timing, then our own table, so that torch's snapshot and ours
 * are as close in time as they can be. Not the same instant: a thread inside a torch operator runs
 * without the GIL and can make or give back a segment in between (the reader counts such a segment as
 * torch's reserved, vt_views.c). */
static void vt_job_run(struct vt_job *j)
{
    uint64_t t0 = vt_now_ns();
    /* With torch's trace tracker on, its segments and blocks are ours already: only its totals are read. */
    j->text = vt_py_call(vt_torch_tracking() > 0 ? "collect_tracked" : "collect", j->err, sizeof j->err);
    j->run_ns = vt_now_ns() - t0;
    if (j->text)
        j->have_snap = vt_table_snapshot(&j->snap) == 0;
}

static void vt_job_free(struct vt_job *j)
{
    free(j->text);
    if (j->have_snap)
        vt_snapshot_free(&j->snap);
}

static void *vt_helper_main(void *arg)
{
    struct vt_job *j = arg;
    uint64_t t0 = vt_now_ns();
    int g = vt_py_gil_take();
    pthread_mutex_lock(&vt_br_mu);
    int gone = j->abandoned;
    j->got_gil = 1;
    j->wait_ns = vt_now_ns() - t0;
    pthread_cond_broadcast(&vt_br_cv);
    pthread_mutex_unlock(&vt_br_mu);
    if (!gone)
        vt_job_run(j);
    vt_py_gil_give(g);
    pthread_mutex_lock(&vt_br_mu);
    j->done = 1;
    gone = j->abandoned;
    vt_br_busy = 0;
    pthread_cond_broadcast(&vt_br_cv);
    pthread_mutex_unlock(&vt_br_mu);
    if (gone) {
        vt_job_free(j);
        free(j);
    }
    return NULL;
}

#define VT_BRIDGE_RUN_MAX_S 60

/* Starts the helper and waits for it; returns the status word for the dump's python record. */
static const char *vt_run_helper(struct vt_job *j, int *keep)
{
    *keep = 1;
    pthread_mutex_lock(&vt_br_mu);
    if (vt_br_busy) {
        pthread_mutex_unlock(&vt_br_mu);
        snprintf(j->err, sizeof j->err, "an earlier bridge call is still waiting for the GIL");
        return "busy";
    }
    vt_br_busy = 1;
    pthread_mutex_unlock(&vt_br_mu);
    int err = vt_thread_start(vt_helper_main, j, "vramtrace-gil");
    if (err) {
        pthread_mutex_lock(&vt_br_mu);
        vt_br_busy = 0;
        pthread_mutex_unlock(&vt_br_mu);
        snprintf(j->err, sizeof j->err, "cannot start the bridge thread: %s", strerror(err));
        return "error";
    }
    /* The timeout bounds the wait for the GIL. Once the helper has it, the interpreter is working for
     * us (torch's first snapshot with block history imports its symbolizer, seconds): that is waited
     * for, up to a much longer bound against a program whose Python hangs. */
    struct timespec gil_until = vt_deadline(vt_cfg.bridge_timeout), run_until = vt_deadline(VT_BRIDGE_RUN_MAX_S);
    vt_doing_set("waiting for the program's GIL, to read its caching allocators (at most VRAMTRACE_BRIDGE_TIMEOUT)");
    pthread_mutex_lock(&vt_br_mu);
    while (!j->done && !j->got_gil && pthread_cond_timedwait(&vt_br_cv, &vt_br_mu, &gil_until) != ETIMEDOUT)
        ;
    if (!j->done && j->got_gil)
        vt_doing_set("reading the caching allocators in the program's interpreter (torch's first snapshot imports "
                     "its symbolizer: seconds)");
    while (!j->done && j->got_gil && pthread_cond_timedwait(&vt_br_cv, &vt_br_mu, &run_until) != ETIMEDOUT)
        ;
    int done = j->done, got = j->got_gil;
    if (!done) {
        j->abandoned = 1; /* the helper frees the job */
        *keep = 0;
    }
    pthread_mutex_unlock(&vt_br_mu);
    if (!done) {
        if (got)
            snprintf(j->err, sizeof j->err, "the bridge still ran after %d s", VT_BRIDGE_RUN_MAX_S);
        else
            snprintf(j->err, sizeof j->err, "the GIL was not free within %g s (VRAMTRACE_BRIDGE_TIMEOUT)",
                     vt_cfg.bridge_timeout);
        return "timeout";
    }
    return j->text ? "ok" : "error";
}

/* The bridge's code is compiled once, with the GIL held: ~440 lines take Python ~6 ms, which made most of
 * the first dump's hold of the GIL (8-16 ms on an H100, 0.4-2.2 ms at later dumps). So it is compiled
 * ahead, once the interpreter runs, from the dumper thread's first pass (the program's first CUDA call: it
 * is loading, not serving yet), by a thread of its own that waits for the GIL as long as it takes: the
 * dumper never waits for it (a dump asked for by a thread that holds the GIL is served meanwhile), and a
 * dump's helper that gets the GIL first compiles the code itself, the GIL keeping the two apart. Every dump
 * tells what the compiling held (bridge_warm_ns). */
static void *vt_warm_main(void *arg)
{
    (void)arg;
    uint64_t t0 = vt_now_ns();
    int g = vt_py_gil_take();
    uint64_t t1 = vt_now_ns();
    char err[160];
    if (vt_py_running() && !vt_py_prepared() && vt_py_prepare(err, sizeof err) == 0) {
        __atomic_store_n(&vt_br_warm_wait_ns, t1 - t0, __ATOMIC_RELAXED);
        __atomic_store_n(&vt_br_warm_ns, vt_now_ns() - t1, __ATOMIC_RELAXED);
    }
    vt_py_gil_give(g);
    return NULL;
}

void vt_bridge_warm(void)
{
    if (vt_br_warm_tried || vt_cfg.bridge_timeout <= 0 || !vt_py_hosted() || !vt_py_running())
        return;
    vt_br_warm_tried = 1;
    vt_thread_start(vt_warm_main, NULL, "vramtrace-warm"); /* when it cannot start, the first dump compiles */
}

char *vt_bridge_collect(enum vt_reason reason, struct vt_snapshot *snap, int *have_snap)
{
    *have_snap = 0;
    if (!vt_py_hosted())
        return NULL;
    struct vt_job local = {0}, *j = &local;
    const char *status;
    int keep = 1;
    char hist[VT_HISTORY_TEXT];
    vt_history_text(hist, sizeof hist);
    /* With VRAMTRACE_TORCH_HISTORY=dump, the first dump while the interpreter runs arms the history,
     * so that what grows after it has block stacks; until then torch pays nothing for it. */
    if (reason != VT_REASON_EXIT)
        vt_history_dump_seen();
    if (reason == VT_REASON_EXIT) {
        status = "skipped";
        snprintf(j->err, sizeof j->err, "exit dump: the interpreter is gone or going");
    } else if (vt_cfg.bridge_timeout <= 0) {
        status = "skipped";
        snprintf(j->err, sizeof j->err, "VRAMTRACE_BRIDGE_TIMEOUT=0");
    } else if (!vt_py_running()) {
        status = "finalizing";
        snprintf(j->err, sizeof j->err, "the interpreter is not running (not yet started, or shutting down)");
    } else if (vt_py_holds_gil()) {
        vt_job_run(j);
        status = j->text ? "ok" : "error";
    } else if (!(j = calloc(1, sizeof *j))) {
        return NULL;
    } else {
        status = vt_run_helper(j, &keep);
    }
    /* Our own record first, then what collect() wrote. */
    /* Both details may hold what Python said (escaped by the bridge's Python half, vt_bridge.py) or our
     * own words; anything not yet in a dump's escaped form is escaped here. */
    char head[4096], detail[1024], histsafe[1024];
    const char *why = j->err[0] && strcmp(status, "ok") ? j->err : "-";
    if (!vt_text_is_escaped(why))
        why = (vt_text_escape(detail, sizeof detail, why, strlen(why), 0), detail);
    const char *h = hist;
    if (!vt_text_is_escaped(h))
        h = (vt_text_escape(histsafe, sizeof histsafe, hist, strlen(hist), 0), histsafe);
    int n = snprintf(head, sizeof head,
                     VT_REC_PYTHON " %s %llu %llu %s\n" VT_REC_HISTORY " torch %s\n" VT_COUNTER_LINE(VT_CTR_BRIDGE_WARM_NS)
                         VT_COUNTER_LINE(VT_CTR_BRIDGE_WARM_WAIT_NS),
                     status, (unsigned long long)j->wait_ns, (unsigned long long)j->run_ns, why, h,
                     (unsigned long long)__atomic_load_n(&vt_br_warm_ns, __ATOMIC_RELAXED),
                     (unsigned long long)__atomic_load_n(&vt_br_warm_wait_ns, __ATOMIC_RELAXED));
    size_t body = keep && j->text && !strcmp(status, "ok") ? strlen(j->text) : 0;
    char *out = malloc((size_t)n + body + 1);
    if (out) {
        memcpy(out, head, (size_t)n);
        if (body)
            memcpy(out + n, j->text, body);
        out[(size_t)n + body] = 0;
    }
    if (keep) {
        if (out && j->have_snap && !strcmp(status, "ok")) {
            *snap = j->snap; /* handed over to the dump */
            *have_snap = 1;
            j->have_snap = 0;
        }
        vt_job_free(j);
        if (j != &local)
            free(j);
    }
    return out;
}

VT_MODULE(bridge, .init = vt_bridge_init, .child = vt_bridge_atfork_child);
