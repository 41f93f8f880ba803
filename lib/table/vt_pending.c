/* Per-thread batches of new entries (vt_pending.h). A batch belongs to one thread, which appends to it
 * and frees from it; any thread may fold it into the table (the batch's own lock, a byte, is all they
 * share, and the owner takes it uncontended but for those moments). The table gets the entries in the
 * order they were made, numbered as they enter it; one freed while in the batch is counted allocated and
 * freed. An address can be both in a batch and in the table only when the driver handed it out again
 * after a free we did not see: the fold keeps the newer of the two by time (vt_table_fold).
 *
 * Lock order: the list of batches, then a batch, then the table's locks. Batches are never freed: a
 * thread that ends folds its batch and leaves it for the next new thread. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "vt_hot.h"
#include "vt_lock.h"
#include "vt_log.h"
#include "vt_pending.h"
#include "vt_stripe.h"
#include "vt_thread.h"
#include "vt_module.h"

#define VT_PEND_MAX 256
#define VT_PEND_SLOTS (2 * VT_PEND_MAX) /* at most half full, tombstones included: the batch is emptied first */
#define VT_PEND_EMPTY 0u
#define VT_PEND_TOMB UINT32_MAX

struct vt_pend {
    unsigned char busy; /* the batch's lock */
    int gone;           /* its thread ended: folded, free for a new thread */
    uint32_t n;         /* entries since the last fold */
    unsigned stripe;    /* the owner's stripe: the shard its entries go to, where its frees look first */
    struct vt_pend *next;
    uint8_t flags[VT_PEND_MAX]; /* VT_PEND_LIVE, _FREED, _REPLACED */
    /* (address, space) -> entry + 1: one cache line holds four, so a free usually reads one line here. */
    struct {
        uint64_t key;
        uint32_t at;
    } slot[VT_PEND_SLOTS];
    struct vt_alloc e[VT_PEND_MAX];
};

static pthread_mutex_t vt_pend_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vt_pend *vt_pend_list;
static __thread struct vt_pend *vt_pend_me __attribute__((tls_model("initial-exec")));
static __thread int vt_pend_failed __attribute__((tls_model("initial-exec"))); /* no batch could be had */
static pthread_key_t vt_pend_key;
static pthread_once_t vt_pend_once = PTHREAD_ONCE_INIT;
static int vt_pend_key_ok;

/* The batch is busy (a fold by a dump or another thread's free holds it): wait, out of the hooks' lines. */
static __attribute__((noinline, cold)) void vt_pend_wait(struct vt_pend *p)
{
    do
        while (__atomic_load_n(&p->busy, __ATOMIC_RELAXED))
            sched_yield();
    while (__atomic_exchange_n(&p->busy, 1, __ATOMIC_ACQUIRE));
}

static inline void vt_pend_lock(struct vt_pend *p)
{
    vt_locks_held++;
    if (VT_UNLIKELY(__atomic_exchange_n(&p->busy, 1, __ATOMIC_ACQUIRE)))
        vt_pend_wait(p);
}

VT_HOT static void vt_pend_unlock(struct vt_pend *p)
{
    __atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
    vt_locks_held--;
}

/* Addresses are below 2^57 (five-level paging), spaces below 8. */
static uint64_t vt_pend_key_of(uint64_t addr, uint8_t space)
{
    return addr ^ (uint64_t)space << 61;
}

static uint32_t vt_pend_home(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 55) & (VT_PEND_SLOTS - 1);
}

/* The slot holding key, or -1. */
static int vt_pend_find(const struct vt_pend *p, uint64_t key)
{
    for (uint32_t i = vt_pend_home(key);; i = (i + 1) & (VT_PEND_SLOTS - 1)) {
        uint32_t at = p->slot[i].at;
        if (at == VT_PEND_EMPTY)
            return -1;
        if (at != VT_PEND_TOMB && p->slot[i].key == key)
            return (int)i;
    }
}

/* Under the batch's lock: everything in it enters the table. */
static void vt_pend_fold_locked(struct vt_pend *p)
{
    if (!p->n)
        return;
    vt_table_fold(p->stripe, p->e, p->flags, p->n);
    __atomic_store_n(&p->n, 0, __ATOMIC_RELAXED);
    memset(p->slot, 0, sizeof p->slot);
}

/* At the end of a thread: its batch enters the table and waits for a new thread. */
static void vt_pend_thread_end(void *arg)
{
    struct vt_pend *p = arg;
    vt_pend_lock(p);
    vt_pend_fold_locked(p);
    p->gone = 1;
    vt_pend_unlock(p);
    vt_pend_me = NULL;
}

static void vt_pend_init(void)
{
    vt_pend_key_ok = pthread_key_create(&vt_pend_key, vt_pend_thread_end) == 0;
}

/* The calling thread's batch, made (or taken over from a thread that ended) at its first use. */
VT_HOT static struct vt_pend *vt_pend_mine(void)
{
    if (vt_pend_me || vt_pend_failed)
        return vt_pend_me;
    pthread_once(&vt_pend_once, vt_pend_init);
    struct vt_pend *p = NULL;
    pthread_mutex_lock(&vt_pend_list_lock);
    for (struct vt_pend *q = vt_pend_list; q && !p; q = q->next)
        if (q->gone)
            p = q;
    if (p) {
        p->gone = 0;
    } else if (vt_pend_key_ok && (p = calloc(1, sizeof *p))) {
        p->next = vt_pend_list;
        vt_pend_list = p;
    }
    pthread_mutex_unlock(&vt_pend_list_lock);
    /* Without the key's destructor a batch would be lost with its thread: such a thread has none. */
    if (p && pthread_setspecific(vt_pend_key, p) != 0) {
        vt_pend_lock(p);
        p->gone = 1;
        vt_pend_unlock(p);
        p = NULL;
    }
    if (!p) {
        vt_pend_failed = 1;
        return NULL;
    }
    p->stripe = vt_stripe_index();
    vt_pend_me = p;
    return p;
}

