/* A thread's Python frames read straight from the interpreter's memory, on the thread itself: no GIL,
 * no interpreter call, nothing allocated. Safe because the thread is inside our hook, so its own frame
 * chain cannot change, and every frame holds a reference to its code object, which holds its names and
 * line table. */
#ifndef VT_PYWALK_H
#define VT_PYWALK_H

#include <stdint.h>

#include "vt_pylayout.h"

/* What the walk checks each object against: the interpreter's type objects. */
struct vt_pytypes {
    const void *code, *unicode, *bytes;
};

/* One frame of a walked stack: two words of a stack's key. */
#define VT_PYWALK_CODE(key, i) ((key)[2 * (i)])
/* The second word: the instruction's byte offset in the low half (as the version's PyCode_Addr2Line
 * takes it), and in the high half a fingerprint of the code object's names and line table, so that a
 * code object freed and another made at its address is told apart. Its top bit is always set, which
 * keeps a walked key apart from a (code, line) key. */
#define VT_PYWALK_ADDR(key, i) ((int32_t)(uint32_t)(key)[2 * (i) + 1])
#define VT_PYWALK_PRINT(key, i) ((uint32_t)((key)[2 * (i) + 1] >> 32))

/* What a walk may remember of the code objects it read (3.11 on): a code object's fingerprint and first
 * traceable instruction, good while no code object has been destroyed since (gen, which the caller
 * keeps through the interpreter's code watchers: a live code object's address is then another's only
 * after a destruction). A memo makes the walk read each frame and not its code object; slot NULL: none. Sets of four
 * 16-byte slots, one cache line each, picked by the code object's address. A slot keeps the low 16 bits
 * of the count it was written at; the caller empties the memo before the count has moved 2^15 past its
 * last emptying, so that those bits tell the count exactly. */
#define VT_PYCODE_MEMO_WAYS 4
#define VT_PYCODE_MEMO_SETS 512
struct vt_pycode_memo {
    uintptr_t code; /* 0: empty */
    uint32_t print;
    uint16_t traceable;
    uint16_t gen;
};
struct vt_pycode_memos {
    struct vt_pycode_memo *slot; /* VT_PYCODE_MEMO_SETS * VT_PYCODE_MEMO_WAYS slots, 64-byte aligned; NULL: none */
    uint64_t gen;                /* the destructions counted when the walk began */
    unsigned *turn;              /* the thread's turn for which slot of a full set to overwrite */
    unsigned reads;              /* out: the frames whose code object the walk read (not in the memo) */
    /* The frames the thread's last walk went through, with what the memo said of their code objects
     * (old, nold; at most VT_PYWALK_TRAIL), and where this walk leaves its own (trail, *ntrail); NULL:
     * none kept. The old frames are asked for from memory all at once before the walk, which then finds
     * most of them near, and a frame found where it was, with the same code object, needs no memo look-up
     * (vt_pywalk.c). */
    const struct vt_pywalk_step *old;
    unsigned nold;
    struct vt_pywalk_step *trail; /* room for VT_PYWALK_TRAIL steps and the end mark (a step of frame
                                     NULL, after the last: a walk writes it, and old ends with it) */
    unsigned *ntrail;
};
#define VT_PYWALK_TRAIL 32
struct vt_pywalk_step {
    const void *frame;
    struct vt_pycode_memo memo; /* code 0: nothing known */
};

/* careful: every read goes through the kernel (written into a pipe and read back), so memory that is
 * not mapped fails the walk instead of crashing the program: for the walk that checks a layout before
 * it is trusted. 1 when careful reads work here (they need a pipe: two descriptors, for the check). */
int vt_pywalk_can_check(void);

/* The frames of tstate's thread, innermost first, into key (at most max frames); *hash gets a hash of
 * the key. Returns the number of frames, or -1 when something read is not what the layout says (the
 * walk is then not to be trusted again). */
int vt_pywalk(const struct vt_pylayout *l, const struct vt_pytypes *t, const void *tstate, uintptr_t *key, int max,
              uint64_t *hash, int careful, struct vt_pycode_memos *memo);

/* The file and function (qualified from 3.11) of a code object seen in a walk, malloc'd UTF-8; -1
 * when either is not a string we can read (or out of memory). The code object must be alive: call it
 * from the walking thread, before it returns to Python. */
int vt_pywalk_names(const struct vt_pylayout *l, const struct vt_pytypes *t, uintptr_t code, char **file, char **func,
                    int careful);

/* The line of frame i of key (code alive, as above); -1 when it has none. */
int vt_pywalk_line(const struct vt_pylayout *l, const struct vt_pytypes *t, const uintptr_t *key, int i, int careful);

/* One frame as the path walk reads it (vt_pypath.h): nothing but the frame itself. */
struct vt_pyraw {
    const char *code, *instr;
    const void *frame;
    char owner;
};

/* The frames of tstate's thread, at most max, into out[max - n .. max - 1], outermost first (the innermost
 * at out[max - 1]: read inward-out, and kept in the order the path walk compares them), for a walk with a
 * memo (3.12, 3.13: l->frame_owner set): each frame's code object, instruction and owner, read straight
 * and not yet checked (vt_pywalk_word checks what it does not already know). Shims on the C stack left
 * out. Returns n. */
int vt_pywalk_raw(const struct vt_pylayout *l, const void *tstate, struct vt_pyraw *out, int max);

/* The key's second word for frame r (VT_PYWALK_ADDR, VT_PYWALK_PRINT) into *word, and what is known of
 * its code object into *known: from the memo, else read (and kept in the memo). Returns 1; 0 for a
 * frame the interpreter would not report (a shim, or one not started yet); -1 for memory not as
 * expected. */
int vt_pywalk_word(const struct vt_pylayout *l, const struct vt_pytypes *t, struct vt_pycode_memos *m,
                   const struct vt_pyraw *r, struct vt_pycode_memo *known, uintptr_t *word);

/* The hash vt_pywalk gives a key of n frames, for keys made another way. */
uint64_t vt_pywalk_hash(const uintptr_t *key, int n);

#endif
