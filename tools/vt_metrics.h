/* Prometheus metrics of a report (vt_metrics.c): `vramtrace report --prometheus DUMP` and the files
 * `vramtrace metrics` keeps for node_exporter's textfile collector. */
#ifndef VT_METRICS_H
#define VT_METRICS_H

#include <stdio.h>

#include "vt_model.h"

/* Writes m's figures in the text exposition format, with its top largest call sites; -1 when it ran out
 * of memory on the way (the text is then incomplete). */
int vt_metrics_text(FILE *f, const struct vt_model *m, int top);
/* d's metrics into file, as a textfile collector wants them: written beside it as FILE.PID.tmp (mode
 * 0644, never through a link) and renamed into place, so a scrape never reads half of it. 0, or -1
 * with why ("out of memory", or "cannot write FILE: ..."). `vramtrace metrics` and the library's
 * metrics file (lib/dump/vt_metrics_file.c) both write through it. */
int vt_metrics_put(const struct vt_dumpfile *d, const char *file, int top, char *why, size_t len);

#endif
