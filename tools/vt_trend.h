/* A trend over dumps of one process (vt_trend.c): computed once, then printed by `vramtrace trend`'s
 * renderers (text, JSON, folded) or shown in the HTML report's timeline. Every site of any dump is a
 * series of its live bytes, dump by dump; those that grew overall and never shrank lead, and one
 * verdict says whether allocated memory grew (a leak suspect) or only cache. */
#ifndef VT_TREND_H
#define VT_TREND_H

#include <stdio.h>

#include "vt_model.h"

struct vt_series {
    const struct vt_site *site; /* the site as seen last */
    uint64_t *bytes;            /* one per dump, 0 where absent */
    int monotonic;              /* grew in every interval */
    int grows;                  /* grew overall and never shrank */
    int grew;                   /* intervals it grew in */
    double rate;                /* bytes per minute, first to last dump */
};

struct vt_dumpmodel {
    const char *path;
    struct vt_dumpfile d;
    struct vt_model m;
};

/* What a trend over the dumps found: computed once (vt_trend_compute), printed by a renderer. */
struct vt_trend {
    const struct vt_dumpmodel *dm; /* n dumps, in the order they were taken */
    int n;
    struct vt_series *se;          /* every site of any dump, the growing ones first (vt_by_rate) */
    size_t ns;
    uint64_t *cells;               /* the series' bytes */
    const struct vt_series *lead;  /* the leak suspect, or the segments that grew most (by_segments) */
    int leak, by_segments;
    uint64_t alloc_first, alloc_last;
    const char *verdict;
};

/* qsort's order of dumps by the time they were taken. */
int vt_by_time(const void *a, const void *b);
/* The trend of dm[0..n), n >= 2, in the order taken; -1 when out of memory. */
int vt_trend_compute(const struct vt_dumpmodel *dm, int n, struct vt_trend *t);
void vt_trend_free(struct vt_trend *t);
/* The first of the series' dumps (0-based) that already had device's peak of the last dump (a peak only
 * rises within a process): it was reached before that dump, after the one before it. */
int vt_trend_peak_since(const struct vt_trend *t, int device);
/* As JSON (docs/JSON.md, trend), into f. */
void vt_trend_json(FILE *f, const struct vt_trend *t);

#endif
