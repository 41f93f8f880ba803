/* The allocation table and counters. One mutex guards everything here; it is held only for hash
 * operations and counter updates, never across a CUDA call, an unwind, or I/O.
 *
 * A snapshot never holds the lock for long: it takes the counters and a sequence number S in one short
 * hold, then copies the entries a chunk at a time (one short hold each). Every allocation entering the
 * table gets its sequence number under the lock, so the entries live at S are exactly those copied
 * with seq <= S, plus those freed while the copy went on: while a snapshot runs, each entry taken out
 * of the table with seq <= S is logged, with its slot, and put back into the snapshot unless the copy
 * already had it. The snapshot is the table as it was at S, consistent with the counters. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vt_hash.h"
#include "vt_index.h"
#include "vt_lock.h"
#include "vt_log.h"
#include "vt_slab.h"
#include "vt_table.h"

struct vt_pnode {
    UT_hash_handle hh;
    struct vt_phys p;
};

/* Adaptive: a thread that finds the lock held spins a little before it sleeps, since it is held for
 * tens of nanoseconds at a time. */
static pthread_mutex_t vt_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static struct vt_pnode *vt_phys_tab;
static struct vt_pool *vt_pools;
static size_t vt_npools, vt_pools_cap;
static struct vt_counters vt_c = {.max_device = -1};
static struct vt_unwatched vt_uw[VT_MAX_UNWATCHED];
static size_t vt_nuw;
static struct vt_failed vt_failed_list[VT_MAX_FAILED]; /* newest failure first */
static size_t vt_nfailed;
/* Apart from vt_c: taken without the lock by physical handles and failures, under it by entries. */
static uint64_t vt_seq;
/* Counted without the lock (atomically): every call, failed calls, frees of pointers we do not hold.
 * Nothing else in a snapshot must agree with them, so the lock, which every thread's allocation takes,
 * is not taken once more for them. A snapshot reads them after the rest: never fewer calls than the
 * allocations and frees it holds. */
static uint64_t vt_calls[VT_FN_COUNT], vt_failed_calls[VT_FN_COUNT], vt_unknown_frees;

/* A snapshot under way (vt_table_snapshot): entries taken out since it began, with seq <= vt_snap_seq. */
struct vt_freed {
    struct vt_alloc e;
    uint32_t slot;
};
static pthread_mutex_t vt_snap_mu = PTHREAD_MUTEX_INITIALIZER; /* one snapshot at a time */
static int vt_snap_active, vt_snap_overflow;
static uint64_t vt_snap_seq;
static struct vt_freed *vt_snap_freed;
static size_t vt_snap_nfreed, vt_snap_cap;

static const char *const vt_kind_names[VT_KIND_COUNT] = {
    "device", "managed", "host_pinned", "async", "vmm_map", "va_reserved", "vmm_physical", "vmm_physical_host",
    "block",
};

const char *vt_kind_name(enum vt_kind k)
{
    return k < VT_KIND_COUNT ? vt_kind_names[k] : "?";
}

uint64_t vt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Address spaces inside the one table: memory, mappings, reservations never collide. */
static uint8_t vt_space_of(enum vt_kind k)
{
    return k == VT_KIND_VMM_MAP ? 1 : k == VT_KIND_VA ? 2 : k == VT_KIND_BLOCK ? 3 : 0;
}

static int vt_counts_reserved(enum vt_kind k)
{
    return k == VT_KIND_DEVICE || k == VT_KIND_PHYS;
}

static void vt_device_seen_locked(int device)
{
    if (device >= 0 && device < VT_MAX_DEVICES && device > vt_c.max_device)
        vt_c.max_device = device;
}

static void vt_live_add_locked(enum vt_kind k, int device, uint64_t size)
{
    vt_c.live_count[k]++;
    vt_c.live_bytes[k] += size;
    vt_device_seen_locked(device);
    if (vt_counts_reserved(k) && device >= 0 && device < VT_MAX_DEVICES) {
        vt_c.reserved[device] += size;
        if (vt_c.reserved[device] > vt_c.reserved_peak[device])
            vt_c.reserved_peak[device] = vt_c.reserved[device];
    }
}

