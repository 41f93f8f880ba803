/* The allocation table and counters. Entries live in 16 shards, each with its own lock, slab, index
 * and counters; a thread puts its entries in its own shard (the stripe it was given, vt_stripe.h), so
 * threads that allocate at once neither wait for each other nor pass cache lines back and forth. A free
 * looks first in the freeing thread's own shard (most memory is freed by the thread that took it), then
 * where a small hint table says the address was put (one byte per hashed address, written without a
 * lock: only a hint), then in every shard (a pointer we never saw, or a hint overwritten). Physical
 * handles, pools, unwatched names and failed requests are rare and share one more lock (vt_lock). No lock is held across a CUDA call, an unwind, or I/O. Lock
 * order: vt_lock, then shards in index order; a thread holds one shard at a time otherwise.
 *
 * A snapshot never holds a lock for long: it takes every lock at once for one short hold, to read the
 * counters and each shard's sequence number S, then copies each shard's entries a chunk at a time (one
 * short hold of that shard's lock each). Every allocation entering a shard gets the shard's next
 * sequence number under its lock (no number shared by all threads: a counter every allocation touches
 * would be one cache line all cores fight over), so a shard's entries live at the snapshot are exactly
 * those copied with a number <= its S, plus those freed while the copy went on: while a snapshot runs,
 * each entry taken out of a shard with a number <= S is logged, with its slot, and put back into the
 * snapshot unless the copy already had it. The snapshot is the table as it was at that instant,
 * consistent with the counters. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vt_clock.h"
#include "vt_hash.h"
#include "vt_hot.h"
#include "vt_index.h"
#include "vt_lock.h"
#include "vt_log.h"
#include "vt_peak.h"
#include "vt_pending.h"
#include "vt_slab.h"
#include "vt_stripe.h"
#include "vt_table.h"
#include "vt_thread.h"
#include "vt_module.h"

struct vt_pnode {
    UT_hash_handle hh;
    struct vt_phys p;
};

/* Adaptive locks: a thread that finds one held spins a little before it sleeps, since each is held
 * for tens of nanoseconds at a time. */
static pthread_mutex_t vt_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static struct vt_pnode *vt_phys_tab;
static struct vt_pool *vt_pools;
static size_t vt_npools, vt_pools_cap;
static struct vt_counters vt_c = {.max_device = -1};
static struct vt_unwatched vt_uw[VT_MAX_UNWATCHED];
static size_t vt_nuw;
static struct vt_failed vt_failed_list[VT_MAX_FAILED]; /* newest failure first */
static size_t vt_nfailed;
/* Sequence numbers: an entry's is (the shard's count << VT_SEQ_SOURCE_BITS) | the shard, so numbers are
 * unique in the process and grow within a shard; physical handles and failures, rare, count in vt_seq
 * with the source VT_SHARDS. */
#define VT_SEQ_SOURCE_BITS 5
static uint64_t vt_seq;
/* Counted without the lock (atomically): every call, failed calls, frees of pointers we do not hold.
 * Nothing else in a snapshot must agree with them, so the lock, which every thread's allocation takes,
 * is not taken once more for them. A snapshot reads them after the rest: never fewer calls than the
 * allocations and frees it holds. */
static struct {
    uint64_t calls[VT_FN_COUNT], failed[VT_FN_COUNT];
} __attribute__((aligned(64))) vt_call_stripes[VT_STRIPES]; /* vt_stripe.h */
_Static_assert(VT_FN_PAIRS_SAME_LINE(sizeof(uint64_t)), "a stream-ordered allocation's call counter and its free's share a line");
static uint64_t vt_unknown_frees, vt_dropped;

/* A snapshot under way (vt_table_snapshot): entries taken out since it began that it must still see
 * (numbered up to their shard's snap_seq). */
struct vt_freed {
    struct vt_alloc e;
    uint32_t slot;
};
static pthread_mutex_t vt_snap_mu = PTHREAD_MUTEX_INITIALIZER; /* one snapshot at a time */
/* Written with every lock held, read with any one. */
static int vt_snap_active;

#define VT_SHARDS 16
struct vt_shard {
    pthread_mutex_t lock;
    struct vt_slab slab;
    struct vt_index index;
    struct vt_counters c; /* this shard's entries: allocations and frees, live, replaced, dropped */
    uint64_t seq;         /* numbers given so far */
    uint64_t snap_seq;    /* seq when the snapshot under way began */
    struct vt_freed *freed; /* the snapshot's log */
    size_t nfreed, cap;
    int overflow;
} __attribute__((aligned(64)));
static struct vt_shard vt_shards[VT_SHARDS];
static pthread_once_t vt_shards_once = PTHREAD_ONCE_INIT;

/* Device memory reserved and its peak, per device. A shared total that every plain allocation changed
 * would move its cache line between cores at each one (16 threads' pairs cost 5x one thread's on the
 * H200 host), so each shard keeps, under its own lock, the bytes it has not yet added to the shared
 * total, and adds them when they pass VT_RESERVED_SLACK either way: reserved is the total plus every
 * shard's remainder, exact. The peak is checked at every addition against the total plus the adding
 * shard's remainder: exact while one shard at a time holds a remainder (one allocating thread; every
 * allocation of VT_RESERVED_SLACK or more), otherwise within VT_RESERVED_SLACK per other shard.
 * The peak's stamp (its entry's) and generation share the line (vt_peak.c: what was live at the peak).
 * vt_max_device likewise, read by every allocation and written almost never: a line of its own too. */
#define VT_RESERVED_SLACK ((int64_t)1 << 20)
static struct {
    uint64_t now, peak, peak_stamp;
    uint32_t peak_gen;
} __attribute__((aligned(64))) vt_reserved[VT_MAX_DEVICES];
static int32_t vt_max_device __attribute__((aligned(64))) = -1;

