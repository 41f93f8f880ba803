/* Python stacks. A stack seen before costs its frame walk and one hash look-up, keyed by its (code
 * object, line) pairs. Code objects are identified by address, which is safe because each one that
 * enters the table is kept alive by a reference we never give back: code objects live as long as their
 * functions in almost every program, and the few made at run time cost only their size. A code
 * object's file and name are copied once, when it is first seen, so dumps need no interpreter.
 * Everything here is called with the GIL held; our lock is never held across a Python call. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vt_config.h"
#include "vt_hash.h"
#include "vt_lock.h"
#include "vt_log.h"
#include "vt_pystack.h"
#include "vt_python.h"

struct vt_pycode {
    UT_hash_handle hh;
    uintptr_t code;
    char *file, *func;
};

struct vt_pyframe {
    UT_hash_handle hh;
    uintptr_t key[2]; /* code object, line */
    uint32_t id;
    const struct vt_pycode *code;
};

struct vt_pystk {
    UT_hash_handle hh;
    struct vt_pystk *next; /* list of all stacks, newest first; nodes are never freed */
    uint32_t id, n;
    const struct vt_pyframe **frames;
    uintptr_t key[]; /* n pairs */
};

static pthread_mutex_t vt_pys_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vt_pycode *vt_codes;
static struct vt_pyframe *vt_frames;
static uint32_t vt_nframes;
static struct vt_pystk *vt_stacks_by_key, *vt_stacks_list;
static uint32_t vt_nstacks;

/* One word of the dump format for a function; a file may hold spaces but no control characters. */
static void vt_clean(char *s, int word)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (word && *p == ' '))
            *p = word ? '_' : '?';
}

static const struct vt_pycode *vt_pycode_get(uintptr_t code)
{
    struct vt_pycode *c;
    vt_mutex_lock(&vt_pys_lock);
    HASH_FIND(hh, vt_codes, &code, sizeof code, c);
    vt_mutex_unlock(&vt_pys_lock);
    if (c)
        return c;
    char *file, *func;
    if (vt_py_code_names(code, &file, &func) < 0) {
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
    n->code = code;
    n->file = file;
    n->func = func;
    vt_mutex_lock(&vt_pys_lock);
    HASH_FIND(hh, vt_codes, &code, sizeof code, c);
    if (!c) {
        vt_hash_oom = 0;
        HASH_ADD(hh, vt_codes, code, sizeof code, n);
        c = vt_hash_oom ? NULL : n;
    }
    vt_mutex_unlock(&vt_pys_lock);
    if (c == n)
        vt_py_keep(code);
    else {
        free(file);
        free(func);
        free(n);
    }
    return c;
}

/* Under the lock: the frame of (code, line), added when new. */
static const struct vt_pyframe *vt_pyframe_get_locked(const uintptr_t key[2], const struct vt_pycode *code)
{
    struct vt_pyframe *f;
    HASH_FIND(hh, vt_frames, key, 2 * sizeof *key, f);
    if (f || !(f = malloc(sizeof *f)))
        return f;
    memcpy(f->key, key, sizeof f->key);
    f->code = code;
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

static uint32_t vt_pystack_add(const uintptr_t *key, uint32_t n)
{
    const struct vt_pycode *codes[VT_PY_DEPTH_MAX];
    for (uint32_t i = 0; i < n; i++)
        if (!(codes[i] = vt_pycode_get(key[2 * i])))
            return 0;
    size_t len = 2 * n * sizeof *key;
    struct vt_pystk *s = malloc(sizeof *s + len);
    const struct vt_pyframe **frames = malloc(n * sizeof *frames);
    uint32_t id = 0;
    vt_mutex_lock(&vt_pys_lock);
    struct vt_pystk *old;
    HASH_FIND(hh, vt_stacks_by_key, key, len, old);
    if (old) {
        id = old->id;
    } else if (s && frames) {
        uint32_t i = 0;
        while (i < n && (frames[i] = vt_pyframe_get_locked(key + 2 * i, codes[i])))
            i++;
        if (i == n) {
            s->n = n;
            s->frames = frames;
            memcpy(s->key, key, len);
            s->id = vt_nstacks + 1;
            vt_hash_oom = 0;
            HASH_ADD(hh, vt_stacks_by_key, key, len, s);
            if (!vt_hash_oom) {
                s->next = vt_stacks_list;
                __atomic_store_n(&vt_stacks_list, s, __ATOMIC_RELEASE);
                vt_nstacks = id = s->id;
                s = NULL;
                frames = NULL;
            }
        }
    }
    vt_mutex_unlock(&vt_pys_lock);
    free(s);
    free(frames);
    return id;
}

uint32_t vt_pystack_read(void *tstate)
{
    uintptr_t key[2 * VT_PY_DEPTH_MAX];
    int n = vt_py_frames(tstate, key, vt_cfg.py_depth);
    if (n <= 0)
        return 0;
    struct vt_pystk *s;
    vt_mutex_lock(&vt_pys_lock);
    HASH_FIND(hh, vt_stacks_by_key, key, 2 * (size_t)n * sizeof *key, s);
    uint32_t id = s ? s->id : 0;
    vt_mutex_unlock(&vt_pys_lock);
    if (!id && !(id = vt_pystack_add(key, (uint32_t)n)))
        vt_say_once(VT_ONCE_NOMEM, "out of memory; some Python call sites are not recorded");
    return id;
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
            if (written[fr->id])
                continue;
            written[fr->id] = 1;
            vt_outf(f, "pyframe %u %u %s %s\n", frame_base + fr->id, (unsigned)fr->key[1], fr->code->func,
                    *fr->code->file ? fr->code->file : "-");
        }
        vt_outf(f, "pystack %u %u", stack_base + s->id, s->n);
        for (uint32_t i = 0; i < s->n; i++)
            vt_outf(f, " %u", frame_base + s->frames[i]->id);
        vt_outs(f, "\n");
    }
    free(written);
}

void vt_pystack_atfork_prepare(void)
{
    vt_mutex_lock(&vt_pys_lock);
}

void vt_pystack_atfork_parent(void)
{
    vt_mutex_unlock(&vt_pys_lock);
}

void vt_pystack_atfork_child(void)
{
    /* The child's code objects are the parent's, and so are our references to them. */
    vt_mutex_unlock(&vt_pys_lock);
}