static void vt_live_sub_locked(enum vt_kind k, int device, uint64_t size)
{
    vt_c.live_count[k]--;
    vt_c.live_bytes[k] -= size;
    if (vt_counts_reserved(k) && device >= 0 && device < VT_MAX_DEVICES)
        vt_c.reserved[device] -= size;
}

/* The thread id, asked of the kernel once per thread; a fork child inherits the forking thread's
 * copy, so the child handler clears it. */
static __thread int32_t vt_tid __attribute__((tls_model("initial-exec")));

/* seq NULL: the entry is numbered later, as it enters the table. */
static void vt_stamp(uint64_t *seq, uint64_t *time_ns, int32_t *tid)
{
    *time_ns = vt_now_ns();
    if (!vt_tid)
        vt_tid = (int32_t)syscall(SYS_gettid);
    *tid = vt_tid;
    if (seq)
        *seq = __atomic_add_fetch(&vt_seq, 1, __ATOMIC_RELAXED);
}

static void vt_count_alloc_locked(enum vt_fn api, enum vt_kind kind, uint64_t size)
{
    vt_c.api[api].allocs++;
    vt_c.api[api].bytes_alloc += size;
    vt_c.kind[kind].allocs++;
    vt_c.kind[kind].bytes_alloc += size;
}

/* sign -1 takes back a free whose real call failed. */
static void vt_count_free_locked(enum vt_fn api, enum vt_kind kind, uint64_t size, int sign)
{
    vt_c.api[api].frees += (uint64_t)sign;
    vt_c.api[api].bytes_freed += (uint64_t)sign * size;
    vt_c.kind[kind].frees += (uint64_t)sign;
    vt_c.kind[kind].bytes_freed += (uint64_t)sign * size;
}

/* While a snapshot copies the table, an entry that was live when it began and leaves now is logged. */
static void vt_snap_log_locked(const struct vt_alloc *e, uint32_t slot)
{
    if (!vt_snap_active || e->seq > vt_snap_seq)
        return;
    if (vt_snap_nfreed == vt_snap_cap) {
        size_t cap = vt_snap_cap ? 2 * vt_snap_cap : 1024;
        struct vt_freed *n = realloc(vt_snap_freed, cap * sizeof *n);
        if (!n) {
            vt_snap_overflow = 1;
            return;
        }
        vt_snap_freed = n;
        vt_snap_cap = cap;
    }
    vt_snap_freed[vt_snap_nfreed++] = (struct vt_freed){*e, slot};
}

/* Takes a slot out of the table; its free is counted in the same step as the removal. */
static void vt_take_locked(uint32_t slot, struct vt_alloc *out)
{
    struct vt_alloc *e = vt_slab_entry(slot);
    vt_snap_log_locked(e, slot);
    if (out)
        *out = *e;
    vt_index_remove(slot);
    vt_live_sub_locked(e->kind, e->device, e->size);
    vt_count_free_locked(e->api, e->kind, e->size, 1);
    vt_slab_put(slot);
}

/* Returns 0 when the entry could not be kept (our own memory ran out). */
static int vt_insert_locked(const struct vt_alloc *a)
{
    uint32_t old = vt_index_find(a->addr, a->space);
    if (old != VT_SLAB_NONE) {
        /* The address came back from the driver while we still held it: its free took a route we
         * do not see. Keep the newer one, count the old one freed, and say how often this happened. */
        vt_take_locked(old, NULL);
        vt_c.replaced++;
    }
    uint32_t i = vt_slab_take();
    if (i == VT_SLAB_NONE) {
        vt_c.dropped++;
        return 0;
    }
    struct vt_alloc *e = vt_slab_entry(i);
    *e = *a;
    /* Numbered as it enters the table (a restored entry too): what a snapshot begun at S holds is the
     * entries numbered up to S. */
    e->seq = __atomic_add_fetch(&vt_seq, 1, __ATOMIC_RELAXED);
    if (vt_index_add(i) < 0) {
        vt_slab_put(i);
        vt_c.dropped++;
        return 0;
    }
    vt_live_add_locked(e->kind, e->device, e->size);
    return 1;
}

