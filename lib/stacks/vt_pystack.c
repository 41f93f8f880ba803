/* Python stacks, interned into small ids that native stacks refer to (vt_stack.h). Two ways in:
 *
 * The walk (vt_pywalk.h), on the allocating thread, with or without the GIL. A stack's key is its
 * frames' (code object, instruction offset and fingerprint) words: a stack seen before costs the walk
 * and one look-up, in the thread's own cache of recent stacks (no lock) or else in one of 16 shards,
 * chosen by the key's hash, each with its own lock. A new stack
 * resolves the names of each code object not seen before and the line of each frame from the
 * interpreter's memory, while its thread still holds those frames alive; nothing is kept of the
 * interpreter's objects but copies, so nothing needs a reference.
 *
 * The interpreter's frame API, with the GIL held (when the walk cannot be trusted, or to check it): a
 * stack's key is its (code object, line) pairs, and a code object first seen this way is kept alive by
 * a reference we never give back, so that its address is never another's.
 *
 * Frames in the dump are (code, line) either way, and stacks are listed in id order. Locks: a shard's,
 * then vt_pys_lock (code objects, frames, the list); never across a Python call. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vt_format.h"
#include "vt_config.h"
#include "vt_hash.h"
#include "vt_hot.h"
#include "vt_lock.h"
#include "vt_log.h"
#include "vt_pypath.h"
#include "vt_pystack.h"
#include "vt_python.h"
#include "vt_stripe.h"
#include "vt_tcache.h"
#include "vt_module.h"

struct vt_pycode {
    UT_hash_handle hh;
    uintptr_t key[2]; /* code object, fingerprint (0: seen through the API, and kept alive) */
    char *file, *func;
};

struct vt_pyframe {
    UT_hash_handle hh;
    uintptr_t key[2]; /* struct vt_pycode *, line (0: none) */
    uint32_t id;
};

struct vt_pystk {
    UT_hash_handle hh;
    struct vt_pystk *next; /* list of all stacks, newest first; nodes are never freed */
    uint32_t id, n;
    const struct vt_pyframe **frames;
    uintptr_t key[]; /* n pairs */
};

#define VT_PYS_SHARDS 16
static struct {
    pthread_mutex_t lock;
    struct vt_pystk *by_key;
    char pad[64 - sizeof(pthread_mutex_t) % 64];
} vt_pys_shards[VT_PYS_SHARDS];
static pthread_once_t vt_pys_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t vt_pys_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vt_pycode *vt_codes;
static struct vt_pyframe *vt_frames;
static uint32_t vt_nframes;
static struct vt_pystk *vt_stacks_list;
static uint32_t vt_nstacks;

/* Code objects destroyed since the interpreter's code watcher was ours (3.12+): a walk's memo of code
 * objects (vt_pywalk.h) holds while this does not move. */
static struct vt_pytypes vt_types;
/* What the walks did (vt_pystack_counters). */
static struct vt_stripe vt_pys_lookups[VT_STRIPES];
/* Tests only (VRAMTRACE_FAKE_PYWALK): "mismatch" makes the check disagree, "corrupt" makes the third
 * walk find memory not as expected, so that both ways back to the interpreter's API are exercised;
 * "smalltree" bounds each thread's tree of paths at 48 nodes, so that it fills and starts again. */
static int vt_fault_mismatch, vt_fault_corrupt, vt_walks;

static void vt_pys_init(void)
{
    for (int i = 0; i < VT_PYS_SHARDS; i++)
        pthread_mutex_init(&vt_pys_shards[i].lock, NULL);
}

const char *vt_pystack_walk_setup(void)
{
    pthread_once(&vt_pys_once, vt_pys_init);
    const struct vt_pylayout *l = NULL; /* set unless why says otherwise */
    struct vt_pytypes t;
    const char *why = vt_py_walkable(&l, &t);
    const char *fault = getenv("VRAMTRACE_FAKE_PYWALK");
    vt_fault_mismatch = fault && !strcmp(fault, "mismatch");
    vt_fault_corrupt = fault && !strcmp(fault, "corrupt");
    if (fault && !strcmp(fault, "smalltree"))
        vt_pypath_bound(48); /* one path of 43 frames fits; two do not */
    if (!why) {
        vt_types = t;
        vt_hotdata.layout = l;
    }
    return why;
}

/* One word of the dump format for a function; a file may hold spaces but no control characters. */
static void vt_clean(char *s, int word)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (word && *p == ' '))
            *p = word ? '_' : '?';
}

