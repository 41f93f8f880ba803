/* The library's life in a process, at the top floor: the constructor, the destructor (the exit dump, the
 * metrics file removed, the closing note) and vramtrace_dump(). Nothing visible happens before the first
 * CUDA call: the constructor runs each module's init (settings read, messages held), and that is all. A
 * process that never uses CUDA (a shell, ls, a launcher of the real program) keeps its signals, threads
 * and file descriptors as they were, and writes no dump. The first CUDA call runs each module's
 * activation (lib/core/vt_module.h): held messages said, the dump signal's handler installed, then the
 * dumper thread started, named "vramtrace": vramtrace dump takes that thread as the sign that signals
 * are handled. */
#include <errno.h>
#include <stdatomic.h>

#include "vramtrace.h"
#include "vt_bridge.h"
#include "vt_clock.h"
#include "vt_config.h"
#include "vt_dumper.h"
#include "vt_endnote.h"
#include "vt_hot.h"
#include "vt_log.h"
#include "vt_metrics_file.h"
#include "vt_module.h"
#include "vt_real.h"

int vramtrace_dump(char *path, size_t len)
{
    if (!vt_modules_ready())
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

__attribute__((constructor)) static void vt_init(void)
{
    int saved = errno;
    vt_real_dlsym_resolve();
    /* The stamp clock decided (it reads /proc/cpuinfo) before any hook stamps with it. */
    (void)vt_ticks();
    vt_modules_start();
    errno = saved;
}

__attribute__((destructor)) static void vt_fini(void)
{
    int saved = errno;
    int want = vt_modules_ready() && atomic_load(&vt_hotdata.active) == 2 && vt_cfg.at_exit;
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
