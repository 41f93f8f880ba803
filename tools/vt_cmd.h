/* What the verbs of the vramtrace command share (each verb is a row: vt_verb.h). */
#ifndef VT_CMD_H
#define VT_CMD_H

#include <stddef.h>
#include <stdio.h>

/* report with one dump per process: per process and added up (vt_report_processes.c), as text, JSON or
 * folded stacks under a frame per process. device -2: all. */
int vt_report_processes(char **paths, int n, long top, int device, int json, int folded, int full);

/* What vt_dump_request got from one process: the dump's path as the process wrote it (escaped as a
 * dump's text is, so safe to print; "-" for a dump in memory), and a descriptor of that very file, read
 * from its start (a regular file owned by the process's user); "" and -1 when none. */
#define VT_DUMP_PATH 4160
struct vt_dump_got {
    char path[VT_DUMP_PATH];
    int fd;
};
/* Asks each of pids[0..n) for a dump over its dump socket (common/vt_ctl.h; peek: a dump in memory, no
 * file) and waits up to timeout seconds for all (vt_cmd_dump.c); a process that cannot be asked is said
 * on stderr with why (quiet_waiting: nothing said of a process not ready to be asked yet, one still
 * starting). Returns how many have none, or -1 with errno when it could not ask at all. The caller
 * closes the descriptors. */
int vt_dump_request(const long *pids, size_t n, int peek, double timeout, int quiet_waiting, struct vt_dump_got *got);
/* Keeps file, a Prometheus textfile, up to date with pid's figures every interval seconds until pid ends
 * or SIGTERM/SIGINT/SIGHUP comes (vt_cmd_metrics.c); once: one file and return. */
int vt_metrics_loop(long pid, const char *file, double interval, int top, double timeout, int once);

struct vt_dumpfile;
/* Reads a dump; on failure says "vramtrace: FILE:LINE: what" on stderr and returns -1. */
int vt_load(const char *path, struct vt_dumpfile *d);
/* Says "vramtrace VERB: what (vramtrace --help for usage)" and returns VT_EXIT_USAGE. */
int vt_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* When process pid started (clock ticks after boot, field 22 of /proc/PID/stat, which exec keeps): it
 * tells a process from a later one given the same pid. 0 when it is gone. */
unsigned long long vt_proc_start(long pid);

/* Exit statuses shared by every verb. */
#define VT_EXIT_USAGE 2 /* bad arguments or bad input file */

/* What vramtrace cost the process (vt_model.h): a line of the text report (when is "" or " in between"),
 * and the JSON object or null. */
struct vt_self_cost;
void vt_self_cost_text(const struct vt_self_cost *v, const char *when);
void vt_self_cost_json(FILE *f, const struct vt_self_cost *v);

#endif
