/* Per-thread caches of interned items (vt_tcache.h). The pointer lives in initial-exec TLS, so finding
 * the cache costs a load; the memory is the heap's, so that the library's static TLS stays small. A
 * pthread key frees it when the thread ends, and marks the thread's pointer so that a hook running
 * later in the same thread's exit (another library's destructor that allocates) does not use it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vt_hot.h"
#include "vt_pypath.h"
#include "vt_tcache.h"

struct vt_tcache_slot {
    uint64_t h;
    const void *item;
};
_Static_assert(sizeof(struct vt_tcache_slot) * VT_TCACHE_WAYS == 64, "a set is one cache line");
_Static_assert(sizeof(struct vt_tcache_pair) * 2 == 64, "two pairs to a cache line");
_Static_assert(sizeof(struct vt_pycode_memo) * VT_PYCODE_MEMO_WAYS == 64, "a memo's set is one cache line");

#define VT_PAIR_SETS (VT_TCACHE_SETS * VT_TCACHE_WAYS / 2)

struct vt_tcache {
    struct vt_tcache_slot slot[VT_TCACHE_TABLES][VT_TCACHE_SETS][VT_TCACHE_WAYS];
    struct vt_tcache_pair pair[VT_PAIR_SETS][2];
    struct vt_pycode_memo memo[VT_PYCODE_MEMO_SETS * VT_PYCODE_MEMO_WAYS];
    uint64_t memo_cleared;
    struct vt_pywalk_step trail[2][VT_PYWALK_TRAIL + 1]; /* the last walk's, and the next one's, each ended by its mark */
    /* For each table, the item found after the one last found (by the earlier's hash), and the last one's
     * hash: a serving loop's allocations come in the same order at every step. */
    struct vt_tcache_next {
        uint64_t h;
        const char *item;
        size_t bytes;
    } next[VT_TCACHE_TABLES][VT_TCACHE_NEXT];
    uint64_t last_h[VT_TCACHE_TABLES];
    unsigned ntrail[2], last;
    unsigned turn, memo_turn; /* which slot of a full set is overwritten next */
    struct vt_pypath *path;
};

#define VT_TCACHE_GONE ((struct vt_tcache *)1)

static __thread struct vt_tcache *vt_mine __attribute__((tls_model("initial-exec")));
static pthread_key_t vt_key;
static int vt_key_ok;
static pthread_once_t vt_key_once = PTHREAD_ONCE_INIT;

static void vt_tcache_end(void *p)
{
    vt_pypath_free(((struct vt_tcache *)p)->path);
    free(p);
    vt_mine = VT_TCACHE_GONE;
}

static void vt_key_make(void)
{
    vt_key_ok = pthread_key_create(&vt_key, vt_tcache_end) == 0;
}

static struct vt_tcache *vt_tcache_get(void)
{
    struct vt_tcache *c = vt_mine;
    if (c)
        return c == VT_TCACHE_GONE ? NULL : c;
    pthread_once(&vt_key_once, vt_key_make);
    /* Sets on cache lines of their own. */
    size_t size = (sizeof *c + 63) / 64 * 64;
    if (!vt_key_ok || !(c = aligned_alloc(64, size)))
        return NULL;
    memset(c, 0, size);
    if (pthread_setspecific(vt_key, c) != 0) {
        free(c);
        return NULL;
    }
    vt_mine = c;
    return c;
}

VT_HOT const void *vt_tcache_find(enum vt_tcache_table t, uint64_t h)
{
    struct vt_tcache *c = vt_tcache_get();
    if (!c)
        return NULL;
    const struct vt_tcache_slot *set = c->slot[t][h % VT_TCACHE_SETS];
    for (int w = 0; w < VT_TCACHE_WAYS; w++)
        if (set[w].h == h && set[w].item)
            return set[w].item;
    return NULL;
}

