/* vt_labels.h. The sites are sorted by class and name, so each name's sites lie together (a segment that
 * one line's blocks live in does not make that line a helper: only sites of one class are compared); a
 * round moves every
 * group whose sites have more than one caller one frame out, and stops when none moved (a helper inside a
 * helper takes a round each; VT_LABEL_ROUNDS bounds a damaged dump). */
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

/* Sites of one class (allocated, an allocator's segments, a pool's cache) and one name lie together. */
static int vt_by_name(const void *x, const void *y)
{
    const struct vt_site *a = *(struct vt_site *const *)x, *b = *(struct vt_site *const *)y;
    if (a->role != b->role)
        return a->role < b->role ? -1 : 1;
    return strcmp(vt_site_name(a), vt_site_name(b));
}

static int vt_same_group(const struct vt_site *a, const struct vt_site *b)
{
    return a->role == b->role && !strcmp(vt_site_name(a), vt_site_name(b));
}

/* The rounds, over the sites with frames (several dumps' together, or one's). */
static void vt_labels_run(struct vt_site **ix, size_t m)
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
    vt_labels_run(ix, m);
    free(ix);
    return 0;
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
            if (s->nframes)
                ix[m++] = s;
        }
    vt_labels_run(ix, m);
    free(ix);
    return 0;
}
