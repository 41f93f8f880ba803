/* Library start-up and the dumper thread. The signal handler only writes one byte into a pipe (and
 * chains to a handler installed before ours); the dumper thread, with every signal blocked, turns
 * each byte into a dump. Dumps from any source are serialized by one mutex, never taken by the
 * program's threads except through vramtrace_dump(). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace.h"
#include "vt_blocks.h"
#include "vt_bridge.h"
#include "vt_config.h"
#include "vt_dump.h"
#include "vt_dumper.h"
#include "vt_log.h"
#include "vt_pycapture.h"
#include "vt_pystack.h"
#include "vt_real.h"
#include "vt_stack.h"
#include "vt_table.h"
#include "vt_thread.h"

static int vt_pipe[2] = {-1, -1};
static struct sigaction vt_prev_action;
static pthread_mutex_t vt_dump_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int vt_oom_pending;
static atomic_int vt_ready;

static void vt_on_signal(int sig, siginfo_t *info, void *uctx)
{
    int saved = errno;
    char b = 's';
    if (vt_pipe[1] >= 0 && write(vt_pipe[1], &b, 1) < 0) {
        /* A full pipe already holds a request: nothing is lost. */
    }
    errno = saved;
    if (vt_prev_action.sa_flags & SA_SIGINFO) {
        if (vt_prev_action.sa_sigaction)
            vt_prev_action.sa_sigaction(sig, info, uctx);
    } else if (vt_prev_action.sa_handler != SIG_DFL && vt_prev_action.sa_handler != SIG_IGN) {
        vt_prev_action.sa_handler(sig);
    }
}

/* Set when the exit dump begins: no dump may follow it (the driver is being torn down, and the exit
 * dump must stay the last). */
static atomic_int vt_exiting;

static int vt_dump_now(enum vt_reason reason, char *path, size_t len)
{
    if (reason != VT_REASON_EXIT && atomic_load(&vt_exiting))
        return -1;
    /* The bridges run before the dump lock is taken: a thread holding the GIL may be waiting for it. */
    struct vt_snapshot snap;
    int have_snap;
    char *bridge = vt_bridge_collect(reason, &snap, &have_snap);
    pthread_mutex_lock(&vt_dump_lock);
    int r = -1;
    if (reason == VT_REASON_EXIT || !atomic_load(&vt_exiting))
        r = vt_dump_write(reason, bridge, have_snap ? &snap : NULL, path, len);
    else if (have_snap)
        vt_snapshot_free(&snap);
    pthread_mutex_unlock(&vt_dump_lock);
    free(bridge);
    return r;
}

