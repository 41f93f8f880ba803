/* vt_dumper.h. The thread sleeps on the post box (lib/core/vt_post.h: the signal handler, the dump
 * socket's listener, the hooks and the bridges post there) with a timeout for the next interval dump,
 * history retry or delayed OOM dump. A request that arrives during a dump gives one more dump after it,
 * so the answer to a signal is always a dump taken after the signal. The program's threads wait for
 * vramtrace_dump() and the exit dump through one request slot. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vt_bridge.h"
#include "vt_config.h"
#include "vt_history.h"
#include "vt_doing.h"
#include "vt_dumper.h"
#include "vt_fd.h"
#include "vt_listen.h"
#include "vt_metrics_file.h"
#include "vt_log.h"
#include "vt_module.h"
#include "vt_post.h"
#include "vt_signal.h"
#include "vt_table.h"
#include "vt_thread.h"

/* A dump asked for by a program thread; freed by whoever is last: the dumper when the asker gave up. */
struct vt_sync {
    enum vt_reason reason;
    char *bridge;
    struct vt_snapshot snap;
    int have_snap;
    int done, result, abandoned;
    int on_heap; /* the exit request is not: the exiting thread may hold malloc's lock (exit() from a signal
                    handler that interrupted malloc), so it allocates nothing */
    char path[4096];
};

static struct vt_sync vt_exit_req;

static atomic_int vt_started; /* 0 not yet, 1 running, -1 could not start */
static atomic_int vt_exiting;   /* exit() began: no dump of the dumper's own may start (the driver is being
                                   torn down by the libraries' destructors) */
static atomic_int vt_exit_taken; /* the exit dump was asked for: nothing may follow it */
static atomic_int vt_own_busy;   /* the dumper is writing a dump of its own (signal, interval, OOM) */
static pthread_mutex_t vt_start_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t vt_sync_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vt_sync_cv; /* monotonic */
static struct vt_sync *vt_sync_req;
/* Without a dumper thread, program threads write their own dumps, one at a time. */
static pthread_mutex_t vt_inline_mu = PTHREAD_MUTEX_INITIALIZER;

/* Interval dumps of this process, oldest first, for VRAMTRACE_KEEP. */
static char **vt_kept;
static size_t vt_nkept, vt_kept_cap;

static void vt_dumper_init(void)
{
    vt_cond_init_monotonic(&vt_sync_cv);
}

static void vt_keep_interval(const char *path)
{
    if (!vt_cfg.keep)
        return;
    if (vt_nkept == vt_kept_cap) {
        size_t cap = vt_kept_cap ? 2 * vt_kept_cap : 16;
        char **k = realloc(vt_kept, cap * sizeof *k);
        if (!k)
            return;
        vt_kept = k;
        vt_kept_cap = cap;
    }
    char *copy = strdup(path);
    if (!copy)
        return;
    vt_kept[vt_nkept++] = copy;
    while (vt_nkept > (size_t)vt_cfg.keep) {
        unlink(vt_kept[0]);
        free(vt_kept[0]);
        memmove(vt_kept, vt_kept + 1, --vt_nkept * sizeof *vt_kept);
    }
}

/* How a dump of the dumper's own is written. */
enum vt_own_to { VT_TO_FILE, VT_TO_METRICS, VT_TO_MEMORY };

/* A dump of the dumper's own (signal, request, interval, oom): to a file of the series (its path, and
 * with keep a descriptor of it), to the metrics file's figures, or to a memory file (*keep); bridges
 * first, with no lock of ours held. */
static int vt_dump_own_to(enum vt_reason reason, enum vt_own_to to, char *path, size_t len, char *why, size_t whylen,
                          int *keep)
{
    atomic_store(&vt_own_busy, 1);
    if (atomic_load(&vt_exiting)) { /* checked after the flag is up: vt_dumper_quiesce sees one or the other */
        atomic_store(&vt_own_busy, 0);
        if (why && whylen)
            snprintf(why, whylen, "the process is exiting");
        return -1;
    }
    struct vt_snapshot snap;
    int have_snap, r = 0;
    vt_doing_set("starting a dump");
    char *bridge = vt_bridge_collect(reason, &snap, &have_snap);
    vt_doing_set("writing a dump");
    if (to == VT_TO_METRICS) {
        vt_metrics_file_write(bridge, have_snap ? &snap : NULL);
    } else if (to == VT_TO_FILE) {
        r = vt_dump_write(reason, bridge, have_snap ? &snap : NULL, path, len, why, whylen, keep);
    } else {
        int fd = vt_fd_high(memfd_create("vramtrace-dump", MFD_CLOEXEC));
        r = fd >= 0 ? vt_dump_write_fd(fd, reason, bridge, have_snap ? &snap : NULL) : -1;
        if (fd < 0 && have_snap)
            vt_snapshot_free(&snap);
        if (r < 0 && why && whylen)
            snprintf(why, whylen, "no dump in memory: %s", strerror(errno));
        if (r < 0 && fd >= 0)
            close(fd);
        *keep = r < 0 ? -1 : fd;
    }
    free(bridge);
    vt_doing_set(NULL);
    atomic_store(&vt_own_busy, 0);
    return r;
}

