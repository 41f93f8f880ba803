/* The mutexes a dump needs (the table's, the Python stacks'), taken through these helpers so that each
 * thread knows whether it holds one of them right now. That is what the exit dump asks: exit() called from a signal handler that
 * interrupted one of our critical sections must not wait for a lock its own thread holds. */
#ifndef VT_LOCK_H
#define VT_LOCK_H

#include <pthread.h>

extern __thread int vt_locks_held __attribute__((tls_model("initial-exec")));

static inline void vt_mutex_lock(pthread_mutex_t *m)
{
    vt_locks_held++;
    pthread_mutex_lock(m);
}

static inline void vt_mutex_unlock(pthread_mutex_t *m)
{
    pthread_mutex_unlock(m);
    vt_locks_held--;
}

#endif
