/* A thread's Python stacks as paths in a tree of its frames (vt_pypath.h). A node is one frame, its
 * code object and instruction word (the key's two words), under the node of the frames outward of it;
 * the node of a stack's innermost frame stands for the whole stack and remembers its id. Each thread
 * has a tree of its own (no lock) and a trail: the steps of its last path, outermost first, each with
 * its node and what the memo said of its code object.
 *
 * A walk reads the frames (vt_pywalk_raw), then goes along them from the outermost while each is the
 * trail's step at its depth (the same code object and instruction, the code objects' count of
 * destructions unmoved): those steps' nodes are this stack's too, with nothing looked up. Only the
 * frames after the first that differs, a decode step's few innermost ones, are made into words and
 * found in the tree. A serving loop's allocations share their outer frames (the request, the model,
 * its layers) and differ in the last few, so a walk costs a compare a frame and a look-up for each that
 * changed, where a key of every frame used to be hashed and compared whole (docs/performance.md).
 *
 * Why it is the same answer: a stack's key is its frames' (code, word) pairs, and a path in the tree is
 * the same pairs from the outermost. A frame equal to the trail's step has the same pair, whether it is
 * the same call or another landed at the same depth. */
#include <stdlib.h>
#include <string.h>

#include "vt_hot.h"
#include "vt_pypath.h"
#include "vt_pystack.h"
#include "vt_tcache.h"

struct vt_pynode {
    uintptr_t code, word;
    uint32_t parent; /* the node outward of it; 0: the root (the node array's first, never a frame) */
    uint32_t id;     /* the Python stack that ends here; 0 until the first walk that ends here */
    uint32_t depth;  /* its frames */
};

/* A tree past this many nodes is emptied and grown again: a program whose stacks never repeat (a
 * recursion of every depth) keeps no more than ~6 MB a thread. */
#define VT_PYPATH_NODES_MAX (1u << 18)

struct vt_pypath {
    struct vt_pynode *nodes;
    uint32_t nnodes, capnodes;
    uint32_t *slot; /* open addressing by (parent, code, word): node indexes, 0 empty */
    uint32_t nslots;
    uint64_t gen; /* the destruction count the trail was made at */
    /* The trail: one step for each frame read, outermost first, reported or not (a shim, a frame not
     * started yet: what the interpreter would not report is decided by its code object, instruction and
     * owner, so a frame equal to its step is decided alike). Columns: the walk's compare reads the
     * first three alone, a few lines for a whole stack. A step's node is its frame's, or for a frame not
     * reported the node outward of it. */
    unsigned ntrail;
    const char *code[VT_PY_DEPTH_MAX], *instr[VT_PY_DEPTH_MAX];
    char owner[VT_PY_DEPTH_MAX];
    uint32_t step_node[VT_PY_DEPTH_MAX];
    struct vt_pycode_memo memo[VT_PY_DEPTH_MAX];
    const void *frame[VT_PY_DEPTH_MAX]; /* only for vt_pypath_prefetch */
};

void vt_pypath_free(struct vt_pypath *p)
{
    if (p) {
        free(p->nodes);
        free(p->slot);
        free(p);
    }
}

static struct vt_pypath *vt_pypath_new(void)
{
    struct vt_pypath *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->capnodes = 1024;
    p->nslots = 4096;
    p->nodes = malloc(p->capnodes * sizeof *p->nodes);
    p->slot = calloc(p->nslots, sizeof *p->slot);
    if (!p->nodes || !p->slot) {
        vt_pypath_free(p);
        return NULL;
    }
    p->nnodes = 1; /* the root */
    memset(&p->nodes[0], 0, sizeof p->nodes[0]);
    return p;
}

