/* vramtrace's own threads: detached, started with every signal blocked so that the program's signals
 * (the dump signal included) are never delivered to them. */
#ifndef VT_THREAD_H
#define VT_THREAD_H

#include <pthread.h>
#include <time.h>

/* Returns 0, or the pthread_create error. The name (15 characters at most) is what /proc shows. */
int vt_thread_start(void *(*fn)(void *), void *arg, const char *name);

/* Condition variables of vramtrace's threads wait on the monotonic clock: a deadline seconds from
 * now, and a condition variable set up for it. */
struct timespec vt_deadline(double seconds);
/* A fork child's copy of a lock another thread of the parent may have held: made new, unlocked (what the
 * atfork child handlers of every module do with their locks). */
void vt_mutex_reset(pthread_mutex_t *m);
void vt_cond_init_monotonic(pthread_cond_t *c);

#endif
