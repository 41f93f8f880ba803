/* Stack capture and interning. unw_backtrace walks with libunwind's frame cache (far cheaper than an
 * unw_step loop); frames inside libvramtrace itself are dropped from the top, so a stack starts at the
 * program's call into CUDA. The Python stack, when the thread has one, is part of the key. Interned
 * stacks live for the process: ids stay valid across dumps.
 *
 * Threads: the table of stacks is split in shards by the key's hash, each with its own lock, so threads
 * that allocate at once rarely meet; only a new stack takes the list's lock as well, to get the next id
 * and be published in id order (vt_stack_all relies on the newest stack having the highest id).
 *
 * Native frames above Python ones are reused: an allocation whose Python stack and calling instruction
 * (the program's return address into our hook, read along our own frame pointers: three loads) are
 * those of one this thread unwound lately takes that one's native frames, with no unwind, which with a
 * real program's caches evicted costs ~1 us (docs/performance.md). Between the Python frames and the CUDA
 * call lies one operator's C++, which the pair almost always fixes. To find out when it does not, a pair
 * is unwound again its first VT_REUSE_TRUST times, then at one reuse in VT_REUSE_CHECK; a pair seen with
 * other frames (a stack that "varies") is unwound every time from then on.
 * Stacks with no Python frames are always unwound: the pair says nothing of the frames below.
 *
 * Fork: libunwind has locks and caches of its own, and a child forked while another thread was inside
 * unw_backtrace would inherit them half-held and hang at its first stack. So the fork handlers wait
 * until no thread is unwinding, and hold new unwinds back until the fork is done. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "vt_config.h"
#include "vt_fd.h"
#include "vt_hot.h"
#include "vt_log.h"
#include "vt_modules.h"
#include "vt_pycapture.h"
#include "vt_selfcost.h"
#include "vt_stack.h"
#include "vt_stripe.h"
#include "vt_table.h"
#include "vt_tcache.h"
#include "vt_unload.h"
#include "vt_module.h"

#define VT_STACK_SHARDS 16
static struct {
    pthread_mutex_t lock;
    struct vt_stack *by_key;
} __attribute__((aligned(64))) vt_shards[VT_STACK_SHARDS]; /* a shard's lock on cache lines of its own */
static pthread_mutex_t vt_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vt_stack *vt_stacks_list;
static uint32_t vt_stacks_count;
static pthread_once_t vt_shards_once = PTHREAD_ONCE_INIT;

static void vt_shards_init(void)
{
    for (int i = 0; i < VT_STACK_SHARDS; i++)
        pthread_mutex_init(&vt_shards[i].lock, NULL);
}
static struct vt_stripe vt_unwinding[VT_STRIPES]; /* threads inside unw_backtrace */
static atomic_int vt_forking;                      /* a fork is under way: no new unwinds */