static int vt_dump_own(enum vt_reason reason, char *path, size_t len, char *why, size_t whylen)
{
    return vt_dump_own_to(reason, VT_TO_FILE, path, len, why, whylen, NULL);
}

static void vt_serve_sync(void)
{
    pthread_mutex_lock(&vt_sync_mu);
    struct vt_sync *r = vt_sync_req;
    pthread_mutex_unlock(&vt_sync_mu);
    if (!r)
        return;
    if (r->reason == VT_REASON_EXIT && !r->bridge) {
        int have;
        r->bridge = vt_bridge_collect(VT_REASON_EXIT, &r->snap, &have);
        r->have_snap = have;
    }
    int result = vt_dump_write(r->reason, r->bridge, r->have_snap ? &r->snap : NULL, r->path, sizeof r->path, NULL, 0,
                               NULL);
    r->have_snap = 0; /* the writer freed it */
    pthread_mutex_lock(&vt_sync_mu);
    vt_sync_req = NULL;
    r->result = result;
    r->done = 1;
    int gone = r->abandoned;
    pthread_cond_broadcast(&vt_sync_cv);
    pthread_mutex_unlock(&vt_sync_mu);
    if (gone) {
        free(r->bridge);
        if (r->on_heap)
            free(r);
    }
}

/* The requests that came over the dump socket: one dump to a file for all that asked for one, one in
 * memory for all that asked for that, each answered with its own descriptor of it. */
static void vt_serve_requests(void)
{
    struct vt_listen_req req[16];
    int n = vt_listen_take(req, 16);
    for (int mem = 0; mem < 2; mem++) {
        int want = 0;
        for (int i = 0; i < n; i++)
            want += req[i].peek == mem;
        if (!want)
            continue;
        char path[4096], why[512] = "";
        int fd = -1;
        int r = vt_dump_own_to(VT_REASON_REQUEST, mem ? VT_TO_MEMORY : VT_TO_FILE, path, sizeof path, why, sizeof why,
                               &fd);
        for (int i = 0; i < n; i++) {
            if (req[i].peek != mem)
                continue;
            int give = r == 0 && fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
            vt_listen_answer(&req[i], mem ? NULL : path, give, r == 0 && give < 0 ? "no descriptor to send it with" : why);
            if (give >= 0)
                close(give);
        }
        if (fd >= 0)
            close(fd);
    }
}