static uint32_t vt_node_hash(uint32_t parent, uintptr_t code, uintptr_t word)
{
    uint64_t h = (code ^ ((uint64_t)parent << 40) ^ (word * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

/* The table of slots twice as large, every node placed again. */
static int vt_slots_grow(struct vt_pypath *p)
{
    uint32_t n = p->nslots * 2;
    uint32_t *slot = calloc(n, sizeof *slot);
    if (!slot)
        return -1;
    for (uint32_t i = 1; i < p->nnodes; i++) {
        const struct vt_pynode *x = &p->nodes[i];
        uint32_t s = vt_node_hash(x->parent, x->code, x->word) & (n - 1);
        while (slot[s])
            s = (s + 1) & (n - 1);
        slot[s] = i;
    }
    free(p->slot);
    p->slot = slot;
    p->nslots = n;
    return 0;
}

/* Every node and the trail dropped (the tree at its bound). */
static void vt_pypath_empty(struct vt_pypath *p)
{
    p->nnodes = 1;
    p->ntrail = 0;
    memset(p->slot, 0, p->nslots * sizeof *p->slot);
}

/* The node of (code, word) under parent, added when new; 0 when out of memory. Out of the walk's loop:
 * a decode step's allocation meets a few. */
static __attribute__((noinline)) uint32_t vt_child(struct vt_pypath *p, uint32_t parent, uintptr_t code, uintptr_t word)
{
    uint32_t mask = p->nslots - 1, s = vt_node_hash(parent, code, word) & mask;
    for (uint32_t i; (i = p->slot[s]); s = (s + 1) & mask) {
        const struct vt_pynode *x = &p->nodes[i];
        if (x->code == code && x->word == word && x->parent == parent)
            return i;
    }
    if (p->nnodes >= VT_PYPATH_NODES_MAX)
        return 0; /* the caller empties the tree and walks again */
    if (p->nnodes == p->capnodes) {
        struct vt_pynode *n = realloc(p->nodes, 2 * (size_t)p->capnodes * sizeof *n);
        if (!n)
            return 0;
        p->nodes = n;
        p->capnodes *= 2;
    }
    if (2 * (p->nnodes + 1) > p->nslots) {
        if (vt_slots_grow(p) < 0)
            return 0;
        mask = p->nslots - 1;
        for (s = vt_node_hash(parent, code, word) & mask; p->slot[s]; s = (s + 1) & mask)
            ;
    }
    uint32_t i = p->nnodes++;
    p->nodes[i] = (struct vt_pynode){code, word, parent, 0, p->nodes[parent].depth + 1};
    p->slot[s] = i;
    return i;
}

/* The id of the stack that ends at node (n frames): its key made from the path, innermost first, and
 * looked up (added when new) the way every walked key is. */
static __attribute__((noinline, cold)) uint32_t vt_path_id(struct vt_pypath *p, uint32_t node,
                                                           vt_pypath_resolve_fn *resolve)
{
    uintptr_t key[2 * VT_PY_DEPTH_MAX];
    int i = 0;
    for (uint32_t x = node; x && i < VT_PY_DEPTH_MAX; x = p->nodes[x].parent, i++) {
        key[2 * i] = p->nodes[x].code;
        key[2 * i + 1] = p->nodes[x].word;
    }
    uint32_t id = resolve(key, i, vt_pywalk_hash(key, i));
    p->nodes[node].id = id;
    return id;
}

static struct vt_pypath *vt_pypath_mine(void)
{
    struct vt_pypath **slot = vt_tcache_path();
    if (!slot)
        return NULL;
    if (!*slot)
        *slot = vt_pypath_new();
    return *slot;
}

VT_HOT int vt_pypath_walk(const struct vt_pylayout *l, const struct vt_pytypes *t, const void *tstate, int max,
                          struct vt_pycode_memos *m, vt_pypath_resolve_fn *resolve, uint32_t *id, int *frames)
{
    struct vt_pypath *p = vt_pypath_mine();
    if (VT_UNLIKELY(!p))
        return -2;
    /* The last path's frames asked for all at once: most are where they were (the outer calls are the
     * same, and a call made again lands where the last one did), and the walk would otherwise wait for
     * each in turn, a frame's address being in the frame inward of it. */
    vt_pypath_prefetch(p, l->frame_owner);
    struct vt_pyraw raw[VT_PY_DEPTH_MAX];
    if (max > VT_PY_DEPTH_MAX)
        max = VT_PY_DEPTH_MAX;
    int n = vt_pywalk_raw(l, tstate, raw, max);
    /* The steps the trail still has, from the outermost: the same code object at the same instruction,
     * owned alike, no code object destroyed since the trail was made. */
    int fresh = p->gen == m->gen;
    unsigned k = 0, same = fresh ? (p->ntrail < (unsigned)n ? p->ntrail : (unsigned)n) : 0;
    while (k < same && p->code[k] == raw[n - 1 - (int)k].code && p->instr[k] == raw[n - 1 - (int)k].instr &&
           p->owner[k] == raw[n - 1 - (int)k].owner)
        k++;
    uint32_t node = k ? p->step_node[k - 1] : 0;
    for (; k < (unsigned)n; k++) {
        const struct vt_pyraw *r = &raw[n - 1 - (int)k];
        struct vt_pycode_memo known = {0};
        uintptr_t word;
        /* The step's memo is read as the hint before the step is written over. */
        int got = vt_pywalk_word(l, t, m, r, fresh && k < p->ntrail ? &p->memo[k] : NULL, &known, &word);
        if (got < 0) {
            p->ntrail = 0;
            return -1;
        }
        if (got) {
            uint32_t child = vt_child(p, node, (uintptr_t)r->code, word);
            if (VT_UNLIKELY(!child)) {
                /* Out of memory, or the tree at its bound: emptied, and the stack left without Python
                 * frames this once (a rare walk, not a wrong one). */
                vt_pypath_empty(p);
                *id = 0;
                *frames = 0;
                return 0;
            }
            node = child;
        }
        p->code[k] = r->code;
        p->instr[k] = r->instr;
        p->owner[k] = r->owner;
        p->step_node[k] = node;
        p->memo[k] = known;
        p->frame[k] = r->frame;
    }
    p->ntrail = (unsigned)n;
    p->gen = m->gen;
    *frames = node ? (int)p->nodes[node].depth : 0;
    *id = !node ? 0 : VT_LIKELY(p->nodes[node].id) ? p->nodes[node].id : vt_path_id(p, node, resolve);
    return 0;
}

VT_HOT void vt_pypath_prefetch(const struct vt_pypath *p, int owner_off)
{
    /* Loops kept whole: each line of code here is one more to fetch at every allocation. */
#pragma GCC unroll 1
    for (unsigned i = 0; i < p->ntrail; i++) {
        __builtin_prefetch(p->frame[i], 0, 3);
        __builtin_prefetch((const char *)p->frame[i] + owner_off, 0, 3);
    }
}
