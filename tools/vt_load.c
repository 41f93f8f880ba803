/* Many dumps loaded side by side (vt_load.h). Each thread takes the next dump not yet taken; the parser
 * and the model keep no state outside the dump they read, so threads share nothing but the counter.
 * Two at a time, not one per core: a dump being read holds all its entries until its model is built
 * (~130 MiB at 1,000,000 allocations), so each more thread costs that much memory again; two make a
 * trend of ten such dumps 4.9 s and 502 MiB instead of 8.6 s and 406 MiB (docs/performance.md).
 * Errors are kept per dump and the first in the given order is said, so what is said does not depend
 * on which thread came first. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_cmd.h"
#include "vt_labels.h"
#include "vt_load.h"

#define VT_LOAD_THREADS 2

struct vt_loader {
    struct vt_dumpmodel *dm;
    int n, flags, shed;
    int next;          /* the next dump to take (atomic) */
    int done;          /* dumps read (atomic), for the progress line */
    int progress;      /* stderr is a terminal: say how far the reading is */
    int *status;       /* per dump: 0 loaded, VT_EXIT_USAGE bad, 1 out of memory */
    char (*err)[1024]; /* per dump: why */
};

static void *vt_load_worker(void *arg)
{
    struct vt_loader *l = arg;
    for (;;) {
        int i = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
        if (i >= l->n)
            return NULL;
        struct vt_dumpmodel *x = &l->dm[i];
        if (vt_dumpfile_read(x->path, &x->d, l->err[i], sizeof l->err[i]) < 0) {
            l->status[i] = VT_EXIT_USAGE;
            continue;
        }
        if (vt_model_build(&x->d, l->flags, &x->m) < 0) {
            vt_dumpfile_free(&x->d);
            snprintf(l->err[i], sizeof l->err[i], "out of memory");
            l->status[i] = 1;
            continue;
        }
        if (l->shed) {
            vt_model_shed(&x->m);
            vt_dumpfile_shed(&x->d);
        }
        int done = __atomic_add_fetch(&l->done, 1, __ATOMIC_RELAXED);
        if (l->progress)
            fprintf(stderr, "\rvramtrace: %d of %d dumps read", done, l->n);
    }
}

int vt_load_models(struct vt_dumpmodel *dm, int n, int model_flags, int shed)
{
    struct vt_loader l = {dm, n, model_flags, shed, 0, 0, 0, calloc((size_t)n, sizeof(int)), calloc((size_t)n, sizeof *l.err)};
    if (!l.status || !l.err) {
        free(l.status);
        free(l.err);
        fprintf(stderr, "vramtrace: out of memory\n");
        return 1;
    }
    /* A long read says how far it is, on a terminal only: never into a pipe or a file. */
    l.progress = n > 1 && isatty(2);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int want = (int)(cpus < 1 ? 1 : cpus > VT_LOAD_THREADS ? VT_LOAD_THREADS : cpus);
    if (want > n)
        want = n;
    pthread_t t[VT_LOAD_THREADS];
    int started = 0;
    for (; started < want - 1; started++) /* this thread is one of them */
        if (pthread_create(&t[started], NULL, vt_load_worker, &l) != 0)
            break;
    vt_load_worker(&l);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    if (l.progress)
        fputs("\r\033[K", stderr); /* the line taken away again */
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        if ((rc = l.status[i]))
            fprintf(stderr, "vramtrace: %s\n", l.err[i]);
    /* One name for one line across the series (vt_labels.h). */
    if (!rc) {
        struct vt_model **ms = malloc((n > 0 ? (size_t)n : 1) * sizeof *ms);
        for (int i = 0; ms && i < n; i++)
            ms[i] = &dm[i].m;
        if (!ms || vt_labels_part_models(ms, (size_t)n) < 0) {
            fprintf(stderr, "vramtrace: out of memory\n");
            rc = 1;
        }
        free(ms);
    }
    if (rc)
        for (int i = 0; i < n; i++)
            if (!l.status[i]) {
                vt_model_free(&dm[i].m);
                vt_dumpfile_free(&dm[i].d);
            }
    free(l.status);
    free(l.err);
    return rc;
}
