/* Prometheus metrics of a report (vt_metrics.c): `vramtrace report --prometheus DUMP` and the files
 * `vramtrace metrics` keeps for node_exporter's textfile collector. */
#ifndef VT_METRICS_H
#define VT_METRICS_H

#include <stdio.h>
#include <sys/types.h>

#include "vt_model.h"

/* Writes m's figures in the text exposition format, with its top largest call sites; -1 when it ran out
 * of memory on the way (the text is then incomplete). */
int vt_metrics_text(FILE *f, const struct vt_model *m, int top);
/* The file a metrics writer keeps (its path, and which file it put there last). */
struct vt_metrics_out {
    char path[4096];
    dev_t dev;
    ino_t ino;
    int claimed;
};
/* Takes file for o: it is created (O_EXCL, never through a link), so a path that exists already (another
 * process's file, a device, one an earlier run left) is refused with why, never replaced. 0, or -1. */
int vt_metrics_claim(struct vt_metrics_out *o, const char *file, char *why, size_t len);
/* d's metrics into o's file, as a textfile collector wants them: written beside it under a name of its
 * own (FILE.XXXXXX.tmp, O_EXCL, mode 0644) and renamed into place, so a scrape never reads half of it. 0,
 * or -1 with why ("out of memory", or "cannot write FILE: ..."). `vramtrace metrics` and the library's
 * metrics file (lib/roof/vt_metrics_file.c) both write through it. */
/* flags: vt_model_build's. Native frames are named by file and line, as report --prometheus does (0),
 * by the command and by the library where it could load the symbolizer (lib/roof/vt_metrics_file.c);
 * else the names dladdr gave (VT_MODEL_NO_SYMBOLS). */
int vt_metrics_put(const struct vt_dumpfile *d, struct vt_metrics_out *o, int top, int flags, char *why, size_t len);
/* Removes the file, if it is still the one o put there last: never one that someone else put in its place. */
void vt_metrics_release(struct vt_metrics_out *o);

#endif
