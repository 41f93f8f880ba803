/* Writing one dump file (docs/FORMAT.md) from a snapshot of the table. */
#ifndef VT_DUMP_H
#define VT_DUMP_H

#include "vt_format.h"

#include <stddef.h>
#include <stdint.h>

#define VT_REASON_ENUM(e, word) e,
enum vt_reason { VT_REASONS(VT_REASON_ENUM) };
#undef VT_REASON_ENUM

struct vt_snapshot;

/* Writes vramtrace.<pid>.<seq>.dump into the dump directory, with the bridges' records (NULL: none),
 * from the table snapshot given (taken and freed here: NULL takes one now). On success copies its
 * path into path (when not NULL), puts a descriptor of the file written into *keep (when not NULL; the
 * caller closes it: it is how vramtrace dump gets the very file, whatever its name points to by then)
 * and returns 0. On failure returns -1, says it once on stderr, and puts the reason into why (when not
 * NULL), for vramtrace dump. Writes raise no signal in the program (vt_sigguard.h). Called by one
 * thread at a time (the dumper). */
int vt_dump_write(enum vt_reason reason, const char *bridge, struct vt_snapshot *given, char *path, size_t len,
                  char *why, size_t whylen, int *keep);

/* The same dump written to fd (no file of the series, no name taken; seq 0), for the metrics file
 * (vt_metrics_file.h). 0, or -1 (out of memory, or errno of the write). */
int vt_dump_write_fd(int fd, enum vt_reason reason, const char *bridge, struct vt_snapshot *given);

/* The directory dumps of this process go to, when known without making one (NULL: the private
 * directory, not made yet). */
const char *vt_dump_dir_used(void);
/* When this process started (its library's constructor), wall clock ns. */
uint64_t vt_dump_start_wall_ns(void);

#endif
