/* The verbs of the vramtrace command. Each returns the process exit status. */
#ifndef VT_CMD_H
#define VT_CMD_H

#include <stdio.h>

int vt_cmd_run(int argc, char **argv);
int vt_cmd_dump(int argc, char **argv);
int vt_cmd_report(int argc, char **argv);
int vt_cmd_diff(int argc, char **argv);
int vt_cmd_trend(int argc, char **argv);
/* report with one dump per process: per process and added up (vt_report_processes.c). device -2: all. */
int vt_report_processes(char **paths, int n, long top, int device, int json, int full);

struct vt_dumpfile;
/* Reads a dump; on failure says "vramtrace: FILE:LINE: what" on stderr and returns -1. */
int vt_load(const char *path, struct vt_dumpfile *d);
/* Says "vramtrace VERB: what (vramtrace --help for usage)" and returns VT_EXIT_USAGE. */
int vt_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Exit statuses shared by every verb. */
#define VT_EXIT_USAGE 2 /* bad arguments or bad input file */

/* What vramtrace cost the process (vt_model.h): a line of the text report (when is "" or " in between"),
 * and the JSON object or null. */
struct vt_self_cost;
void vt_self_cost_text(const struct vt_self_cost *v, const char *when);
void vt_self_cost_json(FILE *f, const struct vt_self_cost *v);

#endif