static void *vt_dumper_main(void *arg)
{
    (void)arg;
    int interval = vt_cfg.interval > 0 ? (int)(vt_cfg.interval * 1000 + 0.5) : -1;
    if (interval == 0)
        interval = 1;
    uint64_t next_dump = interval > 0 ? vt_now_ns() + (uint64_t)interval * 1000000u : 0;
    for (;;) {
        int timeout = vt_bridge_history_wait_ms();
        if (next_dump) {
            uint64_t now = vt_now_ns();
            int left = now >= next_dump ? 0 : (int)((next_dump - now) / 1000000u) + 1;
            timeout = timeout < 0 || left < timeout ? left : timeout;
        }
        struct pollfd p = {.fd = vt_pipe[0], .events = POLLIN};
        int n = poll(&p, 1, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return NULL;
        }
        if (n == 0) {
            if (next_dump && vt_now_ns() >= next_dump) {
                vt_dump_now(VT_REASON_INTERVAL, NULL, 0);
                next_dump = vt_now_ns() + (uint64_t)interval * 1000000u;
            }
            continue;
        }
        char buf[64];
        ssize_t got = read(vt_pipe[0], buf, sizeof buf);
        if (got <= 0) {
            if (got < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            return NULL;
        }
        int sig = 0, oom = 0, hist = 0;
        for (ssize_t i = 0; i < got; i++) {
            sig |= buf[i] == 's';
            oom |= buf[i] == 'o';
            hist |= buf[i] == 'h';
        }
        if (hist)
            vt_bridge_history_work();
        if (oom) {
            atomic_store(&vt_oom_pending, 0);
            vt_dump_now(VT_REASON_OOM, NULL, 0);
        }
        if (sig)
            vt_dump_now(VT_REASON_SIGNAL, NULL, 0);
    }
}

static int vt_start_dumper(void)
{
    if (pipe2(vt_pipe, O_CLOEXEC) != 0) {
        vt_say_once(VT_ONCE_THREAD, "cannot create the dump pipe: %s; only exit and API dumps are written",
                    strerror(errno));
        vt_pipe[0] = vt_pipe[1] = -1;
        return -1;
    }
    fcntl(vt_pipe[1], F_SETFL, O_NONBLOCK);
    int err = vt_thread_start(vt_dumper_main, NULL);
    if (err) {
        vt_say_once(VT_ONCE_THREAD, "cannot start the dumper thread: %s; only exit and API dumps are written",
                    strerror(err));
        close(vt_pipe[0]);
        close(vt_pipe[1]);
        vt_pipe[0] = vt_pipe[1] = -1;
        return -1;
    }
    return 0;
}

static void vt_install_signal(void)
{
    if (!vt_cfg.signal || vt_pipe[1] < 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = vt_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(vt_cfg.signal, &sa, &vt_prev_action) != 0)
        vt_say_once(VT_ONCE_SIGNAL, "cannot install the dump signal handler: %s", strerror(errno));
}

void vt_dumper_request_oom(void)
{
    if (!vt_cfg.on_oom || vt_pipe[1] < 0 || atomic_exchange(&vt_oom_pending, 1))
        return;
    int saved = errno;
    char b = 'o';
    if (write(vt_pipe[1], &b, 1) < 0)
        atomic_store(&vt_oom_pending, 0);
    errno = saved;
}

void vt_dumper_request_history(void)
{
    int saved = errno;
    char b = 'h';
    if (vt_pipe[1] < 0 || write(vt_pipe[1], &b, 1) < 0)
        atomic_store(&vt_bridge_history_state, 0); /* asked again at a later allocation */
    errno = saved;
}

int vramtrace_dump(char *path, size_t len)
{
    if (!atomic_load(&vt_ready))
        return -1;
    int saved = errno;
    int r = vt_dump_now(VT_REASON_API, path, len);
    errno = saved;
    return r;
}

static void vt_atfork_prepare(void)
{
    pthread_mutex_lock(&vt_dump_lock);
    vt_stack_atfork_prepare();
    vt_pystack_atfork_prepare();
    vt_table_atfork_prepare();
}

static void vt_atfork_parent(void)
{
    vt_table_atfork_parent();
    vt_pystack_atfork_parent();
    vt_stack_atfork_parent();
    pthread_mutex_unlock(&vt_dump_lock);
}

static void vt_atfork_child(void)
{
    vt_table_atfork_child();
    vt_pystack_atfork_child();
    vt_stack_atfork_child();
    vt_pycapture_atfork_child();
    vt_bridge_atfork_child();
    vt_blocks_atfork_child();
    pthread_mutex_unlock(&vt_dump_lock);
    vt_dump_atfork_child();
    atomic_store(&vt_oom_pending, 0);
    /* The dumper thread did not survive the fork: the child gets its own pipe and thread. */
    if (vt_pipe[0] >= 0) {
        close(vt_pipe[0]);
        close(vt_pipe[1]);
    }
    vt_start_dumper();
}

__attribute__((constructor)) static void vt_init(void)
{
    int saved = errno;
    vt_real_dlsym_resolve();
    vt_config_load();
    vt_bridge_init();
    vt_pycapture_init();
    vt_dump_init();
    vt_stack_init();
    vt_start_dumper();
    vt_install_signal();
    pthread_atfork(vt_atfork_prepare, vt_atfork_parent, vt_atfork_child);
    atomic_store(&vt_ready, 1);
    errno = saved;
}

__attribute__((destructor)) static void vt_fini(void)
{
    int saved = errno;
    atomic_store(&vt_exiting, 1);
    if (atomic_load(&vt_ready) && vt_cfg.at_exit)
        vt_dump_now(VT_REASON_EXIT, NULL, 0);
    errno = saved;
}
