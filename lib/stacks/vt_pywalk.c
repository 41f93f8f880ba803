/* The frame walk (vt_pywalk.h). Every pointer read is checked against the type it must have before
 * anything behind it is read, so a layout that does not fit the interpreter ends the walk rather than
 * following garbage. A careful walk (the one that checks the layout, before it is trusted) reads
 * nothing directly: each read is written into a pipe of its own and read back, and the kernel answers
 * EFAULT for memory that is not mapped, where a direct read would crash the program. A pipe, not
 * process_vm_readv: a seccomp filter may kill a process for a system call it does not allow, and no
 * filter forbids write and read. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_hot.h"
#include "vt_pylayouts.h"
#include "vt_pylines.h"
#include "vt_pywalk.h"

#define VT_OB_TYPE 8 /* PyObject: refcount, then type */

/* How a walk reads memory: straight, or through the kernel; failed is set by a careful read that
 * did not succeed (what it read is then zeros). A careful one opens its pipe at its first read. */
struct vt_rd {
    int careful, failed, open;
    int fd[2];
};

static void vt_read_careful(struct vt_rd *rd, const void *base, long off, void *out, size_t n)
{
    int saved = errno;
    const char *p = (const char *)base + off;
    char *o = out;
    if (!rd->open && !rd->failed) {
        if (pipe2(rd->fd, O_CLOEXEC) == 0)
            rd->open = 1;
        else
            rd->failed = 1;
    }
    while (n && base && rd->open && !rd->failed) {
        ssize_t w;
        do
            w = write(rd->fd[1], p, n < 4096 ? n : 4096); /* a pipe holds 4096 bytes at the least */
        while (w < 0 && errno == EINTR);
        if (w <= 0)
            break;
        ssize_t got = 0;
        while (got < w) {
            ssize_t r = read(rd->fd[0], o + got, (size_t)(w - got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += r;
        }
        if (got != w)
            break;
        p += w;
        o += w;
        n -= (size_t)w;
    }
    if (n) {
        memset(o, 0, n);
        rd->failed = 1;
    }
    errno = saved;
}

static void vt_rd_done(struct vt_rd *rd)
{
    if (rd->open) {
        close(rd->fd[0]);
        close(rd->fd[1]);
        rd->open = 0;
    }
}

static void vt_read(struct vt_rd *rd, const void *base, long off, void *out, size_t n)
{
    if (rd->careful)
        vt_read_careful(rd, base, off, out, n);
    else
        memcpy(out, (const char *)base + off, n);
}

/* The walk's reads: a plain load unless careful (sizeof is a constant, so memcpy is one move). A walk
 * that is never careful is given no struct vt_rd at all (VT_PLAIN): given one, even a plain one, the compiler
 * kept it in memory, where code out of line could see it, and tested its careful flag at every read. */
#define RD(rd, var, base, off)                                                                                  \
    ((rd) && (rd)->careful ? vt_read_careful(rd, base, off, &(var), sizeof(var))                                \
                           : (void)memcpy(&(var), (const char *)(base) + (off), sizeof(var)))
#define RD_FAILED(rd) ((rd) && (rd)->failed)
#define VT_PLAIN ((struct vt_rd *)0)

int vt_pywalk_can_check(void)
{
    uint64_t probe = 1, copy = 0;
    struct vt_rd rd = {.careful = 1};
    vt_read(&rd, &probe, 0, &copy, sizeof copy);
    vt_rd_done(&rd);
    return !rd.failed && copy == 1;
}

/* The walk's helpers are inlined into two copies of it, careful and not, so that the plain one is a
 * chain of loads with no test of how to read. */
#define VT_INLINE static inline __attribute__((always_inline))

VT_INLINE int vt_is(struct vt_rd *rd, const void *o, const void *type)
{
    if (!o || ((uintptr_t)o & 7))
        return 0;
    const void *t;
    RD(rd, t, o, VT_OB_TYPE);
    return t == type;
}

/* The hash only picks a shard and a bucket, and keys are compared whole. A frame's two words become one
 * by multiplies that do not wait on the frames before it, so the chain from frame to frame is a rotate
 * and an xor: with two multiplies a frame on it, that chain was longer than the walk's loads. */
static inline uint64_t vt_frame_word(uint64_t code, uint64_t where)
{
    return (code ^ (where * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
}

static inline uint64_t vt_step(uint64_t h, uint64_t v)
{
    return ((h << 23) | (h >> 41)) ^ v;
}

static uint64_t vt_final(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

/* A key's hash: every frame through vt_step, then its length; the walks make the same as they read. */
static uint64_t vt_hash_end(uint64_t h, int n)
{
    return vt_final(h ^ vt_frame_word((uint64_t)n, 0));
}

uint64_t vt_pywalk_hash(const uintptr_t *key, int n)
{
    uint64_t h = 0;
    for (int i = 0; i < n; i++)
        h = vt_step(h, vt_frame_word(key[2 * i], key[2 * i + 1]));
    return vt_hash_end(h, n);
}

/* The thread's innermost frame: through its _PyCFrame (3.11, 3.12) or straight (the others). */
VT_INLINE const void *vt_top_frame(struct vt_rd *rd, const struct vt_pylayout *l, const void *tstate)
{
    const void *f = NULL;
    if (l->ts_cframe >= 0) {
        const void *cframe;
        RD(rd, cframe, tstate, l->ts_cframe);
        if (cframe)
            RD(rd, f, cframe, l->cframe_current);
    } else {
        RD(rd, f, tstate, l->ts_frame);
    }
    return f;
}

/* The frame before f. */
VT_INLINE const void *vt_back(struct vt_rd *rd, const struct vt_pylayout *l, const void *f)
{
    const void *b;
    RD(rd, b, f, l->frame_back);
    return b;
}

/* The memo's slot holding a code object as of this walk (*hit), else the one to write it in: the slot
 * of an older count or an empty one, else one of the full set in turn. */
VT_INLINE struct vt_pycode_memo *vt_memo_slot(struct vt_pycode_memos *m, const void *code, int *hit)
{
    struct vt_pycode_memo *set =
        &m->slot[(((uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ull >> 32) % VT_PYCODE_MEMO_SETS * VT_PYCODE_MEMO_WAYS];
    uint16_t gen = (uint16_t)m->gen;
    for (int w = 0; w < VT_PYCODE_MEMO_WAYS; w++)
        if (set[w].code == (uintptr_t)code && set[w].gen == gen) {
            *hit = 1;
            return &set[w];
        }
    *hit = 0;
    for (int w = 0; w < VT_PYCODE_MEMO_WAYS; w++)
        if (!set[w].code || set[w].gen != gen || set[w].code == (uintptr_t)code)
            return &set[w];
    return &set[(*m->turn)++ % VT_PYCODE_MEMO_WAYS];
}

/* What is known of the code object of frame f: from the last walk's trail when f is a frame it went
 * through, still with that code object (its entry read as a copy: the trail is not the memo, and a
 * hit only reads it), else from the memo. *j is where the trail was left: frames lie below each other
 * in the data stack, so the cursor only moves down; a frame out of that order (a generator's) is
 * looked up in the memo. */
VT_INLINE struct vt_pycode_memo *vt_trail_memo(struct vt_pycode_memos *m, const void *f, const void *code, unsigned *j,
                                               int *hit)
{
    if (m->old) {
        while (*j < m->nold && (uintptr_t)m->old[*j].frame > (uintptr_t)f)
            (*j)++;
        const struct vt_pywalk_step *o = *j < m->nold ? &m->old[*j] : NULL;
        if (o && o->frame == f && o->memo.code == (uintptr_t)code && o->memo.gen == (uint16_t)m->gen) {
            *hit = 1;
            return (struct vt_pycode_memo *)&o->memo;
        }
    }
    return vt_memo_slot(m, code, hit);
}

/* The first frame at or below f that the interpreter would report: not a shim on the C stack, not one
 * still being set up (as _PyFrame_IsIncomplete decides). From 3.11, *code and *instr get what was read
 * to decide (a code object already checked); before, there is nothing to skip and *code is NULL. With a
 * memo, *memo gets the code object's slot and *hit whether it held it: then neither its type nor its
 * first traceable instruction was read from it. */
VT_INLINE const void *vt_complete(struct vt_rd *rd, const struct vt_pylayout *l, const struct vt_pytypes *t,
                                  const void *f, int *bad, const void **code, const char **instr,
                                  struct vt_pycode_memos *m, unsigned *j, struct vt_pycode_memo **memo, int *hit)
{
    *code = NULL;
    if (l->frame_owner < 0)
        return f;
    for (; f && !RD_FAILED(rd); f = vt_back(rd, l, f)) {
        char owner;
        RD(rd, owner, f, l->frame_owner);
        if (owner == VT_OWNED_BY_CSTACK && l->minor >= 13)
            continue;
        RD(rd, *code, f, l->frame_code);
        *memo = m && m->slot ? vt_trail_memo(m, f, *code, j, hit) : NULL;
        int traceable;
        if (*memo && *hit) {
            traceable = (*memo)->traceable;
        } else {
            if (!vt_is(rd, *code, t->code)) {
                if (owner == VT_OWNED_BY_CSTACK)
                    continue;
                *bad = 1;
                return NULL;
            }
            RD(rd, traceable, *code, l->code_firsttraceable);
            *hit = 0;
        }
        RD(rd, *instr, f, l->frame_instr);
        const char *first = (const char *)*code + l->code_adaptive;
        if (owner == VT_OWNED_BY_GENERATOR || *instr >= first + 2 * (long)traceable)
            return f;
    }
    *code = NULL;
    return NULL;
}

/* A str's length and its first (up to 8) characters, when it is a compact ASCII one; else its address.
 * Never read past the string's end (a short one a byte at a time). */
VT_INLINE uintptr_t vt_name_print(struct vt_rd *rd, const struct vt_pylayout *l, const struct vt_pytypes *t,
                                  const void *s)
{
    if (!vt_is(rd, s, t->unicode))
        return (uintptr_t)s;
    unsigned state;
    long len;
    RD(rd, state, s, l->unicode_state);
    RD(rd, len, s, l->unicode_length);
    if (!((state >> 5) & 1) || !((state >> 6) & 1) || len < 0)
        return (uintptr_t)s;
    uint64_t head = 0;
    if (len >= 8) {
        RD(rd, head, s, l->ascii_size);
    } else {
        for (long i = 0; i < len; i++) {
            unsigned char c;
            RD(rd, c, s, l->ascii_size + i);
            head = head << 8 | c;
        }
    }
    return (uintptr_t)(head * 0x9e3779b97f4a7c15ull ^ (uint64_t)len);
}

/* The code object's fingerprint, which tells it from another made later at the same address: from 3.11
 * its line table's address and its qualified name's length and first characters (by content: a name
 * freed with its code object is often made again at the same address, as code.replace() in a loop
 * shows), read from the code object's line vt_complete read and from the name; else its file, its name
 * (by content, likewise: 3.9 named made_3 as made_1 once in t_pysites' recode), line table and first
 * line. A memo (3.12+) keeps it, so that a walk reads neither: this is the walk's rare
 * path (a code object not in the memo), kept out of its loop. */
static __attribute__((noinline, cold)) uint32_t vt_code_print(struct vt_rd *rd, const struct vt_pylayout *l,
                                                              const struct vt_pytypes *t, const void *code,
                                                              struct vt_pycode_memos *m, struct vt_pycode_memo *memo,
                                                              struct vt_pycode_memo *known)
{
    uintptr_t file = 0, name, table;
    int firstline = 0;
    if (l->code_qualname >= 0) {
        const void *q;
        RD(rd, q, code, l->code_qualname);
        name = vt_name_print(rd, l, t, q);
    } else {
        const void *n;
        RD(rd, file, code, l->code_filename);
        RD(rd, n, code, l->code_name);
        name = vt_name_print(rd, l, t, n); /* by content too: a name is made again where the dead one was */
        RD(rd, firstline, code, l->code_firstlineno);
    }
    RD(rd, table, code, l->code_linetable);
    uint32_t print = (uint32_t)(((file ^ name << 1 ^ table << 2 ^ (uint64_t)(uint32_t)firstline) * 0x9e3779b97f4a7c15ull)
                                >> 32) | 0x80000000u;
    if (memo) {
        int traceable = 0;
        RD(rd, traceable, code, l->code_firsttraceable);
        m->reads++;
        if (traceable >= 0 && traceable <= UINT16_MAX)
            *memo = *known = (struct vt_pycode_memo){(uintptr_t)code, print, (uint16_t)traceable, (uint16_t)m->gen};
    }
    return print;
}

/* The walk is a chain of loads, each waiting for the one before; between two allocations the program's
 * own work has pushed the frames out of the near caches, so each step may wait the whole way to memory
 * (tens of ns a frame on the H200's host, by its perf samples). Most of a thread's frames are where
 * they were at its last walk (the outer ones are the same calls, and a call made again lands where the
 * last one was), so those addresses are asked for all at once first (a prefetch never faults, whatever
 * is there now), to come in together while the walk starts: each frame's first line and the one holding
 * its owner byte, the last field read. Measured so far, it made no difference beyond the H200's noise
 * (docs/performance.md, 2026-12-03 fifth). */
VT_INLINE void vt_prefetch_trail(const struct vt_pylayout *l, const struct vt_pycode_memos *m)
{
    for (unsigned i = 0; i < m->nold; i++) {
        __builtin_prefetch(m->old[i].frame, 0, 3);
        __builtin_prefetch((const char *)m->old[i].frame + l->frame_owner, 0, 3);
    }
}

/* The frames into key (vt_pywalk); rd says how to read, and the caller closes it. */
VT_INLINE int vt_walk(struct vt_rd *rd, const struct vt_pylayout *l, const struct vt_pytypes *t, const void *tstate,
                      uintptr_t *key, int max, uint64_t *hash, struct vt_pycode_memos *m)
{
    const void *f = vt_top_frame(rd, l, tstate);
    if (m && m->old)
        vt_prefetch_trail(l, m);
    unsigned j = 0;
    int n = 0, bad = 0;
    uint64_t h = 0;
    const void *code;
    const char *instr = NULL;
    struct vt_pycode_memo *memo = NULL;
    int hit = 0;
    for (f = vt_complete(rd, l, t, f, &bad, &code, &instr, m, &j, &memo, &hit); f && n < max && !RD_FAILED(rd);
         f = vt_complete(rd, l, t, vt_back(rd, l, f), &bad, &code, &instr, m, &j, &memo, &hit)) {
        if (!code) { /* 3.9, 3.10: read and checked here */
            RD(rd, code, f, l->frame_code);
            if (!vt_is(rd, code, t->code)) {
                bad = 1;
                break;
            }
        }
        int addr;
        switch (l->instr) {
        case VT_INSTR_LASTI_BYTES:
            RD(rd, addr, f, l->frame_instr);
            break;
        case VT_INSTR_LASTI_UNITS:
            RD(rd, addr, f, l->frame_instr);
            addr = addr < 0 ? -1 : 2 * addr;
            break;
        default:
            addr = (int)(instr - ((const char *)code + l->code_adaptive));
            break;
        }
        /* The code object's fingerprint, which tells it from another made later at the same address: from
         * 3.11 its line table's address and its qualified name's length and first characters (by content:
         * a name freed with its code object is often made again at the same address, as code.replace()
         * in a loop shows), read from the code object's line vt_complete read and from the name; else its
         * file, name, line table and first line. A memo (3.12+) keeps it, so that a walk reads neither. */
        uint32_t print;
        struct vt_pycode_memo known = {0};
        if (memo && hit) {
            print = memo->print;
            known = *memo;
        } else {
            print = vt_code_print(rd, l, t, code, m, memo, &known);
        }
        if (m && m->trail && n < VT_PYWALK_TRAIL)
            m->trail[n] = (struct vt_pywalk_step){f, known};
        key[2 * n] = (uintptr_t)code;
        key[2 * n + 1] = (uintptr_t)(uint32_t)addr | ((uintptr_t)print << 32);
        h = vt_step(h, vt_frame_word(key[2 * n], key[2 * n + 1]));
        n++;
    }
    if (m && m->trail) {
        *m->ntrail = n < VT_PYWALK_TRAIL ? (unsigned)n : VT_PYWALK_TRAIL;
        m->trail[*m->ntrail].frame = NULL;
    }
    if (bad || RD_FAILED(rd))
        return -1;
    *hash = vt_hash_end(h, n);
    return n;
}

/* What the fast walk knows of a frame's code object when the last walk's trail does not: from the memo,
 * else from the code object itself. Returns 1 with *known whole (the memo held it), 2 with only the
 * code object's first traceable instruction in *traceable (its fingerprint is read once the frame is
 * found complete: *slot is where to keep it), 0 for a frame to pass over (a shim on the C stack), -1 for
 * memory not as expected. Out of the walk's loop: a decode step meets a code object the trail does not
 * hold once in many frames. */
static __attribute__((noinline)) int vt_walk_unknown(const struct vt_pylayout *l, const struct vt_pytypes *t,
                                                     struct vt_pycode_memos *m, const void *code, char owner,
                                                     struct vt_pycode_memo *known, struct vt_pycode_memo **slot,
                                                     int *traceable)
{
    int hit;
    *slot = vt_memo_slot(m, code, &hit);
    if (hit) {
        *known = **slot;
        *traceable = known->traceable;
        return 1;
    }
    if (!vt_is(VT_PLAIN, code, t->code))
        return owner == VT_OWNED_BY_CSTACK ? 0 : -1;
    RD(VT_PLAIN, *traceable, code, l->code_firsttraceable);
    *known = (struct vt_pycode_memo){0};
    return 2;
}

/* vt_walk with a memo, read straight (3.12 on, where the interpreter's code watcher keeps the memo true):
 * the same frames, key and hash, in fewer instructions a frame (about 47 against 71 by cachegrind): a frame
 * the last walk's trail holds, with the same code object, is its loads, two compares and the key's
 * words; everything else is vt_walk_unknown's. */
VT_INLINE int vt_walk_fast(const struct vt_pylayout *l, const struct vt_pytypes *t, const void *tstate, uintptr_t *key,
                           int max, uint64_t *hash, struct vt_pycode_memos *m)
{
    const void *f = vt_top_frame(VT_PLAIN, l, tstate);
    /* The last walk's trail ends with a step of frame NULL, which no frame is below and none equals: the
     * cursor needs no bounds (an empty trail is that step alone). */
    static const struct vt_pywalk_step vt_trail_end = {0};
    const struct vt_pywalk_step *o = m->old && m->nold ? m->old : &vt_trail_end;
    if (o != &vt_trail_end)
        vt_prefetch_trail(l, m);
    struct vt_pywalk_step *trail = m->trail;
    uint16_t gen = (uint16_t)m->gen;
    int n = 0;
    uint64_t h = 0;
    for (; f && n < max; f = vt_back(VT_PLAIN, l, f)) {
        char owner;
        RD(VT_PLAIN, owner, f, l->frame_owner);
        if (l->minor >= 13 && owner == VT_OWNED_BY_CSTACK)
            continue;
        const char *code, *instr;
        RD(VT_PLAIN, code, f, l->frame_code);
        RD(VT_PLAIN, instr, f, l->frame_instr);
        while ((uintptr_t)o->frame > (uintptr_t)f)
            o++;
        struct vt_pycode_memo known;
        struct vt_pycode_memo *slot = NULL;
        int got = 1, traceable;
        if (o->frame == f && o->memo.code == (uintptr_t)code && o->memo.gen == gen) {
            known = o->memo;
            traceable = known.traceable;
        } else if ((got = vt_walk_unknown(l, t, m, code, owner, &known, &slot, &traceable)) <= 0) {
            if (got < 0)
                break;
            continue;
        }
        const char *first = code + l->code_adaptive;
        if (owner != VT_OWNED_BY_GENERATOR && instr < first + 2 * (long)traceable)
            continue; /* not started yet (as _PyFrame_IsIncomplete decides) */
        if (got == 2)
            known.print = vt_code_print(VT_PLAIN, l, t, code, m, slot, &known);
        if (trail && n < VT_PYWALK_TRAIL)
            trail[n] = (struct vt_pywalk_step){f, known};
        key[2 * n] = (uintptr_t)code;
        key[2 * n + 1] = (uintptr_t)(uint32_t)(int)(instr - first) | ((uintptr_t)known.print << 32);
        h = vt_step(h, vt_frame_word(key[2 * n], key[2 * n + 1]));
        n++;
    }
    if (trail) {
        *m->ntrail = n < VT_PYWALK_TRAIL ? (unsigned)n : VT_PYWALK_TRAIL;
        trail[*m->ntrail].frame = NULL;
    }
    if (f && n < max) /* left the loop on memory not as expected */
        return -1;
    *hash = vt_hash_end(h, n);
    return n;
}

/* vt_pywalk_raw: a chain of loads and stores, no test but the owner (vt_pypath.c decides the rest). */
VT_INLINE int vt_raw(const struct vt_pylayout *l, const void *tstate, struct vt_pyraw *out, int max)
{
    const void *f = vt_top_frame(VT_PLAIN, l, tstate);
    int n = 0;
    for (; f && n < max; f = vt_back(VT_PLAIN, l, f)) {
        struct vt_pyraw *r = &out[max - 1 - n];
        RD(VT_PLAIN, r->owner, f, l->frame_owner);
        /* A shim is never reported: 3.13 skips it by its owner, and 3.12's (the interpreter's trampoline,
         * whose RESUME comes last) always reads as not started yet. Left out here, so that max counts
         * frames that can be reported, as vt_pywalk's does: a call through C (a callback, a torch
         * function) leaves one at each level. */
        if (r->owner == VT_OWNED_BY_CSTACK)
            continue;
        RD(VT_PLAIN, r->code, f, l->frame_code);
        RD(VT_PLAIN, r->instr, f, l->frame_instr);
        r->frame = f;
        n++;
    }
    return n;
}

VT_HOT int vt_pywalk_raw(const struct vt_pylayout *l, const void *tstate, struct vt_pyraw *out, int max)
{
    /* Each version's offsets as constants, as vt_pywalk does. */
    if (l->minor == 12 && vt_layouts[VT_LAYOUT_3_12].minor == 12)
        return vt_raw(&vt_layouts[VT_LAYOUT_3_12], tstate, out, max);
    if (l->minor == 13 && vt_layouts[VT_LAYOUT_3_13].minor == 13)
        return vt_raw(&vt_layouts[VT_LAYOUT_3_13], tstate, out, max);
    return vt_raw(l, tstate, out, max);
}

int vt_pywalk_word(const struct vt_pylayout *l, const struct vt_pytypes *t, struct vt_pycode_memos *m,
                   const struct vt_pyraw *r, struct vt_pycode_memo *known, uintptr_t *word)
{
    struct vt_pycode_memo *slot = NULL;
    int traceable, got = vt_walk_unknown(l, t, m, r->code, r->owner, known, &slot, &traceable);
    if (got <= 0)
        return got;
    const char *first = r->code + l->code_adaptive;
    if (r->owner != VT_OWNED_BY_GENERATOR && r->instr < first + 2 * (long)traceable)
        return 0; /* not started yet (as _PyFrame_IsIncomplete decides) */
    if (got == 2)
        known->print = vt_code_print(VT_PLAIN, l, t, r->code, m, slot, known);
    *word = (uintptr_t)(uint32_t)(int)(r->instr - first) | ((uintptr_t)known->print << 32);
    return 1;
}

VT_HOT int vt_pywalk(const struct vt_pylayout *l, const struct vt_pytypes *t, const void *tstate, uintptr_t *key, int max,
              uint64_t *hash, int careful, struct vt_pycode_memos *memo)
{
    if (!careful) {
        /* Memos and trails only from 3.11, where a frame says whether it is complete from its code object's
         * fields and frames lie in the thread's data stack. Each of those versions has a walk of its own,
         * its offsets constants (a sixth fewer instructions a walk than reading them from l). Which entry
         * of the table is which version is itself a constant test: a table reordered falls back to l. */
#define VT_WALK_AS(i, m) \
    (vt_layouts[i].minor == (m) ? vt_walk(VT_PLAIN, &vt_layouts[i], t, tstate, key, max, hash, memo) \
                                : vt_walk(VT_PLAIN, l, t, tstate, key, max, hash, memo))
#define VT_WALK_FAST_AS(i, m) \
    (vt_layouts[i].minor == (m) ? vt_walk_fast(&vt_layouts[i], t, tstate, key, max, hash, memo) \
                                : vt_walk(VT_PLAIN, l, t, tstate, key, max, hash, memo))
        if (memo && memo->slot && l->frame_owner >= 0 && l->minor >= 12) {
            if (l->minor == 12)
                return VT_WALK_FAST_AS(VT_LAYOUT_3_12, 12);
            if (l->minor == 13)
                return VT_WALK_FAST_AS(VT_LAYOUT_3_13, 13);
        }
        if (memo && l->frame_owner >= 0) {
            switch (l->minor) {
            case 11:
                return VT_WALK_AS(VT_LAYOUT_3_11, 11);
            case 12:
                return VT_WALK_AS(VT_LAYOUT_3_12, 12);
            case 13:
                return VT_WALK_AS(VT_LAYOUT_3_13, 13);
            default:
                return vt_walk(VT_PLAIN, l, t, tstate, key, max, hash, memo);
            }
        }
#undef VT_WALK_AS
#undef VT_WALK_FAST_AS
        return vt_walk(VT_PLAIN, l, t, tstate, key, max, hash, NULL);
    }
    struct vt_rd rd = {.careful = 1};
    int n = vt_walk(&rd, l, t, tstate, key, max, hash, NULL);
    vt_rd_done(&rd);
    return n;
}

static void vt_put_utf8(char **p, uint32_t c)
{
    unsigned char *o = (unsigned char *)*p;
    if (c < 0x80) {
        *o++ = (unsigned char)c;
    } else if (c < 0x800) {
        *o++ = (unsigned char)(0xc0 | c >> 6);
        *o++ = (unsigned char)(0x80 | (c & 63));
    } else if (c < 0x10000) {
        *o++ = (unsigned char)(0xe0 | c >> 12);
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 63));
        *o++ = (unsigned char)(0x80 | (c & 63));
    } else {
        *o++ = (unsigned char)(0xf0 | c >> 18);
        *o++ = (unsigned char)(0x80 | ((c >> 12) & 63));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 63));
        *o++ = (unsigned char)(0x80 | (c & 63));
    }
    *p = (char *)o;
}

/* A compact str object's text as UTF-8, malloc'd; NULL when it is none (or a legacy string). */
static char *vt_text(struct vt_rd *rd, const struct vt_pylayout *l, const struct vt_pytypes *t, const void *s)
{
    if (!vt_is(rd, s, t->unicode))
        return NULL;
    unsigned state;
    long len;
    RD(rd, state, s, l->unicode_state);
    RD(rd, len, s, l->unicode_length);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (rd->failed || !compact || len < 0 || len > (1 << 20) || (kind != 1 && kind != 2 && kind != 4))
        return NULL;
    unsigned char *data = malloc((size_t)len * kind + 1);
    char *out = malloc((size_t)len * 4 + 1), *p = out;
    if (data)
        vt_read(rd, s, ascii ? l->ascii_size : l->compact_size, data, (size_t)len * kind);
    if (!data || !out || rd->failed) {
        free(data);
        free(out);
        return NULL;
    }
    for (long i = 0; i < len; i++) {
        uint32_t c = kind == 1 ? data[i] : kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
        vt_put_utf8(&p, c);
    }
    *p = 0;
    free(data);
    return out;
}

int vt_pywalk_names(const struct vt_pylayout *l, const struct vt_pytypes *t, uintptr_t code, char **file, char **func,
                    int careful)
{
    struct vt_rd reader = {.careful = careful}, *rd = &reader;
    const void *f, *q = NULL, *nm;
    RD(rd, f, (const void *)code, l->code_filename);
    if (l->code_qualname >= 0)
        RD(rd, q, (const void *)code, l->code_qualname);
    RD(rd, nm, (const void *)code, l->code_name);
    *file = vt_text(rd, l, t, f);
    *func = q ? vt_text(rd, l, t, q) : NULL;
    if (!*func)
        *func = vt_text(rd, l, t, nm);
    vt_rd_done(rd);
    if (*file && *func && !rd->failed)
        return 0;
    free(*file);
    free(*func);
    *file = *func = NULL;
    return -1;
}

int vt_pywalk_line(const struct vt_pylayout *l, const struct vt_pytypes *t, const uintptr_t *key, int i, int careful)
{
    struct vt_rd reader = {.careful = careful}, *rd = &reader;
    const void *code = (const void *)VT_PYWALK_CODE(key, i), *table;
    int firstline, line = -1;
    long len = -1;
    unsigned char *copy = NULL;
    RD(rd, table, code, l->code_linetable);
    RD(rd, firstline, code, l->code_firstlineno);
    if (vt_is(rd, table, t->bytes))
        RD(rd, len, table, l->bytes_size);
    if (!rd->failed && len >= 0 && len <= (64 << 20)) {
        const unsigned char *bytes = (const unsigned char *)table + l->bytes_data;
        if (careful && (copy = malloc((size_t)len + 1)))
            vt_read(rd, table, l->bytes_data, copy, (size_t)len);
        if (!careful || copy)
            line = rd->failed ? -1 : vt_pylines_line(l->lines, copy ? copy : bytes, (size_t)len, firstline,
                                                   VT_PYWALK_ADDR(key, i));
    }
    free(copy);
    vt_rd_done(rd);
    return line;
}