static uint64_t vt_min_due(uint64_t a, uint64_t b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

static void *vt_dumper_main(void *arg)
{
    (void)arg;
    uint64_t interval_ns = vt_cfg.interval > 0 ? (uint64_t)(vt_cfg.interval * 1e9) : 0;
    uint64_t next_interval = interval_ns ? vt_now_ns() + interval_ns : 0, oom_after = 0;
    /* The metrics file: first at once (it is there as soon as the program uses CUDA), then at its period. */
    uint64_t metrics_ns = vt_metrics_file_on() ? (uint64_t)(vt_cfg.metrics_interval * 1e9) : 0;
    uint64_t next_metrics = metrics_ns ? vt_now_ns() : 0;
    for (;;) {
        vt_bridge_warm(); /* once, while the program loads */
        int hist_ms = vt_history_wait_ms();
        uint64_t now = vt_now_ns();
        uint64_t due = vt_min_due(next_interval, hist_ms >= 0 ? now + (uint64_t)hist_ms * 1000000u : 0);
        due = vt_min_due(due, next_metrics);
        if (vt_post_up(VT_POST_OOM))
            due = vt_min_due(due, oom_after > now ? oom_after : now);
        vt_post_wait(due);
        vt_post_progress();
        vt_post_take(VT_POST_SYNC);
        vt_serve_sync();
        if (atomic_load(&vt_exiting)) {
            next_interval = next_metrics = 0; /* nothing follows the exit dump: sleep until the process ends */
            vt_post_take(VT_POST_OOM);
            vt_post_take(VT_POST_HISTORY);
            if (vt_post_take(VT_POST_REQUEST))
                vt_serve_requests(); /* each is told the process is exiting */
            continue;
        }
        vt_post_take(VT_POST_HISTORY); /* the history's state is looked at in every pass */
        vt_history_work(); /* a request, or a window of torch's history that ends or begins */
        now = vt_now_ns();
        if (vt_post_up(VT_POST_OOM) && now >= oom_after) {
            vt_post_take(VT_POST_OOM);
            vt_dump_own(VT_REASON_OOM, NULL, 0, NULL, 0);
            oom_after = vt_now_ns() + (uint64_t)VT_OOM_DUMP_GAP_S * 1000000000u;
        }
        if (vt_post_take(VT_POST_SIGNAL))
            vt_dump_own(VT_REASON_SIGNAL, NULL, 0, NULL, 0);
        if (vt_post_take(VT_POST_REQUEST))
            vt_serve_requests();
        if (next_metrics && vt_now_ns() >= next_metrics) {
            vt_dump_own_to(VT_REASON_INTERVAL, VT_TO_METRICS, NULL, 0, NULL, 0, NULL);
            /* Period from start to start; after a late one, the next a period later. */
            next_metrics += metrics_ns;
            if (next_metrics < vt_now_ns())
                next_metrics = vt_now_ns() + metrics_ns;
        }
        if (next_interval && vt_now_ns() >= next_interval) {
            char path[4096];
            if (vt_dump_own(VT_REASON_INTERVAL, path, sizeof path, NULL, 0) == 0)
                vt_keep_interval(path);
            next_interval = vt_now_ns() + interval_ns;
        }
    }
    return NULL;
}

int vt_dumper_start(void)
{
    int s = atomic_load(&vt_started);
    if (s)
        return s > 0 ? 0 : -1;
    pthread_mutex_lock(&vt_start_mu);
    if (!(s = atomic_load(&vt_started))) {
        int err = vt_thread_start(vt_dumper_main, NULL, "vramtrace");
        s = err ? -1 : 1;
        atomic_store(&vt_started, s);
        if (!err) {
            vt_post_open();
            vt_listen_start();
        }
        if (err)
            vt_say_once(VT_ONCE_THREAD, "cannot start the dumper thread: %s; no dumps on signal, interval or "
                        "out-of-memory", strerror(err));
    }
    pthread_mutex_unlock(&vt_start_mu);
    return s > 0 ? 0 : -1;
}

/* How long a waiting thread gives a dump that makes no progress: a dump's bridge may wait that long
 * for the GIL, and writing never pauses for more than a moment. */
static double vt_stall_limit(void)
{
    return 2.0 + vt_cfg.bridge_timeout;
}

/* Tells a slow dump from a stuck one: stalled once the dumper has made no progress for vt_stall_limit(). */
struct vt_watch {
    unsigned long seen;
    uint64_t last_move, limit;
};

static void vt_watch_start(struct vt_watch *w)
{
    w->seen = vt_post_progress_count();
    w->last_move = vt_now_ns();
    w->limit = (uint64_t)(vt_stall_limit() * 1e9);
}

static int vt_watch_stalled(struct vt_watch *w)
{
    unsigned long now_seen = vt_post_progress_count();
    if (now_seen != w->seen) {
        w->seen = now_seen;
        w->last_move = vt_now_ns();
        return 0;
    }
    return vt_now_ns() - w->last_move > w->limit;
}

/* Hands r to the dumper and waits while it makes progress. 0 when it was written. */
static int vt_sync_run(struct vt_sync *r)
{
    struct vt_watch w;
    vt_watch_start(&w);
    pthread_mutex_lock(&vt_sync_mu);
    for (;;) {
        if (!r->done && vt_sync_req != r && !vt_sync_req) {
            vt_sync_req = r;
            vt_post(VT_POST_SYNC);
        }
        if (r->done)
            break;
        struct timespec t = vt_deadline(0.05);
        pthread_cond_timedwait(&vt_sync_cv, &vt_sync_mu, &t);
        if (vt_watch_stalled(&w))
            break;
    }
    int done = r->done, result = r->result;
    if (!done) {
        if (vt_sync_req != r) {
            free(r->bridge);
            if (r->have_snap)
                vt_snapshot_free(&r->snap);
            pthread_mutex_unlock(&vt_sync_mu);
            if (r->on_heap)
                free(r);
            return -1;
        }
        r->abandoned = 1; /* the dumper frees it */
    }
    pthread_mutex_unlock(&vt_sync_mu);
    return done ? result : -1;
}

static int vt_sync_dump(enum vt_reason reason, char *bridge, struct vt_snapshot *snap, int have_snap, char *path,
                        size_t len)
{
    if (vt_dumper_start() < 0) {
        pthread_mutex_lock(&vt_inline_mu);
        int r = vt_dump_write(reason, bridge, have_snap ? snap : NULL, path, len, NULL, 0, NULL);
        pthread_mutex_unlock(&vt_inline_mu);
        free(bridge);
        return r;
    }
    struct vt_sync *r = reason == VT_REASON_EXIT ? &vt_exit_req : calloc(1, sizeof *r);
    if (!r) {
        free(bridge);
        if (have_snap)
            vt_snapshot_free(snap);
        vt_say_once(VT_ONCE_NOMEM, "out of memory: no dump written");
        return -1;
    }
    r->on_heap = r != &vt_exit_req;
    r->reason = reason;
    r->bridge = bridge;
    if (have_snap)
        r->snap = *snap;
    r->have_snap = have_snap;
    int result = vt_sync_run(r);
    if (result == 0 || r->done) {
        /* Done: still ours to free (only an abandoned request is the dumper's). */
        if (result == 0 && path && len) {
            strncpy(path, r->path, len - 1);
            path[len - 1] = 0;
        }
        free(r->bridge);
        if (r->on_heap)
            free(r);
    } else if (reason == VT_REASON_EXIT) {
        vt_say_once(VT_ONCE_EXIT, "the exit dump made no progress for %.0f s (a lock it needs is held by a "
                    "thread that exit() interrupted?); the program exits without it", vt_stall_limit());
    }
    return result;
}

int vt_dumper_api(char *bridge, struct vt_snapshot *snap, int have_snap, char *path, size_t len)
{
    if (atomic_load(&vt_exiting)) {
        free(bridge);
        if (have_snap)
            vt_snapshot_free(snap);
        return -1;
    }
    return vt_sync_dump(VT_REASON_API, bridge, snap, have_snap, path, len);
}

void vt_dumper_quiesce(void)
{
    atomic_store(&vt_exiting, 1);
    /* A dump of the dumper's own that is under way may be asking the driver: let it finish before the
     * libraries' destructors tear the driver down, while it makes progress. */
    struct vt_watch w;
    vt_watch_start(&w);
    while (atomic_load(&vt_own_busy) && !vt_watch_stalled(&w)) {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
}

int vt_dumper_exiting(void)
{
    return atomic_load(&vt_exiting);
}

void vt_dumper_exit(int want_dump)
{
    atomic_store(&vt_exiting, 1);
    if (atomic_exchange(&vt_exit_taken, 1) || !want_dump)
        return;
    vt_sync_dump(VT_REASON_EXIT, NULL, NULL, 0, NULL, 0);
}

/* The dumper did not survive the fork; what it was asked for was the parent's. The child starts its
 * own at its first CUDA call. */
static void vt_dumper_child(void)
{
    vt_mutex_reset(&vt_start_mu);
    vt_mutex_reset(&vt_sync_mu);
    vt_mutex_reset(&vt_inline_mu);
    vt_dumper_init();
    atomic_store(&vt_started, 0);
    atomic_store(&vt_own_busy, 0);
    vt_sync_req = NULL;
    for (size_t i = 0; i < vt_nkept; i++)
        free(vt_kept[i]);
    vt_nkept = 0;
}

/* Started at activation, after the signal's handler (vt_signal.c): the thread's name is what vramtrace
 * dump takes as the sign that signals are handled. What stops it at exit is registered then, after the
 * libraries loaded so far registered theirs, so that it runs before their destructors (and before the
 * driver's teardown). A fork child keeps it. */
void vt_dumper_up(void)
{
    vt_dumper_start();
    static atomic_int registered;
    if (!atomic_exchange(&registered, 1))
        atexit(vt_dumper_quiesce);
}

VT_MODULE(dumper, .init = vt_dumper_init, .activate = vt_dumper_up, .child = vt_dumper_child);
