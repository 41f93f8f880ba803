/* vt_post.h. The dumper drains the semaphore before it looks at the flags, so a post that lands while it
 * serves one is either seen in that pass or wakes the next: a signal is always answered by a dump taken
 * after it. */
#include <errno.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <time.h>

#include "vt_module.h"
#include "vt_post.h"

static sem_t vt_post_sem;
static atomic_int vt_post_flag[VT_POST_KINDS];
static atomic_int vt_post_taken; /* the dumper runs */
static atomic_ulong vt_post_moves;

int vt_post(enum vt_post_kind k)
{
    int saved = errno;
    if (!atomic_exchange(&vt_post_flag[k], 1))
        sem_post(&vt_post_sem);
    errno = saved;
    return atomic_load(&vt_post_taken) ? 0 : -1;
}

void vt_post_history_ask(void)
{
    int want = VT_POST_HIST_ASK;
    if (atomic_compare_exchange_strong(&vt_hotdata.history_state, &want, VT_POST_HIST_ASKED) &&
        vt_post(VT_POST_HISTORY) < 0)
        atomic_store(&vt_hotdata.history_state, VT_POST_HIST_ASK);
}

void vt_post_open(void)
{
    atomic_store(&vt_post_taken, 1);
}

int vt_post_take(enum vt_post_kind k)
{
    return atomic_exchange(&vt_post_flag[k], 0);
}

int vt_post_up(enum vt_post_kind k)
{
    return atomic_load(&vt_post_flag[k]);
}

void vt_post_wait(uint64_t due_ns)
{
    if (due_ns) {
        struct timespec t = {(time_t)(due_ns / 1000000000u), (long)(due_ns % 1000000000u)};
        while (sem_clockwait(&vt_post_sem, CLOCK_MONOTONIC, &t) != 0 && errno == EINTR)
            ;
    } else {
        while (sem_wait(&vt_post_sem) != 0 && errno == EINTR)
            ;
    }
    while (sem_trywait(&vt_post_sem) == 0)
        ; /* every post is a flag: one pass serves them all */
}

void vt_post_progress(void)
{
    atomic_fetch_add_explicit(&vt_post_moves, 1, memory_order_relaxed);
}

unsigned long vt_post_progress_count(void)
{
    return atomic_load(&vt_post_moves);
}

static void vt_post_init(void)
{
    sem_init(&vt_post_sem, 0, 0);
}

/* The dumper did not survive the fork; what it was asked for was the parent's. */
static void vt_post_child(void)
{
    sem_destroy(&vt_post_sem);
    vt_post_init();
    for (int k = 0; k < VT_POST_KINDS; k++)
        atomic_store(&vt_post_flag[k], 0);
    atomic_store(&vt_post_taken, 0);
}

VT_MODULE(post, .init = vt_post_init, .child = vt_post_child);
