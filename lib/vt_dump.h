/* Writing one dump file (docs/FORMAT.md) from a snapshot of the table. */
#ifndef VT_DUMP_H
#define VT_DUMP_H

#include <stddef.h>

enum vt_reason { VT_REASON_SIGNAL, VT_REASON_EXIT, VT_REASON_OOM, VT_REASON_INTERVAL, VT_REASON_API };

struct vt_snapshot;

/* Writes vramtrace.<pid>.<seq>.dump into the dump directory, with the bridges' records (NULL: none),
 * from the table snapshot given (taken and freed here: NULL takes one now). On success copies its
 * path into path (when not NULL) and returns 0. Failures are said once on stderr and return -1. */
int vt_dump_write(enum vt_reason reason, const char *bridge, struct vt_snapshot *given, char *path, size_t len);

/* Process start, for the header (monotonic and wall clock, ns). */
void vt_dump_init(void);
void vt_dump_atfork_child(void);

#endif