/* The code object of key (code, fingerprint), added with its names (read by names()) when new. */
static const struct vt_pycode *vt_pycode_get(const uintptr_t key[2], int (*names)(uintptr_t, char **, char **))
{
    struct vt_pycode *c;
    vt_mutex_lock(&vt_pys_lock);
    HASH_FIND(hh, vt_codes, key, 2 * sizeof *key, c);
    vt_mutex_unlock(&vt_pys_lock);
    if (c)
        return c;
    char *file, *func;
    if (names(key[0], &file, &func) < 0) {
        file = strdup("?");
        func = strdup("?");
    }
    if (func && !*func) {
        free(func);
        func = strdup("?");
    }
    struct vt_pycode *n = malloc(sizeof *n);
    if (!n || !file || !func) {
        free(n);
        free(file);
        free(func);
        return NULL;
    }
    vt_clean(file, 0);
    vt_clean(func, 1);
    memcpy(n->key, key, sizeof n->key);
    n->file = file;
    n->func = func;
    vt_mutex_lock(&vt_pys_lock);
    HASH_FIND(hh, vt_codes, key, 2 * sizeof *key, c);
    if (!c) {
        vt_hash_oom = 0;
        HASH_ADD(hh, vt_codes, key, sizeof n->key, n);
        c = vt_hash_oom ? NULL : n;
    }
    vt_mutex_unlock(&vt_pys_lock);
    if (c == n && !key[1])
        vt_py_keep(key[0]);
    if (c != n) {
        free(file);
        free(func);
        free(n);
    }
    return c;
}

static int vt_walk_names(uintptr_t code, char **file, char **func)
{
    return vt_pywalk_names(vt_hotdata.layout, &vt_types, code, file, func, 0);
}

static int vt_walk_names_careful(uintptr_t code, char **file, char **func)
{
    return vt_pywalk_names(vt_hotdata.layout, &vt_types, code, file, func, 1);
}

/* Under vt_pys_lock: the frame (code, line), added when new. */
static const struct vt_pyframe *vt_pyframe_get_locked(const struct vt_pycode *code, uintptr_t line)
{
    uintptr_t key[2] = {(uintptr_t)code, line};
    struct vt_pyframe *f;
    HASH_FIND(hh, vt_frames, key, sizeof key, f);
    if (f || !(f = malloc(sizeof *f)))
        return f;
    memcpy(f->key, key, sizeof key);
    f->id = vt_nframes + 1;
    vt_hash_oom = 0;
    HASH_ADD(hh, vt_frames, key, sizeof f->key, f);
    if (vt_hash_oom) {
        free(f);
        return NULL;
    }
    vt_nframes = f->id;
    return f;
}

/* A stack this thread has not met lately, looked up under its shard's lock: out of the hooks' line of
 * code, as the thread's cache answers nearly every look-up. */
static __attribute__((noinline, cold)) uint32_t vt_pys_find_shared(const uintptr_t *key, int n, uint64_t h)
{
    vt_stripe_add(vt_pys_lookups, 1, __ATOMIC_RELAXED);
    struct vt_pystk *s;
    unsigned hv = (unsigned)h;
    pthread_once(&vt_pys_once, vt_pys_init);
    pthread_mutex_t *lock = &vt_pys_shards[h >> 60].lock;
    vt_mutex_lock(lock);
    HASH_FIND_BYHASHVALUE(hh, vt_pys_shards[h >> 60].by_key, key, 2 * (size_t)n * sizeof *key, hv, s);
    uint32_t id = s ? s->id : 0;
    vt_mutex_unlock(lock);
    if (id)
        vt_tcache_put(VT_TCACHE_PYSTACKS, h, s);
    return id;
}

VT_HOT static uint32_t vt_pys_find(const uintptr_t *key, int n, uint64_t h)
{
    /* A stack this thread met lately: no lock (stacks never change or go away once published). */
    const struct vt_pystk *seen = vt_tcache_find(VT_TCACHE_PYSTACKS, h);
    if (seen && seen->n == (uint32_t)n && vt_words_equal(seen->key, key, 2 * (size_t)n)) {
        vt_tcache_follow(VT_TCACHE_PYSTACKS, h, seen, sizeof *seen + 2 * (size_t)n * sizeof *key);
        return seen->id;
    }
    return vt_pys_find_shared(key, n, h);
}

