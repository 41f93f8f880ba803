/* The report of one dump, as the renderers that other verbs reuse see it (vt_cmd_report.c). */
#ifndef VT_REPORT_H
#define VT_REPORT_H

#include <stdio.h>

#include "vt_model.h"

struct vt_report_opts {
    const char *path;
    const char *pprof; /* --pprof FILE */
    long top;          /* sites shown at most */
    int device;        /* -2: all */
    int json, folded, full, prometheus;
};

/* The report as JSON (docs/JSON.md), into f. */
void vt_report_json(FILE *f, const struct vt_report_opts *o, const struct vt_model *m);

#endif