void vt_table_add(struct vt_alloc *a)
{
    a->space = vt_space_of(a->kind);
    vt_stamp(NULL, &a->time_ns, &a->tid);
    __atomic_add_fetch(&vt_calls[a->api], 1, __ATOMIC_RELAXED);
    vt_mutex_lock(&vt_lock);
    int kept = vt_insert_locked(a);
    if (kept)
        vt_count_alloc_locked(a->api, a->kind, a->size);
    vt_mutex_unlock(&vt_lock);
    if (!kept)
        vt_say_once(VT_ONCE_NOMEM, "out of memory; some allocations are not recorded");
}

int vt_table_remove(uint64_t addr, enum vt_kind kind_space, struct vt_alloc *out)
{
    vt_mutex_lock(&vt_lock);
    uint32_t slot = vt_index_find(addr, vt_space_of(kind_space));
    if (slot != VT_SLAB_NONE)
        vt_take_locked(slot, out);
    vt_mutex_unlock(&vt_lock);
    return slot != VT_SLAB_NONE;
}

void vt_table_restore(const struct vt_alloc *a)
{
    vt_mutex_lock(&vt_lock);
    vt_count_free_locked(a->api, a->kind, a->size, -1);
    if (!vt_insert_locked(a)) {
        /* Lost after all: keep allocations - frees equal to the live entries. */
        vt_count_free_locked(a->api, a->kind, a->size, 1);
    }
    vt_mutex_unlock(&vt_lock);
}

size_t vt_table_remove_maps(uint64_t addr, uint64_t size, struct vt_alloc *out, size_t max, size_t *total)
{
    size_t got = 0, removed = 0;
    uint64_t end = addr + size;
    uint8_t space = vt_space_of(VT_KIND_VMM_MAP);
    vt_mutex_lock(&vt_lock);
    /* Mappings inside one unmap are usually contiguous: walk them by address, and fall back to a
     * scan of the table only when a gap is met. */
    uint64_t cur = addr;
    int gap = 0;
    while (cur < end) {
        uint32_t slot = vt_index_find(cur, space);
        uint64_t sz = slot != VT_SLAB_NONE ? vt_slab_entry(slot)->size : 0;
        if (!sz) {
            gap = 1;
            break;
        }
        cur += sz;
        vt_take_locked(slot, got < max ? &out[got] : NULL);
        got += got < max;
        removed++;
    }
    if (gap) {
        size_t hw = vt_slab_high_water();
        for (uint32_t slot = 0; slot < hw; slot++) {
            const struct vt_alloc *e = vt_slab_entry(slot);
            if (e->kind != VT_KIND_VMM_MAP || e->addr < addr || e->addr >= end)
                continue;
            vt_take_locked(slot, got < max ? &out[got] : NULL);
            got += got < max;
            removed++;
        }
    }
    vt_mutex_unlock(&vt_lock);
    *total = removed;
    return got;
}