/* A new stack of n frames: their code objects and lines given; 0 when it could not be kept. */
static uint32_t vt_pys_add(const uintptr_t *key, int n, uint64_t h, const struct vt_pycode **codes, const int *lines)
{
    size_t len = 2 * (size_t)n * sizeof *key;
    struct vt_pystk *s = malloc(sizeof *s + len), *old;
    const struct vt_pyframe **frames = malloc((size_t)n * sizeof *frames);
    if (!s || !frames) {
        free(s);
        free(frames);
        return 0;
    }
    int i = 0;
    vt_mutex_lock(&vt_pys_lock);
    while (i < n && (frames[i] = vt_pyframe_get_locked(codes[i], lines[i] > 0 ? (uintptr_t)lines[i] : 0)))
        i++;
    vt_mutex_unlock(&vt_pys_lock);
    uint32_t id = 0;
    unsigned hv = (unsigned)h;
    pthread_mutex_t *lock = &vt_pys_shards[h >> 60].lock;
    vt_mutex_lock(lock);
    HASH_FIND_BYHASHVALUE(hh, vt_pys_shards[h >> 60].by_key, key, len, hv, old);
    if (old) {
        id = old->id;
    } else if (i == n) {
        s->n = (uint32_t)n;
        s->frames = frames;
        memcpy(s->key, key, len);
        vt_hash_oom = 0;
        HASH_ADD_KEYPTR_BYHASHVALUE(hh, vt_pys_shards[h >> 60].by_key, s->key, len, hv, s);
        if (!vt_hash_oom) {
            vt_mutex_lock(&vt_pys_lock);
            s->id = id = vt_nstacks + 1;
            s->next = vt_stacks_list;
            __atomic_store_n(&vt_stacks_list, s, __ATOMIC_RELEASE);
            vt_nstacks = id;
            vt_mutex_unlock(&vt_pys_lock);
            s = NULL;
            frames = NULL;
        }
    }
    vt_mutex_unlock(lock);
    free(s);
    free(frames);
    if (!id)
        vt_say_once(VT_ONCE_NOMEM, "out of memory; some Python call sites are not recorded");
    return id;
}

static int vt_api_names(uintptr_t code, char **file, char **func)
{
    return vt_py_code_names(code, file, func);
}

uint32_t vt_pystack_read(void *tstate)
{
    uintptr_t key[2 * VT_PY_DEPTH_MAX];
    int n = vt_py_frames(tstate, key, vt_cfg.py_depth);
    if (n <= 0)
        return 0;
    uint64_t h = vt_pywalk_hash(key, n);
    uint32_t id = vt_pys_find(key, n, h);
    if (id)
        return id;
    const struct vt_pycode *codes[VT_PY_DEPTH_MAX];
    int lines[VT_PY_DEPTH_MAX];
    for (int i = 0; i < n; i++) {
        uintptr_t ck[2] = {key[2 * i], 0};
        lines[i] = (int)key[2 * i + 1];
        if (!(codes[i] = vt_pycode_get(ck, vt_api_names)))
            return 0;
    }
    return vt_pys_add(key, n, h, codes, lines);
}

/* A walked stack not seen before: its code objects and lines, read while its thread holds them;
 * careful, the first time (vt_pystack_check). */
static uint32_t vt_walk_add(const uintptr_t *key, int n, uint64_t h, int careful)
{
    const struct vt_pycode *codes[VT_PY_DEPTH_MAX];
    int lines[VT_PY_DEPTH_MAX];
    for (int i = 0; i < n; i++) {
        uintptr_t ck[2] = {VT_PYWALK_CODE(key, i), VT_PYWALK_PRINT(key, i)};
        lines[i] = vt_pywalk_line(vt_hotdata.layout, &vt_types, key, i, careful);
        if (!(codes[i] = vt_pycode_get(ck, careful ? vt_walk_names_careful : vt_walk_names)))
            return 0;
    }
    return vt_pys_add(key, n, h, codes, lines);
}

/* The interpreter's code watcher (with the GIL): counts destructions, and nothing else. */
static int vt_code_event(int event, void *code)
{
    (void)code;
    if (event == 1) /* PY_CODE_EVENT_DESTROY */
        __atomic_add_fetch(&vt_hotdata.code_gen, 1, __ATOMIC_RELEASE);
    return 0;
}

/* The memo emptied, once the count of destroyed code objects has moved 2^15 past its last emptying. */
static __attribute__((noinline, cold)) void vt_memo_clear(struct vt_pycode_memos *memo, uint64_t *cleared)
{
    memset(memo->slot, 0, VT_PYCODE_MEMO_SETS * VT_PYCODE_MEMO_WAYS * sizeof *memo->slot);
    *cleared = memo->gen;
    memo->nold = 0; /* its entries' 16 bits too */
}

VT_HOT void vt_pystack_prefetch(void)
{
    const struct vt_pylayout *l = __atomic_load_n(&vt_hotdata.layout, __ATOMIC_RELAXED);
    if (l)
        vt_tcache_prefetch(l->frame_owner);
}

