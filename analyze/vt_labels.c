/* vt_labels.h. The sites are sorted by class and name, so each name's sites lie together (a segment that
 * one line's blocks live in does not make that line a helper: only sites of one class are compared); a
 * round moves every
 * group whose sites have more than one caller one frame out, and stops when none moved (a helper inside a
 * helper takes a round each; VT_LABEL_ROUNDS bounds a damaged dump). Sites the rounds leave with one
 * name whose frames part inside it (two lines of one function, called from one line that the rounds
 * named) are told apart by the frame where they part: "INNER via NAME". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_frame.h"
#include "vt_labels.h"
#include "vt_settings.h"

static char vt_alloc_fns[VT_SET_NAMES_MAX + 1];

void vt_labels_alloc_fns(const char *list)
{
    snprintf(vt_alloc_fns, sizeof vt_alloc_fns, "%s", list && strcmp(list, "none") ? list : "");
}

/* Whether frame is one of the named helpers: its function (a native frame's symbol before "+0x", a
 * Python frame's qualified name) is one of the list's names. */
static int vt_named_helper(const char *frame)
{
    if (!vt_alloc_fns[0])
        return 0;
    struct vt_frame_parts p;
    vt_frame_parts(frame, &p);
    size_t n = p.name_len;
    const char *plus = memmem(p.name, n, "+0x", 3);
    if (plus)
        n = (size_t)(plus - p.name);
    for (const char *w = vt_alloc_fns; *w;) {
        size_t len = strcspn(w, ",");
        const char *a = w;
        size_t l = len;
        while (l && *a == ' ')
            a++, l--;
        while (l && a[l - 1] == ' ')
            l--;
        if (l && l == n && !memcmp(a, p.name, n))
            return 1;
        w += len + (w[len] == ',');
    }
    return 0;
}

#define VT_LABEL_ROUNDS 16

static int vt_same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b)); /* the model keeps one copy of each frame's string */
}

/* The frame that called the one naming s, or NULL at the stack's outer end. */
static const char *vt_caller(const struct vt_site *s)
{
    return s->name_at + 1 < s->nframes ? s->frames[s->name_at + 1] : NULL;
}

/* The frame naming s while the rounds run (vt_site_name gives the label they end with). */
static const char *vt_frame_named(const struct vt_site *s)
{
    return s->frames[s->name_at];
}

/* Sites of one class (allocated, an allocator's segments, a pool's cache) and one name lie together. */
static int vt_by_name(const void *x, const void *y)
{
    const struct vt_site *a = *(struct vt_site *const *)x, *b = *(struct vt_site *const *)y;
    if (a->role != b->role)
        return a->role < b->role ? -1 : 1;
    return strcmp(vt_frame_named(a), vt_frame_named(b));
}

static int vt_same_group(const struct vt_site *a, const struct vt_site *b)
{
    return a->role == b->role && !strcmp(vt_frame_named(a), vt_frame_named(b));
}

/* Frames beside the name, d = 1 the nearest: inside it (toward the allocation) with out unset, outside it
 * (its callers) with out set. What is compared where one name's sites part. */
static const char *vt_beside(const struct vt_site *s, uint32_t d, int out)
{
    if (out)
        return s->name_at + d < s->nframes ? s->frames[s->name_at + d] : NULL;
    return d <= s->name_at ? s->frames[s->name_at - d] : NULL;
}

static int vt_beside_cmp(const struct vt_site *a, const struct vt_site *b, int out)
{
    int c = vt_by_name(&a, &b);
    for (uint32_t d = 1; !c; d++) {
        const char *p = vt_beside(a, d, out), *q = vt_beside(b, d, out);
        if (!p || !q)
            return (p != NULL) - (q != NULL);
        c = strcmp(p, q);
    }
    return c;
}

static int vt_by_inside(const void *x, const void *y)
{
    return vt_beside_cmp(*(struct vt_site *const *)x, *(struct vt_site *const *)y, 0);
}

static int vt_by_outside(const void *x, const void *y)
{
    return vt_beside_cmp(*(struct vt_site *const *)x, *(struct vt_site *const *)y, 1);
}

/* How many frames beside the name a and b share. */
static uint32_t vt_shared(const struct vt_site *a, const struct vt_site *b, int out)
{
    uint32_t d = 1;
    while (vt_beside(a, d, out) && vt_beside(b, d, out) && vt_same(vt_beside(a, d, out), vt_beside(b, d, out)))
        d++;
    return d - 1;
}

/* Whether a frame beside the name can tell a site apart. Inside a name that has a line (toward the
 * allocation), only a frame with a line does: a Python line's sites that part at the C++ operators below
 * it (two operators of one line) keep the line's name, which is what the program's author reads and
 * changes. Elsewhere a C++ function does too (its name has its parameters), as does a name with no
 * offset: torch's segments made on autograd's thread have no line at all. Never an address alone
 * ("module.so+0x3d6aa", "0x7f3a..."), nor a name the dump recorded with an offset and no parameters, which
 * may be a module's ("prog+0x1f"). */
