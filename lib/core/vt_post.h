/* The post box: how a floor asks the dumper thread (lib/roof/vt_dumper.c, the top floor) for something
 * without calling up to it -- a dump on a signal, a request over the dump socket, an out-of-memory
 * dump, a look at torch's block history, a program thread's dump -- and how a dump being written says
 * it moves on. One flag per kind and one semaphore the dumper sleeps on: posting is async-signal-safe,
 * keeps errno, and wakes the dumper only when the flag was down, so a storm of posts is one wake. */
#ifndef VT_POST_H
#define VT_POST_H

#include <stdatomic.h>
#include <stdint.h>

#include "vt_hot.h"

enum vt_post_kind {
    VT_POST_SIGNAL,  /* the dump signal arrived (from its handler) */
    VT_POST_REQUEST, /* a request came over the dump socket */
    VT_POST_OOM,     /* an allocation failed for want of memory */
    VT_POST_HISTORY, /* torch's block history wants looking at (lib/bridges/vt_history.c) */
    VT_POST_SYNC,    /* a program thread handed the dumper a dump to write and waits */
    VT_POST_KINDS
};

/* 0 when the dumper takes posts, -1 while it does not run (the post is kept for when it starts). */
int vt_post(enum vt_post_kind k);

/* Torch's block history waits for the process's next allocation (vt_hotdata.history_state ASK; the
 * other states are lib/bridges/vt_history.c's): the first hook to see one moves it to ASKED and posts,
 * once. Back to ASK while the dumper does not run, to be posted again at a later allocation. */
enum { VT_POST_HIST_ASK, VT_POST_HIST_ASKED };
void vt_post_history_ask(void);
static inline void vt_post_alloc_seen(void)
{
    if (atomic_load_explicit(&vt_hotdata.history_state, memory_order_relaxed) == VT_POST_HIST_ASK)
        vt_post_history_ask();
}

/* The dumper's side. */
void vt_post_open(void);                    /* it runs: posts are taken from now */
int vt_post_take(enum vt_post_kind k);      /* whether k was posted since it was last taken (now down) */
int vt_post_up(enum vt_post_kind k);        /* whether k is posted, leaving it up */
void vt_post_wait(uint64_t due_ns);         /* sleeps until a post, or until due (CLOCK_MONOTONIC ns; 0: none) */

/* A dump under way moved on: a thread waiting for it tells slow from stuck by the count. */
void vt_post_progress(void);
unsigned long vt_post_progress_count(void);

#endif