/* A path's stack not met on it before (vt_pypath.h): looked up, or added, as any walked key is. */
static uint32_t vt_path_resolve(const uintptr_t *key, int n, uint64_t h)
{
    uint32_t id = vt_pys_find(key, n, h);
    return id ? id : vt_walk_add(key, n, h, 0);
}

/* A walk's frames and code objects read, counted; and the test fault that fails the third walk. */
static int vt_walk_counted(int n, const struct vt_pycode_memos *memo)
{
    if (VT_LIKELY(n > 0)) {
        vt_tally_add(VT_TALLY_PY_FRAMES, (uint64_t)n);
        if (VT_UNLIKELY(!memo->slot || memo->reads))
            vt_tally_add(VT_TALLY_PY_CODE_READS, memo->slot ? memo->reads : (uint64_t)n);
    }
    if (VT_UNLIKELY(vt_fault_corrupt) && __atomic_add_fetch(&vt_walks, 1, __ATOMIC_RELAXED) > 2)
        n = -1;
    return n;
}

VT_HOT uint32_t vt_pystack_walk(void *tstate, int *failed)
{
    uintptr_t key[2 * VT_PY_DEPTH_MAX];
    uint64_t h = 0;
    struct vt_pycode_memos memo = {0};
    uint64_t *cleared;
    /* The common case first (the compiler lays its blocks out in a line): a thread with its cache, an
     * interpreter whose code objects are watched, a walk that found frames, a stack met before. */
    int cached = VT_LIKELY(vt_tcache_walk(&memo, &cleared) == 0);
    if (VT_LIKELY(cached && __atomic_load_n(&vt_hotdata.code_watched, __ATOMIC_ACQUIRE))) {
        memo.gen = __atomic_load_n(&vt_hotdata.code_gen, __ATOMIC_ACQUIRE);
        /* Slots keep 16 bits of the count they were written at (vt_pywalk.h). */
        if (VT_UNLIKELY(memo.gen - *cleared >= 1u << 15))
            vt_memo_clear(&memo, cleared);
    } else {
        memo.slot = NULL;
    }
    const struct vt_pylayout *l = vt_hotdata.layout;
    if (vt_cfg.py_paths && memo.slot && l->frame_owner >= 0 && l->minor >= 12) {
        uint32_t id;
        int n, got = vt_pypath_walk(l, &vt_types, tstate, vt_cfg.py_depth, &memo, vt_path_resolve, &id, &n);
        if (VT_LIKELY(got != -2)) {
            *failed = vt_walk_counted(got < 0 ? -1 : n, &memo) < 0;
            return *failed ? 0 : id;
        }
    }
    int n = vt_walk_counted(vt_pywalk(l, &vt_types, tstate, key, vt_cfg.py_depth, &h, 0, cached ? &memo : NULL), &memo);
    *failed = n < 0;
    if (VT_UNLIKELY(n <= 0))
        return 0;
    uint32_t id = vt_pys_find(key, n, h);
    return VT_LIKELY(id) ? id : vt_walk_add(key, n, h, 0);
}

uint32_t vt_pystack_walk_careful(void *tstate)
{
    uintptr_t key[2 * VT_PY_DEPTH_MAX];
    uint64_t h = 0;
    if (!vt_pywalk_can_check())
        return 0;
    int n = vt_pywalk(vt_hotdata.layout, &vt_types, tstate, key, vt_cfg.py_depth, &h, 1, NULL);
    if (n <= 0)
        return 0;
    uint32_t id = vt_pys_find(key, n, h);
    return id ? id : vt_walk_add(key, n, h, 1);
}

