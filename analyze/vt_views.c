/* Building the caching allocators' views (vt_views.h). Torch tells its segments and blocks: a fixed
 * segment is matched to the cudaMalloc entry at its address with its size, an expandable one to the
 * VMM mappings inside its range. CuPy tells only its pool's totals: its segments are the device
 * allocations whose stacks run through CuPy's modules, and its blocks where its memory hook reported
 * them (the main thread's, from the first dump on). A native allocator tells its blocks: its
 * segments are the device allocations that contain them. With torch's cudaMallocAsync backend every
 * tensor is a stream-ordered allocation already, and the pool's attributes are the cache. */
#include <stdlib.h>
#include <string.h>

#include "vt_views.h"

#define VT_EXPANDABLE_PAGE_SMALL (2ull << 20)
#define VT_EXPANDABLE_PAGE_LARGE (20ull << 20)

static struct vt_view *vt_view_find(struct vt_views *vw, const char *name, int device)
{
    for (size_t i = 0; i < vw->n; i++)
        if (vw->v[i].device == device && !strcmp(vw->v[i].name, name))
            return &vw->v[i];
    return NULL;
}

static struct vt_view *vt_view_get(struct vt_views *vw, size_t *cap, const char *name, int device)
{
    struct vt_view *found = vt_view_find(vw, name, device);
    if (found)
        return found;
    if (vw->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        struct vt_view *nv = realloc(vw->v, nc * sizeof *nv);
        if (!nv)
            return NULL;
        vw->v = nv;
        *cap = nc;
    }
    struct vt_view *v = &vw->v[vw->n++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->device = device;
    v->own_allocated = v->own_reserved = VT_DF_UNKNOWN;
    return v;
}

/* Allocation indexes of one kind, sorted by address, for the look-ups below. */
struct vt_by_addr {
    const struct vt_dumpfile *d;
    uint32_t *ix; /* 4 bytes an entry: a dump's entries are counted in 32 bits here (vt_views_build) */
    size_t n;
};

static int vt_addr_cmp(const void *a, const void *b, void *dump)
{
    const struct vt_dumpfile *d = dump;
    uint64_t x = d->allocs[*(const uint32_t *)a].addr, y = d->allocs[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

static int vt_by_addr_build(const struct vt_dumpfile *d, enum vt_kind kind, struct vt_by_addr *b)
{
    b->d = d;
    b->n = 0;
    b->ix = malloc((d->nallocs ? d->nallocs : 1) * sizeof *b->ix);
    if (!b->ix)
        return -1;
    for (size_t i = 0; i < d->nallocs; i++)
        if (d->allocs[i].kind == kind)
            b->ix[b->n++] = (uint32_t)i;
    qsort_r(b->ix, b->n, sizeof *b->ix, vt_addr_cmp, (void *)d);
    return 0;
}

/* The first entry whose address is >= addr (b->n when none). */
static size_t vt_lower(const struct vt_by_addr *b, uint64_t addr)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->d->allocs[b->ix[mid]].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Torch's segment s: reserved, and matched to the driver allocation (fixed) or the mappings (expandable)
 * that are it. Returns whether it was. */
static int vt_torch_segment(const struct vt_dumpfile *d, const struct vt_df_segment *s, struct vt_view *v,
                            const struct vt_by_addr *dev, const struct vt_by_addr *maps, struct vt_views *vw)
{
    v->segments++;
    v->reserved += s->size;
    int matched = 0;
    if (!s->expandable) {
        size_t k = vt_lower(dev, s->addr);
        if (k < dev->n) {
            size_t i = dev->ix[k];
            if (d->allocs[i].addr == s->addr && d->allocs[i].size == s->size && vw->alloc_role[i] == VT_ROLE_ALLOCATED) {
                vw->alloc_role[i] = VT_ROLE_SEGMENT;
                matched = 1;
            }
        }
    } else {
        uint64_t mapped = 0;
        size_t k0 = vt_lower(maps, s->addr), k;
        for (k = k0; k < maps->n && d->allocs[maps->ix[k]].addr - s->addr < s->size; k++)
            mapped += d->allocs[maps->ix[k]].size;
        if (mapped == s->size) {
            matched = 1;
            for (k = k0; k < maps->n && d->allocs[maps->ix[k]].addr - s->addr < s->size; k++) {
                vw->alloc_role[maps->ix[k]] = VT_ROLE_SEGMENT;
                for (size_t j = 0; j < d->nphys; j++)
                    if (d->phys[j].handle == d->allocs[maps->ix[k]].handle)
                        vw->phys_role[j] = VT_ROLE_SEGMENT;
            }
        }
    }
    if (matched) {
        v->matched++;
        v->matched_bytes += s->size;
    } else {
        v->unmatched++;
    }
    return matched;
}

/* Segment s's blocks, in address order (the free ones included, as torch's snapshot lists them): the
 * live ones are allocated; a wholly free fixed segment is what empty_cache() gives back, and so are the
 * whole pages inside an expandable one's free blocks; the rest of the free space is fragmentation. */
static void vt_segment_blocks(const struct vt_df_segment *s, const struct vt_df_block *blocks, size_t n, int matched,
                              struct vt_view *v)
{
    uint64_t active = 0, inactive = 0, pending = 0, aligned_free = 0;
    uint64_t page = !strcmp(s->type, "small") ? VT_EXPANDABLE_PAGE_SMALL : VT_EXPANDABLE_PAGE_LARGE;
    for (size_t b = 0; b < n; b++) {
        const struct vt_df_block *bl = &blocks[b];
        if (bl->state == VT_BLOCK_ACTIVE) {
            active += bl->size;
            v->blocks++;
            v->blocks_nostack += !bl->pystack;
        } else if (bl->state == VT_BLOCK_PENDING_FREE) {
            pending += bl->size;
        } else {
            inactive += bl->size;
            /* An expandable segment gives back the whole pages inside a free block. */
            uint64_t lo = (bl->addr - s->addr + page - 1) / page * page, hi = (bl->addr - s->addr + bl->size) / page * page;
            aligned_free += hi > lo ? hi - lo : 0;
        }
    }
    v->allocated += active;
    v->pending_free += pending;
    if (matched)
        v->allocated_in_matched += active < s->size ? active : s->size; /* blocks may overlap in a bad dump */
    if (s->expandable) {
        v->releasable += aligned_free;
        v->fragmented += inactive - aligned_free;
    } else if (!active && !pending) {
        v->releasable += s->size; /* what empty_cache() gives back: wholly free segments */
    } else {
        v->fragmented += inactive;
    }
}

static int vt_block_entry_cmp(const void *a, const void *b, void *dump)
{
    const struct vt_dumpfile *d = dump;
    uint64_t x = d->allocs[*(const uint32_t *)a].addr, y = d->allocs[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

static int vt_segment_cmp(const void *a, const void *b, void *dump)
{
    const struct vt_dumpfile *d = dump;
    uint64_t x = d->segments[*(const uint32_t *)a].addr, y = d->segments[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

/* A tracked block in no segment of torch's (one whose segment the tracker missed): allocated all the
 * same. 0, or -1 when out of memory. */
static int vt_loose_block(struct vt_views *vw, size_t *cap, const struct vt_df_alloc *a)
{
    struct vt_view *o = vt_view_get(vw, cap, "torch", a->device);
    if (!o)
        return -1;
    o->allocated += a->size;
    o->blocks++;
    o->blocks_nostack += !a->stack;
    return 0;
}

/* With torch's trace tracker on, its segments come without blocks: its live blocks are the dump's
 * entries of kind block labelled torch. Each segment gets the ones inside it and the free space
 * between them, as its snapshot would list them; a block in no segment (one whose segment the tracker
 * missed) is allocated all the same. 0, or -1 when out of memory. */
static int vt_tracked_blocks(const struct vt_dumpfile *d, struct vt_views *vw, size_t *cap, const char *matched)
{
    uint32_t *bix = malloc((d->nallocs ? d->nallocs : 1) * sizeof *bix);
    uint32_t *six = malloc((d->nsegments ? d->nsegments : 1) * sizeof *six);
    struct vt_df_block *run = malloc((2 * d->nallocs + 1) * sizeof *run);
    if (!bix || !six || !run) {
        free(bix);
        free(six);
        free(run);
        return -1;
    }
    size_t nb = 0, ns = 0;
    for (size_t i = 0; i < d->nallocs; i++)
        if (d->allocs[i].kind == VT_KIND_BLOCK && !strcmp(d->allocs[i].api, "torch"))
            bix[nb++] = (uint32_t)i;
    for (size_t i = 0; i < d->nsegments; i++)
        if (!strcmp(d->segments[i].allocator, "torch"))
            six[ns++] = (uint32_t)i;
    qsort_r(bix, nb, sizeof *bix, vt_block_entry_cmp, (void *)d);
    qsort_r(six, ns, sizeof *six, vt_segment_cmp, (void *)d);
    size_t b = 0;
    int r = 0;
    for (size_t k = 0; k < ns && !r; k++) {
        const struct vt_df_segment *s = &d->segments[six[k]];
        struct vt_view *v = vt_view_get(vw, cap, "torch", s->device);
        if (!v) {
            r = -1;
            break;
        }
        for (; b < nb && d->allocs[bix[b]].addr < s->addr && !r; b++) /* in no segment */
            r = vt_loose_block(vw, cap, &d->allocs[bix[b]]);
        if (r)
            break;
        size_t n = 0;
        uint64_t at = s->addr, end = s->addr + s->size;
        for (; b < nb && d->allocs[bix[b]].addr < end; b++) {
            const struct vt_df_alloc *a = &d->allocs[bix[b]];
            uint64_t size = a->size < end - a->addr ? a->size : end - a->addr;
            if (a->addr > at)
                run[n++] = (struct vt_df_block){.addr = at, .size = a->addr - at, .state = VT_BLOCK_INACTIVE};
            run[n++] = (struct vt_df_block){.addr = a->addr, .size = size, .state = VT_BLOCK_ACTIVE,
                                            .pystack = a->stack != 0};
            at = a->addr + size > at ? a->addr + size : at;
        }
        if (at < end)
            run[n++] = (struct vt_df_block){.addr = at, .size = end - at, .state = VT_BLOCK_INACTIVE};
        vt_segment_blocks(s, run, n, matched[six[k]], v);
    }
    for (; b < nb && !r; b++)
        r = vt_loose_block(vw, cap, &d->allocs[bix[b]]);
    free(bix);
    free(six);
    free(run);
    return r;
}

/* Whether the stack of an entry runs through a module whose path has part in it. */
static int vt_stack_through(const struct vt_dumpfile *d, uint32_t stack, const char *part)
{
    const struct vt_df_stack *st = stack ? vt_df_stack(d, stack) : NULL;
    for (uint32_t i = 0; st && i < st->n; i++) {
        const struct vt_df_module *m = vt_df_module_of(d, st->pc[i]);
        if (m && strstr(m->path, part))
            return 1;
    }
    return 0;
}

/* Whether the first module of a stack past the CUDA driver and runtime is part's: the memory a framework
 * asked for itself, not memory a library it calls (cuDNN under XLA) took for its own use. */
static int vt_stack_asked_by(const struct vt_dumpfile *d, uint32_t stack, const char *part)
{
    const struct vt_df_stack *st = stack ? vt_df_stack(d, stack) : NULL;
    for (uint32_t i = 0; st && i < st->n; i++) {
        const struct vt_df_module *m = vt_df_module_of(d, st->pc[i]);
        if (!m)
            continue;
        const char *b = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
        if (!strncmp(b, "libcuda.so", 10) || !strncmp(b, "libcudart", 9) || !strncmp(b, "libvramtrace", 12))
            continue;
        return strstr(m->path, part) != NULL;
    }
    return 0;
}

static const char vt_native_source[] =
    "blocks reported through vramtrace_block_alloc(); segments: the device allocations holding them, and "
    "those the pool started a block at or declared (vramtrace_pool_segment())";

/* A native allocator's view, made the first time one of its segments or blocks is met. */
static struct vt_view *vt_native_view(struct vt_views *vw, size_t *cap, const char *name, int device)
{
    struct vt_view *v = vt_view_get(vw, cap, name, device);
    if (v) {
        snprintf(v->backend, sizeof v->backend, "blocks");
        v->source = vt_native_source;
    }
    return v;
}

/* Device allocation k becomes native view v's segment (seg_view: each allocation's view index). */
static void vt_native_segment(const struct vt_dumpfile *d, struct vt_views *vw, struct vt_view *v, size_t k,
                              int32_t *seg_view)
{
    vw->alloc_role[k] = VT_ROLE_SEGMENT;
    seg_view[k] = (int32_t)(v - vw->v);
    v->segments++;
    v->matched++;
    v->matched_bytes += d->allocs[k].size;
    v->reserved += d->allocs[k].size;
}

/* The views the allocators' own records describe, each completed by the row that matches its name and
 * backend (NULL: any), the first that does: adding an allocator that tells its totals is a row. */
struct vt_view_row {
    const char *name, *backend;
    const char *module; /* totals-only pools: the module whose stacks mark their segments */
    const char *source; /* where the view's figures come from, for the reports */
    void (*build)(const struct vt_dumpfile *d, struct vt_views *vw, size_t i, int32_t *seg_view,
                  const struct vt_view_row *row);
};

/* torch with backend:cudaMallocAsync: every tensor is a stream-ordered allocation: ours, live; the pool
 * keeps the rest. */
static void vt_view_stream_ordered(const struct vt_dumpfile *d, struct vt_views *vw, size_t i, int32_t *seg_view,
                                   const struct vt_view_row *row)
{
    (void)seg_view;
    struct vt_view *v = &vw->v[i];
    for (size_t k = 0; k < d->nallocs; k++)
        if (d->allocs[k].kind == VT_KIND_ASYNC && d->allocs[k].device == v->device) {
            v->allocated += d->allocs[k].size;
            v->blocks++;
        }
    v->reserved = VT_DF_UNKNOWN;
    for (size_t k = 0; k < d->npools; k++)
        if (d->pools[k].device == v->device && d->pools[k].is_default && d->pools[k].reserved != VT_DF_UNKNOWN)
            v->reserved = d->pools[k].reserved;
    v->releasable = v->reserved == VT_DF_UNKNOWN || v->reserved < v->allocated ? VT_DF_UNKNOWN
                                                                                : v->reserved - v->allocated;
    v->fragmented = VT_DF_UNKNOWN;
    v->source = row->source;
}

/* Pools that give their totals only (CuPy, JAX): their segments are the device allocations and physical
 * memory (XLA maps its pool through VMM on the H200) asked for by their own module. */
static void vt_view_totals(const struct vt_dumpfile *d, struct vt_views *vw, size_t i, int32_t *seg_view,
                           const struct vt_view_row *row)
{
    struct vt_view *v = &vw->v[i];
    for (size_t k = 0; k < d->nallocs; k++)
        if (d->allocs[k].device == v->device && d->allocs[k].kind == VT_KIND_DEVICE &&
            vw->alloc_role[k] == VT_ROLE_ALLOCATED && vt_stack_asked_by(d, d->allocs[k].stack, row->module)) {
            vw->alloc_role[k] = VT_ROLE_SEGMENT;
            seg_view[k] = (int32_t)i;
            v->matched++;
            v->matched_bytes += d->allocs[k].size;
        }
    for (size_t k = 0; k < d->nphys; k++)
        if (d->phys[k].device == v->device && d->phys[k].kind == VT_KIND_PHYS &&
            vw->phys_role[k] == VT_ROLE_ALLOCATED && vt_stack_asked_by(d, d->phys[k].stack, row->module)) {
            vw->phys_role[k] = VT_ROLE_SEGMENT;
            v->matched++;
            v->matched_bytes += d->phys[k].size;
        }
    v->segments = v->matched;
    v->reserved = v->own_reserved;
    v->allocated = v->own_allocated;
    v->allocated_in_matched = v->own_allocated != VT_DF_UNKNOWN && v->own_allocated < v->matched_bytes
                                  ? v->own_allocated : v->matched_bytes;
    v->releasable = v->fragmented = VT_DF_UNKNOWN;
    v->source = row->source;
}

/* An allocator that listed its segments and blocks (torch's snapshot). The other way round too: memory
 * torch's allocator took that its snapshot does not list. The snapshot and our table are read one after
 * the other, and a thread inside a torch operator (GIL released) can make or give back a segment in
 * between: torch's memory then, not the program's (torch's own allocated total does not count it), so
 * it is the view's reserved and its use unknown, never allocated. Seen on the H200: two 64 MiB segments
 * made by an operator in flight during the dump read as a 128 MiB leak. */
static void vt_view_snapshot(const struct vt_dumpfile *d, struct vt_views *vw, size_t i, int32_t *seg_view,
                             const struct vt_view_row *row)
{
    (void)seg_view;
    struct vt_view *v = &vw->v[i];
    if (!v->segments)
        return;
    v->source = row->source;
    for (size_t k = 0; k < d->nallocs; k++)
        if (d->allocs[k].device == v->device && d->allocs[k].kind == VT_KIND_DEVICE &&
            vw->alloc_role[k] == VT_ROLE_ALLOCATED && vt_stack_through(d, d->allocs[k].stack, row->module)) {
            vw->alloc_role[k] = VT_ROLE_SEGMENT;
            v->orphans++;
            v->orphan_bytes += d->allocs[k].size;
            v->reserved += d->allocs[k].size;
        }
    for (size_t k = 0; k < d->nphys; k++)
        if (d->phys[k].device == v->device && vw->phys_role[k] == VT_ROLE_ALLOCATED &&
            vt_stack_through(d, d->phys[k].stack, row->module)) {
            vw->phys_role[k] = VT_ROLE_SEGMENT;
            v->orphans++;
            v->orphan_bytes += d->phys[k].size;
            v->reserved += d->phys[k].size;
        }
}

static const struct vt_view_row vt_view_rows[] = {
    {"torch", "cudaMallocAsync", NULL,
     "allocated: live cudaMallocAsync allocations; reserved: the default pool's attributes; "
     "releasable: what trimming the pool can give back",
     vt_view_stream_ordered},
    {"cupy", NULL, "cupy",
     "CuPy's default memory pool: used and total bytes; its segments: the device allocations made through CuPy",
     vt_view_totals},
    {"jax", NULL, "xla",
     "JAX's device memory_stats(): bytes in use and the pool's bytes; its segments: the device allocations made "
     "through XLA",
     vt_view_totals},
    {NULL, NULL, "libc10_cuda", "torch.cuda.memory._snapshot(): segments and blocks", vt_view_snapshot},
};

static const char vt_tracker_source[] =
    "torch's caching allocator itself, through its trace tracker: its segments, and its live blocks with the call "
    "sites they were handed out at";

static const struct vt_view_row *vt_view_row_of(const struct vt_view *v)
{
    for (size_t r = 0; r < sizeof vt_view_rows / sizeof vt_view_rows[0]; r++) {
        const struct vt_view_row *row = &vt_view_rows[r];
        if ((!row->name || !strcmp(row->name, v->name)) && (!row->backend || !strcmp(row->backend, v->backend)))
            return row;
    }
    return NULL;
}

int vt_views_build(const struct vt_dumpfile *d, struct vt_views *vw)
{
    memset(vw, 0, sizeof *vw);
    size_t cap = 0;
    int32_t *seg_view = NULL; /* per allocation: the view whose segment it is, -1 for none */
    uint32_t *seg_live = NULL; /* per allocation: live blocks in it */
    struct vt_by_addr dev = {0}, maps = {0};
    vw->alloc_role = calloc(d->nallocs ? d->nallocs : 1, 1);
    vw->phys_role = calloc(d->nphys ? d->nphys : 1, 1);
    seg_view = malloc((d->nallocs ? d->nallocs : 1) * sizeof *seg_view);
    seg_live = calloc(d->nallocs ? d->nallocs : 1, sizeof *seg_live);
    if (!vw->alloc_role || !vw->phys_role || !seg_view || !seg_live || vt_by_addr_build(d, VT_KIND_DEVICE, &dev) < 0 ||
        vt_by_addr_build(d, VT_KIND_VMM_MAP, &maps) < 0)
        goto fail;
    for (size_t i = 0; i < d->nallocs; i++)
        seg_view[i] = -1;

    char *matched = calloc(d->nsegments ? d->nsegments : 1, 1);
    if (!matched)
        goto fail;
    for (size_t i = 0; i < d->nsegments; i++) {
        const struct vt_df_segment *s = &d->segments[i];
        struct vt_view *v = vt_view_get(vw, &cap, s->allocator, s->device);
        if (!v) {
            free(matched);
            goto fail;
        }
        matched[i] = (char)vt_torch_segment(d, s, v, &dev, &maps, vw);
        if (!d->tracker.on)
            vt_segment_blocks(s, &d->blocks[s->first_block], s->nblocks, matched[i], v);
    }
    int tracked = d->tracker.on ? vt_tracked_blocks(d, vw, &cap, matched) : 0;
    free(matched);
    if (tracked < 0)
        goto fail;
    /* The allocators' own totals; views for those that gave no segments. */
    for (size_t i = 0; i < d->nallocators; i++) {
        const struct vt_df_allocator *a = &d->allocators[i];
        struct vt_view *v = vt_view_get(vw, &cap, a->name, a->device);
        if (!v)
            goto fail;
        snprintf(v->backend, sizeof v->backend, "%s", a->backend);
        v->own_allocated = a->allocated;
        v->own_reserved = a->reserved;
    }
    for (size_t i = 0; i < vw->n; i++) {
        struct vt_view *v = &vw->v[i];
        if (d->tracker.on && !strcmp(v->name, "torch") && !v->backend[0])
            snprintf(v->backend, sizeof v->backend, "native"); /* no bridge (a C++ program): its only backend */
        const struct vt_view_row *row = vt_view_row_of(v);
        if (row)
            row->build(d, vw, i, seg_view, row);
        if (d->tracker.on && !strcmp(v->name, "torch") && !strcmp(v->backend, "native"))
            v->source = vt_tracker_source;
    }
    /* Native allocators' segments: the device allocations they hold as such (pool_segment records:
     * the pool reported a block at the allocation's start, or declared it), whether blocks are live in
     * them or not; then the device allocation that contains each live block. */
    for (size_t i = 0; i < d->npool_segments; i++) {
        const struct vt_df_pool_segment *ps = &d->pool_segments[i];
        size_t k = vt_lower(&dev, ps->addr + 1);
        if (!k || d->allocs[dev.ix[k - 1]].addr != ps->addr || vw->alloc_role[dev.ix[k - 1]] == VT_ROLE_SEGMENT)
            continue;
        struct vt_view *v = vt_native_view(vw, &cap, ps->allocator, d->allocs[dev.ix[k - 1]].device);
        if (!v)
            goto fail;
        vt_native_segment(d, vw, v, dev.ix[k - 1], seg_view);
    }
    for (size_t i = 0; i < d->nallocs; i++) {
        const struct vt_df_alloc *b = &d->allocs[i];
        if (b->kind != VT_KIND_BLOCK || (d->tracker.on && !strcmp(b->api, "torch")))
            continue;
        /* A pool that gives its totals and reports its blocks too (CuPy): its totals stay the truth for
         * allocated; the blocks name where it went, and tell which segments hold none. */
        struct vt_view *totals = vt_view_find(vw, b->api, b->device);
        if (totals && totals->own_allocated != VT_DF_UNKNOWN && strcmp(totals->backend, "blocks")) {
            totals->blocks++;
            totals->block_bytes += b->size;
            size_t k = vt_lower(&dev, b->addr + 1);
            const struct vt_df_alloc *seg = k ? &d->allocs[dev.ix[k - 1]] : NULL;
            if (seg && b->addr - seg->addr < seg->size)
                seg_live[dev.ix[k - 1]]++;
            continue;
        }
        struct vt_view *v = vt_native_view(vw, &cap, b->api, b->device);
        if (!v)
            goto fail;
        v->blocks++;
        v->allocated += b->size;
        size_t k = vt_lower(&dev, b->addr + 1);
        const struct vt_df_alloc *seg = k ? &d->allocs[dev.ix[k - 1]] : NULL;
        if (seg && b->addr >= seg->addr && b->addr - seg->addr < seg->size && b->size <= seg->size - (b->addr - seg->addr)) {
            v->allocated_in_matched += b->size;
            seg_live[dev.ix[k - 1]]++;
            if (vw->alloc_role[dev.ix[k - 1]] != VT_ROLE_SEGMENT)
                vt_native_segment(d, vw, v, dev.ix[k - 1], seg_view);
        } else {
            v->unmatched++;
        }
    }
    /* Releasable: the segments with no live block; fragmented: the free space in the others. */
    for (size_t i = 0; i < vw->n; i++)
        if (!strcmp(vw->v[i].backend, "blocks"))
            vw->v[i].releasable = 0;
    for (size_t k = 0; k < d->nallocs; k++)
        if (seg_view[k] >= 0 && !seg_live[k] && !strcmp(vw->v[seg_view[k]].backend, "blocks"))
            vw->v[seg_view[k]].releasable += d->allocs[k].size;
    for (size_t i = 0; i < vw->n; i++) {
        struct vt_view *v = &vw->v[i];
        if (!strcmp(v->backend, "blocks")) {
            uint64_t used = v->releasable + v->allocated_in_matched;
            v->fragmented = v->reserved > used ? v->reserved - used : 0;
        } else if (v->blocks && v->block_bytes >= v->own_allocated && v->own_reserved != VT_DF_UNKNOWN) {
            /* Every byte the pool has in use is in a block it reported (its hook was on before any of them
             * was handed out): its segments with none are wholly free, what free_all_blocks() gives back. */
            v->releasable = 0;
            for (size_t k = 0; k < d->nallocs; k++)
                if (seg_view[k] == (int32_t)i && !seg_live[k])
                    v->releasable += d->allocs[k].size;
            uint64_t used = v->releasable + v->own_allocated;
            v->fragmented = v->own_reserved > used ? v->own_reserved - used : 0;
        }
    }
    free(seg_view);
    free(seg_live);
    free(dev.ix);
    free(maps.ix);
    return 0;
fail:
    free(seg_view);
    free(seg_live);
    free(dev.ix);
    free(maps.ix);
    vt_views_free(vw);
    return -1;
}

void vt_views_free(struct vt_views *vw)
{
    free(vw->v);
    free(vw->alloc_role);
    free(vw->phys_role);
    memset(vw, 0, sizeof *vw);
}
