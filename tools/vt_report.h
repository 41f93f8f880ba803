/* The report of one dump, as the renderers that other verbs reuse see it (vt_cmd_report.c). */
#ifndef VT_REPORT_H
#define VT_REPORT_H

#include <stdio.h>

#include "vt_model.h"

/* The report's output formats besides text, one row each, in the order its help lists them: X(id, option,
 * its value, help, how the option is read, renderer, rank: when several are asked for, the lowest rank
 * wins, several: the report of one dump per process has it too, every: it lists every site unless --top
 * says otherwise). Adding a format is its renderer and a row: its option, its field in vt_report_opts
 * and its place in the dispatch all come from the row (vt_cmd_report.c). */
#define VT_REPORT_FORMATS(X)                                                                                    \
    X(json, "--json", NULL, "JSON (docs/JSON.md)", VT_OPT_FLAG, vt_report_json_out, 3, 1, 1)                   \
    X(folded, "--folded", NULL, "folded stacks with their bytes, for flame graphs", VT_OPT_FLAG,              \
      vt_report_folded_out, 4, 1, 1)                                                                            \
    X(pprof, "--pprof", "FILE", "write a gzipped pprof profile (go tool pprof FILE)", VT_OPT_TEXT,             \
      vt_report_pprof_out, 1, 0, 0)                                                                             \
    X(prometheus, "--prometheus", NULL, "Prometheus metrics (the text exposition format)", VT_OPT_FLAG,       \
      vt_report_prometheus_out, 2, 0, 0)

/* A format's field: the option's value (VT_OPT_TEXT) or whether it was given (VT_OPT_FLAG). */
#define VT_REPORT_FIELD_VT_OPT_TEXT(id) const char *id;
#define VT_REPORT_FIELD_VT_OPT_FLAG(id) int id;
#define VT_REPORT_FIELD(id, flag, arg, help, kind, render, rank, several, every) VT_REPORT_FIELD_##kind(id)

struct vt_report_opts {
    const char *path;
    long top;          /* sites shown at most */
    int device;        /* -2: all */
    int full;
    VT_REPORT_FORMATS(VT_REPORT_FIELD)
};

/* The report as JSON (docs/JSON.md), into f. */
void vt_report_json(FILE *f, const struct vt_report_opts *o, const struct vt_model *m);

#endif
