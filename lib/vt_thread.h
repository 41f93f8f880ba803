/* vramtrace's own threads: detached, started with every signal blocked so that the program's signals
 * (the dump signal included) are never delivered to them. */
#ifndef VT_THREAD_H
#define VT_THREAD_H

/* Returns 0, or the pthread_create error. */
int vt_thread_start(void *(*fn)(void *), void *arg);

#endif
