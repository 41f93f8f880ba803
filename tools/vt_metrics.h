/* Prometheus metrics of a report (vt_metrics.c): `vramtrace report --prometheus DUMP` and the files
 * `vramtrace metrics` keeps for node_exporter's textfile collector. */
#ifndef VT_METRICS_H
#define VT_METRICS_H

#include <stdio.h>

#include "vt_model.h"

/* Writes m's figures in the text exposition format, with its top largest call sites. */
void vt_metrics_text(FILE *f, const struct vt_model *m, int top);

#endif
