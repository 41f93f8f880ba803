/* vt_lifecycle.h. Nothing visible happens before the first CUDA call: the constructor reads the
 * settings (messages held), and that is all. A process that never uses CUDA (a shell, ls, a
 * launcher of the real program) keeps its signals, threads and file descriptors as they were, and
 * writes no dump. The first CUDA call installs the dump signal's handler, then starts the dumper
 * thread, named "vramtrace": vramtrace dump takes that thread as the sign that signals are handled. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "vramtrace.h"
#include "vt_blocks.h"
#include "vt_bridge.h"
#include "vt_clock.h"
#include "vt_history.h"
#include "vt_config.h"
#include "vt_dump.h"
#include "vt_dumper.h"
#include "vt_endnote.h"
#include "vt_hot.h"
#include "vt_metrics_file.h"
#include "vt_driver_graph.h"
#include "vt_lifecycle.h"
#include "vt_selfcost.h"
#include "vt_lock.h"
#include "vt_log.h"
#include "vt_nvtx.h"
#include "vt_pending.h"
#include "vt_pycapture.h"
#include "vt_pystack.h"
#include "vt_real.h"
#include "vt_signal.h"
#include "vt_stack.h"
#include "vt_stripe.h"
#include "vt_table.h"
#include "vt_unload.h"

__thread int vt_locks_held __attribute__((tls_model("initial-exec")));
static atomic_int vt_ready;

/* The dumper thread, and what stops it at exit: registered now, after the libraries loaded so far
 * registered theirs, so that it runs before their destructors (and before the driver's teardown). A
 * fork child keeps it. */
static void vt_dumper_up(void)
{
    vt_dumper_start();
    static atomic_int registered;
    if (!atomic_exchange(&registered, 1))
        atexit(vt_dumper_quiesce);
}

void vt_activate_slow(void)
{
    int want = 0;
    if (!atomic_load(&vt_ready) || !atomic_compare_exchange_strong(&vt_hotdata.active, &want, 1))
        return; /* not started yet, or another thread is activating: it will be done in a moment */
    int saved = errno;
    vt_log_release();
    vt_stack_prepare();
    vt_signal_install();
    vt_dumper_up();
    atomic_store(&vt_hotdata.active, 2);
    errno = saved;
}

int vramtrace_dump(char *path, size_t len)
{
    if (!atomic_load(&vt_ready))
        return -1;
    int saved = errno;
    /* The program asked vramtrace itself: it hears why a dump failed, and gets the dumper thread now
     * (not the signal or the exit dump, which wait for its first CUDA call), so that what the first dump
     * arms on the main thread (torch's history, CuPy's memory hook) is not left until that call. */
    vt_log_release();
    vt_dumper_up();
    /* The bridges run on this thread: it may hold the GIL they need. */
    struct vt_snapshot snap;
    int have_snap;
    char *bridge = vt_bridge_collect(VT_REASON_API, &snap, &have_snap);
    int r = vt_dumper_api(bridge, &snap, have_snap, path, len);
    errno = saved;
    return r;
}

static void vt_atfork_prepare(void)
{
    vt_stack_atfork_prepare();
    vt_pystack_atfork_prepare();
    vt_pending_atfork_prepare(); /* before the table's: a batch's lock is taken before the table's */
    vt_table_atfork_prepare();
    vt_stripe_atfork_prepare(); /* last: a thread picking its stripe holds no other lock of ours meanwhile */
}

static void vt_atfork_parent(void)
{
    vt_stripe_atfork_parent();
    vt_table_atfork_parent();
    vt_pending_atfork_parent();
    vt_pystack_atfork_parent();
    vt_stack_atfork_parent();
}

static void vt_atfork_child(void)
{
    vt_stripe_atfork_child();
    vt_table_atfork_child();
    vt_pending_atfork_child();
    vt_pystack_atfork_child();
    vt_stack_atfork_child();
    vt_unload_atfork_child();
    vt_pycapture_atfork_child();
    vt_bridge_atfork_child();
    vt_history_atfork_child();
    vt_blocks_atfork_child();
    vt_dump_atfork_child();
    vt_dumper_atfork_child();
    vt_selfcost_atfork_child();
    vt_graph_atfork_child();
    vt_nvtx_atfork_child();
    vt_metrics_file_atfork_child();
    /* The child is quiet until it makes a CUDA call of its own (its signal handler, inherited, stays). */
    atomic_store(&vt_hotdata.active, 0);
}

__attribute__((constructor)) static void vt_init(void)
{
    int saved = errno;
    vt_real_dlsym_resolve();
    /* The stamp clock decided (it reads /proc/cpuinfo) before any hook stamps with it. */
    (void)vt_ticks();
    vt_config_load();
    vt_dumper_init();
    vt_bridge_init();
    vt_history_init();
    vt_pycapture_init();
    vt_dump_init();
    vt_stack_init();
    pthread_atfork(vt_atfork_prepare, vt_atfork_parent, vt_atfork_child);
    atomic_store(&vt_ready, 1);
    errno = saved;
}

__attribute__((destructor)) static void vt_fini(void)
{
    int saved = errno;
    int want = atomic_load(&vt_ready) && atomic_load(&vt_hotdata.active) == 2 && vt_cfg.at_exit;
    if (want && vt_locks_held) {
        /* exit() from a signal handler that interrupted our own bookkeeping on this thread: the table is
         * half-changed and its lock is ours. No dump, rather than a hang. */
        vt_say_once(VT_ONCE_EXIT, "exit() was called inside vramtrace's bookkeeping (from a signal handler?): "
                    "no exit dump");
        want = 0;
    }
    vt_dumper_exit(want);
    vt_metrics_file_remove();
    vt_endnote_say();
    errno = saved;
}
