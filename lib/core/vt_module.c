/* vt_module.h. The rows are read from the "vt_modules" section once, in the constructor, and sorted by
 * rank into a fixed array: nothing is allocated, and a fork handler walks that array, never the section. */
#include <errno.h>
#include <pthread.h>

#include "vt_module.h"

__thread int vt_locks_held __attribute__((tls_model("initial-exec")));

extern const struct vt_module __start_vt_modules[], __stop_vt_modules[];

static const struct vt_module *vt_rows[VT_RANKS];
static int vt_nrows;
static atomic_int vt_ready;

static void vt_rows_sort(void)
{
    for (const struct vt_module *m = __start_vt_modules; m < __stop_vt_modules && vt_nrows < VT_RANKS; m++) {
        int i = vt_nrows++;
        while (i > 0 && vt_rows[i - 1]->rank > m->rank) {
            vt_rows[i] = vt_rows[i - 1];
            i--;
        }
        vt_rows[i] = m;
    }
}

static void vt_fork_prepare(void)
{
    for (int i = vt_nrows - 1; i >= 0; i--)
        if (vt_rows[i]->prepare)
            vt_rows[i]->prepare();
}

static void vt_fork_parent(void)
{
    for (int i = 0; i < vt_nrows; i++)
        if (vt_rows[i]->parent)
            vt_rows[i]->parent();
}

static void vt_fork_child(void)
{
    for (int i = 0; i < vt_nrows; i++)
        if (vt_rows[i]->child)
            vt_rows[i]->child();
    /* The child is quiet until it makes a CUDA call of its own (its signal handler, inherited, stays). */
    atomic_store(&vt_hotdata.active, 0);
}

void vt_modules_start(void)
{
    vt_rows_sort();
    for (int i = 0; i < vt_nrows; i++)
        if (vt_rows[i]->init)
            vt_rows[i]->init();
    pthread_atfork(vt_fork_prepare, vt_fork_parent, vt_fork_child);
    atomic_store(&vt_ready, 1);
}

int vt_modules_ready(void)
{
    return atomic_load(&vt_ready);
}

void vt_activate_slow(void)
{
    int want = 0;
    if (!atomic_load(&vt_ready) || !atomic_compare_exchange_strong(&vt_hotdata.active, &want, 1))
        return; /* not started yet, or another thread is activating: it will be done in a moment */
    int saved = errno;
    for (int i = 0; i < vt_nrows; i++)
        if (vt_rows[i]->activate)
            vt_rows[i]->activate();
    atomic_store(&vt_hotdata.active, 2);
    errno = saved;
}
