/* The library's modules, each registering one row: what it does when the library starts (init), at
 * the first CUDA call (activate) and around a fork (prepare, parent, child). Rows are registered where
 * the module is (VT_MODULE at the foot of its file), so no file names every module's handlers; this
 * file only orders them, ground first. Also the activation every wrapper calls. */
#ifndef VT_MODULE_H
#define VT_MODULE_H

#include <stdatomic.h>

#include "vt_hot.h"

/* The order rows run in, ground first, as the floors stand (lib/README.md): init, activate, the fork
 * parent's and child's handlers in this order; fork's prepare in the reverse, which is the lock order
 * (a module's locks are taken before those of the modules it stands on: a stack's shard before the
 * table's, a pending batch's before the table's, a stripe's last). */
enum vt_rank {
    VT_RANK_config, VT_RANK_log, VT_RANK_post, VT_RANK_stripe, VT_RANK_selfcost,   /* lib/core */
    VT_RANK_table, VT_RANK_pending,                                                /* lib/table */
    VT_RANK_pycapture, VT_RANK_pystack, VT_RANK_unload, VT_RANK_stack,            /* lib/stacks */
    VT_RANK_blocks, VT_RANK_torch, VT_RANK_graph, VT_RANK_nvtx,                                 /* lib/hooks */
    VT_RANK_dump,                                                                  /* lib/dump */
    VT_RANK_bridge, VT_RANK_history,                                               /* lib/bridges */
    VT_RANK_signal, VT_RANK_listen, VT_RANK_dumper, VT_RANK_metrics_file,          /* lib/roof */
    VT_RANKS
};

struct vt_module {
    const char *name;
    int rank;
    void (*init)(void);     /* in the library's constructor: no thread started, no signal touched */
    void (*activate)(void); /* at the process's first CUDA call (or vramtrace_dump()), once */
    void (*prepare)(void);  /* pthread_atfork: before fork, in the lock order */
    void (*parent)(void);
    void (*child)(void);    /* in the child: locks new, threads gone, what they were asked forgotten */
};

/* At the foot of a module's file: VT_MODULE(table, .prepare = ..., .child = ...). The row lands in the
 * library's "vt_modules" section, which the linker bounds with __start_/__stop_ symbols. */
#define VT_MODULE(id, ...)                                                                            \
    static const struct vt_module vt_module_row_##id                                                   \
        __attribute__((used, section("vt_modules"), aligned(sizeof(void *)))) = {                      \
            .name = #id, .rank = VT_RANK_##id, __VA_ARGS__}

/* The constructor's work: every row's init in order, the fork handlers installed, then ready. */
void vt_modules_start(void);
/* Whether vt_modules_start() finished (a hook called from an earlier constructor comes before it). */
int vt_modules_ready(void);

/* How many of vramtrace's own locks the calling thread holds (lib/core/vt_lock.h): an exit() from a
 * signal handler that interrupted our bookkeeping finds it non-zero. */
extern __thread int vt_locks_held __attribute__((tls_model("initial-exec")));

void vt_activate_slow(void) __attribute__((cold));

/* Called by every wrapper and public hook: cheap once active. */
static inline void vt_activate(void)
{
    if (__builtin_expect(atomic_load_explicit(&vt_hotdata.active, memory_order_relaxed) != 2, 0))
        vt_activate_slow();
}

#endif