const char *vt_pystack_check(void *tstate, uint32_t *id, int *compared)
{
    uintptr_t walked[2 * VT_PY_DEPTH_MAX], api[2 * VT_PY_DEPTH_MAX];
    uint64_t h = 0;
    *id = 0;
    *compared = 0;
    /* Not trusted yet: every read of this walk goes through the kernel, which cannot crash. */
    if (!vt_pywalk_can_check())
        return "no pipe could be opened, through which vramtrace checks its frame walk safely";
    int n = vt_pywalk(vt_hotdata.layout, &vt_types, tstate, walked, vt_cfg.py_depth, &h, 1, NULL);
    int m = vt_py_frames(tstate, api, vt_cfg.py_depth);
    if (n < 0)
        return "the frames in memory are not laid out as vramtrace expects";
    if (n != m || vt_fault_mismatch)
        return "the frames in memory are not the ones the interpreter reports";
    for (int i = 0; i < n; i++)
        if (VT_PYWALK_CODE(walked, i) != api[2 * i])
            return "the frames in memory are not the ones the interpreter reports";
    /* The code objects are the interpreter's own: now their names and lines can be read. */
    for (int i = 0; i < n; i++) {
        int line = vt_pywalk_line(vt_hotdata.layout, &vt_types, walked, i, 1);
        if ((uintptr_t)(line > 0 ? line : 0) != api[2 * i + 1])
            return "the lines vramtrace reads are not the ones the interpreter reports";
    }
    *compared = n;
    if (n > 0 && !(*id = vt_pys_find(walked, n, h)))
        *id = vt_walk_add(walked, n, h, 1);
    /* Trusted from now on: with the GIL held here, the code watcher that lets walks remember code
     * objects (3.12+; none: every walk reads them). */
    if (!__atomic_load_n(&vt_hotdata.code_watched, __ATOMIC_ACQUIRE) && vt_py_watch_code(vt_code_event) >= 0)
        __atomic_store_n(&vt_hotdata.code_watched, 1, __ATOMIC_RELEASE);
    return NULL;
}

void vt_pystack_counters(uint64_t *frames, uint64_t *code_reads, uint64_t *lookups)
{
    *frames = vt_tally_sum(VT_TALLY_PY_FRAMES);
    *code_reads = vt_tally_sum(VT_TALLY_PY_CODE_READS);
    *lookups = vt_stripe_sum(vt_pys_lookups, __ATOMIC_RELAXED);
}

uint32_t vt_pystack_count(void)
{
    vt_mutex_lock(&vt_pys_lock);
    uint32_t n = vt_nstacks;
    vt_mutex_unlock(&vt_pys_lock);
    return n;
}

void vt_pystack_write(struct vt_out *f, const unsigned char *used, uint32_t count, uint32_t frame_base, uint32_t stack_base)
{
    vt_mutex_lock(&vt_pys_lock);
    const struct vt_pystk *head = vt_stacks_list;
    uint32_t nframes = vt_nframes;
    vt_mutex_unlock(&vt_pys_lock);
    /* Every frame of a listed stack is older than the stack, so its id is at most nframes. */
    unsigned char *written = calloc((size_t)nframes + 1, 1);
    if (!written) {
        vt_say_once(VT_ONCE_NOMEM, "out of memory while writing a dump; its Python stacks are left out");
        return;
    }
    for (const struct vt_pystk *s = head; s; s = s->next) {
        if (s->id > count || !used[s->id])
            continue;
        for (uint32_t i = 0; i < s->n; i++) {
            const struct vt_pyframe *fr = s->frames[i];
            const struct vt_pycode *code = (const struct vt_pycode *)fr->key[0];
            if (written[fr->id])
                continue;
            written[fr->id] = 1;
            vt_outf(f, VT_REC_PYFRAME " %u %u ", frame_base + fr->id, (unsigned)fr->key[1]);
            vt_out_text(f, code->func, 1);
            vt_outs(f, " ");
            vt_out_text(f, code->file, 0);
            vt_outs(f, "\n");
        }
        vt_outf(f, VT_REC_PYSTACK " %u %u", stack_base + s->id, s->n);
        for (uint32_t i = 0; i < s->n; i++)
            vt_outf(f, " %u", frame_base + s->frames[i]->id);
        vt_outs(f, "\n");
    }
    free(written);
}

static void vt_pystack_atfork_prepare(void)
{
    pthread_once(&vt_pys_once, vt_pys_init);
    for (int i = 0; i < VT_PYS_SHARDS; i++)
        vt_mutex_lock(&vt_pys_shards[i].lock);
    vt_mutex_lock(&vt_pys_lock);
}

static void vt_pys_unlock_all(void)
{
    vt_mutex_unlock(&vt_pys_lock);
    for (int i = VT_PYS_SHARDS - 1; i >= 0; i--)
        vt_mutex_unlock(&vt_pys_shards[i].lock);
}

static void vt_pystack_atfork_parent(void)
{
    vt_pys_unlock_all();
}

static void vt_pystack_atfork_child(void)
{
    /* The child's code objects are the parent's, and so are our references to them. */
    vt_pys_unlock_all();
    vt_tally_clear(VT_TALLY_PY_FRAMES);
    vt_tally_clear(VT_TALLY_PY_CODE_READS);
    memset(vt_pys_lookups, 0, sizeof vt_pys_lookups);
}

VT_MODULE(pystack, .prepare = vt_pystack_atfork_prepare, .parent = vt_pystack_atfork_parent, .child = vt_pystack_atfork_child);
