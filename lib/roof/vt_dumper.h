/* The dumper thread: every dump is written there, whatever asked for it (the signal, the interval, an
 * out-of-memory failure, vramtrace_dump(), exit). Its signals are all blocked, so a failed write can
 * raise nothing in the program, and a program thread never writes a dump itself: one that asks waits
 * for the dumper, but only while the dumper makes progress, so an exit() that interrupted a thread
 * holding a lock the dump needs costs a bounded wait, never a hang. Started at the first CUDA call. */
#ifndef VT_DUMPER_H
#define VT_DUMPER_H

#include <stddef.h>

#include "vt_dump.h"

/* Starts the thread if it is not running; 0 when it runs. */
int vt_dumper_start(void);
/* Starts it, and registers what stops it at exit (vramtrace_dump() and activation). */
void vt_dumper_up(void);
/* A dump for the calling thread (reason api), waited for; the bridges' records were collected by
 * the caller (bridge, snap: handed over). 0 with its path, or -1. */
int vt_dumper_api(char *bridge, struct vt_snapshot *snap, int have_snap, char *path, size_t len);
/* exit() began (an atexit handler, before the libraries' destructors): no new dump of the dumper's own,
 * and one under way is waited for while it makes progress. */
void vt_dumper_quiesce(void);
/* exit() has begun: work that only serves a living process (the metrics file) may stop short. */
int vt_dumper_exiting(void);
/* The destructor: no dump may follow; writes the exit dump when asked to (bounded wait). */
void vt_dumper_exit(int want_dump);

#define VT_OOM_DUMP_GAP_S 10

#endif