VT_HOT void vt_tcache_put(enum vt_tcache_table t, uint64_t h, const void *item)
{
    struct vt_tcache *c = vt_tcache_get();
    if (!c)
        return;
    struct vt_tcache_slot *set = c->slot[t][h % VT_TCACHE_SETS], *to = NULL;
    for (int w = 0; w < VT_TCACHE_WAYS && !to; w++)
        if (set[w].h == h)
            to = &set[w];
    for (int w = 0; w < VT_TCACHE_WAYS && !to; w++)
        if (!set[w].item)
            to = &set[w];
    if (!to)
        to = &set[c->turn++ % VT_TCACHE_WAYS];
    *to = (struct vt_tcache_slot){h, item};
}

VT_HOT struct vt_tcache_pair *vt_tcache_pair(uint64_t h, uintptr_t caller, uint32_t py)
{
    struct vt_tcache *c = vt_tcache_get();
    if (!c)
        return NULL;
    struct vt_tcache_pair *set = c->pair[h % VT_PAIR_SETS];
    for (int w = 0; w < 2; w++)
        if (set[w].caller == caller && set[w].py == py)
            return &set[w];
    for (int w = 0; w < 2; w++)
        if (!set[w].caller)
            return &set[w];
    return &set[c->turn++ % 2];
}

VT_HOT void vt_tcache_follow(enum vt_tcache_table t, uint64_t h, const void *item, size_t bytes)
{
    struct vt_tcache *c = vt_mine;
    if (!c || c == VT_TCACHE_GONE)
        return;
    struct vt_tcache_next *x = &c->next[t][c->last_h[t] % VT_TCACHE_NEXT];
    if (x->h != h || x->item != item) /* no store, so no line taken, when it already says so */
        *x = (struct vt_tcache_next){h, item, bytes};
    c->last_h[t] = h;
}

VT_HOT struct vt_pypath **vt_tcache_path(void)
{
    struct vt_tcache *c = vt_tcache_get();
    return c ? &c->path : NULL;
}

VT_HOT void vt_tcache_prefetch(int owner_off)
{
    const struct vt_tcache *c = vt_mine;
    if (!c || c == VT_TCACHE_GONE)
        return;
    /* The thread's last frames: its path's where it walks by paths, else the walk's own trail. */
    const struct vt_pywalk_step *o = c->trail[c->last];
    unsigned n = c->path ? 0 : c->ntrail[c->last];
    if (c->path)
        vt_pypath_prefetch(c->path, owner_off);
    /* Loops kept whole: each line of code here is one more to fetch at every allocation. */
#pragma GCC unroll 1
    for (unsigned i = 0; i < n; i++) {
        __builtin_prefetch(o[i].frame, 0, 3);
        __builtin_prefetch((const char *)o[i].frame + owner_off, 0, 3);
    }
#pragma GCC unroll 1
    for (int t = 0; t < VT_TCACHE_TABLES; t++) {
        const struct vt_tcache_next *x = &c->next[t][c->last_h[t] % VT_TCACHE_NEXT];
        if (!x->item)
            continue;
        __builtin_prefetch(c->slot[t][x->h % VT_TCACHE_SETS], 0, 3);
        /* The item's lines: its start is not aligned, so its last byte's line too. */
        size_t bytes = x->bytes < VT_TCACHE_NEXT_BYTES ? x->bytes : VT_TCACHE_NEXT_BYTES;
#pragma GCC unroll 1
        for (size_t off = 0; off < bytes; off += 64)
            __builtin_prefetch(x->item + off, 0, 3);
        __builtin_prefetch(x->item + bytes - 1, 0, 3);
    }
}

VT_HOT int vt_tcache_walk(struct vt_pycode_memos *m, uint64_t **cleared)
{
    struct vt_tcache *c = vt_tcache_get();
    if (!c)
        return -1;
    m->slot = c->memo;
    m->turn = &c->memo_turn;
    m->old = c->trail[c->last];
    m->nold = c->ntrail[c->last];
    c->last ^= 1;
    m->trail = c->trail[c->last];
    m->ntrail = &c->ntrail[c->last];
    *cleared = &c->memo_cleared;
    return 0;
}
