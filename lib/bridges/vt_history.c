/* Torch's block history (vt_history.h). It is switched on from the main thread through a pending call
 * (a safe point of the interpreter, with the GIL), scheduled by the dumper thread after an allocation
 * told it CUDA memory is in use: never from inside an allocation.
 *
 * Sampling: with the history on, torch takes the GIL and reads the Python stack of every block it hands
 * out, ~9 % of a launch-bound decode loop on the H200. Once the first dump has switched it on
 * (VRAMTRACE_TORCH_HISTORY=dump), it stays on for VRAMTRACE_TORCH_SAMPLE percent of each second and off
 * for the rest, as sampling profilers keep their cost down: a block keeps the stack it got in a window
 * after the history is off again (torch keeps each block's context; measured on the H200, torch 2.11),
 * so a site that keeps allocating shows up in proportion to what it allocates, and blocks made outside
 * the windows read "no stack". Each switch is another pending call (~1.2 us of the main thread's time);
 * a main thread that runs no Python for a while switches late, and the window is as long as that. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_config.h"
#include "vt_post.h"
#include "vt_history.h"
#include "vt_hot.h"
#include "vt_python.h"
#include "vt_settings.h"
#include "vt_table.h"
#include "vt_thread.h"
#include "vt_torch.h"
#include "vt_module.h"

/* ASKED: for the dumper to schedule; QUEUED: scheduled, for the main thread to run. IDLE: not to be
 * asked before the first dump (VRAMTRACE_TORCH_HISTORY=dump). SAMPLING: on and off in windows, from the
 * first dump on. */
enum { VT_HIST_ASK = VT_POST_HIST_ASK, VT_HIST_ASKED = VT_POST_HIST_ASKED, VT_HIST_WAIT, VT_HIST_DONE, VT_HIST_IDLE, VT_HIST_SAMPLING, VT_HIST_QUEUED };

#define VT_HIST_TRACKED "off torch's trace tracker gives every block its call site"
#define VT_HIST_PERIOD_NS 1000000000ull
#define VT_HIST_RETRY_NS 1000000000ull
#define VT_HIST_AGAIN_NS 100000000ull /* a switch that could not be scheduled, or was interrupted */
#define VT_HIST_QUEUED_MS 200         /* how often the dumper looks while a switch waits for the main thread */

static pthread_mutex_t vt_hist_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t vt_hist_due_ns;  /* WAIT: when to ask again; SAMPLING: when the window ends or the next begins */
static int vt_hist_window;       /* SAMPLING: the history is on now */
static int vt_hist_queued;       /* SAMPLING: a switch waits for the main thread */
static char vt_hist_result[VT_HISTORY_TEXT]; /* what the last attempt said, for the dumps */

static int vt_sampled(void)
{
    return vt_cfg.torch_history == VT_HISTORY_DUMP && vt_cfg.torch_sample < 100;
}

static uint64_t vt_window_ns(int on)
{
    uint64_t on_ns = VT_HIST_PERIOD_NS / 100 * (uint64_t)vt_cfg.torch_sample;
    return on ? on_ns : VT_HIST_PERIOD_NS - on_ns;
}

static void vt_history_init(void)
{
    /* The first switch also installs CuPy's memory hook (arm_cupy in vt_bridge.py), so it runs for either. */
    int off = (vt_cfg.torch_history == VT_HISTORY_OFF && !vt_cfg.cupy_blocks) || vt_cfg.bridge_timeout <= 0;
    int later = vt_cfg.torch_history != VT_HISTORY_ALWAYS; /* with it off, for CuPy's hook alone */
    atomic_store(&vt_hotdata.history_state, off ? VT_HIST_DONE : later ? VT_HIST_IDLE : VT_HIST_ASK);
    snprintf(vt_hist_result, sizeof vt_hist_result, "%s",
             vt_cfg.torch_history == VT_HISTORY_OFF ? "off VRAMTRACE_TORCH_HISTORY=off"
             : off                                  ? "off VRAMTRACE_BRIDGE_TIMEOUT=0"
             : later ? "waiting switched on at this first dump, for the growth after it (VRAMTRACE_TORCH_HISTORY=dump)"
                     : "waiting no CUDA allocation yet");
}

static void vt_history_atfork_child(void)
{
    vt_mutex_reset(&vt_hist_mu);
    vt_hist_queued = 0; /* the parent's main thread runs the switch it queued, not ours */
}

void vt_history_text(char *out, size_t len)
{
    pthread_mutex_lock(&vt_hist_mu);
    int ours = !strncmp(vt_hist_result, "on", 2) || !strncmp(vt_hist_result, "sampled", 7);
    snprintf(out, len, "%s", vt_torch_tracking() > 0 && !ours ? VT_HIST_TRACKED : vt_hist_result);
    pthread_mutex_unlock(&vt_hist_mu);
}

void vt_history_dump_seen(void)
{
    int idle = VT_HIST_IDLE;
    if (vt_py_running() && atomic_compare_exchange_strong(&vt_hotdata.history_state, &idle, VT_HIST_ASK))
        vt_post_history_ask();
}

/* On the main thread with the GIL, at a safe point of the interpreter: the first switch on, and CuPy's
 * memory hook, which must be installed on the thread whose allocations it reports (CuPy keeps hooks per
 * thread). Asked again later while either answers "later". */
