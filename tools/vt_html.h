/* The HTML report (vt_html.c): one self-contained page for dumps of one or several processes. */
#ifndef VT_HTML_H
#define VT_HTML_H

#include <stdio.h>

#include "vt_diff.h"
#include "vt_trend.h"

/* One process: its dumps in the order they were taken (dm[0..n)); with two, their diff (the verdict
 * `vramtrace diff` gives), with three or more, their trend (`vramtrace trend`'s). */
struct vt_html_proc {
    struct vt_dumpmodel *dm;
    int n;
    const struct vt_diff *diff;   /* n == 2 */
    const struct vt_trend *trend; /* n >= 3 */
};

/* Writes the page with the processes' data; 0, or -1 when out of memory. */
int vt_html_write(FILE *out, const struct vt_html_proc *procs, int nprocs);

#endif