static int vt_telling(const char *frame, int lines_only)
{
    struct vt_frame_parts p;
    vt_frame_parts(frame, &p);
    if (p.file || lines_only)
        return p.file != NULL;
    if (frame[0] == '0' || frame[0] == '(') /* "0x7f3a...", no module; "(code unloaded since)" */
        return 0;
    return memmem(frame, p.name_len, "+0x", 3) == NULL || memchr(frame, '(', p.name_len);
}

/* Whether a frame has a source line. */
static int vt_has_line(const char *frame)
{
    struct vt_frame_parts p;
    vt_frame_parts(frame, &p);
    return p.file != NULL;
}

/* One pass of vt_labels_via: sorted by the frames on one side of the name, each site of a shared name
 * that has no label yet parts from the nearest other stack (a neighbour, the one it shares most with) at
 * the frame after those they share, or the first one past it that can tell it apart (vt_telling). Sites
 * alike on that side lie together -- one line's site in several dumps, which must not count as each
 * other's neighbour, or no frame would part them -- and take the same label. No such frame on this side,
 * no label from this pass. */
static int vt_labels_side(struct vt_site **ix, size_t m, int out)
{
    int r = 0;
    qsort(ix, m, sizeof *ix, out ? vt_by_outside : vt_by_inside);
    for (size_t k = 0, e; k < m; k = e) {
        for (e = k + 1; e < m && vt_beside_cmp(ix[k], ix[e], out) == 0;)
            e++;
        const struct vt_site *prev = k && vt_same_group(ix[k - 1], ix[k]) ? ix[k - 1] : NULL;
        const struct vt_site *next = e < m && vt_same_group(ix[e], ix[k]) ? ix[e] : NULL;
        if (!prev && !next)
            continue;
        uint32_t a = prev ? vt_shared(ix[k], prev, out) : 0, b = next ? vt_shared(ix[k], next, out) : 0;
        const char *part = NULL, *name = vt_frame_named(ix[k]);
        int lines_only = !out && vt_has_line(name);
        uint32_t d = (a > b ? a : b) + 1;
        while ((part = vt_beside(ix[k], d, out)) && !vt_telling(part, lines_only))
            d++;
        if (!part)
            continue; /* none, or native addresses alone: no better said than the name alone */
        size_t len = strlen(part) + strlen(name) + 6;
        for (size_t j = k; j < e; j++) {
            if (ix[j]->label)
                continue;
            if (!(ix[j]->label = malloc(len))) {
                r = -1;
                continue;
            }
            snprintf(ix[j]->label, len, "%s via %s", out ? name : part, out ? part : name);
        }
    }
    return r;
}

/* Sites of one class the rounds left with one name are told apart by the frame where each parts from the
 * others: inside the name first ("INNER via NAME": two lines of the function the name calls), else
 * outside it ("NAME via OUTER"). 0, or -1 when out of memory (a site then keeps the name alone). */
static int vt_labels_via(struct vt_site **ix, size_t m)
{
    int r = vt_labels_side(ix, m, 0);
    return vt_labels_side(ix, m, 1) < 0 ? -1 : r;
}

/* The rounds, over the sites with frames (several dumps' together, or one's). */
static int vt_labels_run(struct vt_site **ix, size_t m)
{
    for (size_t i = 0; i < m; i++)
        while (ix[i]->name_at + 1 < ix[i]->nframes && vt_named_helper(ix[i]->frames[ix[i]->name_at]))
            ix[i]->name_at++;
    for (int round = 0; round < VT_LABEL_ROUNDS; round++) {
        qsort(ix, m, sizeof *ix, vt_by_name);
        int moved = 0;
        for (size_t g = 0; g < m;) {
            size_t e = g + 1;
            int callers = 1;
            while (e < m && vt_same_group(ix[g], ix[e])) {
                callers += !vt_same(vt_caller(ix[g]), vt_caller(ix[e]));
                e++;
            }
            for (size_t k = g; k < e && callers > 1; k++)
                if (vt_caller(ix[k])) {
                    ix[k]->name_at++;
                    moved = 1;
                }
            g = e;
        }
        if (!moved)
            break;
    }
    return vt_labels_via(ix, m);
}

int vt_labels_part(struct vt_site *sites, size_t n)
{
    struct vt_site **ix = malloc((n ? n : 1) * sizeof *ix);
    size_t m = 0;
    if (!ix)
        return -1;
    for (size_t i = 0; i < n; i++) {
        sites[i].name_base = sites[i].name_at;
        if (sites[i].nframes)
            ix[m++] = &sites[i];
    }
    int r = vt_labels_run(ix, m);
    free(ix);
    return r;
}

int vt_labels_part_models(struct vt_model *const *ms, size_t k)
{
    size_t n = 0, m = 0;
    for (size_t j = 0; j < k; j++)
        n += ms[j]->nsites;
    struct vt_site **ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix)
        return -1;
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < ms[j]->nsites; i++) {
            struct vt_site *s = &ms[j]->sites[i];
            s->name_at = s->name_base;
            free(s->label);
            s->label = NULL;
            if (s->nframes)
                ix[m++] = s;
        }
    int r = vt_labels_run(ix, m);
    free(ix);
    return r;
}