static int vt_history_arm(void *arg)
{
    (void)arg;
    char err[160];
    char *cupy = vt_cfg.cupy_blocks ? vt_py_call("arm_cupy", err, sizeof err) : NULL;
    int cupy_later = cupy && !strncmp(cupy, "later", 5);
    free(cupy);
    /* Torch's trace tracker names every block: its history is left as the program set it. */
    int tracking = vt_torch_tracking();
    char *r = vt_cfg.torch_history == VT_HISTORY_OFF ? strdup(cupy_later ? "later" : "off VRAMTRACE_TORCH_HISTORY=off")
              : tracking > 0 ? strdup(VT_HIST_TRACKED)
              : tracking < 0 ? strdup("later torch's trace tracker is attached and not yet checked")
                             : vt_py_call("arm_history", err, sizeof err);
    int on = r && !strcmp(r, "on"), later = (r && !strncmp(r, "later", 5)) || (cupy_later && !on);
    int next = later ? VT_HIST_WAIT : VT_HIST_DONE;
    pthread_mutex_lock(&vt_hist_mu);
    uint64_t now = vt_now_ns();
    if (on && vt_sampled()) {
        next = VT_HIST_SAMPLING;
        vt_hist_window = 1;
        vt_hist_due_ns = now + vt_window_ns(1);
        snprintf(vt_hist_result, sizeof vt_hist_result,
                 "sampled on %d %% of each second from the first dump on (VRAMTRACE_TORCH_SAMPLE)", vt_cfg.torch_sample);
    } else {
        if (vt_cfg.torch_history != VT_HISTORY_OFF) /* else it says so already */
            snprintf(vt_hist_result, sizeof vt_hist_result, "%s", r ? r : err);
        if (later)
            vt_hist_due_ns = now + VT_HIST_RETRY_NS;
    }
    pthread_mutex_unlock(&vt_hist_mu);
    atomic_store(&vt_hotdata.history_state, next);
    if (next == VT_HIST_SAMPLING)
        vt_post(VT_POST_HISTORY); /* the dumper sleeps with no end in sight: the window's end is due */
    free(r);
    return 0;
}

/* On the main thread with the GIL: the end of a window, or the start of the next. */
static int vt_history_switch(void *arg)
{
    (void)arg;
    char err[160];
    pthread_mutex_lock(&vt_hist_mu);
    int on = !vt_hist_window;
    pthread_mutex_unlock(&vt_hist_mu);
    char *r = vt_py_call(on ? "history_on" : "history_off", err, sizeof err);
    int done = r && !strcmp(r, on ? "on" : "off"), again = r && !strncmp(r, "later", 5);
    pthread_mutex_lock(&vt_hist_mu);
    uint64_t now = vt_now_ns();
    vt_hist_queued = 0;
    if (done) {
        vt_hist_window = on;
        vt_hist_due_ns = now + vt_window_ns(on);
    } else if (again) {
        vt_hist_due_ns = now + VT_HIST_AGAIN_NS;
    } else {
        /* Torch gone, or the switch raised: sampling ends, said in the next dumps. */
        snprintf(vt_hist_result, sizeof vt_hist_result, "%s sampling stopped: %.120s", vt_hist_window ? "on" : "off",
                 r ? r : err);
    }
    pthread_mutex_unlock(&vt_hist_mu);
    if (!done && !again)
        atomic_store(&vt_hotdata.history_state, VT_HIST_DONE);
    vt_post(VT_POST_HISTORY); /* the dumper sleeps until the next switch is due: from now */
    free(r);
    return 0;
}

static void vt_history_sample(void)
{
    pthread_mutex_lock(&vt_hist_mu);
    uint64_t now = vt_now_ns();
    if (!vt_hist_queued && now >= vt_hist_due_ns) {
        /* Not while the interpreter shuts down: whatever state the history has then no longer costs. */
        if (vt_py_running() && vt_py_pending(vt_history_switch, NULL) == 0)
            vt_hist_queued = 1;
        else
            vt_hist_due_ns = now + VT_HIST_AGAIN_NS;
    }
    pthread_mutex_unlock(&vt_hist_mu);
}

void vt_history_work(void)
{
    int state = atomic_load(&vt_hotdata.history_state);
    if (state == VT_HIST_SAMPLING) {
        vt_history_sample();
        return;
    }
    if (state != VT_HIST_ASKED)
        return;
    if (!vt_py_hosted()) {
        atomic_store(&vt_hotdata.history_state, VT_HIST_DONE);
        return;
    }
    /* Queued before it is scheduled: the main thread may run it at once, and it decides the next state. */
    atomic_store(&vt_hotdata.history_state, VT_HIST_QUEUED);
    if (!vt_py_running() || vt_py_pending(vt_history_arm, NULL) != 0) {
        pthread_mutex_lock(&vt_hist_mu);
        vt_hist_due_ns = vt_now_ns() + VT_HIST_RETRY_NS;
        pthread_mutex_unlock(&vt_hist_mu);
        atomic_store(&vt_hotdata.history_state, VT_HIST_WAIT);
    }
}

int vt_history_wait_ms(void)
{
    int state = atomic_load(&vt_hotdata.history_state);
    if (state != VT_HIST_WAIT && state != VT_HIST_SAMPLING)
        return -1;
    pthread_mutex_lock(&vt_hist_mu);
    uint64_t due = vt_hist_due_ns, now = vt_now_ns();
    int queued = vt_hist_queued;
    pthread_mutex_unlock(&vt_hist_mu);
    if (state == VT_HIST_SAMPLING)
        return queued ? VT_HIST_QUEUED_MS : now >= due ? 0 : (int)((due - now) / 1000000u) + 1;
    if (now >= due) {
        /* Due: the next allocation asks again. */
        int want = VT_HIST_WAIT;
        atomic_compare_exchange_strong(&vt_hotdata.history_state, &want, VT_HIST_ASK);
        return -1;
    }
    return (int)((due - now) / 1000000u) + 1;
}

VT_MODULE(history, .init = vt_history_init, .child = vt_history_atfork_child);