VT_HOT void vt_pending_prefetch(void)
{
    const struct vt_pend *p = vt_pend_me;
    if (p) {
        uint32_t n = __atomic_load_n(&p->n, __ATOMIC_RELAXED);
        __builtin_prefetch(&p->e[n], 1, 3);
        __builtin_prefetch(&p->flags[n], 1, 3);
    }
}

VT_HOT void vt_pending_prefetch_take(uint64_t addr, uint8_t space)
{
    const struct vt_pend *p = vt_pend_me;
    if (p) {
        __builtin_prefetch(p, 1, 3);
        __builtin_prefetch(&p->slot[vt_pend_home(vt_pend_key_of(addr, space))], 1, 3);
    }
}

VT_HOT int vt_pending_add(const struct vt_alloc *a)
{
    struct vt_pend *p = vt_pend_mine();
    if (!p)
        return 0;
    uint64_t key = vt_pend_key_of(a->addr, a->space);
    vt_pend_lock(p);
    if (VT_UNLIKELY(p->n == VT_PEND_MAX))
        vt_pend_fold_locked(p);
    int old = vt_pend_find(p, key);
    if (VT_UNLIKELY(old >= 0)) {
        /* Handed out again while the batch still holds it: its free took a route we do not see. The
         * newer one is kept, as the table does. */
        p->flags[p->slot[old].at - 1] = VT_PEND_REPLACED;
        p->slot[old].at = VT_PEND_TOMB;
    }
    /* n is read without the lock by those who fold (to pass an empty batch by): stored whole. */
    uint32_t n = p->n;
    __atomic_store_n(&p->n, n + 1, __ATOMIC_RELAXED);
    p->e[n] = *a;
    p->flags[n] = VT_PEND_LIVE;
    uint32_t i = vt_pend_home(key);
    while (p->slot[i].at != VT_PEND_EMPTY && p->slot[i].at != VT_PEND_TOMB)
        i = (i + 1) & (VT_PEND_SLOTS - 1);
    p->slot[i].key = key;
    p->slot[i].at = n + 1;
    vt_pend_unlock(p);
    return 1;
}

VT_HOT const struct vt_alloc *vt_pending_take(uint64_t addr, uint8_t space)
{
    struct vt_pend *p = vt_pend_me;
    /* Only its owner adds to a batch: empty now, it stays so until this thread adds. */
    if (!p || !__atomic_load_n(&p->n, __ATOMIC_RELAXED))
        return NULL;
    const struct vt_alloc *found = NULL;
    vt_pend_lock(p);
    int i = p->n ? vt_pend_find(p, vt_pend_key_of(addr, space)) : -1;
    if (i >= 0) {
        uint32_t at = p->slot[i].at - 1;
        p->flags[at] = VT_PEND_FREED;
        p->slot[i].at = VT_PEND_TOMB;
        found = &p->e[at];
    }
    vt_pend_unlock(p);
    return found;
}

size_t vt_pending_fold_all(uint64_t *longest)
{
    size_t folded = 0;
    pthread_mutex_lock(&vt_pend_list_lock);
    for (struct vt_pend *p = vt_pend_list; p; p = p->next) {
        if (!__atomic_load_n(&p->n, __ATOMIC_RELAXED))
            continue;
        vt_pend_lock(p);
        uint64_t t0 = longest ? vt_now_ns() : 0;
        folded += p->n;
        vt_pend_fold_locked(p);
        uint64_t held = longest ? vt_now_ns() - t0 : 0;
        if (held > (longest ? *longest : 0))
            *longest = held;
        vt_pend_unlock(p);
    }
    pthread_mutex_unlock(&vt_pend_list_lock);
    return folded;
}

static void vt_pending_atfork_prepare(void)
{
    pthread_mutex_lock(&vt_pend_list_lock);
    for (struct vt_pend *p = vt_pend_list; p; p = p->next)
        vt_pend_lock(p);
}

static void vt_pending_atfork_parent(void)
{
    for (struct vt_pend *p = vt_pend_list; p; p = p->next)
        vt_pend_unlock(p);
    pthread_mutex_unlock(&vt_pend_list_lock);
}

static void vt_pending_atfork_child(void)
{
    /* The parent's GPU memory is not the child's, and its other threads are gone: every batch is
     * emptied, and all but this thread's are free for the child's new threads. */
    for (struct vt_pend *p = vt_pend_list; p; p = p->next) {
        __atomic_store_n(&p->n, 0, __ATOMIC_RELAXED);
        memset(p->slot, 0, sizeof p->slot);
        p->gone = p != vt_pend_me;
        vt_pend_unlock(p);
    }
    vt_mutex_reset(&vt_pend_list_lock);
}

VT_MODULE(pending, .prepare = vt_pending_atfork_prepare, .parent = vt_pending_atfork_parent, .child = vt_pending_atfork_child);