static void vt_shards_init(void)
{
    for (int i = 0; i < VT_SHARDS; i++) {
        pthread_mutex_t adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
        memcpy(&vt_shards[i].lock, &adaptive, sizeof adaptive);
        vt_slab_reset(&vt_shards[i].slab);
        vt_shards[i].index.slab = &vt_shards[i].slab;
    }
}

/* The calling thread's own shard. */
static struct vt_shard *vt_shard_mine(void)
{
    pthread_once(&vt_shards_once, vt_shards_init);
    return &vt_shards[vt_stripe_index() % VT_SHARDS];
}

/* Which shard an address was last put in: a hint, one byte (the shard + 1; 0: none) per hashed
 * (address, space), so a free made by another thread than the allocation's looks in one shard, not all.
 * Relaxed byte stores: a hint that a colliding address overwrote costs a longer search, never a wrong
 * answer. 1 MiB, its pages touched as used. */
#define VT_HINT_BITS 20
static uint8_t vt_hint[1u << VT_HINT_BITS];
_Static_assert(VT_SHARDS < 255, "a hint holds a shard's index + 1 in a byte");

static uint8_t *vt_hint_at(uint64_t addr, uint8_t space)
{
    return &vt_hint[((addr ^ space) * 0x9e3779b97f4a7c15ull) >> (64 - VT_HINT_BITS)];
}

static void vt_hint_set(uint64_t addr, uint8_t space, const struct vt_shard *sh)
{
    uint8_t *h = vt_hint_at(addr, space);
    uint8_t v = (uint8_t)(sh - vt_shards + 1);
    if (__atomic_load_n(h, __ATOMIC_RELAXED) != v) /* no write, so no cache line taken, when it says so */
        __atomic_store_n(h, v, __ATOMIC_RELAXED);
}

/* After an entry left shard from: the hint is cleared unless a colliding address has taken it since. */
static void vt_hint_clear(uint64_t addr, uint8_t space, const struct vt_shard *from)
{
    uint8_t *h = vt_hint_at(addr, space);
    if (__atomic_load_n(h, __ATOMIC_RELAXED) == (uint8_t)(from - vt_shards + 1))
        __atomic_store_n(h, 0, __ATOMIC_RELAXED);
}

/* NULL: no hint. */
static struct vt_shard *vt_hint_get(uint64_t addr, uint8_t space)
{
    uint8_t v = __atomic_load_n(vt_hint_at(addr, space), __ATOMIC_RELAXED);
    return v ? &vt_shards[(v - 1) % VT_SHARDS] : NULL;
}

static void vt_lock_all(void)
{
    pthread_once(&vt_shards_once, vt_shards_init);
    vt_mutex_lock(&vt_lock);
    for (int i = 0; i < VT_SHARDS; i++)
        vt_mutex_lock(&vt_shards[i].lock);
}

static void vt_unlock_all(void)
{
    for (int i = VT_SHARDS - 1; i >= 0; i--)
        vt_mutex_unlock(&vt_shards[i].lock);
    vt_mutex_unlock(&vt_lock);
}

static uint8_t vt_space_of(enum vt_kind k)
{
    return (uint8_t)vt_kind_space(k);
}

