/* VRAMTRACE_METRICS: the dumper thread keeps a Prometheus textfile (node_exporter's textfile collector)
 * of the process up to date, every VRAMTRACE_METRICS_INTERVAL seconds. */
#ifndef VT_METRICS_FILE_H
#define VT_METRICS_FILE_H

struct vt_snapshot;

/* Whether a metrics file is to be kept by this process (the setting, and the file not another's). */
int vt_metrics_file_on(void);
/* Writes it from a dump of the table snapshot and bridge records given (the snapshot is freed here). */
void vt_metrics_file_write(const char *bridge, struct vt_snapshot *snap);
/* At exit: the file is removed, so that no figures of a process that is gone are collected. */
void vt_metrics_file_remove(void);

#endif