void vt_phys_add(struct vt_phys *p)
{
    vt_stamp(&p->seq, &p->time_ns, &p->tid);
    struct vt_pnode *n = malloc(sizeof *n), *old;
    __atomic_add_fetch(&vt_calls[p->api], 1, __ATOMIC_RELAXED);
    vt_mutex_lock(&vt_lock);
    if (n) {
        memset(n, 0, sizeof *n);
        n->p = *p;
        HASH_FIND(hh, vt_phys_tab, &p->handle, sizeof p->handle, old);
        if (old) {
            HASH_DEL(vt_phys_tab, old);
            vt_live_sub_locked(old->p.kind, old->p.device, old->p.size);
            vt_count_free_locked(old->p.api, old->p.kind, old->p.size, 1);
            vt_c.replaced++;
            free(old);
        }
        vt_hash_oom = 0;
        HASH_ADD(hh, vt_phys_tab, p.handle, sizeof p->handle, n);
        if (vt_hash_oom) {
            free(n);
            n = NULL;
        } else {
            vt_live_add_locked(p->kind, p->device, p->size);
            vt_count_alloc_locked(p->api, p->kind, p->size);
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
            vt_live_sub_locked(n->p.kind, n->p.device, n->p.size);
            vt_count_free_locked(n->p.api, n->p.kind, n->p.size, 1);
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
        vt_count_free_locked(dead->api, dead->kind, dead->size, -1);
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
                vt_live_add_locked(n->p.kind, n->p.device, n->p.size);
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
    vt_device_seen_locked(device);
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

void vt_count_call(enum vt_fn api)
{
    __atomic_add_fetch(&vt_calls[api], 1, __ATOMIC_RELAXED);
}

void vt_count_failure(enum vt_fn api)
{
    __atomic_add_fetch(&vt_calls[api], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&vt_failed_calls[api], 1, __ATOMIC_RELAXED);
}

void vt_count_unknown_free(void)
{
    __atomic_add_fetch(&vt_unknown_frees, 1, __ATOMIC_RELAXED);
}

void vt_count_dropped(void)
{
    vt_mutex_lock(&vt_lock);
    vt_c.dropped++;
    vt_mutex_unlock(&vt_lock);
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

/* Everything but the entries, in one short hold: counters, physical handles, pools, the rest. 0, or -1
 * when the copies' room was too small (caps say what is needed). */
static int vt_snap_head_locked(struct vt_snapshot *s, size_t cap_p, size_t cap_pool, size_t *need_p, size_t *need_pool)
{
    size_t np = HASH_COUNT(vt_phys_tab);
    *need_p = np;
    *need_pool = vt_npools;
    if (np > cap_p || vt_npools > cap_pool)
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
    s->c.seq = __atomic_load_n(&vt_seq, __ATOMIC_RELAXED);
    for (int i = 0; i < VT_FN_COUNT; i++) {
        s->c.api[i].calls = __atomic_load_n(&vt_calls[i], __ATOMIC_RELAXED);
        s->c.api[i].failed = __atomic_load_n(&vt_failed_calls[i], __ATOMIC_RELAXED);
    }
    s->c.unknown_frees = __atomic_load_n(&vt_unknown_frees, __ATOMIC_RELAXED);
    memcpy(s->failed, vt_failed_list, sizeof vt_failed_list);
    s->nfailed = vt_nfailed;
    return 0;
}

int vt_table_snapshot(struct vt_snapshot *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&vt_snap_mu);
    size_t cap_a = 0, cap_p = 64, cap_pool = 16, need_p = 0, need_pool = 0, hw = 0;
    uint64_t head_t0, head_ns = 0;
    int r = -1;
    for (;;) {
        /* Sized and touched outside the lock (no page faults while it is held). */
        vt_snapshot_free(s);
        vt_mutex_lock(&vt_lock);
        size_t now_hw = vt_slab_high_water();
        vt_mutex_unlock(&vt_lock);
        cap_a = now_hw + now_hw / 8 + 4096;
        s->allocs = malloc(cap_a * sizeof *s->allocs);
        s->phys = malloc(cap_p * sizeof *s->phys);
        s->pools = malloc(cap_pool * sizeof *s->pools);
        if (!s->allocs || !s->phys || !s->pools)
            goto out;
        /* One write per page; not memset, which the compiler may fold into a calloc that touches nothing. */
        for (size_t off = 0; off < cap_a * sizeof *s->allocs; off += 4096)
            ((volatile char *)s->allocs)[off] = 0;
        vt_mutex_lock(&vt_lock);
        head_t0 = vt_now_ns();
        hw = vt_slab_high_water();
        int fits = hw <= cap_a && vt_snap_head_locked(s, cap_p, cap_pool, &need_p, &need_pool) == 0;
        head_ns = vt_now_ns() - head_t0;
        if (fits) {
            vt_snap_active = 1;
            vt_snap_overflow = 0;
            vt_snap_seq = s->c.seq;
            vt_snap_nfreed = 0;
        }
        vt_mutex_unlock(&vt_lock);
        if (fits)
            break;
        cap_p = need_p + need_p / 8 + 64;
        cap_pool = need_pool + 16;
    }
    /* The entries, a chunk of slots per hold; slots past hw were taken after S. */
    uint64_t longest = head_ns;
    for (size_t at = 0; at < hw; at += VT_SLAB_CHUNK) {
        size_t n = hw - at < VT_SLAB_CHUNK ? hw - at : VT_SLAB_CHUNK;
        vt_mutex_lock(&vt_lock);
        uint64_t t0 = vt_now_ns();
        vt_slab_copy_range(s->allocs + at, at, n);
        uint64_t held = vt_now_ns() - t0;
        vt_mutex_unlock(&vt_lock);
        longest = held > longest ? held : longest;
    }
    s->c.snap_hold_ns = longest;
    vt_mutex_lock(&vt_lock);
    struct vt_freed *freed = vt_snap_freed;
    size_t nfreed = vt_snap_nfreed;
    int overflow = vt_snap_overflow;
    vt_snap_active = 0;
    vt_snap_freed = NULL;
    vt_snap_nfreed = vt_snap_cap = 0;
    vt_mutex_unlock(&vt_lock);
    if (overflow) {
        /* Our own memory ran short while logging: the entries are those copied, the counters say more. */
        s->c.dropped++;
    }
    /* A slot holds at most one entry numbered up to S, so each slot is logged once at most. An entry
     * freed after its slot was copied is in the copy already; one freed before is put back in its slot's
     * place, where the copy holds nothing or a newer entry (dropped below in any case). */
    for (size_t i = 0; i < nfreed; i++) {
        struct vt_alloc *c = &s->allocs[freed[i].slot];
        if (freed[i].slot < hw && !(c->kind != VT_SLAB_FREE_KIND && c->seq == freed[i].e.seq))
            *c = freed[i].e;
    }
    free(freed);
    /* Free slots and entries made after S came along with the copy: drop them now. */
    size_t live = 0;
    for (size_t i = 0; i < hw; i++)
        if (s->allocs[i].kind != VT_SLAB_FREE_KIND && s->allocs[i].seq <= s->c.seq)
            s->allocs[live++] = s->allocs[i];
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
    s->allocs = NULL;
    s->phys = NULL;
    s->pools = NULL;
}

void vt_table_atfork_prepare(void)
{
    vt_mutex_lock(&vt_lock);
}

void vt_table_atfork_parent(void)
{
    vt_mutex_unlock(&vt_lock);
}

void vt_table_atfork_child(void)
{
    /* The parent's GPU memory is not the child's: start from an empty table. */
    vt_index_reset();
    vt_slab_reset();
    struct vt_pnode *pn, *ptmp;
    HASH_ITER(hh, vt_phys_tab, pn, ptmp) {
        HASH_DEL(vt_phys_tab, pn);
        free(pn);
    }
    vt_npools = 0;
    vt_nuw = 0;
    memset(&vt_c, 0, sizeof vt_c);
    vt_c.max_device = -1;
    vt_nfailed = 0;
    vt_seq = 0;
    memset(vt_calls, 0, sizeof vt_calls);
    memset(vt_failed_calls, 0, sizeof vt_failed_calls);
    vt_unknown_frees = 0;
    /* A snapshot under way in the parent is the parent's; the child starts with none. */
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&vt_snap_mu, &mu, sizeof mu);
    vt_snap_active = 0;
    vt_snap_freed = NULL;
    vt_snap_nfreed = vt_snap_cap = 0;
    vt_tid = 0;
    vt_mutex_unlock(&vt_lock);
}
