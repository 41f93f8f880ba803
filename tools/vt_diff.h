/* A diff of two dumps (vt_cmd_diff.c): computed once, then printed by `vramtrace diff`'s renderers or
 * shown in the HTML report of a process with two dumps. */
#ifndef VT_DIFF_H
#define VT_DIFF_H

#include <stdint.h>
#include <stdio.h>

#include "vt_model.h"

struct vt_change {
    const struct vt_site *old, *new; /* either may be NULL: vanished, new */
    int64_t delta_bytes, delta_count;
};

struct vt_dev_delta {
    int device;
    int64_t reserved, allocated, cached;
    int cached_unknown;
    uint64_t peak_old, peak_new; /* the device's peak in each dump (a peak only rises within a process) */
};

/* What a diff of one pair found: computed once (vt_diff_compute), printed by one of the renderers below. */
struct vt_diff {
    const char *const *paths;
    const struct vt_dumpfile *d; /* d[0] older, d[1] */
    struct vt_model m[2];
    struct vt_dev_delta dd[VT_MAX_DEV + 1];
    int ndd;
    int64_t alloc_total, res_total;
    int any_cached_unknown;
    struct vt_change *ch; /* every site of either dump whose bytes or count changed, sorted (vt_change_cmp) */
    size_t nc;
    const struct vt_change *top; /* the leak suspect's site, or NULL */
    int by_segments;             /* top is a segment site: no allocated site grew */
    int64_t flight;              /* allocated growth in flight at the newer dump */
    int64_t old_flight;          /* allocated memory in flight at the older dump, freed since (>= 0) */
    int64_t undecided;           /* allocated growth no more than live threads' last requests hold */
    const struct vt_change *undecided_top; /* its largest site */
    int64_t unstacked;           /* growth in blocks with no stack, when a site with one leads */
    const char *verdict;
    struct vt_self_cost self;    /* what vramtrace cost the process in between (one process) */
};

/* Diffs the two loaded dumps d[0] (older) and d[1] into *r (its models are its own); -1 when out of
 * memory. */
int vt_diff_compute(const char *const paths[2], const struct vt_dumpfile d[2], int full, struct vt_diff *r);
void vt_diff_free(struct vt_diff *r);
/* As JSON (docs/JSON.md, diff), into f. */
void vt_diff_json(FILE *f, const struct vt_diff *r);

#endif
