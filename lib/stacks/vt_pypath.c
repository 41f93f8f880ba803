/* A thread's Python stacks as paths in a tree of its frames (vt_pypath.h). A node is one frame, its
 * code object and instruction word (the key's two words), under the node of the frames outward of it;
 * the node of a stack's innermost frame stands for the whole stack and remembers its id. Each thread
 * has a tree of its own (no lock) and a trail: the steps of its last path, outermost first, each with
 * its node.
 *
 * A walk reads the frames (vt_pywalk_raw), then goes along them from the outermost while each is the
 * trail's step at its depth (the same code object, instruction and owner): those steps' nodes are this
 * stack's too, with nothing looked up. Each frame after the first that differs is found under its
 * parent node by its code object, instruction and owner, in one slot of the thread's table, with no
 * read of its code object; only a frame not met before under that node is made into words (the memo of
 * code objects, or the code object read). Where the old walk hashed every frame into a key and compared
 * the key whole with the interned stack's (a few hundred bytes of cold memory an allocation), a walk now
 * costs a compare a frame and a slot for each that changed (docs/performance.md).
 *
 * Why it is the same answer: a stack's key is its frames' (code, word) pairs, and a path in the tree is
 * the same pairs from the outermost. The word and whether a frame is reported follow from its code
 * object, instruction and owner while no code object has been destroyed, since then a code object's
 * address is no other's; a destruction starts a new epoch, an empty tree. */
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

/* A frame as the walk meets it under a node: its code object, instruction and owner, which decide its
 * key's words (and whether it is reported at all) while no code object has been destroyed. The slot
 * holds the answer, the frame's node (or parent itself, for a frame not reported), so that a frame
 * that changed since the last walk costs one look-up, half a cache line, and no read of its code
 * object. Slots of an older epoch are empty. */
struct vt_pyslot {
    const char *code, *instr;
    uint32_t parent, node;
    uint32_t epoch;
    char owner;
};

/* A tree past this many nodes (or twice as many slots) is emptied and grown again: a program whose
 * stacks never repeat (a recursion of every depth) keeps no more than ~12 MB a thread. A serving loop's
 * thread keeps a few thousand. */
#define VT_PYPATH_NODES_MAX (1u << 17)
static uint32_t vt_nodes_max = VT_PYPATH_NODES_MAX;

void vt_pypath_bound(uint32_t nodes)
{
    vt_nodes_max = nodes;
}

struct vt_pypath {
    struct vt_pynode *nodes;
    uint32_t nnodes, capnodes;
    struct vt_pyslot *slot; /* open addressing by (parent, code, instruction, owner) */
    uint32_t nslots, used;  /* used: the slots of this epoch */
    uint32_t epoch;         /* starts again (an empty tree) when a code object is destroyed */
    uint64_t gen;           /* the destruction count the epoch began at */
    /* The trail: one step for each frame read, outermost first, reported or not. Columns: the walk's
     * compare reads the first three alone, a few lines for a whole stack. A step's node is its frame's,
     * or for a frame not reported the node outward of it. */
    unsigned ntrail;
    const char *code[VT_PY_DEPTH_MAX], *instr[VT_PY_DEPTH_MAX];
    char owner[VT_PY_DEPTH_MAX];
    uint32_t step_node[VT_PY_DEPTH_MAX];
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
    p->epoch = 1;
    return p;
}

/* An empty tree, every slot left as it is but no longer of this epoch. */
static void vt_new_epoch(struct vt_pypath *p)
{
    if (++p->epoch == 0) { /* after 2^32 of them: the slots really emptied, once */
        memset(p->slot, 0, p->nslots * sizeof *p->slot);
        p->epoch = 1;
    }
    p->nnodes = 1;
    p->used = 0;
    p->ntrail = 0;
}