static void vt_device_seen(int device)
{
    int32_t seen = __atomic_load_n(&vt_max_device, __ATOMIC_RELAXED);
    while (device >= 0 && device < VT_MAX_DEVICES && device > seen &&
           !__atomic_compare_exchange_n(&vt_max_device, &seen, device, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* c: the shard's counters (or vt_c), under its lock; delta: bytes reserved (negative: released) by
 * entry w. */
static void vt_reserved_change(struct vt_counters *c, int device, int64_t delta, const struct vt_peak_who *w)
{
    int64_t rest = c->reserved_rest[device] + delta;
    uint64_t total;
    if (rest > VT_RESERVED_SLACK || rest < -VT_RESERVED_SLACK) {
        total = __atomic_add_fetch(&vt_reserved[device].now, (uint64_t)rest, __ATOMIC_RELAXED);
        rest = 0;
    } else {
        total = __atomic_load_n(&vt_reserved[device].now, __ATOMIC_RELAXED);
    }
    c->reserved_rest[device] = rest;
    if (delta <= 0) {
        /* Made at or before the peak: it was live then. */
        uint64_t at = __atomic_load_n(&vt_reserved[device].peak_stamp, __ATOMIC_RELAXED);
        if (VT_UNLIKELY(w->stamp <= at))
            vt_peak_gone(device, __atomic_load_n(&vt_reserved[device].peak_gen, __ATOMIC_RELAXED), w,
                         (uint64_t)-delta);
        return;
    }
    uint64_t now = total + (uint64_t)rest;
    uint64_t peak = __atomic_load_n(&vt_reserved[device].peak, __ATOMIC_RELAXED);
    while ((int64_t)(now - peak) > 0) {
        if (__atomic_compare_exchange_n(&vt_reserved[device].peak, &peak, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            __atomic_store_n(&vt_reserved[device].peak_stamp, w->stamp, __ATOMIC_RELAXED);
            __atomic_add_fetch(&vt_reserved[device].peak_gen, 1, __ATOMIC_RELAXED);
            break;
        }
    }
}

/* c: the shard's counters (or vt_c for physical handles), under its lock; w: the entry. */
static void vt_live_add_locked(struct vt_counters *c, enum vt_kind k, int device, uint64_t size,
                               struct vt_peak_who w)
{
    c->live_count[k]++;
    c->live_bytes[k] += size;
    vt_device_seen(device);
    if (vt_kind_reserved(k) && device >= 0 && device < VT_MAX_DEVICES)
        vt_reserved_change(c, device, (int64_t)size, &w);
}

static void vt_live_sub_locked(struct vt_counters *c, enum vt_kind k, int device, uint64_t size,
                               struct vt_peak_who w)
{
    c->live_count[k]--;
    c->live_bytes[k] -= size;
    if (vt_kind_reserved(k) && device >= 0 && device < VT_MAX_DEVICES)
        vt_reserved_change(c, device, -(int64_t)size, &w);
}

static struct vt_peak_who vt_who(const struct vt_alloc *e)
{
    return (struct vt_peak_who){e->stamp, e->stack, e->kind, e->api};
}

static struct vt_peak_who vt_who_phys(const struct vt_phys *p)
{
    return (struct vt_peak_who){p->stamp, p->stack, (uint8_t)p->kind, (uint8_t)p->api};
}

/* The thread id, asked of the kernel once per thread; a fork child inherits the forking thread's
 * copy, so the child handler clears it. */
static __thread int32_t vt_tid __attribute__((tls_model("initial-exec")));

/* seq NULL: the entry is numbered later, as it enters the table. */
static void vt_stamp(uint64_t *seq, uint64_t *stamp, int32_t *tid)
{
    *stamp = vt_ticks();
    if (!vt_tid)
        vt_tid = (int32_t)syscall(SYS_gettid);
    *tid = vt_tid;
    if (seq)
        *seq = __atomic_add_fetch(&vt_seq, 1, __ATOMIC_RELAXED) << VT_SEQ_SOURCE_BITS | VT_SHARDS;
}

static void vt_count_alloc_locked(struct vt_counters *c, enum vt_fn api, enum vt_kind kind, uint64_t size)
{
    c->api[api].allocs++;
    c->api[api].bytes_alloc += size;
    c->kind[kind].allocs++;
    c->kind[kind].bytes_alloc += size;
}

/* sign -1 takes back a free whose real call failed. */
static void vt_count_free_locked(struct vt_counters *c, enum vt_fn api, enum vt_kind kind, uint64_t size, int sign)
{
    c->api[api].frees += (uint64_t)sign;
    c->api[api].bytes_freed += (uint64_t)sign * size;
    c->kind[kind].frees += (uint64_t)sign;
    c->kind[kind].bytes_freed += (uint64_t)sign * size;
}

/* While a snapshot copies the table, an entry that was live when it began and leaves now is logged. */
static void vt_snap_log_locked(struct vt_shard *sh, const struct vt_alloc *e, uint32_t slot)
{
    if (!vt_snap_active || e->seq >> VT_SEQ_SOURCE_BITS > sh->snap_seq)
        return;
    if (sh->nfreed == sh->cap) {
        size_t cap = sh->cap ? 2 * sh->cap : 256;
        struct vt_freed *n = realloc(sh->freed, cap * sizeof *n);
        if (!n) {
            sh->overflow = 1;
            return;
        }
        sh->freed = n;
        sh->cap = cap;
    }
    sh->freed[sh->nfreed++] = (struct vt_freed){*e, slot};
}

/* Takes a slot out of its shard; its free is counted in the same step as the removal. */
static void vt_take_locked(struct vt_shard *sh, uint32_t slot, struct vt_alloc *out)
{
    struct vt_alloc *e = vt_slab_entry(&sh->slab, slot);
    vt_snap_log_locked(sh, e, slot);
    if (out)
        *out = *e;
    vt_index_remove(&sh->index, slot);
    vt_live_sub_locked(&sh->c, e->kind, e->device, e->size, vt_who(e));
    vt_count_free_locked(&sh->c, e->api, e->kind, e->size, 1);
    vt_slab_put(&sh->slab, slot);
}

/* Returns 0 when the entry could not be kept (our own memory ran out). */
static int vt_insert_locked(struct vt_shard *sh, const struct vt_alloc *a)
{
    uint32_t old = vt_index_find(&sh->index, a->addr, a->space);
    if (old != VT_SLAB_NONE) {
        /* The address came back from the driver while we still held it: its free took a route we
         * do not see. Keep the newer one, count the old one freed, and say how often this happened. */
        vt_take_locked(sh, old, NULL);
        sh->c.replaced++;
    }
    uint32_t i = vt_slab_take(&sh->slab);
    if (i == VT_SLAB_NONE) {
        sh->c.dropped++;
        return 0;
    }
    struct vt_alloc *e = vt_slab_entry(&sh->slab, i);
    *e = *a;
    /* Numbered as it enters the table (a restored entry too): what a snapshot begun at S holds is the
     * shard's entries numbered up to S. */
    e->seq = ++sh->seq << VT_SEQ_SOURCE_BITS | (uint64_t)(sh - vt_shards);
    if (vt_index_add(&sh->index, i) < 0) {
        vt_slab_put(&sh->slab, i);
        sh->c.dropped++;
        return 0;
    }
    vt_live_add_locked(&sh->c, e->kind, e->device, e->size, vt_who(e));
    return 1;
}

/* An entry for the address in another shard than the thread's own: its free took a route we do not see
 * and the driver handed the address out again, to this thread. Taken out as vt_insert_locked does; with
 * older_only, only when older than a (a batch's entry enters the table after others may have). */
static void vt_replace_elsewhere(const struct vt_alloc *a, const struct vt_shard *mine, int older_only)
{
    struct vt_shard *sh = vt_hint_get(a->addr, a->space);
    if (!sh || sh == mine)
        return;
    vt_mutex_lock(&sh->lock);
    uint32_t old = vt_index_find(&sh->index, a->addr, a->space);
    if (old != VT_SLAB_NONE && (!older_only || vt_slab_entry(&sh->slab, old)->stamp < a->stamp)) {
        vt_take_locked(sh, old, NULL);
        sh->c.replaced++;
    }
    vt_mutex_unlock(&sh->lock);
}

/* An entry straight into the table (vt_table_add's path for what does not wait in a batch). */
static __attribute__((noinline)) void vt_table_add_now(struct vt_alloc *a)
{
    struct vt_shard *sh = vt_shard_mine();
    vt_replace_elsewhere(a, sh, 0);
    vt_mutex_lock(&sh->lock);
    int kept = vt_insert_locked(sh, a);
    if (kept)
        vt_count_alloc_locked(&sh->c, a->api, a->kind, a->size);
    vt_mutex_unlock(&sh->lock);
    if (kept)
        vt_hint_set(a->addr, a->space, sh);
    else
        vt_say_once(VT_ONCE_NOMEM, "out of memory; some allocations are not recorded");
}

VT_HOT void vt_table_add(struct vt_alloc *a)
{
    a->space = vt_space_of(a->kind);
    vt_stamp(NULL, &a->stamp, &a->tid);
    vt_stripe_bump(&vt_call_stripes[vt_stripe_index()].calls[a->api], 1);
    if (!vt_pending_kind(a->kind) || !vt_pending_add(a))
        vt_table_add_now(a);
}

void vt_table_fold(unsigned stripe, const struct vt_alloc *e, const uint8_t *flags, size_t n)
{
    pthread_once(&vt_shards_once, vt_shards_init);
    struct vt_shard *sh = &vt_shards[stripe % VT_SHARDS];
    for (size_t i = 0; i < n; i++)
        vt_replace_elsewhere(&e[i], sh, 1);
    int lost = 0;
    vt_mutex_lock(&sh->lock);
    for (size_t i = 0; i < n; i++) {
        const struct vt_alloc *a = &e[i];
        vt_count_alloc_locked(&sh->c, a->api, a->kind, a->size);
        /* The table's entry for the address, from before a free we did not see, is replaced by a newer
         * one, even one freed since; an entry newer than this one means this one's free went unseen. */
        uint32_t old = vt_index_find(&sh->index, a->addr, a->space);
        int stale = 0;
        if (old != VT_SLAB_NONE) {
            if (vt_slab_entry(&sh->slab, old)->stamp < a->stamp)
                vt_take_locked(sh, old, NULL);
            else
                stale = 1;
            sh->c.replaced++;
        }
        if (stale || flags[i] != VT_PEND_LIVE) {
            vt_count_free_locked(&sh->c, a->api, a->kind, a->size, 1);
            sh->c.replaced += flags[i] == VT_PEND_REPLACED;
            sh->c.batch_freed += flags[i] == VT_PEND_FREED;
            continue;
        }
        if (vt_insert_locked(sh, a))
            vt_hint_set(a->addr, a->space, sh);
        else
            lost = 1;
    }
    vt_mutex_unlock(&sh->lock);
    if (lost)
        vt_say_once(VT_ONCE_NOMEM, "out of memory; some allocations are not recorded");
}

/* unhint: clear the address's hint (when it was read anyway: a hint left behind costs another free of
 * an address that collides with it one look in the wrong shard, never a wrong answer). */
static int vt_remove_in(struct vt_shard *sh, uint64_t addr, uint8_t space, struct vt_alloc *out, int unhint)
{
    vt_mutex_lock(&sh->lock);
    uint32_t slot = vt_index_find(&sh->index, addr, space);
    if (slot != VT_SLAB_NONE)
        vt_take_locked(sh, slot, out);
    vt_mutex_unlock(&sh->lock);
    if (slot == VT_SLAB_NONE)
        return 0;
    if (unhint)
        vt_hint_clear(addr, space, sh);
    return 1;
}

static int vt_set_owner_in(struct vt_shard *sh, uint64_t addr, uint8_t space, uint64_t owner)
{
    vt_mutex_lock(&sh->lock);
    uint32_t slot = vt_index_find(&sh->index, addr, space);
    struct vt_alloc *e = slot != VT_SLAB_NONE ? vt_slab_entry(&sh->slab, slot) : NULL;
    int found = e && e->kind == VT_KIND_DEVICE;
    if (found && !e->x.owner)
        e->x.owner = owner;
    vt_mutex_unlock(&sh->lock);
    return found;
}

int vt_table_set_owner(uint64_t addr, uint64_t owner, int sweep)
{
    uint8_t space = vt_space_of(VT_KIND_DEVICE);
    struct vt_shard *hinted = vt_hint_get(addr, space);
    if (hinted && vt_set_owner_in(hinted, addr, space, owner))
        return 1;
    /* No hint, or one a colliding address took: no device allocation starts there (the usual case for a
     * block inside a segment), or it is in another shard, which only a sweep finds. */
    for (int i = 0; sweep && i < VT_SHARDS; i++)
        if (&vt_shards[i] != hinted && vt_set_owner_in(&vt_shards[i], addr, space, owner))
            return 1;
    return 0;
}

VT_HOT static int vt_remove_any(uint64_t addr, uint8_t space, struct vt_alloc *out)
{
    /* The thread's own shard first: most memory is freed by the thread that allocated it, and the hint,
     * one byte of a 1 MiB table, is a cache miss of its own. */
    struct vt_shard *mine = vt_shard_mine();
    if (vt_remove_in(mine, addr, space, out, 0))
        return 1;
    struct vt_shard *hinted = vt_hint_get(addr, space);
    if (hinted && hinted != mine && vt_remove_in(hinted, addr, space, out, 1))
        return 1;
    /* Not where it should be: a pointer we never saw (the usual case), or a hint a colliding address
     * overwrote. */
    for (int i = 0; i < VT_SHARDS; i++)
        if (&vt_shards[i] != hinted && &vt_shards[i] != mine && vt_remove_in(&vt_shards[i], addr, space, out, 1))
            return 1;
    return 0;
}

VT_HOT void vt_table_prefetch(uint64_t addr, enum vt_kind kind_space)
{
    vt_pending_prefetch_take(addr, vt_space_of(kind_space));
}

VT_HOT int vt_table_take(uint64_t addr, enum vt_kind kind_space, struct vt_alloc *copy, const struct vt_alloc **taken)
{
    uint8_t space = vt_space_of(kind_space);
    /* The thread's own batch first: what it allocated lately. */
    if ((*taken = vt_pending_take(addr, space)))
        return 1;
    *taken = copy;
    if (vt_remove_any(addr, space, copy))
        return 1;
    /* Another thread's batch may hold it (memory handed to this thread): every batch enters the table,
     * and one more look. */
    return vt_pending_fold_all(NULL) && vt_remove_any(addr, space, copy);
}

int vt_table_remove(uint64_t addr, enum vt_kind kind_space, struct vt_alloc *out)
{
    struct vt_alloc copy;
    const struct vt_alloc *taken;
    if (!vt_table_take(addr, kind_space, &copy, &taken))
        return 0;
    if (out)
        *out = *taken;
    return 1;
}

void vt_table_restore(const struct vt_alloc *a)
{
    struct vt_shard *sh = vt_shard_mine();
    vt_replace_elsewhere(a, sh, 0);
    vt_mutex_lock(&sh->lock);
    vt_count_free_locked(&sh->c, a->api, a->kind, a->size, -1);
    int kept = vt_insert_locked(sh, a);
    if (!kept) {
        /* Lost after all: keep allocations - frees equal to the live entries. */
        vt_count_free_locked(&sh->c, a->api, a->kind, a->size, 1);
    }
    vt_mutex_unlock(&sh->lock);
    if (kept)
        vt_hint_set(a->addr, a->space, sh);
}

size_t vt_table_remove_maps(uint64_t addr, uint64_t size, struct vt_alloc *out, size_t max, size_t *total)
{
    size_t got = 0, removed = 0;
    uint64_t end = addr + size;
    uint8_t space = vt_space_of(VT_KIND_VMM_MAP);
    /* Unmaps are rare: every shard at once. */
    vt_lock_all();
    /* Mappings inside one unmap are usually contiguous: walk them by address, and fall back to a
     * scan of the table only when a gap is met. */
    uint64_t cur = addr;
    int gap = 0;
    while (cur < end) {
        struct vt_shard *sh = vt_hint_get(cur, space);
        uint32_t slot = sh ? vt_index_find(&sh->index, cur, space) : VT_SLAB_NONE;
        for (int i = 0; slot == VT_SLAB_NONE && i < VT_SHARDS; i++) {
            sh = &vt_shards[i];
            slot = vt_index_find(&sh->index, cur, space);
        }
        uint64_t sz = slot != VT_SLAB_NONE ? vt_slab_entry(&sh->slab, slot)->size : 0;
        if (!sz) {
            gap = 1;
            break;
        }
        vt_take_locked(sh, slot, got < max ? &out[got] : NULL);
        vt_hint_clear(cur, space, sh);
        cur += sz;
        got += got < max;
        removed++;
    }
    for (int i = 0; gap && i < VT_SHARDS; i++) {
        struct vt_shard *sh = &vt_shards[i];
        size_t hw = vt_slab_high_water(&sh->slab);
        for (uint32_t slot = 0; slot < hw; slot++) {
            const struct vt_alloc *e = vt_slab_entry(&sh->slab, slot);
            if (e->kind != VT_KIND_VMM_MAP || e->addr < addr || e->addr >= end)
                continue;
            vt_hint_clear(e->addr, space, sh);
            vt_take_locked(sh, slot, got < max ? &out[got] : NULL);
            got += got < max;
            removed++;
        }
    }
    vt_unlock_all();
    *total = removed;
    return got;
}

void vt_phys_add(struct vt_phys *p)
{
    vt_stamp(&p->seq, &p->stamp, &p->tid);
    struct vt_pnode *n = malloc(sizeof *n), *old;
    vt_stripe_bump(&vt_call_stripes[vt_stripe_index()].calls[p->api], 1);
    vt_mutex_lock(&vt_lock);
    if (n) {
        memset(n, 0, sizeof *n);
        n->p = *p;
        HASH_FIND(hh, vt_phys_tab, &p->handle, sizeof p->handle, old);
        if (old) {
            HASH_DEL(vt_phys_tab, old);
            vt_live_sub_locked(&vt_c, old->p.kind, old->p.device, old->p.size, vt_who_phys(&old->p));
            vt_count_free_locked(&vt_c, old->p.api, old->p.kind, old->p.size, 1);
            vt_c.replaced++;
            free(old);
        }
        vt_hash_oom = 0;
        HASH_ADD(hh, vt_phys_tab, p.handle, sizeof p->handle, n);
        if (vt_hash_oom) {
            free(n);
            n = NULL;
        } else {
            vt_live_add_locked(&vt_c, p->kind, p->device, p->size, vt_who_phys(p));
            vt_count_alloc_locked(&vt_c, p->api, p->kind, p->size);
        }
    }
    if (!n)
        vt_c.dropped++;
    vt_mutex_unlock(&vt_lock);
}

int vt_phys_adjust(uint64_t handle, int delta_refs, int delta_maps, struct vt_phys *dead)
{
    struct vt_pnode *n;
    int ret = -1;
    vt_mutex_lock(&vt_lock);
    HASH_FIND(hh, vt_phys_tab, &handle, sizeof handle, n);
    if (n) {
        n->p.refs += delta_refs;
        n->p.maps += delta_maps;
        ret = 0;
        if (n->p.refs <= 0 && n->p.maps <= 0) {
            HASH_DEL(vt_phys_tab, n);
            vt_live_sub_locked(&vt_c, n->p.kind, n->p.device, n->p.size, vt_who_phys(&n->p));
            vt_count_free_locked(&vt_c, n->p.api, n->p.kind, n->p.size, 1);
            *dead = n->p;
            free(n);
            ret = 1;
        }
    }
    vt_mutex_unlock(&vt_lock);
    return ret;
}

void vt_phys_undo(uint64_t handle, int delta_refs, int delta_maps, const struct vt_phys *dead)
{
    struct vt_pnode *n = NULL;
    vt_mutex_lock(&vt_lock);
    if (dead) {
        vt_count_free_locked(&vt_c, dead->api, dead->kind, dead->size, -1);
        if ((n = malloc(sizeof *n))) {
            memset(n, 0, sizeof *n);
            n->p = *dead;
            vt_hash_oom = 0;
            HASH_ADD(hh, vt_phys_tab, p.handle, sizeof n->p.handle, n);
            if (vt_hash_oom) {
                free(n);
                n = NULL;
                vt_c.dropped++;
            } else {
                vt_live_add_locked(&vt_c, n->p.kind, n->p.device, n->p.size, vt_who_phys(&n->p));
            }
        }
    } else {
        HASH_FIND(hh, vt_phys_tab, &handle, sizeof handle, n);
    }
    if (n) {
        n->p.refs -= delta_refs;
        n->p.maps -= delta_maps;
    }
    vt_mutex_unlock(&vt_lock);
}

void vt_pool_add(uint64_t handle, int device)
{
    vt_mutex_lock(&vt_lock);
    vt_device_seen(device);
    if (vt_npools == vt_pools_cap) {
        size_t cap = vt_pools_cap ? 2 * vt_pools_cap : 16;
        struct vt_pool *p = realloc(vt_pools, cap * sizeof *p);
        if (p) {
            vt_pools = p;
            vt_pools_cap = cap;
        }
    }
    if (vt_npools < vt_pools_cap)
        vt_pools[vt_npools++] = (struct vt_pool){handle, device};
    else
        vt_c.dropped++;
    vt_mutex_unlock(&vt_lock);
}

void vt_pool_remove(uint64_t handle)
{
    vt_mutex_lock(&vt_lock);
    for (size_t i = 0; i < vt_npools; i++) {
        if (vt_pools[i].handle == handle) {
            vt_pools[i] = vt_pools[--vt_npools];
            break;
        }
    }
    vt_mutex_unlock(&vt_lock);
}

int vt_pool_device(uint64_t handle)
{
    int dev = -1;
    vt_mutex_lock(&vt_lock);
    for (size_t i = 0; i < vt_npools; i++)
        if (vt_pools[i].handle == handle)
            dev = vt_pools[i].device;
    vt_mutex_unlock(&vt_lock);
    return dev;
}

VT_HOT void vt_count_call(enum vt_fn api)
{
    vt_stripe_bump(&vt_call_stripes[vt_stripe_index()].calls[api], 1);
}

void vt_count_failure(enum vt_fn api)
{
    unsigned me = vt_stripe_index();
    vt_stripe_bump(&vt_call_stripes[me].calls[api], 1);
    vt_stripe_bump(&vt_call_stripes[me].failed[api], 1);
}

void vt_count_unknown_free(void)
{
    __atomic_add_fetch(&vt_unknown_frees, 1, __ATOMIC_RELAXED);
}

void vt_count_dropped(void)
{
    __atomic_add_fetch(&vt_dropped, 1, __ATOMIC_RELAXED);
}

void vt_count_unwatched(const char *name)
{
    vt_mutex_lock(&vt_lock);
    vt_c.unwatched_lookups++;
    size_t i;
    for (i = 0; i < vt_nuw; i++)
        if (!strcmp(vt_uw[i].name, name))
            break;
    if (i == vt_nuw && vt_nuw < VT_MAX_UNWATCHED && strlen(name) < sizeof vt_uw[0].name) {
        strcpy(vt_uw[i].name, name);
        vt_nuw++;
    }
    if (i < vt_nuw)
        vt_uw[i].count++;
    vt_mutex_unlock(&vt_lock);
}

void vt_record_oom(enum vt_fn api, uint64_t size, int device, uint32_t stack, int result, uint64_t free_then)
{
    uint64_t seq, now;
    int32_t tid;
    vt_stamp(&seq, &now, &tid);
    vt_mutex_lock(&vt_lock);
    vt_c.oom_events++;
    size_t i;
    for (i = 0; i < vt_nfailed; i++) {
        const struct vt_failed *f = &vt_failed_list[i];
        if (f->api == api && f->size == size && f->device == device && f->stack == stack)
            break;
    }
    struct vt_failed f = {.size = size, .seq = seq, .first_ns = now, .free_then = free_then, .stack = stack,
                          .device = device, .result = result, .api = (uint16_t)api};
    if (i < vt_nfailed)
        f = vt_failed_list[i];
    else if (vt_nfailed < VT_MAX_FAILED)
        i = vt_nfailed++;
    else
        i = VT_MAX_FAILED - 1; /* the least recent one makes room */
    f.count++;
    f.last_ns = now;
    f.result = result;
    /* Newest first: move it to the front. */
    memmove(&vt_failed_list[1], &vt_failed_list[0], i * sizeof f);
    vt_failed_list[0] = f;
    vt_mutex_unlock(&vt_lock);
}

static void vt_counters_add(struct vt_counters *to, const struct vt_counters *from)
{
    for (int i = 0; i < VT_FN_COUNT; i++) {
        to->api[i].allocs += from->api[i].allocs;
        to->api[i].frees += from->api[i].frees;
        to->api[i].bytes_alloc += from->api[i].bytes_alloc;
        to->api[i].bytes_freed += from->api[i].bytes_freed;
    }
    for (int k = 0; k < VT_KIND_COUNT; k++) {
        to->kind[k].allocs += from->kind[k].allocs;
        to->kind[k].frees += from->kind[k].frees;
        to->kind[k].bytes_alloc += from->kind[k].bytes_alloc;
        to->kind[k].bytes_freed += from->kind[k].bytes_freed;
        to->live_count[k] += from->live_count[k];
        to->live_bytes[k] += from->live_bytes[k];
    }
    for (int d = 0; d < VT_MAX_DEVICES; d++)
        to->reserved_rest[d] += from->reserved_rest[d];
    to->replaced += from->replaced;
    to->dropped += from->dropped;
    to->batch_freed += from->batch_freed;
}

/* Everything but the entries, with every lock held: counters, physical handles, pools, the rest. 0, or
 * -1 when the copies' room was too small (caps say what is needed). */
static int vt_snap_head_locked(struct vt_snapshot *s, size_t cap_p, size_t cap_pool, size_t cap_peak, size_t *need_p,
                               size_t *need_pool, size_t *need_peak)
{
    size_t np = HASH_COUNT(vt_phys_tab);
    *need_p = np;
    *need_pool = vt_npools;
    /* What was live at each device's peak: its stamp, and the sums of its generation. */
    uint32_t gens[VT_MAX_DEVICES];
    for (int d = 0; d < VT_MAX_DEVICES; d++) {
        s->peak_stamp[d] = __atomic_load_n(&vt_reserved[d].peak_stamp, __ATOMIC_RELAXED);
        gens[d] = __atomic_load_n(&vt_reserved[d].peak_gen, __ATOMIC_RELAXED);
    }
    *need_peak = vt_peak_copy(gens, VT_MAX_DEVICES, s->peak_freed, cap_peak, &s->peak_lost);
    s->npeak_freed = *need_peak;
    if (np > cap_p || vt_npools > cap_pool || *need_peak > cap_peak)
        return -1;
    struct vt_pnode *pn, *ptmp;
    s->nphys = 0;
    HASH_ITER(hh, vt_phys_tab, pn, ptmp) s->phys[s->nphys++] = pn->p;
    if (vt_npools)
        memcpy(s->pools, vt_pools, vt_npools * sizeof *vt_pools);
    s->npools = vt_npools;
    memcpy(s->unwatched, vt_uw, sizeof vt_uw);
    s->nunwatched = vt_nuw;
    s->c = vt_c;
    for (int i = 0; i < VT_SHARDS; i++)
        vt_counters_add(&s->c, &vt_shards[i].c);
    for (int d = 0; d < VT_MAX_DEVICES; d++) {
        s->c.reserved[d] = __atomic_load_n(&vt_reserved[d].now, __ATOMIC_RELAXED) + (uint64_t)s->c.reserved_rest[d];
        s->c.reserved_peak[d] = __atomic_load_n(&vt_reserved[d].peak, __ATOMIC_RELAXED);
        if (s->c.reserved_peak[d] < s->c.reserved[d]) {
            /* Past the peak by what other threads' shards had not yet added: the peak is now, and what
             * is live is what was live at it. */
            s->c.reserved_peak[d] = s->c.reserved[d];
            s->peak_stamp[d] = UINT64_MAX;
        }
    }
    s->c.max_device = __atomic_load_n(&vt_max_device, __ATOMIC_RELAXED);
    s->c.seq = __atomic_load_n(&vt_seq, __ATOMIC_RELAXED);
    for (int i = 0; i < VT_SHARDS; i++)
        s->c.seq += vt_shards[i].seq;
    for (int i = 0; i < VT_FN_COUNT; i++) {
        s->c.api[i].calls = s->c.api[i].failed = 0;
        for (int j = 0; j < VT_STRIPES; j++) {
            s->c.api[i].calls += __atomic_load_n(&vt_call_stripes[j].calls[i], __ATOMIC_RELAXED);
            s->c.api[i].failed += __atomic_load_n(&vt_call_stripes[j].failed[i], __ATOMIC_RELAXED);
        }
    }
    s->c.unknown_frees = __atomic_load_n(&vt_unknown_frees, __ATOMIC_RELAXED);
    s->c.dropped += __atomic_load_n(&vt_dropped, __ATOMIC_RELAXED);
    memcpy(s->failed, vt_failed_list, sizeof vt_failed_list);
    s->nfailed = vt_nfailed;
    return 0;
}

int vt_table_snapshot(struct vt_snapshot *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&vt_snap_mu);
    /* What the threads' batches hold is in the table from this moment; what they take after it is
     * newer than the snapshot. A batch's lock held meanwhile counts in the longest hold. */
    uint64_t fold_ns = 0;
    vt_pending_fold_all(&fold_ns);
    size_t cap_p = 64, cap_pool = 16, cap_peak = 64, need_p = 0, need_pool = 0, need_peak = 0;
    size_t cap[VT_SHARDS], base[VT_SHARDS], hw[VT_SHARDS];
    uint64_t head_t0, head_ns = 0;
    int r = -1;
    for (;;) {
        /* Sized and touched outside the locks (no page faults while one is held). */
        vt_snapshot_free(s);
        size_t total = 0;
        for (int i = 0; i < VT_SHARDS; i++) {
            struct vt_shard *sh = &vt_shards[i];
            pthread_once(&vt_shards_once, vt_shards_init);
            vt_mutex_lock(&sh->lock);
            size_t now_hw = vt_slab_high_water(&sh->slab);
            vt_mutex_unlock(&sh->lock);
            cap[i] = now_hw + now_hw / 8 + 1024;
            base[i] = total;
            total += cap[i];
        }
        s->allocs = malloc(total * sizeof *s->allocs);
        s->phys = malloc(cap_p * sizeof *s->phys);
        s->pools = malloc(cap_pool * sizeof *s->pools);
        s->peak_freed = malloc(cap_peak * sizeof *s->peak_freed);
        if (!s->allocs || !s->phys || !s->pools || !s->peak_freed)
            goto out;
        /* One write per page; not memset, which the compiler may fold into a calloc that touches nothing. */
        for (size_t off = 0; off < total * sizeof *s->allocs; off += 4096)
            ((volatile char *)s->allocs)[off] = 0;
        vt_lock_all();
        head_t0 = vt_now_ns();
        int fits = vt_snap_head_locked(s, cap_p, cap_pool, cap_peak, &need_p, &need_pool, &need_peak) == 0;
        for (int i = 0; i < VT_SHARDS; i++) {
            hw[i] = vt_slab_high_water(&vt_shards[i].slab);
            fits &= hw[i] <= cap[i];
        }
        if (fits) {
            vt_snap_active = 1;
            for (int i = 0; i < VT_SHARDS; i++) {
                vt_shards[i].snap_seq = vt_shards[i].seq;
                vt_shards[i].nfreed = 0;
                vt_shards[i].overflow = 0;
            }
        }
        head_ns = vt_now_ns() - head_t0;
        vt_unlock_all();
        if (fits)
            break;
        cap_p = need_p + need_p / 8 + 64;
        cap_pool = need_pool + 16;
        cap_peak = need_peak + need_peak / 8 + 64;
    }
    /* Each shard's entries, a chunk of slots per hold of its lock; slots past hw were taken after S. */
    uint64_t longest = head_ns > fold_ns ? head_ns : fold_ns;
    for (int i = 0; i < VT_SHARDS; i++) {
        struct vt_shard *sh = &vt_shards[i];
        for (size_t at = 0; at < hw[i]; at += VT_SLAB_CHUNK) {
            size_t n = hw[i] - at < VT_SLAB_CHUNK ? hw[i] - at : VT_SLAB_CHUNK;
            vt_mutex_lock(&sh->lock);
            uint64_t t0 = vt_now_ns();
            vt_slab_copy_range(&sh->slab, s->allocs + base[i] + at, at, n);
            uint64_t held = vt_now_ns() - t0;
            vt_mutex_unlock(&sh->lock);
            longest = held > longest ? held : longest;
        }
    }
    s->c.snap_hold_ns = longest;
    struct vt_freed *freed[VT_SHARDS];
    size_t nfreed[VT_SHARDS];
    int overflow = 0;
    vt_lock_all();
    vt_snap_active = 0;
    for (int i = 0; i < VT_SHARDS; i++) {
        struct vt_shard *sh = &vt_shards[i];
        freed[i] = sh->freed;
        nfreed[i] = sh->nfreed;
        overflow |= sh->overflow;
        sh->freed = NULL;
        sh->nfreed = sh->cap = 0;
    }
    vt_unlock_all();
    if (overflow) {
        /* Our own memory ran short while logging: the entries are those copied, the counters say more. */
        s->c.dropped++;
    }
    /* A slot holds at most one entry numbered up to S, so each slot is logged once at most. An entry
     * freed after its slot was copied is in the copy already; one freed before is put back in its slot's
     * place, where the copy holds nothing or a newer entry (dropped below in any case). Then free slots
     * and entries made after S, which came along with the copy, are dropped, shard by shard. */
    size_t live = 0;
    for (int i = 0; i < VT_SHARDS; i++) {
        struct vt_alloc *a = s->allocs + base[i];
        for (size_t j = 0; j < nfreed[i]; j++) {
            const struct vt_freed *f = &freed[i][j];
            struct vt_alloc *c = &a[f->slot];
            if (f->slot < hw[i] && !(c->kind != VT_SLAB_FREE_KIND && c->seq == f->e.seq))
                *c = f->e;
        }
        free(freed[i]);
        for (size_t j = 0; j < hw[i]; j++)
            if (a[j].kind != VT_SLAB_FREE_KIND && a[j].seq >> VT_SEQ_SOURCE_BITS <= vt_shards[i].snap_seq)
                s->allocs[live++] = a[j];
    }
    s->nallocs = live;
    r = 0;
out:
    if (r < 0)
        vt_snapshot_free(s);
    pthread_mutex_unlock(&vt_snap_mu);
    return r;
}

void vt_snapshot_free(struct vt_snapshot *s)
{
    free(s->allocs);
    free(s->phys);
    free(s->pools);
    free(s->peak_freed);
    s->allocs = NULL;
    s->phys = NULL;
    s->pools = NULL;
    s->peak_freed = NULL;
}

static void vt_table_atfork_prepare(void)
{
    vt_lock_all();
}

static void vt_table_atfork_parent(void)
{
    vt_unlock_all();
}

static void vt_table_atfork_child(void)
{
    /* The parent's GPU memory is not the child's: start from an empty table. */
    for (int i = 0; i < VT_SHARDS; i++) {
        struct vt_shard *sh = &vt_shards[i];
        vt_index_reset(&sh->index);
        vt_slab_reset(&sh->slab);
        memset(&sh->c, 0, sizeof sh->c);
        sh->seq = sh->snap_seq = 0;
        /* A snapshot under way in the parent is the parent's; the child starts with none. */
        sh->freed = NULL;
        sh->nfreed = sh->cap = 0;
        sh->overflow = 0;
    }
    struct vt_pnode *pn, *ptmp;
    HASH_ITER(hh, vt_phys_tab, pn, ptmp) {
        HASH_DEL(vt_phys_tab, pn);
        free(pn);
    }
    vt_npools = 0;
    vt_nuw = 0;
    memset(&vt_c, 0, sizeof vt_c);
    vt_c.max_device = -1;
    vt_max_device = -1;
    memset(vt_reserved, 0, sizeof vt_reserved);
    vt_peak_reset();
    vt_nfailed = 0;
    vt_seq = 0;
    memset(vt_call_stripes, 0, sizeof vt_call_stripes);
    vt_unknown_frees = 0;
    vt_dropped = 0;
    vt_mutex_reset(&vt_snap_mu);
    vt_snap_active = 0;
    vt_tid = 0;
    vt_unlock_all();
}

VT_MODULE(table, .prepare = vt_table_atfork_prepare, .parent = vt_table_atfork_parent, .child = vt_table_atfork_child);
