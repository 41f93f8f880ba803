/* Starting vramtrace's own threads (vt_thread.h): the signal mask is inherited, so it is filled around
 * pthread_create and restored for the calling thread. */
#include <pthread.h>
#include <signal.h>

#include "vt_thread.h"

int vt_thread_start(void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int err = pthread_create(&t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}