static uint32_t vt_slot_hash(uint32_t parent, const char *code, const char *instr, char owner)
{
    uint64_t h = ((uintptr_t)code ^ ((uint64_t)parent << 40) ^ (uint64_t)(unsigned char)owner ^
                  ((uintptr_t)instr * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

/* The slot of (parent, r) in this epoch, or the empty one where it goes. */
VT_HOT static struct vt_pyslot *vt_slot_at(struct vt_pypath *p, uint32_t parent, const struct vt_pyraw *r)
{
    uint32_t mask = p->nslots - 1, s = vt_slot_hash(parent, r->code, r->instr, r->owner) & mask;
    for (;; s = (s + 1) & mask) {
        struct vt_pyslot *x = &p->slot[s];
        if (x->epoch != p->epoch ||
            (x->code == r->code && x->instr == r->instr && x->parent == parent && x->owner == r->owner))
            return x;
    }
}

/* The table of slots twice as large, this epoch's placed again. */
static int vt_slots_grow(struct vt_pypath *p)
{
    uint32_t n = p->nslots * 2;
    struct vt_pyslot *slot = calloc(n, sizeof *slot);
    if (!slot)
        return -1;
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct vt_pyslot *x = &p->slot[i];
        if (x->epoch != p->epoch)
            continue;
        uint32_t s = vt_slot_hash(x->parent, x->code, x->instr, x->owner) & (n - 1);
        while (slot[s].epoch == p->epoch)
            s = (s + 1) & (n - 1);
        slot[s] = *x;
    }
    free(p->slot);
    p->slot = slot;
    p->nslots = n;
    return 0;
}

/* A frame not met under parent in this epoch: its words (from the memo of code objects, or read), its
 * node, made when new, and its slot. Returns 0 with *node; -1 for memory not as expected; 1 when the
 * tree is at its bound or out of memory (emptied: the walk starts again). */
static __attribute__((noinline)) int vt_frame_add(struct vt_pypath *p, const struct vt_pylayout *l,
                                                  const struct vt_pytypes *t, struct vt_pycode_memos *m,
                                                  uint32_t parent, const struct vt_pyraw *r, uint32_t *node)
{
    struct vt_pycode_memo known;
    uintptr_t word;
    int got = vt_pywalk_word(l, t, m, r, &known, &word);
    if (got < 0)
        return -1;
    uint32_t i = parent;
    if (p->used >= 2 * vt_nodes_max)
        goto full;
    if (got) {
        if (p->nnodes >= vt_nodes_max)
            goto full;
        if (p->nnodes == p->capnodes) {
            struct vt_pynode *n = realloc(p->nodes, 2 * (size_t)p->capnodes * sizeof *n);
            if (!n)
                goto full;
            p->nodes = n;
            p->capnodes *= 2;
        }
        i = p->nnodes++;
        p->nodes[i] = (struct vt_pynode){(uintptr_t)r->code, word, parent, 0, p->nodes[parent].depth + 1};
    }
    if (2 * (p->used + 1) > p->nslots && vt_slots_grow(p) < 0)
        goto full;
    *vt_slot_at(p, parent, r) = (struct vt_pyslot){r->code, r->instr, parent, i, p->epoch, r->owner};
    p->used++;
    *node = i;
    return 0;
full:
    vt_new_epoch(p);
    return 1;
}

/* The id of the stack that ends at node: its key made from the path, innermost first, and looked up
 * (added when new) the way every walked key is. */
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
    /* A code object destroyed: another may now be at its address, so every slot may be stale. */
    if (VT_UNLIKELY(p->gen != m->gen)) {
        vt_new_epoch(p);
        p->gen = m->gen;
    }
    /* The last path's frames asked for all at once: most are where they were (the outer calls are the
     * same, and a call made again lands where the last one did), and the walk would otherwise wait for
     * each in turn, a frame's address being in the frame inward of it. */
    vt_pypath_prefetch(p, l->frame_owner);
    struct vt_pyraw raw[VT_PY_DEPTH_MAX];
    if (max > VT_PY_DEPTH_MAX)
        max = VT_PY_DEPTH_MAX;
    int n = vt_pywalk_raw(l, tstate, raw, max);
    const struct vt_pyraw *step = raw + max - n; /* outermost first, as the trail */
    /* The steps the trail still has, from the outermost: the same code object at the same instruction,
     * owned alike. */
    unsigned k = 0, same = p->ntrail < (unsigned)n ? p->ntrail : (unsigned)n;
    while (k < same && p->code[k] == step[k].code && p->instr[k] == step[k].instr && p->owner[k] == step[k].owner)
        k++;
    uint32_t node = k ? p->step_node[k - 1] : 0;
    int emptied = 0;
    for (; k < (unsigned)n; k++) {
        const struct vt_pyraw *r = &step[k];
        const struct vt_pyslot *x = vt_slot_at(p, node, r);
        if (VT_LIKELY(x->epoch == p->epoch)) {
            node = x->node;
        } else {
            int got = vt_frame_add(p, l, t, m, node, r, &node);
            if (got) {
                p->ntrail = 0;
                /* The tree was full and is now empty: once more from the outermost frame (a path holds
                 * at most VT_PY_DEPTH_MAX nodes, far below the bound); out of memory, no stack. */
                if (got > 0 && !emptied++) {
                    k = (unsigned)-1;
                    node = 0;
                    continue;
                }
                *id = 0;
                *frames = 0;
                return got < 0 ? -1 : 0;
            }
        }
        p->code[k] = r->code;
        p->instr[k] = r->instr;
        p->owner[k] = r->owner;
        p->step_node[k] = node;
        p->frame[k] = r->frame;
    }
    p->ntrail = (unsigned)n;
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