static uint64_t vt_key_hash(const uintptr_t *key, uint32_t n)
{
    uint64_t h = n;
    for (uint32_t i = 0; i <= n; i++) {
        h = (h ^ key[i]) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    return h;
}

static void vt_unwind_once(void *arg)
{
    void *pc[2];
    (void)arg;
    unw_backtrace(pc, 2);
}

/* At the first CUDA call: libunwind opens a pipe of its own at its first walk (to check addresses) and
 * keeps it; made to open it here, with the low descriptors taken for the moment, it lands high
 * (vt_fd.h). Where the limit leaves none to spare, call sites are off instead (said once). */
static void vt_stack_prepare(void)
{
    if (vt_cfg.depth <= 0)
        return;
    if (!vt_fd_spare()) {
        vt_cfg.depth = 0;
        vt_say_once(VT_ONCE_STACKS, "the descriptor limit (ulimit -n) is below %d, and native call sites need one "
                    "of libunwind's own: no call sites are recorded, so that every descriptor stays the program's",
                    VT_FD_MIN_LIMIT);
        return;
    }
    vt_fd_above(vt_unwind_once, NULL);
}

static void vt_stack_init(void)
{
    vt_modules_code_range((const void *)&vt_stack_init, &vt_hotdata.self_lo, &vt_hotdata.self_hi);
    pthread_once(&vt_shards_once, vt_shards_init);
}

/* A stack this thread has not met lately: found or added under its shard's lock. Out of the hooks' line
 * of code (a decode loop meets its few hundred stacks in the thread's cache). */
static __attribute__((noinline, cold)) const struct vt_stack *vt_stack_intern_shared(const uintptr_t *key, uint32_t n,
                                                                                      uint64_t hk)
{
    size_t len = (n + 1) * sizeof(uintptr_t);
    /* The shard: from the innermost return address and the depth, which differ between most stacks. */
    uint64_t h = ((uint64_t)key[0] ^ ((uint64_t)n << 48) ^ (n > 1 ? (uint64_t)key[1] << 7 : 0)) * 0x9e3779b97f4a7c15ull;
    struct vt_stack *s;
    uint32_t id = 0;
    pthread_once(&vt_shards_once, vt_shards_init);
    __typeof__(vt_shards[0]) *sh = &vt_shards[h >> 60];
    pthread_mutex_lock(&sh->lock);
    HASH_FIND(hh, sh->by_key, key, len, s);
    if (s) {
        id = s->id;
    } else if ((s = malloc(sizeof *s + len))) {
        memset(s, 0, sizeof *s);
        s->n = n;
        s->py = (uint32_t)key[n];
        /* A stack met again after its code was unloaded and other code mapped at the same addresses keeps
         * its old generation: its frames then read as unloaded, never as the new code's. */
        s->gen = vt_unload_gen();
        memcpy(s->pc, key, len);
        vt_hash_oom = 0;
        HASH_ADD_KEYPTR(hh, sh->by_key, s->pc, len, s);
        if (vt_hash_oom) {
            free(s);
        } else {
            pthread_mutex_lock(&vt_list_lock);
            s->id = vt_stacks_count + 1;
            s->next = vt_stacks_list;
            __atomic_store_n(&vt_stacks_list, s, __ATOMIC_RELEASE);
            vt_stacks_count = s->id;
            pthread_mutex_unlock(&vt_list_lock);
            id = s->id;
        }
    }
    pthread_mutex_unlock(&sh->lock);
    if (!id) {
        vt_say_once(VT_ONCE_NOMEM, "out of memory; some call sites are not recorded");
        return NULL;
    }
    vt_tcache_put(VT_TCACHE_STACKS, hk, s);
    return s;
}

/* key: n return addresses, then the Python stack id; the interned stack, or NULL when it could not be
 * kept. */
VT_HOT static const struct vt_stack *vt_stack_intern(const uintptr_t *key, uint32_t n)
{
    uint64_t hk = vt_key_hash(key, n);
    /* A stack this thread met lately: no lock, so threads allocating from one call site do not queue on
     * its shard. */
    const struct vt_stack *seen = vt_tcache_find(VT_TCACHE_STACKS, hk);
    if (seen && seen->n == n && vt_words_equal(seen->pc, key, (size_t)n + 1)) {
        vt_tcache_follow(VT_TCACHE_STACKS, hk, seen, sizeof *seen + ((size_t)n + 1) * sizeof *key);
        return seen;
    }
    return vt_stack_intern_shared(key, n, hk);
}

/* The program's return address into our hook: along our own frame pointers (the library is built with
 * them) to the first return address outside our code. Only frames of ours are read; 0 when none is
 * found within VT_OWN_FRAMES. */
#define VT_OWN_FRAMES 8
VT_HOT __attribute__((noinline)) static uintptr_t vt_program_caller(void)
{
    void *const *fp = __builtin_frame_address(0);
    for (int i = 0; fp && i <= VT_OWN_FRAMES; i++) {
        uintptr_t ret = (uintptr_t)fp[1];
        if (ret < vt_hotdata.self_lo || ret >= vt_hotdata.self_hi)
            return ret;
        fp = (void *const *)fp[0];
    }
    return 0;
}

__attribute__((noinline)) uintptr_t vt_stack_caller(void)
{
    return vt_program_caller();
}

/* A pair's frames are taken on trust once this many unwinds found them again; after that, one reuse in
 * VT_REUSE_CHECK, drawn at random (a fixed period would keep missing a path that comes back in step
 * with it: one call in two), unwinds anyway, to see whether the frames still are the same. */
#define VT_REUSE_TRUST 8
#define VT_REUSE_CHECK 16
static __thread uint32_t vt_reuse_rng __attribute__((tls_model("initial-exec")));

static int vt_reuse_checks(void)
{
    uint32_t x = vt_reuse_rng;
    if (!x)
        x = (uint32_t)(uintptr_t)&vt_reuse_rng | 1; /* a seed of its own per thread */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    vt_reuse_rng = x;
    return x % VT_REUSE_CHECK == 0;
}

/* Both halves mixed into every bit: the slot is taken from the low ones. */
static uint64_t vt_pair_hash(uint32_t py, uintptr_t caller)
{
    uint64_t h = (uint64_t)caller * 0x9e3779b97f4a7c15ull ^ (uint64_t)py * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* Frames of our own at the top of a stack (the hook, vt_call's begin, vt_stack_capture and
 * vt_stack_unwound: 4, one more than was measured before the last was split off),
 * unwound and then skipped: at most VT_OWN_FRAMES. Each unwound frame costs ~20 ns, so a capture asks
 * for as many as the most seen so far (vt_own_seen), and again for more when a new route has more. */
static int vt_own_seen = 4;

__thread uintptr_t vt_stack_skip_lo __attribute__((tls_model("initial-exec")));
__thread uintptr_t vt_stack_skip_hi __attribute__((tls_model("initial-exec")));

static uintptr_t vt_alloc_code_lo, vt_alloc_code_hi;

void vt_stack_allocator_code(uintptr_t lo, uintptr_t hi)
{
    __atomic_store_n(&vt_alloc_code_lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&vt_alloc_code_hi, hi, __ATOMIC_RELAXED);
}

static int vt_own_count(void *const *raw, int got)
{
    int skip = 0;
    while (skip < got && (uintptr_t)raw[skip] >= vt_hotdata.self_lo && (uintptr_t)raw[skip] < vt_hotdata.self_hi)
        skip++;
    return skip;
}

/* After our own: the frames of the code in [lo, hi) (vt_stack_skip_lo, vt_stack_allocator_code). */
static int vt_skipped_count(void *const *raw, int got, int skip, uintptr_t lo, uintptr_t hi)
{
    while (skip < got && (uintptr_t)raw[skip] >= lo && (uintptr_t)raw[skip] < hi)
        skip++;
    return skip;
}

/* The native frames of an allocation, unwound (or reused: below), with Python stack py above them and
 * the program's calling instruction caller; depth frames at most. Apart from vt_stack_capture, whose
 * common case (one native frame above Python ones) is then a few lines of code. */
static __attribute__((noinline)) uint32_t vt_stack_unwound(uint32_t py, uintptr_t caller, int depth, int timed,
                                                         uint64_t t1)
{
    /* Frames above Python ones that this thread unwound lately for the same Python stack and caller. */
    struct vt_tcache_pair *rc = caller ? vt_tcache_pair(vt_pair_hash(py, caller), caller, py) : NULL;
    const struct vt_stack *last = rc && rc->caller == caller && rc->py == py ? rc->item : NULL;
    if (last && rc->checks >= VT_REUSE_TRUST && !vt_reuse_checks()) {
        vt_tally_add(VT_TALLY_REUSED, 1); /* captures that took native frames unwound before */
        if (timed)
            vt_self_part(VT_SELF_NATIVE, vt_ticks_fenced() - t1);
        return rc->id;
    }
    void *raw[VT_DEPTH_MAX + VT_OWN_FRAMES + VT_SKIP_FRAMES + 1];
    int got = 0, skip = 0;
    uintptr_t skip_lo = vt_stack_skip_lo, skip_hi = vt_stack_skip_hi;
    int keep_one = 0; /* the allocator's range: never every frame left out */
    if (!skip_hi && !py && depth > 0) {
        uintptr_t lo = __atomic_load_n(&vt_alloc_code_lo, __ATOMIC_RELAXED),
                  hi = __atomic_load_n(&vt_alloc_code_hi, __ATOMIC_RELAXED), from = hi ? vt_program_caller() : 0;
        if (from - lo < hi - lo) {
            skip_lo = lo;
            skip_hi = hi;
            keep_one = 1;
        }
    }
    if (depth > 0) {
        /* Sequentially consistent, against the fork handler's store to vt_forking and its sum of these. */
        vt_stripe_add(vt_unwinding, 1, __ATOMIC_SEQ_CST);
        while (atomic_load(&vt_forking)) {
            vt_stripe_add(vt_unwinding, (uint64_t)-1, __ATOMIC_SEQ_CST);
            while (atomic_load(&vt_forking))
                sched_yield();
            vt_stripe_add(vt_unwinding, 1, __ATOMIC_SEQ_CST);
        }
        int own = __atomic_load_n(&vt_own_seen, __ATOMIC_RELAXED);
        int extra = VT_UNLIKELY(skip_hi != 0) ? VT_SKIP_FRAMES : 0;
        for (;;) {
            got = unw_backtrace(raw, depth + own + extra);
            skip = vt_own_count(raw, got);
            /* More of ours than asked for, so the program's frames were cut short: again, with room. */
            if (got < depth + own + extra || skip <= own || own >= VT_OWN_FRAMES)
                break;
            own = skip < VT_OWN_FRAMES ? skip : VT_OWN_FRAMES;
            int seen = __atomic_load_n(&vt_own_seen, __ATOMIC_RELAXED);
            while (seen < own &&
                   !__atomic_compare_exchange_n(&vt_own_seen, &seen, own, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
        }
        vt_stripe_add(vt_unwinding, (uint64_t)-1, __ATOMIC_SEQ_CST);
        if (extra) {
            int past = vt_skipped_count(raw, got, skip, skip_lo, skip_hi);
            if (past < got || !keep_one)
                skip = past;
        }
    }
    int n = got - skip;
    if (n > depth)
        n = depth;
    if (n < 0)
        n = 0;
    const struct vt_stack *s = NULL;
    if (n || py) {
        raw[skip + n] = (void *)(uintptr_t)py;
        s = vt_stack_intern((const uintptr_t *)(raw + skip), (uint32_t)n);
    }
    if (s && last && s != last) {
        /* The same Python stack and caller, other frames: both are unwound from now on, by every
         * thread (one that still reuses either finds out at its next check). */
        __atomic_store_n((uint8_t *)&last->varies, 1, __ATOMIC_RELAXED);
        __atomic_store_n((uint8_t *)&s->varies, 1, __ATOMIC_RELAXED);
    }
    if (rc) {
        if (s && n && (uintptr_t)raw[skip] == caller && !__atomic_load_n(&s->varies, __ATOMIC_RELAXED))
            *rc = (struct vt_tcache_pair){caller, py, s->id, s, s == last ? rc->checks + 1 : 0};
        else if (last)
            rc->caller = 0;
    }
    uint32_t id = s ? s->id : 0;
    if (timed)
        vt_self_part(VT_SELF_NATIVE, vt_ticks_fenced() - t1);
    return id;
}


VT_HOT uint32_t vt_stack_capture(void)
{
    if (vt_cfg.depth <= 0)
        return 0;
    /* Python frames first: where they are read, only the few native frames above them are kept (the
     * library that allocated, and its caller), so unwinding stops there. The deep C++ below an operator
     * costs the most to unwind and tells the least once the Python line is known (memray keeps no
     * native frames at all unless asked). */
    int timed = vt_self_on;
    uint64_t t0 = timed ? vt_ticks_fenced() : 0;
    uint32_t py = vt_pycapture();
    uint64_t t1 = timed ? vt_ticks_fenced() : 0;
    if (timed)
        vt_self_part(VT_SELF_PY, t1 - t0);
    int depth = py && vt_cfg.py_native_depth < vt_cfg.depth ? vt_cfg.py_native_depth : vt_cfg.depth;
    uintptr_t caller = py && depth > 0 ? vt_program_caller() : 0;
    /* One native frame above Python ones: the program's call into CUDA, which vt_program_caller found
     * along our own frame pointers, is that frame (the first an unwind would give past ours), so nothing
     * is unwound and no pair kept: the library that allocated (what names cuBLAS's or NCCL's memory),
     * for about the cost of none. */
    if (depth == 1 && caller) {
        /* A caller in code the thread leaves out (an allocator telling us of its block): its Python frames
         * alone. */
        int left_out = VT_UNLIKELY(caller - vt_stack_skip_lo < vt_stack_skip_hi - vt_stack_skip_lo);
        uintptr_t key[2] = {caller, py};
        const struct vt_stack *one = vt_stack_intern(key + left_out, (uint32_t)!left_out);
        if (timed)
            vt_self_part(VT_SELF_NATIVE, vt_ticks_fenced() - t1);
        return one ? one->id : 0;
    }
    return vt_stack_unwound(py, caller, depth, timed, t1);
}

VT_HOT void vt_stack_prefetch(void)
{
    if (vt_cfg.depth > 0)
        vt_pycapture_prefetch();
}

uint64_t vt_stack_reused(void)
{
    return vt_tally_sum(VT_TALLY_REUSED);
}

const struct vt_stack *vt_stack_all(uint32_t *count)
{
    /* Lock-free: the newest stack is published last and carries the highest id, so the list from it is
     * complete. The exit dump reads it even when exit() interrupted an intern on its own thread. */
    const struct vt_stack *head = __atomic_load_n(&vt_stacks_list, __ATOMIC_ACQUIRE);
    *count = head ? head->id : 0;
    return head;
}

static void vt_stack_atfork_prepare(void)
{
    atomic_store(&vt_forking, 1);
    /* Unwinds take microseconds; the bound only keeps a fork from waiting forever on a thread that
     * was stopped inside one (a debugger). */
    for (int i = 0; vt_stripe_sum(vt_unwinding, __ATOMIC_SEQ_CST) && i < 1000000; i++)
        sched_yield();
    pthread_once(&vt_shards_once, vt_shards_init);
    for (int i = 0; i < VT_STACK_SHARDS; i++)
        pthread_mutex_lock(&vt_shards[i].lock);
    pthread_mutex_lock(&vt_list_lock);
}

static void vt_stack_unlock_all(void)
{
    pthread_mutex_unlock(&vt_list_lock);
    for (int i = VT_STACK_SHARDS; i-- > 0;)
        pthread_mutex_unlock(&vt_shards[i].lock);
}

static void vt_stack_atfork_parent(void)
{
    vt_stack_unlock_all();
    atomic_store(&vt_forking, 0);
}

static void vt_stack_atfork_child(void)
{
    /* The child's code is the parent's: interned stacks stay valid there. */
    vt_stack_unlock_all();
    for (int i = 0; i < VT_STRIPES; i++)
        __atomic_store_n(&vt_unwinding[i].v, 0, __ATOMIC_SEQ_CST);
    vt_tally_clear(VT_TALLY_REUSED);
    atomic_store(&vt_forking, 0);
}

VT_MODULE(stack, .init = vt_stack_init, .activate = vt_stack_prepare, .prepare = vt_stack_atfork_prepare, .parent = vt_stack_atfork_parent, .child = vt_stack_atfork_child);
