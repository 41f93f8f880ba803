/* Starting vramtrace's own threads (vt_thread.h): the signal mask is inherited, so it is filled around
 * pthread_create and restored for the calling thread. And the deadlines they wait with. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vt_selfcost.h"
#include "vt_thread.h"

struct vt_thread_job {
    void *(*fn)(void *);
    void *arg;
};

/* Every thread of ours runs through here, so that its CPU time counts as vramtrace's (vt_selfcost.h). */
static void *vt_thread_main(void *p)
{
    struct vt_thread_job job = *(struct vt_thread_job *)p;
    free(p);
    int slot = vt_self_thread_begin();
    void *r = job.fn(job.arg);
    vt_self_thread_end(slot);
    return r;
}

int vt_thread_start(void *(*fn)(void *), void *arg, const char *name)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    struct vt_thread_job *job = malloc(sizeof *job);
    int err = job ? 0 : EAGAIN;
    if (job) {
        *job = (struct vt_thread_job){fn, arg};
        err = pthread_create(&t, &attr, vt_thread_main, job);
        if (err)
            free(job);
    }
    if (!err)
        pthread_setname_np(t, name);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

void vt_mutex_reset(pthread_mutex_t *m)
{
    static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(m, &fresh, sizeof fresh);
}

struct timespec vt_deadline(double seconds)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t ns = (uint64_t)(seconds * 1e9);
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec += (long)(ns % 1000000000u);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

void vt_cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}
